//! Machines with real latencies (the system-floor issue, item 4): presets carry per-hop link
//! latencies and endpoint overheads with their sources, flags override them and the output
//! says which applies.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn podsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .expect("podsim runs")
}

fn json(args: &[&str]) -> Value {
    let out = podsim(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

fn put_latency(topology: &str, endpoint: Option<&str>) -> Value {
    let mut args = vec![
        "microbench",
        "put-latency",
        "--topology",
        topology,
        "--json",
    ];
    if let Some(e) = endpoint {
        args.extend(["--endpoint", e]);
    }
    json(&args)
}

/// The put-latency microbenchmark adds its parts as the model says, whatever the row: one
/// endpoint overhead per transfer, one hop (link and two switches, Fig. 7), and 8 bytes at the
/// link's rate (Table I: 6.8, 12.5 and 5.0 GB/s), each read from the run's own JSON and summed
/// here. Which Table III rows the overheads are fitted to, and which they predict, is
/// validation/tofu-put-latency.toml's business (`podsim validate`); the one predicted row,
/// TofuD near-CMG from Tofu2's fitted endpoints, is held to Table III's 0.49 us within 5% here.
#[test]
fn put_latencies_are_the_sum_of_their_parts() {
    for (topology, endpoint, link_bytes_per_s) in [
        ("tofu:2x2x2", None, 6.8e9),
        ("tofu:2x2x2", Some("near-cmg"), 6.8e9),
        ("tofu:2x2x2", Some("far-cmg"), 6.8e9),
        ("tofu2:2x2x2", None, 12.5e9),
        ("tofu2:2x2x2", Some("cache-injection-off"), 12.5e9),
        ("tofu1:2x2x2", None, 5.0e9),
        ("tofu1:2x2x2", Some("descriptor-on-memory"), 5.0e9),
    ] {
        let v = put_latency(topology, endpoint);
        let parts = v["endpoint_overhead_s"].as_f64().unwrap()
            + v["link_latency_s"].as_f64().unwrap()
            + 8.0 / link_bytes_per_s;
        let t = v["time_s"].as_f64().unwrap();
        // Times are whole picoseconds.
        assert!(
            (t - parts).abs() <= 1e-12,
            "{topology} {endpoint:?}: {t} s against its parts {parts} s"
        );
        assert_eq!(v["link_latency_source"], "preset");
    }
    let near = put_latency("tofu:2x2x2", Some("near-cmg"))["time_s"]
        .as_f64()
        .unwrap();
    assert!((near - 0.49e-6).abs() <= 0.05 * 0.49e-6, "{near}");
    // The default setting is named in the output.
    assert_eq!(put_latency("tofu:2x2x2", None)["endpoint"], "near-cmg");
}

#[test]
fn a_link_latency_flag_overrides_the_preset_and_says_so() {
    // TofuD: 0.41 us endpoint overhead (Tofu2's, 0.71 - 0.3 us, section V.B) + one hop. With
    // the preset's 0.1 us hop: 0.51 us; with --link-latency 1 us: 0.41 + 1.0 = 1.41 us (+ 8 B /
    // 6.8 GB/s = 1.2 ns).
    let v = json(&[
        "microbench",
        "put-latency",
        "--topology",
        "tofu:2x2x2",
        "--link-latency",
        "1 us",
        "--json",
    ]);
    assert_eq!(v["link_latency_source"], "--link-latency");
    assert_eq!(v["link_latency_s"].as_f64().unwrap(), 1e-6);
    let t = v["time_s"].as_f64().unwrap();
    assert!((t - 1.4112e-6).abs() < 1e-9, "{t}");
}

#[test]
fn a_barrier_on_a_tpu_v4_slice_takes_time() {
    // Regression: every preset had zero link latency, so a barrier of zero-byte signals took
    // 0 s. A dissemination barrier on 64 ranks has log2(64) = 6 rounds, each at least one ICI
    // hop of 0.3 us (the stated assumption of crates/system/src/presets.rs): >= 1.8 us.
    let v = json(&[
        "collective",
        "barrier",
        "--topology",
        "tpuv4:slice=4x4x4",
        "--json",
    ]);
    let t = v["time_s"].as_f64().unwrap();
    assert!(t >= 1.8e-6, "{t}");
    assert_eq!(v["link_latency_source"], "preset");
    assert!(v["verified"].as_bool().unwrap());
}

#[test]
fn an_endpoint_setting_a_machine_does_not_have_is_an_error() {
    for (topology, endpoint) in [("torus:4x4", "far-cmg"), ("tofu2:2x2x2", "far-cmg")] {
        let o = podsim(&[
            "microbench",
            "put-latency",
            "--topology",
            topology,
            "--endpoint",
            endpoint,
        ]);
        assert_eq!(o.status.code(), Some(2), "{topology} {endpoint}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--endpoint"), "{err}");
    }
}
