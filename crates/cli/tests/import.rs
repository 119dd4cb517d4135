//! `podsim import astra-sim` and `podsim import chakra` on inputs written the way those tools'
//! own examples are (examples/astra-sim/, examples/chakra/).

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

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("podsim-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

#[test]
fn astra_ring_yaml_is_a_podsim_ring_with_gib_links() {
    let v = json(&[
        "import",
        "astra-sim",
        "examples/astra-sim/Ring_4npus.yml",
        "--json",
    ]);
    assert_eq!(v["system"]["topology"], "ring:4");
    assert_eq!(v["system"]["link_bandwidth"], "50.0 GiB/s");
    assert_eq!(v["system"]["link_latency"], "500.0 ns");
    // Ring all-reduce of 64 MiB on 4 ranks: 2(n-1) = 6 steps of 16 MiB each over one 50 GiB/s
    // link (ASTRA-sim's GB is 2^30 B): 6 x 2^24 / (50 x 2^30) = 1.875 ms, plus 6 hops of
    // 500 ns = 3 us: 1.878 ms.
    let run = &v["run"];
    assert_eq!(run["ranks"], 4);
    assert_eq!(run["algorithm"], "ring");
    assert!(close(run["time_s"].as_f64().unwrap(), 1.878e-3), "{run}");
    assert_eq!(run["verified"], true);
    assert_eq!(v["not_honoured"].as_array().unwrap().len(), 0);
}

#[test]
fn astra_older_json_ring_of_8() {
    let v = json(&[
        "import",
        "astra-sim",
        "examples/astra-sim/sample_Ring_8.json",
        "--json",
    ]);
    assert_eq!(v["system"]["topology"], "ring:8");
    assert_eq!(v["system"]["link_bandwidth"], "25 GiB/s");
    // 14 steps of 8 MiB over 25 GiB/s: 14 x 2^23 / (25 x 2^30) = 4.375 ms, plus 14 x 500 ns.
    assert!(close(v["run"]["time_s"].as_f64().unwrap(), 4.382e-3));
    let nh: Vec<&str> = v["not_honoured"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    // Zero NIC and router latencies and hbm-scale change nothing; the rest is listed.
    assert_eq!(nh.len(), 3, "{nh:?}");
    assert!(nh.iter().any(|n| n.starts_with("dimension-type")));
    assert!(nh.iter().any(|n| n.starts_with("hbm-latency")));
    assert!(nh.iter().any(|n| n.starts_with("hbm-bandwidth")));
}

#[test]
fn astra_2d_torus_with_its_system_runs_what_the_printed_command_runs() {
    let out = temp("tpu_v3_32.toml");
    let o = out.to_str().unwrap();
    let v = json(&[
        "import",
        "astra-sim",
        "examples/astra-sim/tpu_v3_32_2dtorus.yml",
        "examples/astra-sim/tpu_v3_32_2dtorus.json",
        "--out",
        o,
        "--json",
    ]);
    assert_eq!(v["system"]["topology"], "torus:4x8");
    // ["ring", "ring"]: one ring per dimension is podsim's dimension-wise all-reduce.
    assert_eq!(v["run"]["algorithm"], "dimension");
    let command = v["command"].as_str().unwrap();
    assert_eq!(
        command,
        format!(
            "podsim collective all-reduce --topology {o} --bytes \"64 MiB\" --algorithm dimension --model flow"
        )
    );
    let direct = json(&[
        "collective",
        "all-reduce",
        "--topology",
        o,
        "--bytes",
        "64 MiB",
        "--algorithm",
        "dimension",
        "--json",
    ]);
    assert_eq!(direct["time_s"], v["run"]["time_s"]);
    assert_eq!(direct["ranks"], 32);
    let nh = v["not_honoured"].to_string();
    for key in [
        "endpoint-delay",
        "scheduling-policy",
        "collective-optimization",
        "local-mem-bw",
        "all-gather-implementation",
    ] {
        assert!(nh.contains(key), "{key} not listed: {nh}");
    }
    // Splits and chunks of 1 and boost-mode 0 change nothing, so they are not listed.
    assert!(!nh.contains("preferred-dataset-splits"), "{nh}");
    assert!(!nh.contains("boost-mode"), "{nh}");
    // The file written is podsim's system file, which `podsim topo` reads.
    let topo = json(&["topo", o, "--json"]);
    assert_eq!(topo["nodes"], 32);
    // 80 x 2^30 B/s.
    assert_eq!(topo["link_bandwidth_bytes_per_s"], 85_899_345_920_u64);
}

#[test]
fn astra_two_link_specs_become_blocks() {
    let v = json(&[
        "import",
        "astra-sim",
        "examples/astra-sim/Ring_FullyConnected_2dims.yml",
        "--json",
    ]);
    let s = &v["system"];
    assert_eq!(s["topology"], "kncube:4x2:wrap=tm");
    // The FullyConnected pair (dimension 1) is inside blocks of [1, 2]; the ring's links,
    // wrap-around included, are between blocks.
    assert_eq!(s["link_bandwidth"], "200.0 GiB/s");
    assert_eq!(s["link_latency"], "100.0 ns");
    assert_eq!(s["blocks"]["shape"], serde_json::json!([1, 2]));
    assert_eq!(s["blocks"]["bandwidth"], "50.0 GiB/s");
    assert_eq!(s["blocks"]["latency"], "500.0 ns");
}

#[test]
fn astra_refuses_what_podsim_has_no_equivalent_for() {
    expect_error(
        &[
            "import",
            "astra-sim",
            "examples/astra-sim/Ring_FullyConnected_Switch.yml",
        ],
        &[
            "Ring_FullyConnected_Switch.yml",
            "`topology`",
            "FullyConnected of 8",
            "podsim takes Ring",
        ],
    );
    expect_error(
        &[
            "import",
            "astra-sim",
            "examples/astra-sim/sample_Torus2D.json",
        ],
        &[
            "sample_Torus2D.json",
            "`link-bandwidth`",
            "32 GB/s",
            "16 GB/s",
        ],
    );
    let switch = temp("switch.yml");
    std::fs::write(
        &switch,
        "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 400.0 ]  # GB/s\nlatency: [ 936.25 ]  # ns\n",
    )
    .unwrap();
    expect_error(
        &["import", "astra-sim", switch.to_str().unwrap()],
        &["switch.yml", "`topology`", "Switch of 8", "one switch"],
    );
    let short = temp("short.yml");
    std::fs::write(
        &short,
        "topology: [ Ring, Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0, 50.0 ]\nlatency: [ 500.0, 500.0 ]\n",
    )
    .unwrap();
    expect_error(
        &["import", "astra-sim", short.to_str().unwrap()],
        &[
            "short.yml, line 2",
            "`npus_count`",
            "1 entries for 2 dimensions",
        ],
    );
    let sys = temp("direct.json");
    std::fs::write(&sys, r#"{"all-reduce-implementation": ["direct"]}"#).unwrap();
    expect_error(
        &[
            "import",
            "astra-sim",
            "examples/astra-sim/Ring_4npus.yml",
            sys.to_str().unwrap(),
        ],
        &[
            "direct.json",
            "`all-reduce-implementation`",
            "[direct]",
            "expected",
        ],
    );
    let links = temp("links.json");
    std::fs::write(
        &links,
        r#"{"topology-name": "Hierarchical", "topologies-per-dim": ["Ring"], "dimensions-count": 1,
            "units-count": [8], "links-count": [4], "link-latency": [500], "link-bandwidth": [25]}"#,
    )
    .unwrap();
    expect_error(
        &["import", "astra-sim", links.to_str().unwrap()],
        &["links.json", "`links-count`", "parallel links"],
    );
}

#[test]
fn import_help_prints_each_default_once() {
    for sub in ["astra-sim", "chakra"] {
        let o = podsim(&["import", sub, "--help"]);
        assert!(o.status.success());
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            assert!(
                line.matches("[default:").count() <= 1,
                "`podsim import {sub} --help` prints a default twice: {line}"
            );
        }
    }
}

const DP: [&str; 4] = [
    "examples/chakra/data-parallel/step.0.et",
    "examples/chakra/data-parallel/step.1.et",
    "examples/chakra/data-parallel/step.2.et",
    "examples/chakra/data-parallel/step.3.et",
];

fn args<'a>(head: &[&'a str], files: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    head.iter().chain(files).chain(tail).copied().collect()
}

#[test]
fn chakra_data_parallel_step_runs_as_a_hand_calculation_says() {
    let out = temp("dp.toml");
    let o = out.to_str().unwrap();
    let v = json(&args(&["import", "chakra"], &DP, &["--out", o, "--json"]));
    assert_eq!(v["ranks"], 4);
    // The default machine: a ring of the 4 ranks, 50 GB/s links, TPU v4 chips.
    assert_eq!(v["machine"], "ring:4");
    assert_eq!(v["run"]["chip"], "tpuv4");
    // Each rank: load 1 MiB from HBM at 1200 GB/s (2^20 / 1.2e12 s = 0.873814 us, rounded up
    // to the ps), forward 2.75 GFLOP at TPU v4's 275.2512 TFLOP/s (2 cores x 4 MXUs x
    // 128 x 128 MACs x 2 x 1.05 GHz: 9.990874 us), backward 20 us as measured, then the
    // all-reduce of 4 MiB on the ring of 4: 6 steps of 1 MiB over 50 GB/s = 125.82912 us,
    // then store 1 MiB (0.873814 us): 157.567622 us.
    let t = v["run"]["time_s"].as_f64().unwrap();
    assert!((t - 157.567622e-6).abs() < 2e-12, "{t}");
    let tasks = v["run"]["tasks"].as_array().unwrap();
    // 4 ranks x 4 local nodes + one all-reduce.
    assert_eq!(tasks.len(), 17);
    assert!(tasks.iter().any(|t| t["name"] == "c0 all_reduce grads"));
    let nh = v["not_honoured"].to_string();
    assert!(nh.contains("op_schema"), "{nh}");
    // The file written is the workload `podsim workload` runs, to the same time.
    let direct = json(&["workload", o, "--json"]);
    assert_eq!(direct["time_s"], v["run"]["time_s"]);
    assert_eq!(v["command"], format!("podsim workload {o}"));
    // Ranks come from the file names, whatever the order given.
    let rev: Vec<&str> = DP.iter().rev().copied().collect();
    let r = json(&args(&["import", "chakra"], &rev, &["--json"]));
    assert_eq!(r["run"]["time_s"], v["run"]["time_s"]);
}

#[test]
fn chakra_pipeline_send_and_receive_become_one_send() {
    let v = json(&[
        "import",
        "chakra",
        "examples/chakra/pipeline/pp.0.et",
        "examples/chakra/pipeline/pp.1.et",
        "--machine",
        "mesh:2",
        "--json",
    ]);
    // Stage 0 (10 us), 8 MiB over one 50 GB/s link (2^23 / 5e10 = 167.77216 us), stage 1
    // (10 us): 187.77216 us.
    let t = v["run"]["time_s"].as_f64().unwrap();
    assert!((t - 187.77216e-6).abs() < 2e-12, "{t}");
    let w = v["workload"].as_str().unwrap();
    assert!(w.contains("send = \"8 MiB\"\ngroup = [0]\nto = [1]"), "{w}");
    assert_eq!(v["not_honoured"].as_array().unwrap().len(), 0);
}

#[test]
fn chakra_runs_on_an_imported_astra_sim_system() {
    let sys = temp("ring4.toml");
    let s = sys.to_str().unwrap();
    json(&[
        "import",
        "astra-sim",
        "examples/astra-sim/Ring_4npus.yml",
        "--out",
        s,
        "--json",
    ]);
    let v = json(&args(
        &["import", "chakra"],
        &DP,
        &["--topology", s, "--json"],
    ));
    // As the default machine's run but the all-reduce on 50 GiB/s links of 500 ns:
    // 6 x (2^20 / (50 x 2^30) s + 500 ns) = 6 x 19.53125 us + 3 us = 120.1875 us, so
    // 0.873814 + 9.990874 + 20 + 120.1875 + 0.873814 = 151.926002 us.
    let t = v["run"]["time_s"].as_f64().unwrap();
    assert!((t - 151.926002e-6).abs() < 2e-12, "{t}");
}

#[test]
fn chakra_refusals_name_the_file_and_the_node() {
    expect_error(
        &[
            "import",
            "chakra",
            "examples/chakra/refused/gather.0.et",
            "examples/chakra/refused/gather.1.et",
        ],
        &["gather.0.et", "node 1", "Gather", "expected ALL_REDUCE"],
    );
    // A send whose receiver is not in the trace.
    expect_error(
        &["import", "chakra", "examples/chakra/pipeline/pp.0.et"],
        &[
            "pp.0.et",
            "node 1",
            "`comm_dst`",
            "expected a rank from 0 to 0",
        ],
    );
    // Ranks that run different collectives.
    expect_error(
        &[
            "import",
            "chakra",
            "examples/chakra/data-parallel/step.0.et",
            "examples/chakra/pipeline/pp.1.et",
        ],
        &["pp.1.et", "0 collectives", "step.0.et has 1"],
    );
    // More ranks than chips.
    expect_error(
        &args(&["import", "chakra"], &DP, &["--machine", "mesh:2"]),
        &["4 ranks", "mesh:2", "2 chips"],
    );
    // A file cut short.
    let bytes = std::fs::read(repo().join(DP[0])).unwrap();
    let cut = temp("cut.0.et");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    expect_error(
        &["import", "chakra", cut.to_str().unwrap()],
        &["cut.0.et", "runs past the end", "cut short"],
    );
    // Not an ET file at all.
    expect_error(
        &["import", "chakra", "examples/astra-sim/Ring_4npus.yml"],
        &["Ring_4npus.yml"],
    );
    expect_error(
        &args(&["import", "chakra"], &DP, &["--chip", "tpu9"]),
        &["`--chip`", "tpu9", "tpuv4"],
    );
}

#[test]
fn chakra_metadata_host_ops_and_empty_nodes() {
    let v = json(&[
        "import",
        "chakra",
        "examples/chakra/mixed/mixed.0.et",
        "--chip",
        "a100",
        "--json",
    ]);
    // One rank: the default machine is a ring of 2 (the smallest ring).
    assert_eq!(v["machine"], "ring:2");
    // The host op (4 us, on the vector unit) and the kernel (6 us, on the matrix unit, after
    // the metadata node by a control dependency) run side by side from 0; the empty COMP_NODE
    // joins them, so the store of 1.2 MB starts at 6 us and takes 1.2e6 / 2.039e12 s (A100's
    // HBM2e) = 0.588524 us: 6.588524 us.
    let t = v["run"]["time_s"].as_f64().unwrap();
    assert!((t - 6.588524e-6).abs() < 2e-12, "{t}");
    let tasks = v["run"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 3);
    assert!(
        v["workload"]
            .as_str()
            .unwrap()
            .contains("unit = \"vector\"")
    );
    let nh = v["not_honoured"].to_string();
    for what in [
        "METADATA_NODE",
        "no duration_micros and no num_ops",
        "pg_name",
    ] {
        assert!(nh.contains(what), "{what}: {nh}");
    }
    // TPU v4's preset gives no vector-unit rate, so a host op has nowhere to run.
    expect_error(
        &["import", "chakra", "examples/chakra/mixed/mixed.0.et"],
        &["mixed.0.et", "node 1", "is_cpu_op", "tpuv4", "--chip"],
    );
}
