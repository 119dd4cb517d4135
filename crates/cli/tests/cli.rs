//! End-to-end tests of the `podsim` binary. Expected numbers are derived by hand in comments.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn podsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("podsim runs")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn json(args: &[&str]) -> Value {
    let out = podsim(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn topo_torus_4x4x8_json() {
    let v = json(&["topo", "torus:4x4x8", "--json"]);
    // 4·4·8 = 128 nodes; 3 links per node = 384; 6 ports; diameter 2 + 2 + 4 = 8.
    assert_eq!(v["nodes"], 128);
    assert_eq!(v["links"], 384);
    assert_eq!(v["degree_max"], 6);
    assert_eq!(v["diameter"], 8);
    // Ordered-pair distance sum: rings of 4 sum to 4·4 = 16, of 8 to 8·16 = 128;
    // 32²·16·2 + 16²·128 = 65,536 over 128·127 pairs.
    let avg = v["average_distance"].as_f64().unwrap();
    assert!((avg - 65_536.0 / 16_256.0).abs() < 1e-12);
    // Cut across the 8-ring: 2 links × 16 rings = 32; × 50 GB/s (default) × 2 ways = 3.2 TB/s.
    assert_eq!(v["bisection_links"], 32);
    assert_eq!(v["bisection_bandwidth_bytes_per_s"], 3_200_000_000_000u64);
    assert_eq!(v["bisection_method"], "closed-form-straight-cut");
}

#[test]
fn topo_mesh_8x8_json_with_link_flags() {
    let v = json(&[
        "topo",
        "mesh:8x8",
        "--json",
        "--link-bandwidth",
        "12.8 GiB/s",
        "--link-latency",
        "500ns",
    ]);
    // 2·8·7 = 112 links; corner degree 2, interior 4; diameter 14; average 16/3 (see topology tests).
    assert_eq!(v["nodes"], 64);
    assert_eq!(v["links"], 112);
    assert_eq!(v["degree_max"], 4);
    assert_eq!(v["diameter"], 14);
    assert!((v["average_distance"].as_f64().unwrap() - 16.0 / 3.0).abs() < 1e-12);
    // 8 cut links × 13,743,895,347 B/s (12.8 GiB/s rounded) × 2 ways.
    assert_eq!(v["bisection_links"], 8);
    assert_eq!(
        v["bisection_bandwidth_bytes_per_s"],
        8 * 13_743_895_347u64 * 2
    );
    assert_eq!(v["link_latency_s"].as_f64().unwrap(), 5e-7);
}

#[test]
fn topo_small_graphs_use_exhaustive_search() {
    // A ring of 16: any bisection cuts 2 links.
    let v = json(&["topo", "ring:16", "--json"]);
    assert_eq!(v["bisection_links"], 2);
    assert_eq!(v["bisection_method"], "exhaustive-search");
}

#[test]
fn topo_k_computer_shape() {
    let v = json(&[
        "topo",
        "kncube:24x18x16x2x3x2:wrap=tmtmtm",
        "--json",
        "--link-bandwidth",
        "5 GB/s",
        "--interfaces",
        "4",
    ]);
    // Tofu paper, section II.A: 82,944 nodes; 46.1 TB/s = 4,608 links × 5 GB/s × 2.
    assert_eq!(v["nodes"], 82_944);
    assert_eq!(v["bisection_bandwidth_bytes_per_s"], 46_080_000_000_000u64);
    assert_eq!(
        v["total_injection_bandwidth_bytes_per_s"],
        1_658_880_000_000_000u64
    );
}

#[test]
fn default_run_is_the_twisted_all_to_all_experiment() {
    let out = podsim(&["run"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("4x4x8 twisted") && text.contains("4x8x8 twisted"),
        "{text}"
    );
    // Gains within 10% of the paper's 1.63x and 1.31x (tpu-v4-isca2023.txt, section 2.8).
    let v = json(&["run", "--json"]);
    let gains: Vec<f64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["speedup_vs_baseline"].as_f64().unwrap())
        .collect();
    assert_eq!(gains.len(), 4);
    assert!((gains[1] - 1.63).abs() <= 0.163, "{gains:?}");
    assert!((gains[3] - 1.31).abs() <= 0.131, "{gains:?}");
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .all(|x| x["time_s"].as_f64() >= x["lower_bound_time_s"].as_f64())
    );
}

#[test]
fn block_vs_slice_example() {
    let v = json(&["run", "examples/tpu-v4-block-vs-slice.toml", "--json"]);
    let block = &v[0];
    let slice = &v[1];
    // Block: 4x4x4 mesh: 3·16·3 = 144 links, diameter 9, bisection 16 links = 1.6 TB/s.
    assert_eq!(block["links"], 144);
    assert_eq!(block["diameter"], 9);
    assert_eq!(
        block["bisection_bandwidth_bytes_per_s"],
        1_600_000_000_000u64
    );
    // Slice: two blocks (288 electrical links) and 96 optical links; diameter 8.
    assert_eq!(slice["links_by_kind"]["electrical"], 288);
    assert_eq!(slice["links_by_kind"]["optical"], 96);
    assert_eq!(slice["diameter"], 8);
    assert_eq!(
        slice["bisection_bandwidth_bytes_per_s"],
        3_200_000_000_000u64
    );
}

#[test]
fn every_example_runs() {
    let mut n = 0;
    for e in std::fs::read_dir(repo().join("examples")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let out = podsim(&["run", p.to_str().unwrap()]);
            assert!(
                out.status.success(),
                "{}: {}",
                p.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            n += 1;
        }
    }
    assert!(n >= 3);
}

#[test]
fn validate_passes_and_the_built_in_cases_are_the_files() {
    let built_in = podsim(&["validate"]);
    assert!(
        built_in.status.success(),
        "{}",
        String::from_utf8_lossy(&built_in.stdout)
    );
    let from_dir = podsim(&["validate", "--dir", "validation"]);
    assert!(from_dir.status.success());
    // The binary embeds every file of validation/ (same table, same order).
    assert_eq!(
        String::from_utf8_lossy(&built_in.stdout),
        String::from_utf8_lossy(&from_dir.stdout)
    );
    let text = String::from_utf8(built_in.stdout).unwrap();
    assert!(text.contains("46.08 TB/s"), "{text}");
    assert!(text.contains("34.56 TB/s"), "{text}");
}

#[test]
fn validate_fails_on_a_wrong_figure() {
    let dir = std::env::temp_dir().join(format!("podsim-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(repo().join("validation/k-computer.toml")).unwrap();
    std::fs::write(dir.join("wrong.toml"), text.replace("46.1 TB/s", "50 TB/s")).unwrap();
    let out = podsim(&["validate", "--dir", dir.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL"));
    // A case marked not reproduced is listed with its reason and does not fail the run.
    std::fs::remove_file(dir.join("wrong.toml")).unwrap();
    let marked = text.replacen(
        "[case.system]",
        "not_reproduced = \"a reason\"\n[case.system]",
        1,
    );
    std::fs::write(dir.join("marked.toml"), marked).unwrap();
    let out = podsim(&["validate", "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("NOT REPRODUCED: a reason"), "{text}");
    // ... and measured all the same: 82,944 nodes (24 x 18 x 16 x 2 x 3 x 2).
    assert!(text.contains("82944"), "{text}");
    assert!(text.ends_with("not reproduced: 1\n"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Every case carries its class; the table prints it, and the run ends with the summary by
/// class. A calibrated or structural case that drifts fails the run as a prediction does.
#[test]
fn validate_classes_every_case_and_fails_on_any_class() {
    let dir = std::env::temp_dir().join(format!("podsim-validate-class-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // k-computer.toml: five structural cases.
    let text = std::fs::read_to_string(repo().join("validation/k-computer.toml")).unwrap();
    std::fs::write(dir.join("k.toml"), &text).unwrap();
    let out = podsim(&["validate", "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.lines().next().unwrap().contains("class"), "{table}");
    assert!(
        table.ends_with(
            "predictions: 0 pass, 0 fail; calibrated: 0; structural: 5; not reproduced: 0\n"
        ),
        "{table}"
    );
    // A structural case off its figure: the run fails, and the summary says where.
    std::fs::write(dir.join("k.toml"), text.replace("\"82,944\"", "\"82,945\"")).unwrap();
    let out = podsim(&["validate", "--dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("structural: 5 (1 FAIL)"));
    // --json: every case with its class, and the summary object.
    std::fs::write(dir.join("k.toml"), &text).unwrap();
    let out = podsim(&["validate", "--dir", dir.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 5);
    for c in cases {
        for key in [
            "figure",
            "source",
            "class",
            "published",
            "podsim",
            "tolerance",
            "result",
        ] {
            assert!(c.get(key).is_some(), "{key} in {c}");
        }
        assert_eq!(c["class"], "structural");
        assert_eq!(c["result"], "pass");
    }
    // 82,944 nodes; the bisection in bytes/s, 46.08 TB/s (9,216 links x 5 GB/s, both ways).
    assert_eq!(cases[0]["podsim"], 82944.0);
    assert_eq!(cases[1]["podsim"], 46.08e12);
    assert_eq!(cases[1]["unit"], "B/s");
    assert_eq!(v["summary"]["structural"], 5);
    assert_eq!(v["summary"]["prediction_pass"], 0);
    // Without a class, or with a calibrated case that does not name its parameter, or a
    // tolerance without its reason: refused, naming the file and the key.
    for (edit, key) in [
        (
            text.replacen("class = \"structural\"\n", "", 1),
            "case[0].class",
        ),
        (
            text.replacen("class = \"structural\"", "class = \"calibrated\"", 1),
            "case[0].calibrated_by",
        ),
        (
            text.replacen(
                "class = \"structural\"",
                "class = \"structural\"\ncalibrated_by = \"x\"",
                1,
            ),
            "case[0].calibrated_by",
        ),
        (
            text.replacen("class = \"structural\"", "class = \"guess\"", 1),
            "case[0].class",
        ),
        (
            text.replacen("tolerance_reason = ", "# ", 1),
            "case[1].tolerance_reason",
        ),
    ] {
        std::fs::write(dir.join("k.toml"), &edit).unwrap();
        let out = podsim(&["validate", "--dir", dir.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("k.toml") && err.contains(key), "{key}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The built-in cases as the issue asks of them: a class on every case, the calibrated ones
/// naming their parameter, no tolerance above 15% of its figure without a written reason, and
/// at least the predictions the project has promised.
#[test]
fn the_built_in_cases_say_what_they_are_worth() {
    let out = podsim(&["validate", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for c in v["cases"].as_array().unwrap() {
        let class = c["class"].as_str().unwrap();
        assert!(
            ["structural", "calibrated", "prediction"].contains(&class),
            "{c}"
        );
        assert_eq!(
            class == "calibrated",
            c.get("calibrated_by").is_some(),
            "{c}"
        );
        let (p, t) = (
            c["published"].as_f64().unwrap(),
            c["tolerance"].as_f64().unwrap(),
        );
        if t > 0.0 {
            assert!(c.get("tolerance_reason").is_some(), "{c}");
        }
        // Wide bands are words of the source turned into a bound, and say so.
        if t > 0.15 * p {
            let why = c["tolerance_reason"].as_str().unwrap();
            assert!(why.len() > 40, "{c}");
        }
    }
    let s = &v["summary"];
    let total: u64 = [
        "prediction_pass",
        "prediction_fail",
        "calibrated",
        "structural",
        "not_reproduced",
    ]
    .iter()
    .map(|k| s[k].as_u64().unwrap())
    .sum();
    assert_eq!(total as usize, v["cases"].as_array().unwrap().len());
}

/// Runs podsim expecting a one-line error mentioning every fragment.
fn expect_error(args: &[&str], fragments: &[&str]) {
    let out = podsim(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {err}"
    );
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for f in fragments {
        assert!(err.contains(f), "{args:?}: {err} lacks {f}");
    }
}

#[test]
fn bad_input_gets_one_clear_line() {
    expect_error(&["topo", "torus:0x4"], &["torus:0x4", "at least 1"]);
    expect_error(&["topo", "torus:4x"], &["torus:4x", "empty"]);
    expect_error(&["topo", "tors:4x4"], &["nearest is `torus`"]);
    expect_error(
        &["topo", "mesh:8x8", "--link-bandwidth", "-5 GB/s"],
        &["--link-bandwidth", "negative"],
    );
    expect_error(
        &["topo", "mesh:8x8", "--link-latency", "fast"],
        &["--link-latency"],
    );
    expect_error(
        &["topo", "mesh:8x8", "--interfaces", "0"],
        &["--interfaces"],
    );
    expect_error(&["topo", "torus:2000000x2000000"], &["nodes"]);
    expect_error(
        &["run", "no/such/file.toml"],
        &["no/such/file.toml", "cannot read"],
    );

    let dir = std::env::temp_dir().join(format!("podsim-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read_to_string(repo().join("examples/booksim-mesh-8x8.toml")).unwrap();
    let misspelt = dir.join("misspelt.toml");
    std::fs::write(&misspelt, good.replacen("link_latency", "link_latncy", 1)).unwrap();
    expect_error(
        &["run", misspelt.to_str().unwrap()],
        &[
            "misspelt.toml",
            "line 8",
            "link_latncy",
            "nearest valid key is `link_latency`",
        ],
    );
    let negative = dir.join("negative.toml");
    std::fs::write(&negative, good.replacen("\"16 GB/s\"", "\"-16 GB/s\"", 1)).unwrap();
    expect_error(
        &["run", negative.to_str().unwrap()],
        &[
            "negative.toml",
            "line 7",
            "system[0].link_bandwidth",
            "negative",
        ],
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn topo_reads_a_system_file() {
    let dir = std::env::temp_dir().join(format!("podsim-sys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("slice.toml");
    std::fs::write(&f, "topology = \"torus:4x4x8\"\nlink_bandwidth = \"50 GB/s\"\n[blocks]\nshape = [4, 4, 4]\nkind = \"optical\"\n").unwrap();
    let v = json(&["topo", f.to_str().unwrap(), "--json"]);
    assert_eq!(v["links_by_kind"]["optical"], 96);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn help_lists_units_and_defaults() {
    let out = podsim(&["topo", "--help"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("default: 50 GB/s"), "{text}");
    assert!(text.contains("both directions"), "{text}");
}

#[test]
fn twisted_torus_shorthand() {
    let v = json(&["topo", "torus:4x4x8:twisted", "--json"]);
    // Same nodes and links as the regular torus; diameter 6 = 3k/2 for k = 4 (checked against
    // breadth-first search in the topology tests) against 2 + 2 + 4 = 8 regular.
    assert_eq!(v["topology"], "torus:4x4x8:twisted");
    assert_eq!(
        (v["nodes"].as_u64(), v["links"].as_u64()),
        (Some(128), Some(384))
    );
    assert_eq!(v["diameter"], 6);
    assert_eq!(v["distance_method"], "vertex-transitive-one-source");
    assert_eq!(v["bisection_method"], "half-space-cut-upper-bound");
    expect_error(&["topo", "torus:4x4x4:twisted"], &["no named twist"]);
}

#[test]
fn tofu_presets_report_their_virtual_torus() {
    // K computer (tofu-interconnect-d.txt II.A): 46.1 TB/s physical, 34.6 TB/s virtual.
    let v = json(&["topo", "tofu:k", "--json"]);
    assert_eq!(v["nodes"], 82_944);
    assert_eq!(v["ports_per_node_max"], 10);
    assert_eq!(v["bisection_bandwidth_bytes_per_s"], 46_080_000_000_000u64);
    assert_eq!(
        v["virtual_bisection_bandwidth_bytes_per_s"],
        34_560_000_000_000u64
    );
    // Fugaku: 24·23·24·2·3·2 = 158,976 nodes; 6 TNIs × 6.8 GB/s = 40.8 GB/s.
    let f = json(&["topo", "tofu:fugaku", "--json"]);
    assert_eq!(f["nodes"], 158_976);
    assert_eq!(f["injection_bandwidth_bytes_per_s"], 40_800_000_000u64);
    assert_eq!(
        f["link_bandwidth_arithmetic"],
        "2 lanes x 28.05 Gb/s x 64/66 coding / 8 bits = 6.8 GB/s"
    );
    expect_error(
        &["topo", "tofu:k", "--link-bandwidth", "5 GB/s"],
        &["--link-bandwidth", "lanes"],
    );
}

#[test]
fn tpu_v4_slices_and_pod() {
    // The whole pod: 64 blocks x 64 chips = 4096, a 16x16x16 torus. Optical links, one per OCS
    // circuit: 64 blocks x 96 ports / 2 = 3072. Electrical, inside blocks: 64 x 144 = 9216
    // (a 4x4x4 mesh has 3 x 16 x 3 = 144 links).
    let v = json(&["topo", "tpuv4:pod", "--json"]);
    assert_eq!(v["nodes"], 4096);
    assert_eq!(v["links_by_kind"]["optical"], 3072);
    assert_eq!(v["links_by_kind"]["electrical"], 9216);
    // Twisted 4x4x8 slice: same links as the regular one, diameter 6 instead of 8.
    let t = json(&["topo", "tpuv4:slice=4x4x8:twisted", "--json"]);
    assert_eq!(t["diameter"], 6);
    assert_eq!(t["links_by_kind"]["optical"], 96);
    // A slice inside one block is a mesh: 1x2x2 has 4 chips and 4 links.
    let s = json(&["topo", "tpuv4:slice=1x2x2", "--json"]);
    assert_eq!(
        (s["nodes"].as_u64(), s["links"].as_u64()),
        (Some(4), Some(4))
    );
    expect_error(&["topo", "tpuv4:slice=8x4x4"], &["x <= y <= z"]);
    expect_error(&["topo", "tpuv4:slice=4x4x4:twisted"], &["twist"]);
    expect_error(&["topo", "tpuv4:slice=4x4x6"], &["multiples of 4"]);
    expect_error(&["topo", "tpuv4:slice=32x32x32"], &["blocks"]);
}

#[test]
fn fat_tree_shorthand() {
    // k = 16: 16³/4 = 1024 hosts, 5·256/4 = 320 switches, 3 × 1024 links, full bisection of
    // 512 links at 25 GB/s (200 Gb/s) × 2 ways = 25.6 TB/s.
    let v = json(&[
        "topo",
        "fattree:16",
        "--json",
        "--link-bandwidth",
        "200 Gb/s",
    ]);
    assert_eq!(
        (
            v["nodes"].as_u64(),
            v["switches"].as_u64(),
            v["links"].as_u64()
        ),
        (Some(1024), Some(320), Some(3072))
    );
    assert_eq!(v["diameter"], 6);
    assert_eq!(v["bisection_links"], 512);
    assert_eq!(v["bisection_bandwidth_bytes_per_s"], 25_600_000_000_000u64);
    expect_error(&["topo", "fattree:7"], &["even"]);
}

#[test]
fn dojo_presets() {
    // One die: 354 nodes, 354 × 1.25 MB = 442.5 MB; 18 x 20 routers, diameter 17 + 19 = 36.
    let d = json(&["topo", "dojo:die", "--json"]);
    assert_eq!(
        (d["nodes"].as_u64(), d["routers"].as_u64()),
        (Some(354), Some(360))
    );
    assert_eq!(d["sram_bytes"], 442_500_000u64);
    assert_eq!(d["diameter"], 36);
    // 10 x 12 tiles: 3000 dies, 1,062,000 nodes; DIPs on 50 die rows x 2 edges = 100, 20 hosts.
    let s = json(&["topo", "dojo:system=10x12", "--json"]);
    assert_eq!(
        (s["dies"].as_u64(), s["nodes"].as_u64()),
        (Some(3000), Some(1_062_000))
    );
    assert_eq!(
        (s["dips"].as_u64(), s["hosts"].as_u64()),
        (Some(100), Some(20))
    );
    expect_error(&["topo", "dojo:system=10"], &["RxC"]);
    expect_error(&["topo", "dojo:wafer"], &["dojo:die"]);
    expect_error(
        &["topo", "dojo:tile", "--link-bandwidth", "1 GB/s"],
        &["--link-bandwidth"],
    );
}

#[test]
fn tenstorrent_grids() {
    // Wormhole: 10 x 12 tiles as one torus of the two NoCs; 12 DRAM banks; 80 workers less a
    // harvested row of 8 = 72; 32 B/cycle x 1 GHz = 32 GB/s per link.
    let v = json(&["topo", "wormhole:harvest=1", "--json"]);
    assert_eq!(
        (
            v["nodes"].as_u64(),
            v["dram_banks"].as_u64(),
            v["workers"].as_u64()
        ),
        (Some(120), Some(12), Some(72))
    );
    assert_eq!(v["link_bandwidth_bytes_per_s"], 32_000_000_000u64);
    let g = json(&["topo", "grayskull", "--json"]);
    assert_eq!(
        (
            g["nodes"].as_u64(),
            g["dram_banks"].as_u64(),
            g["workers"].as_u64()
        ),
        (Some(156), Some(8), Some(120))
    );
    expect_error(&["topo", "wormhole:harvest=11"], &["0 to 10"]);
}

#[test]
fn microbenchmarks() {
    // TofuD injection with all six TNIs: 6 x 6.8 GB/s = 40.8 GB/s (seed Table I), less the
    // start-up: each 64 MiB put takes 0.41 us endpoint overhead (Tofu2's, section V.B) + 0.1 us
    // hop + 67108864 B / 6.8 GB/s = 9.869460588 ms, so 6 x 67108864 B / 9.869460588 ms =
    // 40.79789 GB/s (time rounded to the picosecond).
    let v = json(&[
        "microbench",
        "injection",
        "--topology",
        "tofu:2x2x4",
        "--json",
    ]);
    assert_eq!(v["streams"], 6);
    assert!((v["throughput_bytes_per_s"].as_f64().unwrap() - 40.797891e9).abs() < 1e4);
    // One-way 8-byte put on 100 ns, 50 GB/s links: 100 ns + 0.16 ns.
    let v = json(&[
        "microbench",
        "put-latency",
        "--topology",
        "torus:4x4",
        "--link-latency",
        "100 ns",
        "--json",
    ]);
    assert!((v["time_s"].as_f64().unwrap() - 100.16e-9).abs() < 1e-15);
    expect_error(
        &["microbench", "put-latncy", "--topology", "torus:4x4"],
        &["nearest is `put-latency`"],
    );
}

#[test]
fn gemm_json_keys_and_conventions() {
    // 256x512x1024 on 32x32, os: 8 x 16 = 128 folds. rtl: 128 x (32 + 32 + 1024) = 139,264
    // cycles; SCALE-Sim: 128 x (1024 + 32 + 32 - 2) - 1 = 139,007.
    let base = [
        "gemm",
        "--array",
        "32x32",
        "--dataflow",
        "os",
        "--m",
        "256",
        "--n",
        "512",
        "--k",
        "1024",
        "--json",
    ];
    let v = json(&base);
    for key in [
        "cycles",
        "folds",
        "macs",
        "utilization",
        "mapping_efficiency",
        "sram_reads",
        "sram_writes",
        "dram_bytes",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["cycles"], 139_264);
    assert_eq!(v["folds"], 128);
    assert_eq!(v["macs"], 256u64 * 512 * 1024);
    let mut s = base.to_vec();
    s.extend(["--convention", "scalesim"]);
    assert_eq!(json(&s)["cycles"], 139_007);
    let bad = podsim(&[
        "gemm",
        "--array",
        "32",
        "--dataflow",
        "os",
        "--m",
        "1",
        "--n",
        "1",
        "--k",
        "1",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--array"));
    let bad = podsim(&[
        "gemm",
        "--array",
        "4x4",
        "--dataflow",
        "xs",
        "--m",
        "1",
        "--n",
        "1",
        "--k",
        "1",
    ]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("os, ws or is"));
}

#[test]
fn systolic_json_and_errors() {
    let dir = std::env::temp_dir().join(format!("podsim-systolic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.csv"), dir.join("b.csv"));
    // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]]: D = [[19, 22], [43, 50]]. Settle cycles
    // i + j + K + 1 with K = 2: [[3, 4], [4, 5]].
    std::fs::write(&a, "1,2\n3,4\n").unwrap();
    std::fs::write(&b, "5,6\n7,8\n").unwrap();
    let args = [
        "systolic",
        "--size",
        "2",
        "--k",
        "2",
        "--a",
        a.to_str().unwrap(),
        "--b",
        b.to_str().unwrap(),
        "--json",
    ];
    let v = json(&args);
    assert_eq!(v["d"], serde_json::json!([[19, 22], [43, 50]]));
    assert_eq!(v["settle_cycle"], serde_json::json!([[3, 4], [4, 5]]));
    std::fs::write(&b, "5,6\n7,300\n").unwrap();
    let out = podsim(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("b.csv:2") && err.contains("int8"),
        "{err}"
    );
}

#[test]
fn numerics_json() {
    // 1.0 in E4M3 is 0x38; 500 overflows to NaN (0x7f) without saturation and to 448 (0x7e)
    // with it (ml_dtypes semantics).
    let v = json(&["numerics", "--format", "e4m3", "1.0", "500", "--json"]);
    assert_eq!(v["values"][0]["bits"], "0x38");
    assert_eq!(v["values"][0]["decoded"], 1.0);
    assert_eq!(v["values"][1]["bits"], "0x7f");
    assert_eq!(v["values"][1]["decoded"], "nan");
    let v = json(&[
        "numerics",
        "--format",
        "e4m3",
        "--saturate",
        "500",
        "--json",
    ]);
    assert_eq!(v["values"][0]["bits"], "0x7e");
    let v = json(&["numerics", "--format", "cfp16:bias=31", "-1", "--json"]);
    assert_eq!(v["values"][0]["bits"], "0xbe00");
    let out = podsim(&[
        "numerics",
        "--format",
        "e4m3",
        "--rounding",
        "stochastic",
        "1.1",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("seed"));
}

#[test]
fn noc_json_keys_and_zero_load_latency() {
    // 4x4 mesh, one-stage routers, 1-cycle links, 1-flit packets: a packet h hops away takes
    // S + h (S - 1 + L) + P = 2 + h cycles; uniform over 16 destinations (self included)
    // averages 2 (k^2 - 1) / (3k) = 2.5 hops, so 4.5 cycles at light load.
    let args = [
        "noc",
        "--topology",
        "mesh:4x4",
        "--routing",
        "dor",
        "--traffic",
        "uniform",
        "--rate",
        "0.02",
        "--cycles",
        "4000",
        "--seed",
        "3",
        "--json",
    ];
    let v = json(&args);
    for key in [
        "offered_flits_per_node_cycle",
        "accepted_flits_per_node_cycle",
        "average_latency_cycles",
        "p99_latency_cycles",
        "average_hops",
        "saturated",
        "simulated_cycles",
        "flit_hops",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["offered_flits_per_node_cycle"], 0.02);
    assert_eq!(v["saturated"], false);
    let hops = v["average_hops"].as_f64().unwrap();
    assert!((hops - 2.5).abs() < 0.1, "{hops}");
    let lat = v["average_latency_cycles"].as_f64().unwrap();
    assert!(
        lat >= 2.0 + hops - 1e-9 && lat < (2.0 + hops) * 1.03,
        "{lat}"
    );
    // Same seed, same numbers.
    assert_eq!(v, json(&args));
}

#[test]
fn noc_sweep_writes_csv_and_svg_and_stops_at_saturation() {
    let dir = std::env::temp_dir().join(format!("podsim-noc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, svg) = (dir.join("c.csv"), dir.join("c.svg"));
    let v = json(&[
        "noc",
        "--topology",
        "torus:4x4",
        "--sweep",
        "0.1:1.0:0.1",
        "--cycles",
        "2000",
        "--config",
        "examples/booksim/podsim-router.toml",
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
        "--json",
    ]);
    let points = v.as_array().unwrap();
    // A 4x4 torus under uniform traffic saturates below 8/k = 2 (capped by injection at 1):
    // the sweep ends at its first saturated point, before 1.0.
    assert!(points.len() >= 3 && points.len() < 10, "{}", points.len());
    assert_eq!(points.last().unwrap()["saturated"], true);
    assert!(
        points[..points.len() - 1]
            .iter()
            .all(|p| p["saturated"] == false)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let data: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(data.len(), points.len() + 1);
    assert!(data[0].starts_with("offered_flits_per_node_cycle,"));
    assert!(text.starts_with("# podsim: ") && text.contains("# topology: torus:4x4\n"));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn noc_errors_name_the_flag() {
    expect_error(&["noc", "--topology", "mesh:4x4"], &["--rate"]);
    expect_error(
        &[
            "noc",
            "--topology",
            "mesh:4x4",
            "--rate",
            "0.1",
            "--routing",
            "noc0",
        ],
        &["--routing", "Tenstorrent"],
    );
    expect_error(
        &[
            "noc",
            "--topology",
            "mesh:3x3",
            "--rate",
            "0.1",
            "--traffic",
            "bitrev",
        ],
        &["--traffic", "power-of-two"],
    );
    expect_error(
        &[
            "noc",
            "--topology",
            "torus:4x4",
            "--rate",
            "0.1",
            "--vcs",
            "1",
        ],
        &["--vcs", "dateline"],
    );
    expect_error(
        &["noc", "--topology", "mesh:4x4", "--rate", "2"],
        &["--rate"],
    );
    expect_error(
        &["noc", "--topology", "mesh:4x4", "--sweep", "0.5:0.1:0.1"],
        &["--sweep", "FROM:TO:STEP"],
    );
}

#[test]
fn roofline_by_hand() {
    // TPU v4: 2 cores x 4 MXUs x 128 x 128 MACs x 2 FLOPs x 1.05 GHz = 275.2512 TFLOP/s over
    // 1200 GB/s (tpu-v4-isca2023.txt Table 4): ridge 229.376 FLOP/B. At 100 FLOP/B the chip is
    // memory-bound at 100 x 1.2e12 = 120 TFLOP/s; at 1000 it reaches the peak.
    let v = json(&[
        "roofline",
        "--chip",
        "tpuv4",
        "--intensity",
        "100",
        "--json",
    ]);
    assert!((v["ridge_flop_per_byte"].as_f64().unwrap() - 229.376).abs() < 1e-9);
    assert!((v["attainable_flops"].as_f64().unwrap() - 1.2e14).abs() < 1.0);
    assert_eq!(v["bound"], "memory");
    let v = json(&[
        "roofline",
        "--chip",
        "tpuv4",
        "--intensity",
        "1000",
        "--json",
    ]);
    assert!((v["attainable_flops"].as_f64().unwrap() - 275.2512e12).abs() < 1.0);
    assert_eq!(v["bound"], "compute");
    // The plot holds the three chips of Fig. 16.
    let dir = std::env::temp_dir().join(format!("podsim-roof-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("roof.svg");
    let o = podsim(&[
        "roofline",
        "--chip",
        "tpuv4",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let text = std::fs::read_to_string(&svg).unwrap();
    for chip in ["tpuv4", "tpuv3", "a100"] {
        assert!(text.contains(chip), "{chip}");
    }
    std::fs::remove_dir_all(&dir).ok();
    expect_error(
        &["roofline", "--chip", "tpuv4", "--intensity", "-1"],
        &["--intensity"],
    );
    expect_error(&["roofline", "--chip", "tpu4"], &["nearest is `tpuv4`"]);
}

#[test]
fn availability_by_hand() {
    // Static wiring: a 1024-chip region runs only when its 256 hosts are up: at 99.9% that is
    // 0.999^256 = 0.77404 (closed form), and the Monte Carlo of 20,000 pods lands within 0.01.
    let v = json(&[
        "availability",
        "--slice-chips",
        "1024",
        "--host-availability",
        "0.999",
        "--static",
        "--trials",
        "20000",
        "--json",
    ]);
    let exact = 0.999f64.powi(256);
    assert!((v["exact_goodput"].as_f64().unwrap() - exact).abs() < 1e-12);
    assert!((v["goodput"].as_f64().unwrap() - exact).abs() < 0.01);
    for k in ["goodput", "slices", "p_schedulable"] {
        assert!(v[k].is_number(), "{k}");
    }
    expect_error(
        &[
            "availability",
            "--slice-chips",
            "100",
            "--host-availability",
            "0.99",
        ],
        &["--slice-chips", "multiple of 64"],
    );
    expect_error(
        &[
            "availability",
            "--slice-chips",
            "1024",
            "--host-availability",
            "1.5",
        ],
        &["--host-availability"],
    );
}

/// `[case.tenstorrent]` errors name the file and the key: a rate without its unit, a matmul
/// case without its shape, the table on a quantity that does not read it.
#[test]
fn tenstorrent_cases_name_the_key_that_is_wrong() {
    let dir = std::env::temp_dir().join(format!("podsim-tt-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let case = |quantity: &str, table: &str| {
        format!(
            "[[case]]\nfigure = \"x\"\nsource = \"y\"\nclass = \"prediction\"\nquantity = \"{quantity}\"\npublished = \"267 GB/s\"\n{table}"
        )
    };
    for (text, key) in [
        (
            case("dram_bandwidth", "[case.tenstorrent]\ndata_rate = \"12\"\n"),
            "case[0].tenstorrent.data_rate",
        ),
        (
            case(
                "matmul_dram_bandwidth",
                "[case.tenstorrent]\ndata_rate = \"12 GT/s\"\nm = 32\n",
            ),
            "case[0].tenstorrent",
        ),
        (
            case(
                "matmul_dram_bandwidth",
                "[case.tenstorrent]\ndata_rate = \"12 GT/s\"\nm = 32\nk = 1048576\nn = 1048576\n",
            ),
            "case[0].tenstorrent",
        ),
        (case("dram_bandwidth", ""), "case[0].tenstorrent"),
        (
            case("nodes", "[case.tenstorrent]\ndata_rate = \"12 GT/s\"\n"),
            "case[0].tenstorrent",
        ),
    ] {
        let f = dir.join("tt.toml");
        std::fs::write(&f, &text).unwrap();
        let out = podsim(&["validate", "--dir", dir.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(
            err.contains("tt.toml") && err.contains(key),
            "{text}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `podsim validate` evaluates its cases on every core and prints them in case order: the same
/// bytes on one thread and on four (three files of quick cases, in a directory of their own).
#[test]
fn validate_prints_the_same_bytes_on_any_thread_count() {
    let dir = std::env::temp_dir().join(format!("podsim-validate-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["k-computer.toml", "tenstorrent.toml", "compute.toml"] {
        std::fs::copy(repo().join("validation").join(f), dir.join(f)).unwrap();
    }
    let run = |threads: &str| {
        Command::new(env!("CARGO_BIN_EXE_podsim"))
            .args(["validate", "--dir", dir.to_str().unwrap()])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .expect("podsim runs")
    };
    let (one, four) = (run("1"), run("4"));
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert!(String::from_utf8_lossy(&one.stdout).contains("predictions: 3 pass, 0 fail;"));
    assert_eq!(one.stdout, four.stdout);
    std::fs::remove_dir_all(&dir).ok();
}

/// Shell completions name every command and flag; the man pages render as roff, one per
/// command with --out.
#[test]
fn completions_and_man_pages_cover_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = podsim(&["completions", shell]);
        assert!(o.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&o.stdout);
        for word in [
            "dram",
            "matmul",
            "collective",
            "harvested-rows",
            "memory-limit",
        ] {
            assert!(text.contains(word), "{shell}: {word}");
        }
    }
    let o = podsim(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    let o = podsim(&["man"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains(".TH podsim 1"));
    let dir = std::env::temp_dir().join(format!("podsim-man-{}", std::process::id()));
    let o = podsim(&["man", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dram = std::fs::read_to_string(dir.join("podsim-dram.1")).unwrap();
    assert!(dram.contains(".TH podsim-dram 1") && dram.contains("harvested"));
    assert!(dir.join("podsim.1").exists() && dir.join("podsim-validate.1").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `--topology FILE` works for `collective` and `microbench` as for `topo` and `noc`: a system
/// file runs the same as its shorthand with the same links, and link flags beside a file are
/// refused (the file states its own links).
#[test]
fn collective_and_microbench_take_a_system_file() {
    let dir = std::env::temp_dir().join(format!("podsim-sysfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("sys.toml");
    std::fs::write(
        &f,
        "topology = \"torus:4x4\"\nlink_bandwidth = \"50 GB/s\"\n",
    )
    .unwrap();
    let file = f.to_str().unwrap();
    let time = |topology: &str| {
        let v = json(&[
            "collective",
            "all-reduce",
            "--topology",
            topology,
            "--bytes",
            "1 MiB",
            "--json",
        ]);
        v["time_s"].as_f64().unwrap()
    };
    assert_eq!(time(file), time("torus:4x4"));
    let o = podsim(&["microbench", "put-latency", "--topology", file]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        file,
        "--bytes",
        "1 MiB",
        "--link-bandwidth",
        "1 GB/s",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("states its own links"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Progress shows on a terminal (run under `script`, which gives the command one) for a run
/// longer than a second and ends with the wall and simulated time; with --quiet, or with
/// stderr not a terminal, nothing is drawn.
#[test]
fn progress_shows_on_a_terminal_only() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` to give podsim a terminal");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_podsim");
    let args = "dram --bytes '32 MiB' --block '64 KiB' --page '8 KiB'";
    let under_tty = |extra: &str| {
        let o = Command::new("script")
            .args([
                "-qec",
                &format!("{bin} {args} {extra} > /dev/null"),
                "/dev/null",
            ])
            .output()
            .expect("script runs");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let shown = under_tty("");
    assert!(shown.contains("podsim dram: done in"), "{shown}");
    assert!(shown.contains("simulated"), "{shown}");
    let quiet = under_tty("--quiet");
    assert!(!quiet.contains("podsim dram"), "{quiet}");
    let o = podsim(&[
        "dram", "--bytes", "16 MiB", "--block", "64 KiB", "--page", "8 KiB",
    ]);
    assert!(o.status.success() && o.stderr.is_empty());
}

/// Issue 39, item 7: on a terminal a sweep shows its points done of the total and the time
/// left, and what it prints on stdout starts on a cleared line (no frame of the bar before
/// it).
#[test]
fn a_sweep_shows_points_and_time_left_and_prints_on_a_clear_line() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` to give podsim a terminal");
        return;
    }
    let dir = std::env::temp_dir().join(format!("podsim-sweep-tty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_podsim");
    let o = Command::new("script")
        .args([
            "-qec",
            &format!(
                "{bin} noc --topology mesh:16x16 --sweep 0.05:0.15:0.05 --cycles 40000 --csv {0}/s.csv --svg {0}/s.svg",
                dir.display()
            ),
            "/dev/null",
        ])
        .output()
        .expect("script runs");
    let shown = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        shown.contains("points, ") && shown.contains(" left"),
        "{shown}"
    );
    // The curve's heading: what follows the last clear or carriage return on its line is the
    // heading itself.
    let line = shown
        .split('\n')
        .find(|l| l.contains("uniform on mesh:16x16"))
        .unwrap_or_else(|| panic!("{shown}"));
    // (a terminal ends its lines with \r\n.)
    let tail = line
        .trim_end_matches('\r')
        .rsplit(['\r', '\u{1b}'])
        .next()
        .unwrap_or("");
    let tail = tail.trim_start_matches("[2K");
    assert!(tail.starts_with("uniform on mesh:16x16"), "{line:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--heatmap` draws a 2-D grid's links coloured by utilisation for `dram` and `noc` (one
/// load), and is refused where there is no 2-D grid to draw or no single run.
#[test]
fn heatmaps_draw_two_dimensional_grids() {
    let dir = std::env::temp_dir().join(format!("podsim-heatmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("h.svg");
    let o = podsim(&[
        "dram",
        "--placement",
        "top-rows",
        "--heatmap",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&f).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("\nD2\n") && svg.contains("\nr10\n"));
    // Two colours at least: the congested routes of the top rows stand out from idle links.
    let strokes: std::collections::HashSet<&str> = svg
        .split("stroke=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();
    assert!(strokes.len() > 2, "{strokes:?}");
    let o = podsim(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.2",
        "--cycles",
        "1000",
        "--heatmap",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    expect_error(
        &[
            "noc",
            "--topology",
            "torus:4x4x4",
            "--rate",
            "0.2",
            "--heatmap",
            "x.svg",
        ],
        &["--heatmap", "torus:4x4x4 is not one"],
    );
    expect_error(
        &[
            "noc",
            "--topology",
            "mesh:4x4",
            "--sweep",
            "0.1:0.2:0.1",
            "--heatmap",
            "x.svg",
        ],
        &["--heatmap", "one load"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `collective --heatmap` draws what each link carried over the collective: on a ring the
/// unidirectional ring all-reduce leaves every link of the other direction idle (drawn in the
/// scale's idle blue, rgb(40, 90, 220)); a 3-D torus is drawn as its z slices.
#[test]
fn collective_heatmaps_show_busy_and_idle_links() {
    let dir = std::env::temp_dir().join(format!("podsim-coll-heatmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("h.svg");
    let f = f.to_str().unwrap();
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        "torus:8",
        "--bytes",
        "1 MiB",
        "--heatmap",
        f,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(f).unwrap();
    let strokes: std::collections::HashSet<&str> = svg
        .split("stroke=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();
    assert!(strokes.contains("#285ADC"), "{strokes:?}");
    assert!(strokes.len() > 2, "{strokes:?}");
    let o = podsim(&[
        "collective",
        "all-to-all",
        "--topology",
        "tpuv4:slice=4x4x8:twisted",
        "--bytes",
        "1 MiB",
        "--heatmap",
        f,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(f).unwrap();
    assert!(svg.contains("z=0") && svg.contains("z=7") && !svg.contains("z=8"));
    // Tofu on its virtual torus: tofu:2x2x2 (X, Y, Z = 2 with A, B, C = 2, 3, 2) is a virtual
    // (2x2) x (2x2) x (2x3) = 4x4x6 torus: six slices.
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        "tofu:2x2x2",
        "--bytes",
        "1 MiB",
        "--heatmap",
        f,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(f).unwrap();
    assert!(svg.contains("z=5") && !svg.contains("z=6"));
    expect_error(
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:8",
            "--bytes",
            "1 MiB",
            "--model",
            "analytic",
            "--heatmap",
            "x.svg",
        ],
        &["--heatmap", "analytic", "--model flow"],
    );
    expect_error(
        &[
            "collective",
            "all-reduce",
            "--topology",
            "fattree:4",
            "--bytes",
            "1 MiB",
            "--heatmap",
            "x.svg",
        ],
        &["--heatmap", "is not one"],
    );
    expect_error(
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:8",
            "--sweep",
            "1 MiB,2 MiB",
            "--heatmap",
            "x.svg",
        ],
        &["--heatmap", "one run"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `podsim report` with no results runs the default scenario into one self-contained HTML
/// file: its context, its two collective runs' tables, per run a bus-bandwidth chart and a link
/// heatmap per system (2 runs x (1 chart + 2 heatmaps) = 6 inline SVG figures) and its trace,
/// inline, behind a button that opens it in Perfetto.
#[test]
fn report_of_the_default_scenario_is_one_file() {
    let dir = std::env::temp_dir().join(format!("podsim-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.html");
    let o = podsim(&["report", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with(": 6 plots, 1 traces\n"));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<body data-plots=\"6\">"));
    assert_eq!(html.matches("<figure><svg").count(), 6);
    assert!(html.contains("4x8x8 twisted") && html.contains("Open the trace in Perfetto"));
    // Nothing is fetched: no src= or stylesheet link (the only URLs are Perfetto's).
    assert!(!html.contains(" src=") && !html.contains("<link"));
    // The trace is valid JSON inside its script element, cut to the default 20,000 events.
    let start = html.find("id=\"trace-0\">").unwrap() + "id=\"trace-0\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let trace: Value = serde_json::from_str(&html[start..end]).unwrap();
    let complete = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .count();
    assert_eq!(complete, 20_000);

    // Results of other commands: a sweep's CSV (its curve), podsim JSON (a table), an SVG (a
    // figure) and a trace: 2 figures, 1 trace.
    let csv = dir.join("sweep.csv");
    let svg = dir.join("h.svg");
    let tr = dir.join("t.json");
    let js = dir.join("topo.json");
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        "torus:4x4",
        "--sweep",
        "1 MiB,4 MiB",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        "torus:4x4",
        "--bytes",
        "1 MiB",
        "--heatmap",
        svg.to_str().unwrap(),
        "--trace",
        tr.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = podsim(&["topo", "torus:4x4", "--json"]);
    std::fs::write(&js, &o.stdout).unwrap();
    let paths = [&csv, &js, &svg, &tr].map(|p| p.to_str().unwrap().to_string());
    let mut args = vec!["report", "--out", out.to_str().unwrap(), "--title", "mine"];
    args.extend(paths.iter().map(String::as_str));
    let o = podsim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with(": 2 plots, 1 traces\n"));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<title>mine</title>"));
    // The sweep's context and its rows; the topology's metrics.
    assert!(html.contains("<td>kind</td><td>all-reduce</td>") && html.contains("<td>1048576</td>"));
    assert!(html.contains("<td>diameter</td>"));

    expect_error(&["report", "--out", "r.txt"], &["--out", "ending in .html"]);
    expect_error(
        &["report", "--out", out.to_str().unwrap(), "Cargo.lock"],
        &["Cargo.lock", "expected a scenario (.toml)"],
    );
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "[1, 2").unwrap();
    expect_error(
        &[
            "report",
            "--out",
            out.to_str().unwrap(),
            bad.to_str().unwrap(),
        ],
        &["bad.json", "line 1", "podsim's JSON output"],
    );
    let wl = repo().join("examples/workload-pipeline.toml");
    expect_error(
        &[
            "report",
            "--out",
            out.to_str().unwrap(),
            wl.to_str().unwrap(),
        ],
        &["workload-pipeline.toml", "a workload file"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A collective sweep's `--plot`: bus bandwidth against size, log-log, with the bound dashed;
/// refused without a sweep. The noc sweep's curve has a log latency axis and a legend that
/// names the saturated load.
#[test]
fn sweep_plots_have_legends() {
    let dir = std::env::temp_dir().join(format!("podsim-sweep-plots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, svg) = (dir.join("c.csv"), dir.join("c.svg"));
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        "torus:4x4",
        "--sweep",
        "1 MiB,4 MiB",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("bus bandwidth") && text.contains("the physical bound"));
    assert!(text.contains("bytes per rank") && text.contains("MB"));
    expect_error(
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:4x4",
            "--bytes",
            "1 MiB",
            "--plot",
            "x.svg",
        ],
        &["--plot", "add --sweep"],
    );
    let (csv, svg) = (dir.join("n.csv"), dir.join("n.svg"));
    let o = podsim(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--sweep",
        "0.2:0.9:0.35",
        "--cycles",
        "2000",
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("log scale") && text.contains("p99 latency"));
    assert!(text.contains("saturated at 0.9"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `workload --heatmap` draws what the links carried over the whole step (flow model); the
/// data-parallel example's 4x4x4 slice is drawn as its four z slices.
#[test]
fn workload_heatmap() {
    let dir = std::env::temp_dir().join(format!("podsim-wl-heatmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("w.svg");
    let wl = repo().join("examples/workload-data-parallel.toml");
    let o = podsim(&[
        "workload",
        wl.to_str().unwrap(),
        "--heatmap",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("z=3") && !text.contains("z=4"));
    expect_error(
        &[
            "workload",
            wl.to_str().unwrap(),
            "--model",
            "analytic",
            "--heatmap",
            "x.svg",
        ],
        &["--heatmap", "--model flow"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A scenario's command runs: any podsim command line, run as typed from the scenario's
/// directory; checked before anything runs (a bad flag, a command that runs scenarios or a
/// global flag is an error naming the run); under --json each gives its command's JSON.
#[test]
fn scenarios_hold_command_runs() {
    let study = repo().join("examples/whole-study.toml");
    let o = podsim(&["run", study.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    // The GEMM by hand: 2048^3 on 128x128, weight-stationary: 16 x 16 = 256 folds.
    assert!(text.contains("$ podsim gemm --array 128x128") && text.contains("256 (16 x 16)"));
    assert!(text.contains("$ podsim train") && text.contains("$ podsim noc"));
    let v = json(&["run", study.to_str().unwrap(), "--json"]);
    let gemm = v
        .as_array()
        .unwrap()
        .iter()
        .find(|x| {
            x["command"]
                .as_str()
                .is_some_and(|c| c.starts_with("podsim gemm"))
        })
        .unwrap();
    assert_eq!(gemm["result"]["folds"], 256);
    let dir = std::env::temp_dir().join(format!("podsim-cmd-runs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (args, says) in [
        (
            "[\"gemm\", \"--m\", \"8\"]",
            "run[0].args`: the following required",
        ),
        ("[\"run\"]", "`run` cannot run inside a scenario"),
        (
            "[\"noc\", \"--quiet\", \"--topology\", \"mesh:4x4\", \"--rate\", \"0.1\"]",
            "give them there",
        ),
        ("[\"nosuch\"]", "run[0].args`: unrecognized subcommand"),
    ] {
        let f = dir.join("s.toml");
        std::fs::write(
            &f,
            format!("name = \"s\"\n[[run]]\nwhat = \"command\"\nargs = {args}\n"),
        )
        .unwrap();
        expect_error(&["run", f.to_str().unwrap()], &["s.toml", says]);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `validate --csv` writes each case's value as it is done and, run again, keeps the values
/// there (a value edited in the file shows in the table: it was not computed again); other
/// case files are refused, naming what differs.
#[test]
fn validation_sweeps_resume() {
    let dir = std::env::temp_dir().join(format!("podsim-validate-csv-{}", std::process::id()));
    let cases = dir.join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    std::fs::copy(
        repo().join("validation/bgq-sequoia.toml"),
        cases.join("bgq.toml"),
    )
    .unwrap();
    let csv = dir.join("v.csv");
    let args = [
        "validate",
        "--dir",
        cases.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ];
    let o = podsim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    // Four cases; the first is Sequoia's 98,304 nodes (16 x 16 x 16 x 12 x 2).
    assert_eq!(text.lines().filter(|l| l.contains("bgq.toml#")).count(), 4);
    assert!(text.contains("bgq.toml#0,98304,"), "{text}");
    // Edited in the file, the kept value is what the table shows (and it now fails).
    std::fs::write(&csv, text.replace("bgq.toml#0,98304,", "bgq.toml#0,98303,")).unwrap();
    let o = podsim(&args);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("98303"));
    // Other cases: refused.
    let more = std::fs::read_to_string(cases.join("bgq.toml")).unwrap() + "\n# edited\n";
    std::fs::write(cases.join("bgq.toml"), more).unwrap();
    expect_error(&args, &["v.csv", "written by a different sweep", "cases"]);
    expect_error(&["validate", "--no-resume"], &["--no-resume", "add --csv"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// `train --search --csv` keeps each flow-model measurement as it is done and, run again,
/// reuses them: the same ranking, no row added; a measurement edited in the file is what the
/// second search ranks by; other settings are refused.
#[test]
fn an_moe_step_on_the_twisted_torus_exchanges_its_tokens_faster() {
    // examples/models/glam-like-moe.toml on 128 chips, the expert axis over all of them: 4096
    // tokens a chip, top-2 at capacity factor 1, 8192 rows of 2048 in bf16 = 32 MiB each chip
    // sends in each all-to-all; 6 a MoE layer (forward, recomputed forward, backward) and 12
    // MoE layers: 72 all-to-alls of 32 MiB over the whole slice, which is what `podsim
    // collective all-to-all` runs (nothing else is on the network while they run: model1 and
    // model2 are 1, and the gradient sum waits for the end of the backward pass).
    let step = |system: &str| {
        json(&[
            "train",
            "--model",
            "examples/models/glam-like-moe.toml",
            "--system",
            system,
            "--parallel",
            "pipeline=1,data=128,model1=1,model2=1,expert=128",
            "--json",
        ])
    };
    let a2a = |system: &str| {
        json(&[
            "collective",
            "all-to-all",
            "--topology",
            system,
            "--bytes",
            "32 MiB",
            "--json",
        ])["time_s"]
            .as_f64()
            .unwrap()
    };
    let mut times = Vec::new();
    for system in ["tpuv4:slice=4x4x8", "tpuv4:slice=4x4x8:twisted"] {
        let s = step(system);
        assert_eq!(s["parallel"], "[1,128,1,1,128]");
        let got = s["expert_all_to_all_s"].as_f64().unwrap();
        let want = 72.0 * a2a(system);
        assert!(
            (got - want).abs() / want < 0.01,
            "{system}: train's {got} s against 72 collectives' {want} s"
        );
        assert!(s["exposed_communication_s"].as_f64().unwrap() >= got * (1.0 - 1e-9));
        times.push((got, s["step_time_s"].as_f64().unwrap()));
    }
    // The twisted torus's all-to-all is faster (tpu-v4-isca2023.txt, Fig. 6: 1.63x on
    // 4x4x8), and so is the step.
    assert!(times[1].0 * 1.3 < times[0].0, "{times:?}");
    assert!(times[1].1 < times[0].1, "{times:?}");
    // A dense step's JSON has the key too, at 0.
    let d = json(&[
        "train",
        "--model",
        "gpt3-1.3b",
        "--system",
        "tpuv4:slice=4x4x4",
        "--parallel",
        "[1,8,1,8]",
        "--model-fidelity",
        "analytic",
        "--json",
    ]);
    assert_eq!(d["expert_all_to_all_s"].as_f64(), Some(0.0));
}

#[test]
fn training_searches_resume() {
    let dir = std::env::temp_dir().join(format!("podsim-train-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("s.csv");
    let args = [
        "train",
        "--model",
        "gpt3-1.3b",
        "--search",
        "--chips",
        "64",
        "--csv",
        csv.to_str().unwrap(),
    ];
    let first = podsim(&args);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows = text.lines().filter(|l| l.starts_with("tpuv4:")).count();
    assert!(rows >= 1, "{text}");
    let second = podsim(&args);
    assert!(second.status.success());
    let ranked = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.contains("per second"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(ranked(&first), ranked(&second));
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), text);
    // Every kept layer made 100 s slower: the reused times are what the search ranks by.
    let slower: String = text
        .lines()
        .map(|l| match l.rsplitn(3, ',').collect::<Vec<_>>()[..] {
            [b, f, key] if key.starts_with("tpuv4:") => {
                let f: f64 = f.parse().unwrap();
                format!("{key},{},{b}\n", f + 100.0)
            }
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&csv, slower).unwrap();
    let third = podsim(&args);
    assert!(third.status.success());
    assert_ne!(ranked(&first), ranked(&third));
    let mut other = args.to_vec();
    other[5] = "128";
    expect_error(&other, &["s.csv", "written by a different sweep", "chips"]);
    expect_error(
        &[
            "train",
            "--model",
            "gpt3-1.3b",
            "--system",
            "tpuv4:slice=4x4x4",
            "--parallel",
            "[1,16,1,4]",
            "--csv",
            "x.csv",
        ],
        &["--csv", "only --search"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `podsim import scalesim`: a SCALE-Sim configuration and its convolution topology run as
/// GEMMs. By hand (examples/scalesim/tiny-cnn.csv): Conv1 34x34, 3x3 filter, 3 channels, 16
/// filters, stride 1 -> M = 32 x 32 = 1024, K = 27, N = 16; Conv2 32x32, 3x3, 16 channels,
/// 32 filters, stride 2 -> M = 15 x 15 = 225, K = 144, N = 32. Each layer's cycles are those of
/// `podsim gemm --convention scalesim` on the same shape; the GEMM-mode topology gives SCALE-Sim
/// v3's own Total Cycles for 100x70x50 and 256x512x1024 on 32x32 os (1343 and 139007,
/// crates/compute/tests/scalesim_fixtures.txt).
#[test]
fn scalesim_imports_run_their_layers_as_gemms() {
    let v = json(&[
        "import",
        "scalesim",
        "examples/scalesim/scale.cfg",
        "--json",
    ]);
    let layers = v["layers"].as_array().unwrap();
    let shape = |i: usize| {
        (
            layers[i]["m"].as_u64().unwrap(),
            layers[i]["n"].as_u64().unwrap(),
            layers[i]["k"].as_u64().unwrap(),
        )
    };
    assert_eq!(shape(0), (1024, 16, 27));
    assert_eq!(shape(1), (225, 32, 144));
    for (i, l) in layers.iter().enumerate() {
        let (m, n, k) = shape(i);
        let g = json(&[
            "gemm",
            "--array",
            "32x32",
            "--dataflow",
            "os",
            "--convention",
            "scalesim",
            "--m",
            &m.to_string(),
            "--n",
            &n.to_string(),
            "--k",
            &k.to_string(),
            "--json",
        ]);
        assert_eq!(l["cycles"], g["cycles"], "layer {i}");
    }
    let total: u64 = layers.iter().map(|l| l["cycles"].as_u64().unwrap()).sum();
    assert_eq!(v["total_cycles"].as_u64().unwrap(), total);
    assert!(
        v["not_honoured"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k.as_str().unwrap().contains("ReadRequestBuffer"))
    );
    let v = json(&[
        "import",
        "scalesim",
        "examples/scalesim/scale.cfg",
        "examples/scalesim/gemm.csv",
        "--json",
    ]);
    let cycles: Vec<u64> = v["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["cycles"].as_u64().unwrap())
        .collect();
    assert_eq!(cycles, [1343, 139007]);
    // Bad input names the file and what is wrong.
    let dir = std::env::temp_dir().join(format!("podsim-scalesim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("bad.cfg");
    std::fs::write(
        &cfg,
        "[architecture_presets]\nArrayWidth: 8\nDataflow: os\n",
    )
    .unwrap();
    expect_error(
        &[
            "import",
            "scalesim",
            cfg.to_str().unwrap(),
            "examples/scalesim/gemm.csv",
        ],
        &["bad.cfg", "ArrayHeight", "missing"],
    );
    let csv = dir.join("bad.csv");
    std::fs::write(&csv, "Layer, A, B\nx, 1, 2\n").unwrap();
    expect_error(
        &[
            "import",
            "scalesim",
            "examples/scalesim/scale.cfg",
            csv.to_str().unwrap(),
        ],
        &["bad.csv", "header"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `podsim import booksim`: the BookSim 2 configuration examples/booksim/mesh88.cfg imports,
/// with `--router podsim`, to the router of examples/booksim/podsim-router.toml (written by
/// hand from BookSim's manual): the same `podsim noc` run, to the byte; by default to the
/// BookSim router mode with the file's own delays and allocators. A packet rate is turned into
/// flits; a topology podsim cannot import is refused.
#[test]
fn booksim_configs_import_to_the_same_router() {
    let dir = std::env::temp_dir().join(format!("podsim-booksim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.toml");
    let import = |router: &str| {
        json(&[
            "import",
            "booksim",
            "examples/booksim/mesh88.cfg",
            "--router",
            router,
            "--out",
            out.to_str().unwrap(),
            "--json",
        ])
    };
    let v = import("booksim");
    assert_eq!(v["topology"], "mesh:8x8");
    assert_eq!(v["rate"], 0.3);
    // mesh88.cfg: lookahead routing, a credit delay of 1, separable input-first allocators.
    assert_eq!(v["router"]["router"], "booksim");
    assert_eq!(v["router"]["routing_delay"], 0);
    assert_eq!(v["router"]["credit_delay"], 1);
    assert_eq!(v["router"]["allocator"], "separable-input-first");
    assert_eq!(v["not_honoured"], serde_json::json!([]));
    let v = import("podsim");
    assert_eq!(v["router"]["pipeline_stages"], 3);
    let run = |config: &str| {
        podsim(&[
            "noc",
            "--config",
            config,
            "--topology",
            "mesh:8x8",
            "--rate",
            "0.3",
            "--cycles",
            "2000",
            "--json",
        ])
        .stdout
    };
    assert_eq!(
        run(out.to_str().unwrap()),
        run("examples/booksim/podsim-router.toml")
    );
    let cfg = dir.join("t.cfg");
    std::fs::write(
        &cfg,
        "topology = torus; k = 4; n = 3; packet_size = 4; injection_rate = 0.05;\nnum_vcs = 2; routing_function = min_adapt;\n",
    )
    .unwrap();
    let v = json(&["import", "booksim", cfg.to_str().unwrap(), "--json"]);
    assert_eq!(v["topology"], "torus:4x4x4");
    assert!((v["rate"].as_f64().unwrap() - 0.2).abs() < 1e-12);
    assert!(v["not_honoured"].as_array().unwrap().iter().any(|n| {
        n.as_str()
            .unwrap()
            .starts_with("routing_function = min_adapt")
    }));
    std::fs::write(&cfg, "topology = fly; k = 4; n = 2;\n").unwrap();
    expect_error(
        &["import", "booksim", cfg.to_str().unwrap()],
        &["t.cfg", "topology", "fly"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Sweeps spread their points over every core and land them in a fixed order: a collective
/// sweep and a noc sweep print and write the same bytes on one thread and on eight.
#[test]
fn sweeps_write_the_same_bytes_on_any_thread_count() {
    let sweeps: [&[&str]; 2] = [
        &[
            "collective",
            "all-to-all",
            "--topology",
            "torus:4x4",
            "--sweep",
            "1 KiB,64 KiB,1 MiB,4 MiB,16 MiB",
        ],
        &[
            "noc",
            "--topology",
            "mesh:4x4",
            "--sweep",
            "0.05:0.6:0.05",
            "--cycles",
            "1000",
        ],
    ];
    for (i, args) in sweeps.iter().enumerate() {
        let run = |threads: &str| {
            let dir = std::env::temp_dir().join(format!(
                "podsim-sweep-threads-{}-{i}-{threads}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let out = Command::new(env!("CARGO_BIN_EXE_podsim"))
                .args(args.iter().copied())
                .args(["--csv", "s.csv", "--json"])
                .current_dir(&dir)
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .expect("podsim runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let csv = std::fs::read(dir.join("s.csv")).unwrap();
            std::fs::remove_dir_all(&dir).ok();
            (out.stdout, csv)
        };
        let (one, eight) = (run("1"), run("8"));
        assert!(!one.1.is_empty());
        assert_eq!(one, eight, "{args:?}");
    }
}

/// One packet-level run gives the same bytes on one thread and on eight: a small torus (one
/// part) and a 32x16 mesh, whose 512 routers run on the fast engine on one thread and are
/// split into a part per thread on eight, link counters included.
#[test]
fn noc_prints_the_same_bytes_on_any_thread_count() {
    for args in [
        &[
            "--topology",
            "torus:8x8",
            "--rate",
            "0.3",
            "--cycles",
            "2000",
        ][..],
        &[
            "--topology",
            "mesh:32x16",
            "--rate",
            "0.25",
            "--cycles",
            "300",
            "--links",
        ][..],
    ] {
        let run = |threads: &str| {
            Command::new(env!("CARGO_BIN_EXE_podsim"))
                .arg("noc")
                .args(args)
                .arg("--json")
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .expect("podsim runs")
        };
        let (one, eight) = (run("1"), run("8"));
        assert!(
            one.status.success(),
            "{}",
            String::from_utf8_lossy(&one.stderr)
        );
        assert_eq!(one.stdout, eight.stdout, "{args:?}");
    }
}

/// `podsim noc --router booksim --links` reports every directed link of the network, in the
/// same order and with the same ends as the podsim router: a 4x4 mesh has 2 dimensions x 4
/// rows x 3 links x 2 directions = 48. Utilisation is flits over BookSim's window (not over
/// --cycles): under 1 on every link, and the links' flits add up to about the accepted flits
/// x mean hops (uniform traffic on a 4x4 mesh, self-addressed packets included: 2.5 hops),
/// 0.3 x 16 x 2.5 = 12 flit-hops per cycle of the window. `--heatmap` draws an SVG in this
/// mode too, and the table names the busiest links.
#[test]
fn noc_booksim_router_counts_links() {
    let args = [
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.3",
        "--router",
        "booksim",
        "--links",
    ];
    let v = json(&[&args[..], &["--json"]].concat());
    let links = v["links"].as_array().expect("a links array");
    assert_eq!(links.len(), 48);
    let podsim_mode = json(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.3",
        "--links",
        "--json",
    ]);
    let ends = |v: &Value| -> Vec<(u64, u64)> {
        v["links"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["from"].as_u64().unwrap(), l["to"].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(ends(&v), ends(&podsim_mode));
    let (mut flits, mut utilisation) = (0u64, 0.0f64);
    for l in links {
        let u = l["utilization"].as_f64().unwrap();
        assert!(u > 0.0 && u < 1.0, "{l}");
        flits += l["flits"].as_u64().unwrap();
        utilisation += u;
    }
    // The sum of utilisations is flit-hops per cycle of the window: about 12.
    assert!(
        (utilisation - 12.0).abs() < 1.0,
        "{utilisation} ({flits} flits)"
    );
    let dir = std::env::temp_dir().join(format!("podsim-booksim-links-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("h.svg");
    let o = podsim(&[&args[..], &["--heatmap", f.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("blocked on credits"));
    let svg = std::fs::read_to_string(&f).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `podsim noc --router booksim` and `router = "booksim"` in a --config file run BookSim's
/// router: a lone-ish packet load on a 4x4 mesh at 0.02 sits near BookSim's zero-load latency,
/// (D + 1) x 4 + D + 3 with D = 2.5 mean links for uniform traffic on a 4x4 mesh including
/// self-addressed packets (1.25 per dimension): 19.5 cycles. The file and the flag give the same
/// run; a bad router name or key value is refused naming it.
#[test]
fn noc_booksim_router_mode() {
    let flag = json(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.02",
        "--cycles",
        "20000",
        "--router",
        "booksim",
        "--json",
    ]);
    let lat = flag["average_latency_cycles"].as_f64().unwrap();
    assert!((lat - 19.5).abs() < 1.0, "{lat}");
    let file = json(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.02",
        "--cycles",
        "20000",
        "--config",
        "examples/booksim/booksim-router.toml",
        "--json",
    ]);
    assert_eq!(flag, file);
    let podsim_mode = json(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.02",
        "--cycles",
        "20000",
        "--config",
        "examples/booksim/booksim-router.toml",
        "--router",
        "podsim",
        "--json",
    ]);
    assert_ne!(flag, podsim_mode);
    let bad = podsim(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.1",
        "--router",
        "bsim",
    ]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("--router") && err.contains("bsim"), "{err}");
    let dir = std::env::temp_dir().join(format!("podsim-booksim-mode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("r.toml");
    std::fs::write(&cfg, "router = \"booksim\"\nsw_alloc_delay = 0\n").unwrap();
    let bad = podsim(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.1",
        "--config",
        cfg.to_str().unwrap(),
    ]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("sw_alloc_delay"), "{err}");
    let tree = podsim(&[
        "noc",
        "--topology",
        "fattree:4",
        "--rate",
        "0.1",
        "--router",
        "booksim",
    ]);
    assert!(!tree.status.success());
    assert!(String::from_utf8_lossy(&tree.stderr).contains("k-ary n-cube"));
}

/// Issue 39, item 9: `podsim train` without `--mapping` takes the fastest of the 24 axis orders
/// in closed form, as the validation cases do, and says so: on Table 3's best GPT-3
/// configuration (tpu-v4-isca2023.txt, Table 3: 4x8x16, [16,4,1,8], 1D/1D) it gives the same
/// throughput as that validation case, run here by `podsim validate` on a directory holding
/// only it.
#[test]
fn train_without_a_mapping_matches_its_validation_case() {
    let dir = std::env::temp_dir().join(format!("podsim-train-map-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("gpt3.toml"),
        "[[case]]\nfigure = \"GPT-3 best\"\nsource = \"tpu-v4-isca2023.txt, Table 3\"\nclass = \"prediction\"\nquantity = \"train_throughput\"\npublished = \"25.0\"\ntolerance = \"2.5\"\ntolerance_reason = \"three figures\"\n[case.train]\nmodel = \"gpt3-175b\"\nsystem = \"tpuv4:slice=4x8x16\"\nparallel = \"[16,4,1,8]\"\npartition = \"1d/1d\"\n",
    )
    .unwrap();
    let v = json(&["validate", "--dir", dir.to_str().unwrap(), "--json"]);
    let case = v["cases"][0]["podsim"].as_f64().unwrap();
    let t = json(&[
        "train",
        "--model",
        "gpt3-175b",
        "--system",
        "tpuv4:slice=4x8x16",
        "--parallel",
        "[16,4,1,8]",
        "--partition",
        "1d/1d",
        "--json",
    ]);
    assert_eq!(t["mapping_chosen"], true);
    // validate prints its values to three decimals.
    let tp = t["throughput_seqs_per_s"].as_f64().unwrap();
    assert_eq!(format!("{tp:.3}"), format!("{case:.3}"), "{tp} vs {case}");
    let text = podsim(&[
        "train",
        "--model",
        "gpt3-175b",
        "--system",
        "tpuv4:slice=4x8x16",
        "--parallel",
        "[16,4,1,8]",
        "--partition",
        "1d/1d",
    ]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("the fastest of the 24 axis orders"),
        "{text:?}"
    );
    // A mapping given is taken as given.
    let given = json(&[
        "train",
        "--model",
        "gpt3-175b",
        "--system",
        "tpuv4:slice=4x8x16",
        "--parallel",
        "[16,4,1,8]",
        "--partition",
        "1d/1d",
        "--mapping",
        "pipeline,data,model1,model2",
        "--json",
    ]);
    assert_eq!(given["mapping_chosen"], false);
    assert_eq!(given["mapping"], "pipeline,data,model1,model2");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 39, item 8: `podsim import booksim examples/booksim/mesh88.cfg` targets the BookSim
/// router mode, and the run it prints reproduces BookSim 2's own curve of that configuration
/// (tools/booksim/curves/mesh8x8_p1_sif_rd0_cd1.csv, made by BookSim at commit 28f43299 from
/// tools/booksim/configs/mesh8x8_p1_sif_rd0_cd1.cfg, mesh88.cfg with its comments) within the
/// BookSim mode's stated agreement (tools/booksim/README.md): latency within 5% below 80% of
/// saturation, saturation throughput within 3%.
#[test]
fn an_imported_booksim_configuration_reproduces_booksims_curve() {
    let dir = std::env::temp_dir().join(format!("podsim-booksim-curve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r.toml");
    let v = json(&[
        "import",
        "booksim",
        "examples/booksim/mesh88.cfg",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let command: Vec<String> = v["command"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect();
    let csv = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tools/booksim/curves/mesh8x8_p1_sif_rd0_cd1.csv"
    ))
    .unwrap();
    // injection_rate, packet_latency_avg, ..., accepted_flit_rate (column 4), saturated.
    let rows: Vec<Vec<String>> = csv
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("injection_rate"))
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let booksim = |rate: &str| rows.iter().find(|r| r[0] == rate).unwrap().clone();
    // BookSim's saturation throughput: the most accepted before its runs turn unstable.
    let saturation = rows
        .iter()
        .filter(|r| r[5] == "false")
        .map(|r| r[4].parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    let run = |rate: &str| {
        let mut args: Vec<&str> = command.iter().map(String::as_str).collect();
        let i = args.iter().position(|a| *a == "--rate").unwrap();
        args[i + 1] = rate;
        args.push("--json");
        json(&args)
    };
    // 0.1 to 0.3: below 80% of saturation (0.8 x 0.42 = 0.34).
    for rate in ["0.100", "0.200", "0.300"] {
        let want: f64 = booksim(rate)[1].parse().unwrap();
        let got = run(rate)["average_latency_cycles"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= 0.05 * want,
            "{rate}: podsim {got} vs BookSim {want}"
        );
    }
    let accepted = run("0.500")["accepted_flits_per_node_cycle"]
        .as_f64()
        .unwrap();
    assert!(
        (accepted - saturation).abs() <= 0.03 * saturation,
        "saturation: podsim {accepted} vs BookSim {saturation}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 37: `--energy` on `train` and `workload`: the keys, conservation, and the settings
/// it cannot honour refused.
#[test]
fn energy_is_reported_conserved_and_refused_where_it_cannot_be() {
    let step = [
        "train",
        "--model",
        "gpt3-1.3b",
        "--system",
        "tpuv4:slice=4x4x4",
        "--parallel",
        "[1,8,1,8]",
        "--energy",
        "--json",
    ];
    let v = json(&step);
    let total = breakdown_sums_to_total(&v, "train");
    let b = &v["energy_breakdown_j"];
    // Idle: Table 4's 90 W on each of the 64 chips for the whole step.
    let step_s = v["step_time_s"].as_f64().unwrap();
    let idle = b["idle"].as_f64().unwrap();
    assert!((idle - 90.0 * 64.0 * step_s).abs() <= 1e-9 * idle);
    // Mean power per chip: the total over 64 chips and the step.
    let w = v["average_power_w"].as_f64().unwrap();
    assert!((w - total / (64.0 * step_s)).abs() <= 1e-9 * w);
    assert!(v["perf_per_watt"].as_f64().unwrap() > 0.0);
    // Without --energy the keys are absent.
    let plain = json(
        &step[..step.len() - 2]
            .iter()
            .chain(&["--json"])
            .copied()
            .collect::<Vec<_>>(),
    );
    assert!(plain.get("energy_j").is_none());
    // The same configuration on TPU v3 (8x8): idle 123 W a chip.
    let mut v3 = step;
    v3[4] = "tpuv3:8x8";
    let v = json(&v3);
    let idle3 = v["energy_breakdown_j"]["idle"].as_f64().unwrap();
    assert!((idle3 - 123.0 * 64.0 * v["step_time_s"].as_f64().unwrap()).abs() <= 1e-9 * idle3);
    // A workload's energy: the same keys, idle over its chips and time.
    let v = json(&[
        "workload",
        "examples/workload-data-parallel.toml",
        "--energy",
        "--json",
    ]);
    let idle = v["energy_breakdown_j"]["idle"].as_f64().unwrap();
    assert!((idle - 90.0 * 64.0 * v["time_s"].as_f64().unwrap()).abs() <= 1e-9 * idle);
    // The plot: one stacked bar, the four components named in its legend.
    let dir = std::env::temp_dir().join(format!("podsim-energy-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("e.svg");
    let mut plotted: Vec<&str> = step[..step.len() - 1].to_vec();
    plotted.extend(["--plot", svg.to_str().unwrap()]);
    let o = podsim(&plotted);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    for part in ["compute", "memory", "network", "idle", "joules per chip"] {
        assert!(text.contains(part), "the plot lacks {part}");
    }
    std::fs::remove_dir_all(&dir).ok();
    // A collective's energy: idle over its 64 chips and time; the network's, the bytes the
    // plan puts on the wire (its own count, bytes_on_wire) at 5 pJ/bit (40 pJ a byte).
    let v = json(&[
        "collective",
        "all-reduce",
        "--topology",
        "tpuv4:slice=4x4x4",
        "--bytes",
        "64 MiB",
        "--energy",
        "--json",
    ]);
    let b = &v["energy_breakdown_j"];
    let idle = b["idle"].as_f64().unwrap();
    assert!((idle - 90.0 * 64.0 * v["time_s"].as_f64().unwrap()).abs() <= 1e-9 * idle);
    let net = b["network"].as_f64().unwrap();
    let wire = v["bytes_on_wire"].as_f64().unwrap();
    assert!((net - wire * 40e-12).abs() <= 1e-9 * net, "{net} vs {wire}");
    expect_error(
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:4x4x4",
            "--bytes",
            "1 MiB",
            "--energy",
        ],
        &["--energy", "names no chip"],
    );
    expect_error(
        &[
            "train",
            "--model",
            "gpt3-1.3b",
            "--system",
            "tpuv4:slice=4x4x4",
            "--parallel",
            "[1,8,1,8]",
            "--plot",
            "x.svg",
        ],
        &["--plot", "add --energy"],
    );
    expect_error(
        &[
            "train",
            "--model",
            "gpt3-1.3b",
            "--search",
            "--chips",
            "64",
            "--energy",
        ],
        &["--energy", "reports no energy"],
    );
    expect_error(
        &[
            "workload",
            "examples/workload-data-parallel.toml",
            "--model",
            "analytic",
            "--energy",
        ],
        &["--energy", "add --model flow"],
    );
    expect_error(
        &[
            "train",
            "--model",
            "gpt3-1.3b",
            "--system",
            "examples/machines/dgx-h100.toml",
            "--parallel",
            "[1,1,1,8]",
            "--energy",
        ],
        &["--energy", "no power figures"],
    );
    // The data-parallel example keeps the A100s' tensor cores streaming most of the run:
    // 527.2 W a chip by the power figures (90 W idle + 448.5 W x a busy share near 0.97),
    // above the A100's 400 W TDP, so it is refused.
    expect_error(
        &[
            "workload",
            "examples/workload-data-parallel.toml",
            "--system",
            "examples/machines/dgx-a100.toml",
            "--energy",
        ],
        &["527.2 W", "400 W limit"],
    );
}

/// Issue 37 item 2: `--energy` on `dram` and `matmul` (Wormhole, Grayskull): the four keys,
/// the breakdown summing to the total, the help naming the keys, and nothing added without it.
#[test]
fn dram_and_matmul_energy_are_reported_and_conserved() {
    let check = |args: &[&str], perf_unit_per_s: &str| {
        let v = json(args);
        breakdown_sums_to_total(&v, &format!("{args:?}"));
        let w = v["average_power_w"].as_f64().unwrap();
        assert!(w > 0.0 && w <= 200.0, "{args:?}: {w} W");
        let ppw = v["perf_per_watt"].as_f64().unwrap();
        let rate = v[perf_unit_per_s].as_f64().unwrap();
        assert!((ppw - rate / w).abs() <= 1e-6 * ppw, "{args:?}");
        let plain: Vec<&str> = args.iter().copied().filter(|a| *a != "--energy").collect();
        assert!(json(&plain).get("energy_j").is_none(), "{plain:?}");
        v
    };
    // dram: idle 19 W over the run's NoC cycles at 1 GHz; no compute.
    let v = check(&["dram", "--energy", "--json"], "bandwidth_bytes_per_s");
    let cycles = v["cycles"].as_f64().unwrap();
    let idle = v["energy_breakdown_j"]["idle"].as_f64().unwrap();
    assert!((idle - 19.0 * cycles / 1e9).abs() <= 1e-9 * idle);
    assert_eq!(v["energy_breakdown_j"]["compute"].as_f64(), Some(0.0));
    check(
        &["dram", "--chip", "grayskull", "--energy", "--json"],
        "bandwidth_bytes_per_s",
    );
    // matmul: perf per watt is 2 M K N over the time, per watt.
    let v = json(&[
        "matmul", "--m", "32", "--k", "8192", "--n", "3072", "--energy", "--json",
    ]);
    let flops = 2.0 * 32.0 * 8192.0 * 3072.0 / v["time_s"].as_f64().unwrap();
    let ppw = v["perf_per_watt"].as_f64().unwrap();
    assert!((ppw - flops / v["average_power_w"].as_f64().unwrap()).abs() <= 1e-6 * ppw);
    assert!(v["energy_breakdown_j"]["compute"].as_f64().unwrap() > 0.0);
    for cmd in ["dram", "matmul"] {
        let o = podsim(&[cmd, "--help"]);
        let help = String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for key in [
            "--energy",
            "energy_j",
            "average_power_w",
            "energy_breakdown_j",
            "perf_per_watt",
        ] {
            assert!(help.contains(key), "{cmd} --help lacks {key}");
        }
    }
}

/// Issue 36 item 1: `--shard`. PaLM 540B on one 3072-chip pod as PaLM trained it (section 4 of
/// Chowdhery et al. 2022: 12-way model parallel, 256-way fully sharded data parallel), half of
/// its 2048-sequence batch.
#[test]
fn shard_weights_fits_palm_on_a_pod_and_without_it_says_by_how_much_not() {
    let run = [
        "train",
        "--model",
        "palm-540b",
        "--system",
        "tpuv4:slice=12x16x16",
        "--parallel",
        "[1,256,1,12]",
        "--batch",
        "1024",
        "--model-fidelity",
        "analytic",
    ];
    // PaLM: a layer is Q (18432 x 48 x 256), K and V (one 256-wide head each), O
    // (48 x 256 x 18432) and three 18432 x 73728 feed-forward matrices: 18432 x (12800 +
    // 12288 + 221184) = 4,539,285,504 weights; x 118 = 535,635,689,472, + the embedding
    // 256000 x 18432 = 4,718,592,000: 540,354,281,472 weights (Table 1 of Chowdhery et al.:
    // 540.35B), 45,029,523,456 a chip over model2 = 12, 90,059,046,912 bytes of bf16 weights
    // (83.87 GiB) and as many of gradients: far over 32 GiB.
    let mut args = run.to_vec();
    args.push("--json");
    let v = json(&args);
    assert_eq!(v["parameters"], 540_354_281_472.0);
    assert_eq!(v["shard"], "none");
    assert_eq!(v["fits_in_memory"], false);
    assert_eq!(v["memory"]["weights_bytes"], 90_059_046_912.0);
    assert_eq!(v["memory"]["gradients_bytes"], 90_059_046_912.0);
    let out = podsim(&run);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("DOES NOT FIT"), "{text}");
    let over = v["memory_bytes_per_chip"].as_f64().unwrap() - 32.0 * (1u64 << 30) as f64;
    let line = format!(
        "over HBM by            {:.2} GiB",
        over / (1u64 << 30) as f64
    );
    assert!(text.contains(&line), "{text} lacks {line}");
    assert!(text.contains("--shard weights"), "{text}");
    // --shard weights: the bf16 weights and gradients over the 256 data chips too,
    // 90,059,046,912 / 256 = 351,793,152 bytes each; it fits.
    args.extend(["--shard", "weights"]);
    let v = json(&args);
    assert_eq!(v["shard"], "weights");
    assert_eq!(v["fits_in_memory"], true);
    assert_eq!(v["memory"]["weights_bytes"], 351_793_152.0);
    assert_eq!(v["memory"]["gradients_bytes"], 351_793_152.0);
    assert!(v["memory_bytes_per_chip"].as_f64().unwrap() <= 32.0 * (1u64 << 30) as f64);
    let mfu = v["mfu"].as_f64().unwrap();
    assert!(mfu > 0.0 && mfu < 1.0, "{mfu}");
    // ZeRO-1 is the default's weight-update sharding: the same step as none.
    let one = |shard: &str| {
        let mut a = vec![
            "train",
            "--model",
            "gpt3-1.3b",
            "--system",
            "tpuv4:slice=4x4x4",
            "--parallel",
            "[1,8,1,8]",
            "--model-fidelity",
            "analytic",
            "--json",
        ];
        a.extend(["--shard", shard]);
        json(&a)
    };
    let (none, zero1) = (one("none"), one("optimizer"));
    assert_eq!(zero1["shard"], "optimizer");
    assert_eq!(none["step_time_s"], zero1["step_time_s"]);
    assert_eq!(none["memory"], zero1["memory"]);
    // Errors: a stage podsim does not know, and a split over a data axis of one chip.
    expect_error(
        &[&run[..], &["--shard", "zero3"]].concat(),
        &["--shard", "zero3", "weights"],
    );
    expect_error(
        &[
            "train",
            "--model",
            "gpt3-1.3b",
            "--system",
            "tpuv4:slice=4x4x4",
            "--parallel",
            "[1,1,8,8]",
            "--shard",
            "gradients",
        ],
        &["--shard gradients", "data = 1"],
    );
}

/// Issue 36 item 2: `--sequence-parallel`, `--virtual-stages` and `--remat selective`, in JSON
/// and text, and their errors.
#[test]
fn sequence_parallel_virtual_stages_and_selective_remat_are_reported() {
    // GPT-3 1.3B (24 layers) over 4 pipeline stages, 2 data replicas, model2 = 8; 8
    // microbatches.
    let base = [
        "train",
        "--model",
        "gpt3-1.3b",
        "--system",
        "tpuv4:slice=4x4x4",
        "--parallel",
        "[4,2,1,8]",
        "--microbatches",
        "8",
        "--model-fidelity",
        "analytic",
    ];
    let plain = json(&[&base[..], &["--json"]].concat());
    assert_eq!(plain["virtual_stages"], 1);
    assert_eq!(plain["sequence_parallel"], false);
    let set = [
        "--sequence-parallel",
        "--virtual-stages",
        "2",
        "--remat",
        "selective",
    ];
    let v = json(&[&base[..], &set, &["--json"]].concat());
    assert_eq!(v["virtual_stages"], 2);
    assert_eq!(v["sequence_parallel"], true);
    assert_eq!(v["remat"], "selective");
    // The interleaved bubble: (p - 1)/(V m) = 3/16 of the microbatches' stage times.
    let f = |k: &str| v[k].as_f64().unwrap();
    let fraction = f("bubble_time_s") / (8.0 * (f("stage_forward_s") + f("stage_backward_s")));
    assert!((fraction - 3.0 / 16.0).abs() < 1e-12, "{fraction}");
    let out = podsim(&[&base[..], &set].concat());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("1D/1D, sequence parallel, 2 virtual stages"),
        "{text}"
    );
    assert!(text.contains("remat selective"), "{text}");
    // Settings with no effect, and what the interleaved schedule cannot run.
    let with = |par: &'static str, extra: &[&'static str]| {
        let mut a = base.to_vec();
        a[6] = par;
        a.extend(extra);
        a
    };
    expect_error(
        &with("[4,16,1,1]", &["--sequence-parallel"]),
        &["--sequence-parallel", "model2 = 1"],
    );
    expect_error(
        &with(
            "[4,2,1,8]",
            &["--sequence-parallel", "--partition", "2d/2d"],
        ),
        &["--sequence-parallel", "2D activations"],
    );
    expect_error(
        &with("[1,8,1,8]", &["--virtual-stages", "2"]),
        &["--virtual-stages 2", "pipeline = 1"],
    );
    expect_error(
        &with("[4,2,1,8]", &["--virtual-stages", "5"]),
        &["--virtual-stages 5", "24 layers"],
    );
    expect_error(
        &with("[4,2,1,8]", &["--virtual-stages", "0"]),
        &["--virtual-stages"],
    );
    expect_error(
        &[
            "train",
            "--model",
            "gpt3-1.3b",
            "--search",
            "--chips",
            "64",
            "--virtual-stages",
            "2",
        ],
        &["--virtual-stages", "the search chooses it"],
    );
}

/// Issue 38 item 2: every point of a BookSim-mode sweep is the point run alone, to the byte
/// (the sweep's JSON element as printed against the single run's stdout, and its CSV row
/// against the row the single run's numbers make), on the four sweep configurations of the
/// issue (8x8 mesh and torus, 1- and 4-flit packets, 0.05 to 0.40 in steps of 0.05), on two
/// threads (the points of a batch run side by side); and on podsim's own router once.
#[test]
fn sweep_points_are_the_points_run_alone() {
    let dir = std::env::temp_dir().join(format!("podsim-sweep-alone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, svg) = (dir.join("s.csv"), dir.join("s.svg"));
    let (csv, svg) = (csv.to_str().unwrap(), svg.to_str().unwrap());
    for (topology, flits, router) in [
        ("mesh:8x8", "1", "booksim"),
        ("mesh:8x8", "4", "booksim"),
        ("torus:8x8", "1", "booksim"),
        ("torus:8x8", "4", "booksim"),
        ("torus:4x4", "2", "podsim"),
    ] {
        let common = [
            "noc",
            "--topology",
            topology,
            "--packet-flits",
            flits,
            "--router",
            router,
            "--json",
        ];
        let mut args = common.to_vec();
        args.extend(["--sweep", "0.05:0.40:0.05", "--csv", csv, "--svg", svg]);
        args.push("--no-resume");
        let out = Command::new(env!("CARGO_BIN_EXE_podsim"))
            .args(&args)
            .env("RAYON_NUM_THREADS", "2")
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The array's elements as printed (flat objects: no nested ones without --links),
        // not parsed and printed again (parsing may move a float's last digit).
        let text = String::from_utf8(out.stdout).unwrap();
        let inner = text.trim_end().strip_prefix("[{").unwrap();
        let inner = inner.strip_suffix("}]").unwrap();
        let printed: Vec<String> = inner.split("},{").map(|p| format!("{{{p}}}")).collect();
        assert_eq!(
            printed.len(),
            8,
            "{topology} {flits}: none of these loads saturates"
        );
        let rows: Vec<String> = std::fs::read_to_string(csv)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(1)
            .map(str::to_string)
            .collect();
        // A key's value in a flat JSON object, as printed.
        let field = |json: &str, key: &str| {
            let at = json.find(&format!("\"{key}\":")).unwrap() + key.len() + 3;
            json[at..].split([',', '}']).next().unwrap().to_string()
        };
        for (i, point) in printed.iter().enumerate() {
            let rate = field(point, "offered_flits_per_node_cycle");
            let mut one = common.to_vec();
            one.extend(["--rate", &rate]);
            let alone = podsim(&one);
            assert!(alone.status.success());
            let alone = String::from_utf8(alone.stdout).unwrap();
            assert_eq!(
                point,
                alone.trim_end(),
                "{topology} {flits}-flit {router} at {rate}"
            );
            // The CSV row's leading columns are the single run's numbers as printed.
            let lead = [
                "offered_flits_per_node_cycle",
                "generated_flits_per_node_cycle",
                "accepted_flits_per_node_cycle",
                "average_latency_cycles",
            ]
            .map(|k| field(&alone, k))
            .join(",");
            assert!(rows[i].starts_with(&lead), "{} vs {lead}", rows[i]);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `--seeds N`: one seed is the run alone; three are the runs of seeds 1, 2 and 3 alone, their
/// mean and sample standard deviation computed here from the single runs' printed numbers;
/// the same bytes on one thread and on three; a sweep of seeds has a summary per load; the
/// flags it cannot honour are refused.
#[test]
fn seeds_report_the_mean_and_spread_of_the_runs_alone() {
    let base = [
        "noc",
        "--topology",
        "torus:8x8",
        "--router",
        "booksim",
        "--rate",
        "0.3",
        "--json",
    ];
    let with = |extra: &[&str], threads: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_podsim"))
            .args(base)
            .args(extra)
            .env("RAYON_NUM_THREADS", threads)
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let single =
        |seed: &str| -> Value { serde_json::from_slice(&with(&["--seed", seed], "1")).unwrap() };
    let one: Value = serde_json::from_slice(&with(&["--seeds", "1"], "2")).unwrap();
    let alone = single("1");
    assert_eq!(one["seeds"], 1);
    assert_eq!(one["latency_mean"], alone["average_latency_cycles"]);
    assert_eq!(one["accepted_mean"], alone["accepted_flits_per_node_cycle"]);
    assert_eq!(one["latency_stddev"], 0.0);
    assert_eq!(one["runs"][0]["flit_hops"], alone["flit_hops"]);
    let three = with(&["--seeds", "3"], "3");
    assert_eq!(
        three,
        with(&["--seeds", "3"], "1"),
        "the same bytes on any thread count"
    );
    let v: Value = serde_json::from_slice(&three).unwrap();
    let lat: Vec<f64> = ["1", "2", "3"]
        .iter()
        .map(|s| single(s)["average_latency_cycles"].as_f64().unwrap())
        .collect();
    let mean = (lat[0] + lat[1] + lat[2]) / 3.0;
    let var = lat.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 2.0;
    assert!((v["latency_mean"].as_f64().unwrap() - mean).abs() < 1e-9);
    assert!((v["latency_stddev"].as_f64().unwrap() - var.sqrt()).abs() < 1e-9);
    let lo = lat.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(v["latency_min"].as_f64().unwrap(), lo);
    assert_eq!(
        (v["seeds"].clone(), v["first_seed"].clone()),
        (3.into(), 1.into())
    );
    let curve = json(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--sweep",
        "0.1:0.2:0.1",
        "--seeds",
        "2",
        "--json",
    ]);
    assert_eq!(curve.as_array().unwrap().len(), 2);
    assert_eq!(curve[1]["offered_flits_per_node_cycle"], 0.2);
    let text = podsim(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.1",
        "--seeds",
        "2",
    ]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("lat mean") && text.contains("2 from 1"),
        "{text}"
    );
    expect_error(
        &[
            "noc",
            "--topology",
            "mesh:4x4",
            "--rate",
            "0.1",
            "--seeds",
            "2",
            "--csv",
            "x.csv",
        ],
        &["--seeds", "--csv"],
    );
    expect_error(
        &["noc", "--topology", "mesh:4x4", "--seeds", "2"],
        &["--seeds", "--rate"],
    );
    expect_error(
        &[
            "noc",
            "--topology",
            "mesh:4x4",
            "--rate",
            "0.1",
            "--seeds",
            "0",
        ],
        &["--seeds"],
    );
}

/// Issue 37: `podsim run --energy` gives each collective and workload run of a scenario the
/// energy its own command gives it (a second path: `collective --energy`, `workload
/// --energy`), and refuses a scenario where it would change nothing or cannot be honoured.
#[test]
fn run_energy_is_each_runs_own_energy() {
    let runs = json(&["run", "--energy", "--json"]);
    let twisted = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["topology"] == "4x4x8 twisted")
        .expect("the default scenario's 4x4x8 twisted row");
    let alone = json(&[
        "collective",
        "all-to-all",
        "--topology",
        "tpuv4:slice=4x4x8:twisted",
        "--bytes",
        "16 MiB",
        "--energy",
        "--json",
    ]);
    for key in ["energy_j", "average_power_w", "perf_per_watt"] {
        assert_eq!(twisted[key], alone[key], "{key}");
    }
    assert_eq!(twisted["energy_breakdown_j"], alone["energy_breakdown_j"]);
    // Without --energy the rows have no energy keys.
    let plain = json(&["run", "--json"]);
    assert!(plain[0].get("energy_j").is_none());
    // A workload file through `run` is `workload`'s.
    let file = "examples/workload-data-parallel.toml";
    let via_run = json(&["run", file, "--energy", "--json"]);
    let direct = json(&["workload", file, "--energy", "--json"]);
    assert_eq!(via_run["energy_j"], direct["energy_j"]);
    // Refused: a scenario with no run that takes energy, and a collective on chips without
    // power figures.
    expect_error(
        &["run", "examples/k-computer.toml", "--energy"],
        &["--energy", "no collective or workload run"],
    );
    let dir = std::env::temp_dir().join(format!("podsim-run-energy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("s.toml");
    std::fs::write(
        &scenario,
        "name = \"s\"\n[[system]]\nname = \"t\"\ntopology = \"torus:4x4\"\nlink_bandwidth = \"50 GB/s\"\n[[run]]\nwhat = \"collective\"\nkind = \"all-reduce\"\nbytes = \"1 MiB\"\nsystems = [\"t\"]\n",
    )
    .unwrap();
    expect_error(
        &["run", scenario.to_str().unwrap(), "--energy"],
        &["--energy", "`run[0]`", "system `t`", "names no chip"],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The energy breakdown of `v` (a command's `--energy --json` output) sums to its `energy_j`,
/// which it returns; `what` names the run in the failure.
fn breakdown_sums_to_total(v: &Value, what: &str) -> f64 {
    let total = v["energy_j"].as_f64().unwrap();
    let b = &v["energy_breakdown_j"];
    let parts: f64 = ["compute", "memory", "network", "idle"]
        .iter()
        .map(|k| b[k].as_f64().unwrap())
        .sum();
    assert!(
        (parts - total).abs() <= 1e-9 * total,
        "{what}: {parts} vs {total}"
    );
    total
}
