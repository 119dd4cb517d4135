//! Every reader of podsim-import on arbitrary text, and on real files with one character
//! changed, gives a value or an `ImportError` naming the file, never a panic.

use podsim_import::astra::{Mapped, Network};
use podsim_import::booksim::BooksimImport;
use podsim_import::scalesim::{self, ScalesimConfig};
use rand::{Rng, SeedableRng};

fn example(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Arbitrary text from `alphabet`, and `real` with one character replaced from it.
fn texts(real: &str, alphabet: &str, seed: u64, n: usize) -> Vec<String> {
    let alphabet: Vec<char> = alphabet.chars().collect();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..n {
        let len = rng.random_range(0..120);
        out.push(
            (0..len)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect(),
        );
        let mut chars: Vec<char> = real.chars().collect();
        let i = rng.random_range(0..chars.len());
        chars[i] = alphabet[rng.random_range(0..alphabet.len())];
        out.push(chars.into_iter().collect());
    }
    out
}

#[test]
fn booksim_configs_never_panic() {
    let real = example("examples/booksim/mesh88.cfg");
    for t in texts(&real, "=;/ \nkn0123456789.meshtorusx_", 7, 2000) {
        if let Err(e) = BooksimImport::parse("f.cfg", &t, podsim_noc::RouterMode::Booksim) {
            assert!(e.to_string().starts_with("f.cfg"), "{e}");
        }
    }
    // Delays whose sum passes 2^64 saturate rather than overflow.
    let huge = "routing_delay = 18446744073709551615; vc_alloc_delay = 5;";
    let _ = BooksimImport::parse("h.cfg", huge, podsim_noc::RouterMode::Podsim);
}

#[test]
fn scalesim_configs_and_topologies_never_panic() {
    let real = example("examples/scalesim/scale.cfg");
    for t in texts(&real, "[]:=#; \nArayHeightWidth0123456789osw", 11, 2000) {
        if let Err(e) = ScalesimConfig::parse("f.cfg", &t) {
            assert!(e.to_string().starts_with("f.cfg"), "{e}");
        }
    }
    let real = example("examples/scalesim/tiny-cnn.csv");
    for t in texts(&real, ", \n0123456789LayerMNK", 13, 2000) {
        if let Err(e) = scalesim::topology("f.csv", &t) {
            assert!(e.to_string().starts_with("f.csv"), "{e}");
        }
    }
    // Sizes whose products pass 2^64 are refused, not wrapped.
    let huge = "Layer, H, W, Fh, Fw, C, F, S\nx, 4294967296, 4294967296, 1, 1, 1, 1, 1\n";
    assert!(scalesim::topology("h.csv", huge).is_err());
}

#[test]
fn astra_network_files_never_panic() {
    for path in [
        "examples/astra-sim/Ring_FullyConnected_2dims.yml",
        "examples/astra-sim/sample_Torus2D.json",
    ] {
        let real = example(path);
        for t in texts(&real, "[]{}:,-#\"' \n\tRingSwch0123456789.e", 17, 1500) {
            match Network::parse("f", &t) {
                Ok(net) => {
                    if let Err(e) = Mapped::new(&net) {
                        assert!(e.to_string().starts_with("f"), "{e}");
                    }
                }
                Err(e) => assert!(e.to_string().starts_with("f"), "{e}"),
            }
        }
    }
}
