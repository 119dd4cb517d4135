//! The Python bindings and the command line cannot drift (issue 35): each function of the
//! Python module (`python/src/results.rs`, compiled here as it is there, without Python) is
//! run beside the `podsim` command of the same name with the same settings, and the dict it
//! hands Python must have exactly the command's `--json` keys, nested objects included, and
//! the same values (numbers to the last place or two: the command's are printed and read back). Both serialize the same typed result (`TopoOutput`, `CollectiveOutput`,
//! `NocOutput`, `GemmOutput`, `WorkloadOutput`, `DramOutput`) through
//! `podsim_report::to_json`; this test catches a key added on one side only.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[path = "../../../python/src/results.rs"]
mod python;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `podsim ARGS --json`, parsed.
fn cli(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(args)
        .arg("--json")
        .current_dir(repo())
        .output()
        .expect("podsim runs");
    assert!(
        out.status.success(),
        "podsim {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// Every object's keys in `v`, by where they are (`.tasks[0].name`), sorted.
fn keys(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let here = format!("{at}.{k}");
                out.push(here.clone());
                keys(x, &here, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                keys(x, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The Python result `py` has the keys and values of `podsim ARGS --json`.
fn same(py: Result<Value, String>, args: &[&str]) {
    let py = py.unwrap_or_else(|e| panic!("the Python function for `{}`: {e}", args.join(" ")));
    let cli = cli(args);
    let (mut pk, mut ck) = (Vec::new(), Vec::new());
    keys(&py, "", &mut pk);
    keys(&cli, "", &mut ck);
    let only_py: Vec<&String> = pk.iter().filter(|k| !ck.contains(k)).collect();
    let only_cli: Vec<&String> = ck.iter().filter(|k| !pk.contains(k)).collect();
    assert!(
        only_py.is_empty() && only_cli.is_empty(),
        "podsim {}: keys only Python has {only_py:?}, keys only the command has {only_cli:?}",
        args.join(" ")
    );
    assert!(
        alike(&py, &cli),
        "podsim {}: the same keys, other values:\n{py}\n{cli}",
        args.join(" ")
    );
}

/// Equal values, numbers to the last place or two (serde_json's parser, without its
/// `float_roundtrip` feature, may read a printed double one unit in the last place off).
fn alike(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-15 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| alike(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| alike(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn machine_has_the_keys_of_topo() {
    for t in ["torus:4x4", "tofu:fugaku", "dojo:die", "wormhole:harvest=1"] {
        same(python::machine(t), &["topo", t]);
    }
}

#[test]
fn collective_has_the_keys_of_collective() {
    same(
        python::collective("all-reduce", "ring:4", "2 MiB", None, "flow"),
        &[
            "collective",
            "all-reduce",
            "--topology",
            "ring:4",
            "--bytes",
            "2 MiB",
        ],
    );
    // The analytic model below the bound (bound_applied) on a Tofu preset (its latency and
    // endpoint setting).
    same(
        python::collective(
            "all-to-all",
            "tofu:2x1x1",
            "1 MiB",
            Some("direct"),
            "analytic",
        ),
        &[
            "collective",
            "all-to-all",
            "--topology",
            "tofu:2x1x1",
            "--bytes",
            "1 MiB",
            "--algorithm",
            "direct",
            "--model",
            "analytic",
        ],
    );
    // Python's collective lacked these before the two shared one struct.
    let v = python::collective("barrier", "torus:4x4", "0 B", None, "analytic").expect("runs");
    for k in [
        "unverified_reason",
        "bound_applied",
        "link_latency_s",
        "link_latency_source",
        "endpoint",
        "endpoint_overhead_s",
    ] {
        assert!(v.get(k).is_some(), "{k} missing from {v}");
    }
}

#[test]
fn noc_has_the_keys_of_noc() {
    same(
        python::noc("mesh:4x4", 0.1, "uniform", 2000, 1),
        &[
            "noc",
            "--topology",
            "mesh:4x4",
            "--rate",
            "0.1",
            "--traffic",
            "uniform",
            "--cycles",
            "2000",
            "--seed",
            "1",
        ],
    );
}

#[test]
fn gemm_has_the_keys_of_gemm() {
    for dataflow in ["os", "ws", "is"] {
        same(
            python::gemm("32x16", dataflow, 100, 60, 40),
            &[
                "gemm",
                "--array",
                "32x16",
                "--dataflow",
                dataflow,
                "--m",
                "100",
                "--n",
                "60",
                "--k",
                "40",
            ],
        );
    }
}

#[test]
fn workload_has_the_keys_of_workload() {
    let file = repo().join("examples/workload-data-parallel.toml");
    let file = file.to_str().expect("a UTF-8 path");
    same(python::workload(file, None, false), &["workload", file]);
    same(
        python::workload(file, Some("analytic"), false),
        &["workload", file, "--model", "analytic"],
    );
    same(
        python::workload(file, None, true),
        &["workload", file, "--energy"],
    );
}

#[test]
fn dram_has_the_keys_of_dram() {
    same(
        python::dram("wormhole", "next-to-bank", None, false),
        &["dram", "--chip", "wormhole", "--placement", "next-to-bank"],
    );
    same(
        python::dram("wormhole", "next-to-bank", None, true),
        &[
            "dram",
            "--chip",
            "wormhole",
            "--placement",
            "next-to-bank",
            "--energy",
        ],
    );
    same(
        python::dram("grayskull", "top-rows", Some(7.4e9), false),
        &[
            "dram",
            "--chip",
            "grayskull",
            "--placement",
            "top-rows",
            "--data-rate",
            "7400 MT/s",
        ],
    );
}
