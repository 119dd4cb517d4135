//! Fuzzing by property test: the text parsers (scenario, system, workload, validation, model and
//! kernel files, the topology shorthand, and the size/bandwidth/time/frequency/FLOP parsers)
//! take arbitrary input and either accept it or return an error; they never panic. Each target runs a fixed,
//! seeded number of cases (`PODSIM_PROPTEST_CASES` to change it) on two kinds of input: arbitrary
//! Unicode strings, and strings assembled from the grammar's own tokens, which reach far deeper
//! into the parsers than random bytes do.

use std::str::FromStr;

use podsim_config::{
    parse_kernel, parse_machine, parse_model, parse_scenario, parse_shorthand, parse_system,
    parse_topology, parse_validation, parse_workload,
};
use podsim_units::{Bandwidth, Bytes, FlopRate, Flops, Frequency, SimDuration, SimTime};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Cases per target in the default run.
const CASES: u32 = 1500;

fn runner(seed: u8) -> TestRunner {
    let cases = std::env::var("PODSIM_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
    )
}

/// Text assembled from `tokens`, up to `max` of them.
fn assembled(tokens: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(tokens), 0..max).prop_map(|t| t.concat())
}

/// Arbitrary text, or text from the grammar's tokens.
fn text(tokens: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), assembled(tokens, max)]
}

const SHORTHAND_TOKENS: &[&str] = &[
    "torus",
    "mesh",
    "ring",
    "kncube",
    "fattree",
    "tofu",
    "tofu2",
    "tofud",
    "tpuv4",
    "tpuv3",
    "hybrid",
    "dojo",
    "die",
    "tile",
    "grayskull",
    "wormhole",
    "slice",
    "harvest",
    "wrap",
    "twisted",
    "tmt",
    ":",
    "=",
    "x",
    ",",
    " ",
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "12",
    "64",
    "65536",
    "4294967296",
    "18446744073709551616",
    "-1",
    "",
    "\u{0}",
    "é",
];

const UNIT_TOKENS: &[&str] = &[
    "0",
    "1",
    "7",
    "1024",
    "18446744073709551615",
    "18446744073709551616",
    "1e300",
    "1e-300",
    "-",
    "+",
    ".",
    ".5",
    "e",
    "E",
    "inf",
    "nan",
    " ",
    "B",
    "KiB",
    "MiB",
    "GiB",
    "TiB",
    "PiB",
    "EiB",
    "kB",
    "MB",
    "GB",
    "b",
    "/s",
    "B/s",
    "GB/s",
    "Gbit/s",
    "ps",
    "ns",
    "us",
    "µs",
    "ms",
    "s",
    "Hz",
    "MHz",
    "GHz",
    "FLOP",
    "TFLOP",
    "PFLOP",
    "FLOP/s",
    "TFLOP/s",
    "_",
    ",",
];

const TOML_TOKENS: &[&str] = &[
    "\n",
    "[[thread]]",
    "iterations = 3",
    "body = { matmul = 2, loop = 1 }",
    "ops = [\"load\", \"simd\"]",
    "[system]",
    "[machine]",
    "[[task]]",
    "[[case]]",
    "[[run]]",
    "[sweep]",
    "what",
    "what = \"command\"",
    "args = [\"gemm\", \"--m\", \"8\"]",
    "topology",
    "preset",
    "model",
    "kind",
    "algorithm",
    "bytes",
    "sizes",
    "chunk",
    "seed",
    "link_latency",
    "link_bandwidth",
    "group",
    "after",
    "repeat",
    "name",
    "compute",
    "memory",
    "collective",
    "send",
    "to",
    "from",
    "flops",
    "efficiency",
    "quantity",
    "[case.tenstorrent]",
    "data_rate = \"12 GT/s\"",
    "\"dram_bandwidth\"",
    "\"matmul_dram_bandwidth\"",
    "m = 32",
    "k = 8192",
    "n = 3584",
    "dtype = \"bfp4\"",
    "paper",
    "tolerance",
    "source",
    " = ",
    "=",
    "\"",
    "'",
    "[",
    "]",
    "{",
    "}",
    ",",
    "#",
    "\"all\"",
    "\"dim:x\"",
    "\"all-reduce\"",
    "\"barrier\"",
    "\"flow\"",
    "\"packet\"",
    "\"analytic\"",
    "\"metrics\"",
    "\"collective\"",
    "\"workload\"",
    "\"torus:4x4\"",
    "\"mesh:3x3\"",
    "\"tpuv4:slice=4x4x4\"",
    "\"1 MiB\"",
    "\"100 ns\"",
    "\"2.75 TFLOP\"",
    "\"50 GB/s\"",
    "0",
    "1",
    "-1",
    "1.5",
    "1e309",
    "true",
    "[\"a\"]",
    "\"a\"",
    "[0, 5]",
    "nan",
    "inf",
];

/// Parsing any shorthand returns; when it succeeds, building a system of a bounded size returns
/// too (building is where sizes turn into memory).
/// Whether every number in `s` is at most 16 and there are at most four: a network small
/// enough to build in a test.
fn small(s: &str) -> bool {
    let numbers: Vec<&str> = s
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .collect();
    numbers.len() <= 4
        && numbers
            .iter()
            .all(|n| n.parse::<u32>().is_ok_and(|v| v <= 16))
}

#[test]
fn the_topology_shorthand_never_panics() {
    let built = std::cell::Cell::new(0u32);
    runner(1)
        .run(&text(SHORTHAND_TOKENS, 12), |s| {
            let _ = parse_shorthand(&s);
            let _ = parse_topology(&s);
            if let Ok(spec) = podsim_config::system_from_cli(&s, None, None, None)
                && small(&s)
                && spec.build().is_ok()
            {
                built.set(built.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    // The tokens reach the builder, not only the first check of the parser.
    assert!(built.get() > 0, "no generated shorthand built a network");
}

#[test]
fn the_unit_parsers_never_panic() {
    let accepted = std::cell::Cell::new(0u32);
    runner(2)
        .run(&text(UNIT_TOKENS, 6), |s| {
            if Bytes::from_str(&s).is_ok() {
                accepted.set(accepted.get() + 1);
            }
            let _ = Bandwidth::from_str(&s);
            let _ = SimTime::from_str(&s);
            let _ = SimDuration::from_str(&s);
            let _ = Frequency::from_str(&s);
            let _ = Flops::from_str(&s);
            let _ = FlopRate::from_str(&s);
            Ok(())
        })
        .unwrap();
    assert!(accepted.get() > 0, "no generated size parsed");
}

#[test]
fn the_file_parsers_never_panic() {
    runner(3)
        .run(&text(TOML_TOKENS, 40), |s| {
            let _ = parse_scenario("fuzz.toml", &s);
            let _ = parse_system("fuzz.toml", &s);
            let _ = parse_workload("fuzz.toml", &s);
            let _ = parse_validation("fuzz.toml", &s);
            let _ = parse_model("fuzz.toml", &s);
            let _ = parse_kernel("fuzz.toml", &s);
            // A machine file that parses also builds, or says why not.
            if let Ok(m) = parse_machine("fuzz.toml", &s, None) {
                let _ = m.build();
            }
            Ok(())
        })
        .unwrap();
}

/// A seeded sample of what the file parsers accept must name a line for what they reject:
/// every error from a file parser points at the file.
#[test]
fn file_errors_name_the_file() {
    runner(4)
        .run(&assembled(TOML_TOKENS, 40), |s| {
            for e in [
                parse_scenario("fuzz.toml", &s).err(),
                parse_workload("fuzz.toml", &s).err(),
                parse_validation("fuzz.toml", &s).err(),
                parse_kernel("fuzz.toml", &s).err(),
                parse_machine("fuzz.toml", &s, None).err(),
            ]
            .into_iter()
            .flatten()
            {
                let msg = e.to_string();
                prop_assert!(msg.contains("fuzz.toml"), "{msg:?} for {s:?}");
            }
            Ok(())
        })
        .unwrap();
}
