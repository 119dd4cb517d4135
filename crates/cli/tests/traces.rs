//! Perfetto traces of collectives (Chrome trace-event JSON): parsed and checked against the
//! run's own numbers. (The workload's trace is checked in `workload.rs`.)

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

fn run_json(args: &[&str]) -> Value {
    let o = podsim(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn complete_events(trace: &Value) -> Vec<&Value> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect()
}

#[test]
fn a_collective_trace_holds_every_transfer_and_ends_when_the_run_does() {
    let dir = std::env::temp_dir().join(format!("podsim-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ring.json");
    let f = file.to_str().unwrap();
    // A ring all-reduce on tofu:1x1x1 (12 nodes): 2 (n - 1) = 22 steps of 12 transfers = 264.
    let m = run_json(&[
        "collective",
        "all-reduce",
        "--topology",
        "tofu:1x1x1",
        "--bytes",
        "1 MiB",
        "--trace",
        f,
        "--json",
    ]);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let ev = complete_events(&t);
    assert_eq!(ev.len() as u64, m["transfers"].as_u64().unwrap());
    assert_eq!(m["ranks"], 12);
    assert_eq!(ev.len(), 2 * 11 * 12);
    // The last transfer's end is the run's time (in microseconds).
    let end = ev
        .iter()
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let time_us = m["time_s"].as_f64().unwrap() * 1e6;
    assert!((end - time_us).abs() < 1e-6 * time_us, "{end} vs {time_us}");
    // The first transfers start at 0: the endpoint overhead is inside each event, which runs
    // from the send to the last byte's arrival (0.41 us + 0.1 us + bytes / 6.8 GB/s at least).
    let first = ev
        .iter()
        .map(|e| e["ts"].as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    assert_eq!(first, 0.0);
    assert!(ev.iter().all(|e| e["dur"].as_f64().unwrap() >= 0.49));
    // Every rank is a named process.
    let names = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "process_name")
        .count();
    assert_eq!(names, 12);
    assert_eq!(t["otherData"]["events_cut"], 0);

    // With a limit, the file keeps that many and says how many it cut.
    run_json(&[
        "collective",
        "all-reduce",
        "--topology",
        "tofu:1x1x1",
        "--bytes",
        "1 MiB",
        "--trace",
        f,
        "--trace-limit",
        "10",
        "--json",
    ]);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(complete_events(&t).len(), 10);
    assert_eq!(t["otherData"]["events_cut"], 264 - 10);
    assert!(t["otherData"]["cut"].as_str().unwrap().contains("254 more"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn trace_flags_without_a_run_to_trace_are_errors() {
    for args in [
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:2x2",
            "--bytes",
            "1 MiB",
            "--trace-limit",
            "5",
        ][..],
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:2x2",
            "--sweep",
            "1 MiB,2 MiB",
            "--trace",
            "/tmp/x.json",
        ][..],
    ] {
        let o = podsim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn a_noc_trace_holds_the_packets_and_the_link_utilisation_of_the_run() {
    let dir = std::env::temp_dir().join(format!("podsim-noc-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("noc.json");
    let f = file.to_str().unwrap();
    let r = run_json(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.2",
        "--cycles",
        "200",
        "--links",
        "--trace",
        f,
        "--json",
    ]);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let cycle_us = t["otherData"]["cycle_ps"].as_f64().unwrap() / 1e6;
    // Every packet's network phase ends by the end of the run.
    let ev = complete_events(&t);
    let network: Vec<_> = ev.iter().filter(|e| e["tid"] == 1).collect();
    assert!(!network.is_empty());
    let end = network
        .iter()
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let simulated_us = r["simulated_cycles"].as_f64().unwrap() * cycle_us;
    assert!(end <= simulated_us + 1e-9, "{end} > {simulated_us}");
    // A packet's hops are the links it crossed: no more flit-hops than the run counted.
    let hops: f64 = network
        .iter()
        .map(|e| e["args"]["hops"].as_f64().unwrap() * e["args"]["flits"].as_f64().unwrap())
        .sum();
    assert!(hops <= r["flit_hops"].as_f64().unwrap());
    // One counter per link, equal to the run's own utilisation of that link.
    let counters: Vec<_> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "C")
        .collect();
    let links = r["links"].as_array().unwrap();
    assert_eq!(counters.len(), links.len());
    for l in links {
        let name = format!("link {} -> {}", l["from"], l["to"]);
        let c = counters
            .iter()
            .find(|c| c["name"] == name.as_str())
            .unwrap();
        assert_eq!(c["args"]["utilisation"], l["utilization"]);
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_scenario_trace_holds_every_transfer_of_every_collective_run() {
    let dir = std::env::temp_dir().join(format!("podsim-run-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("run.json");
    let f = file.to_str().unwrap();
    let runs = run_json(&["run", "--trace", f, "--json"]);
    let transfers: u64 = runs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["transfers"].as_u64())
        .sum();
    assert!(transfers > 0);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(complete_events(&t).len() as u64, transfers);
    // A workload file through `run` writes the workload's trace.
    let w = dir.join("w.json");
    run_json(&[
        "run",
        "examples/workload-pipeline.toml",
        "--trace",
        w.to_str().unwrap(),
        "--json",
    ]);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&w).unwrap()).unwrap();
    assert!(!complete_events(&t).is_empty());
    assert!(t["otherData"]["workload"].is_string());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_training_step_trace_holds_one_layer_on_every_chip() {
    // GPT-3 1.3B on 64 chips, [1,8,1,8] 1D/1D: the trace is one layer's forward and backward
    // pass for one microbatch. Every chip runs the six forward GEMMs (QKV, the two attention
    // products, output projection, feed-forward in and out) on its matrix unit, and the
    // model2 all-reduces leave every chip on the network.
    let dir = std::env::temp_dir().join(format!("podsim-train-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("layer.json");
    let o = podsim(&[
        "train",
        "--model",
        "gpt3-1.3b",
        "--system",
        "tpuv4:slice=4x4x4",
        "--parallel",
        "[1,8,1,8]",
        "--trace",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let ev = complete_events(&t);
    for chip in 0..64u64 {
        let forward_gemms = ev
            .iter()
            .filter(|e| e["pid"] == chip && e["tid"] == 0)
            .filter(|e| e["name"].as_str().unwrap().starts_with("forward"))
            .count();
        assert_eq!(forward_gemms, 6, "chip {chip}");
        assert!(
            ev.iter().any(|e| e["pid"] == chip
                && e["name"]
                    .as_str()
                    .unwrap()
                    .contains("all-reduce activations (model2)")),
            "chip {chip} sends nothing"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_energy_trace_holds_the_power_track_and_its_samples_integrate_to_the_energy() {
    // examples/workload-data-parallel.toml with --energy: a counter track of the machine's
    // power by component, whose samples (each holding until the next) integrate to the
    // joules the run reports, component by component.
    let dir = std::env::temp_dir().join(format!("podsim-power-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("power.json");
    let args = [
        "workload",
        "examples/workload-data-parallel.toml",
        "--energy",
        "--json",
        "--trace",
        file.to_str().unwrap(),
    ];
    let v = run_json(&args);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let samples: Vec<&Value> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "power (W)")
        .collect();
    assert!(samples.len() >= 3);
    for part in ["compute", "memory", "network", "idle"] {
        let mut joules = 0.0;
        for w in samples.windows(2) {
            let dt = (w[1]["ts"].as_f64().unwrap() - w[0]["ts"].as_f64().unwrap()) * 1e-6;
            joules += w[0]["args"][part].as_f64().unwrap() * dt;
        }
        let want = v["energy_breakdown_j"][part].as_f64().unwrap();
        // Timestamps are printed in microseconds to 6 decimals: 1e-6 relative.
        assert!(
            (joules - want).abs() <= 1e-6 * want.max(1e-9),
            "{part}: {joules} vs {want}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_dojo_training_step_trace_holds_every_task_on_every_node() {
    // examples/dojo/training-step.toml on a D1 die (360 router positions, 354 nodes and six
    // spares that the workload also counts): every node runs the forward GEMM, both backward
    // GEMMs and the optimizer, and takes part in the all-reduce; the trace is Chrome
    // trace-event JSON that Perfetto opens.
    let dir = std::env::temp_dir().join(format!("podsim-dojo-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("step.json");
    let o = podsim(&[
        "workload",
        "examples/dojo/training-step.toml",
        "--trace",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(t["otherData"]["machine"], "dojo:die");
    let ev = complete_events(&t);
    for chip in [0u64, 17, 180, 359] {
        for task in ["forward GEMM", "backward GEMMs", "optimizer"] {
            assert!(
                ev.iter()
                    .any(|e| e["pid"] == chip && e["name"].as_str().unwrap().starts_with(task)),
                "node {chip} lacks {task}"
            );
        }
        assert!(
            ev.iter()
                .any(|e| e["pid"] == chip
                    && e["name"].as_str().unwrap().contains("gradient all-reduce")),
            "node {chip} sends no gradients"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_dojo_tile_step_trace_shows_dma_pushes_reduction_and_barrier() {
    // examples/dojo/tile-step.toml on a tile with its DIPs (9,000 router positions, 10 DIPs):
    // the DIPs stream both layers' weights by DMA (processes named after them), every node
    // runs its GEMMs and waits at the hardware barrier; the trace is Chrome trace-event JSON
    // that Perfetto opens.
    let dir = std::env::temp_dir().join(format!("podsim-dojo-tile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tile.json");
    let o = podsim(&[
        "workload",
        "examples/dojo/tile-step.toml",
        "--trace",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(t["otherData"]["machine"], "dojo:system=1x1");
    let ev = complete_events(&t);
    // DIPs are nodes 9000..9009: each streams weights.
    for dip in 9000u64..9010 {
        assert!(
            ev.iter()
                .any(|e| e["pid"] == dip
                    && e["name"].as_str().unwrap().starts_with("stream weights")),
            "DIP {dip} streams nothing"
        );
    }
    let names: Vec<&Value> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 9003)
        .collect();
    assert_eq!(names[0]["args"]["name"], "DIP 3");
    for chip in [0u64, 89, 4545, 8999] {
        for task in [
            "forward L1",
            "forward L2",
            "backward GEMMs",
            "barrier",
            "optimizer",
        ] {
            assert!(
                ev.iter()
                    .any(|e| e["pid"] == chip && e["name"].as_str().unwrap().starts_with(task)),
                "node {chip} lacks {task}"
            );
        }
    }
    // The east column has no east neighbour: node 89 (x = 89) pushes nothing; node 0 does.
    let pushes = |c: u64| {
        ev.iter()
            .any(|e| e["pid"] == c && e["name"] == "push activations")
    };
    assert!(pushes(0) && !pushes(89));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_trace_nests_on_every_track() {
    // Perfetto draws complete events of one track only if they nest (issue 39): the writer
    // puts overlapping events on lanes of their own. Every trace below had events that partly
    // overlapped before; every example scenario through `run` is checked too.
    let dir = std::env::temp_dir().join(format!("podsim-nesting-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut runs: Vec<(String, Vec<String>)> = [
        (
            "data-parallel",
            "workload examples/workload-data-parallel.toml",
        ),
        (
            "data-parallel-energy",
            "workload examples/workload-data-parallel.toml --energy",
        ),
        ("dojo-step", "workload examples/dojo/training-step.toml"),
        ("noc", "noc --topology mesh:8x8 --rate 0.3"),
        (
            "all-reduce",
            "collective all-reduce --topology torus:4x4 --bytes 1MiB",
        ),
    ]
    .iter()
    .map(|(name, args)| {
        let args = args.split(' ').map(String::from).collect();
        (name.to_string(), args)
    })
    .collect();
    let mut examples: Vec<_> = std::fs::read_dir(root.join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 10);
    for p in examples {
        let name = p.file_stem().unwrap().to_str().unwrap();
        let file = format!("examples/{name}.toml");
        runs.push((format!("run-{name}"), vec!["run".into(), file]));
    }
    // Two at a time: the DOJO step and the all-to-all scenario take seconds each.
    let next = std::sync::Mutex::new(runs.into_iter());
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let Some((name, mut args)) = next.lock().unwrap().next() else {
                        break;
                    };
                    let file = dir.join(format!("{name}.json"));
                    args.extend(["--trace".into(), file.to_str().unwrap().into()]);
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let o = podsim(&args);
                    assert!(
                        o.status.success(),
                        "{name}: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                    let t: Value =
                        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
                    std::fs::remove_file(&file).ok();
                    let lanes = t["traceEvents"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|e| e["name"] == "thread_sort_index");
                    let r = podsim_report::check_nesting(&t);
                    failures
                        .lock()
                        .unwrap()
                        .push((name, complete_events(&t).len(), lanes, r));
                }
            });
        }
    });
    let mut results = failures.into_inner().unwrap();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    let bad: Vec<String> = results
        .iter()
        .filter_map(|(name, _, _, r)| r.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The four traces named above needed lanes (the collective's only if its transfers overlap
    // on a rank), and none of them is empty.
    for (name, events, lanes, _) in &results {
        if ["data-parallel", "dojo-step", "noc"].contains(&name.as_str()) {
            assert!(*lanes, "{name} needed no lanes");
        }
        if !name.starts_with("run-") {
            assert!(*events > 0, "{name} traced nothing");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
