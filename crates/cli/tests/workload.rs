//! `podsim workload` end to end: the JSON contract, the done-means figure against `podsim
//! collective`, the Perfetto trace checked against the run's own numbers, and file errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn podsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("podsim runs")
}

fn json(args: &[&str]) -> Value {
    let o = podsim(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

const STEP: &str = "crates/cli/tests/data/workload-step.toml";

#[test]
fn the_step_takes_compute_plus_the_all_reduce_podsim_collective_reports() {
    let w = json(&["workload", STEP, "--json"]);
    let c = json(&[
        "collective",
        "all-reduce",
        "--topology",
        "tpuv4:slice=4x4x4",
        "--bytes",
        "64 MiB",
        "--json",
    ]);
    // 2.75 TFLOP at 8 MXUs x 128 x 128 x 2 FLOPs x 1.05 GHz (Table 4's 275 TFLOP/s).
    let compute = 2.75e12 / (8.0 * 128.0 * 128.0 * 2.0 * 1.05e9);
    let want = compute + c["time_s"].as_f64().unwrap();
    let got = w["time_s"].as_f64().unwrap();
    assert!((got - want).abs() <= 1e-3 * want, "{got} vs {want}");
    assert_eq!(w["critical_path"], serde_json::json!(["fwd", "grads"]));
    for k in [
        "compute_busy_s",
        "communication_time_s",
        "exposed_communication_s",
    ] {
        assert!(w[k].is_f64(), "{k}");
    }
    let tasks = w["tasks"].as_array().unwrap();
    assert_eq!(tasks[0]["name"], "fwd");
    assert_eq!(tasks[1]["start_s"], tasks[0]["end_s"]);
}

#[test]
fn a_workload_trace_holds_the_runs_events() {
    let dir = std::env::temp_dir().join(format!("podsim-wl-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.json");
    let w = json(&[
        "workload",
        STEP,
        "--json",
        "--trace",
        path.to_str().unwrap(),
    ]);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let events = t["traceEvents"].as_array().unwrap();
    let complete: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    // 64 chips each run "fwd" once on the matrix unit.
    let fwd: Vec<&&Value> = complete.iter().filter(|e| e["name"] == "fwd").collect();
    assert_eq!(fwd.len(), 64);
    let fwd_end_us = w["tasks"][0]["end_s"].as_f64().unwrap() * 1e6;
    for e in &fwd {
        assert_eq!(e["ts"].as_f64().unwrap(), 0.0);
        assert!((e["dur"].as_f64().unwrap() - fwd_end_us).abs() < 1e-6);
    }
    // The ring all-reduce: 2 x 63 steps of 64 transfers, each an event on its sender's network
    // thread, all within the run; the last ends when the run does.
    let grads: Vec<&&Value> = complete.iter().filter(|e| e["name"] == "grads").collect();
    assert_eq!(grads.len(), 2 * 63 * 64);
    let end_us = grads
        .iter()
        .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let time_us = w["time_s"].as_f64().unwrap() * 1e6;
    assert!((end_us - time_us).abs() < 1e-3, "{end_us} vs {time_us}");
    // Processes and threads are named.
    assert!(
        events.iter().any(|e| e["ph"] == "M"
            && e["name"] == "process_name"
            && e["args"]["name"] == "chip 0")
    );
    assert!(events.iter().any(|e| e["ph"] == "M"
        && e["name"] == "thread_name"
        && e["args"]["name"] == "matrix unit"));
    assert_eq!(t["otherData"]["events_cut"], 0);
    // A limit cuts the trace and says so.
    let o = podsim(&[
        "workload",
        STEP,
        "--trace",
        path.to_str().unwrap(),
        "--trace-limit",
        "10",
    ]);
    assert!(o.status.success());
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(t["otherData"]["events_kept"], 10);
    assert_eq!(t["otherData"]["events_cut"], 64 + 2 * 63 * 64 - 10);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Each workload text in `cases`, written under `dir`, is a usage error (exit 2) whose message
/// contains the expected words.
fn usage_errors<T: AsRef<str>>(dir: &Path, cases: &[(T, &str)]) {
    for (i, (text, want)) in cases.iter().enumerate() {
        let p = dir.join(format!("w{i}.toml"));
        std::fs::write(&p, text.as_ref()).unwrap();
        let o = podsim(&["workload", p.to_str().unwrap()]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(want), "case {i}: {e}");
    }
}

#[test]
fn workload_file_errors_name_the_line_and_key() {
    let dir = std::env::temp_dir().join(format!("podsim-wl-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\ncompute = { flops = \"1 TFLOP\", efficiency = 1.0 }\nbytes = \"1 MiB\"\n",
            "line 7: `task[0].bytes`: `bytes` has no effect on a compute task",
        ),
        (
            "[machine]\npreset = \"torus:4x4\"\n[[task]]\nname = \"a\"\nmemory = \"1 GiB\"\n",
            "`machine.chip`",
        ),
        (
            "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\nmemory = \"1 GiB\"\ngroup = [0, 16]\n",
            "line 7: `task[0].group`: chip 16 does not exist",
        ),
        (
            "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\nmemory = \"1 GiB\"\nafter = [\"b\"]\n",
            "no task named `b`",
        ),
        (
            "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\ncollective = \"all-reduce\"\nalgorithm = \"rign\"\nbytes = \"1 MiB\"\n",
            "line 7: `task[0].algorithm`",
        ),
        (
            "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\nmemory = \"1 GiB\"\nrepaet = 2\n",
            "repaet",
        ),
        (
            "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\ncompute = { gemm = [64, 64, 64], format = \"cfp8\" }\n",
            "line 6: `task[0].compute.format`: the matrix units take bf16, int8, not `cfp8`",
        ),
        (
            "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\ncompute = { gemm = [64, 64, 64], format = \"bf16\", efficiency = 0.5 }\n",
            "`task[0].compute.efficiency`: a GEMM is timed",
        ),
        (
            "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\ncompute = { gemm = [64, 0, 64], format = \"bf16\" }\n",
            "expected [M, N, K]",
        ),
    ];
    usage_errors(&dir, &cases);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_gemm_task_runs_on_the_chips_matrix_units() {
    // A 4096^3 bf16 GEMM on a TPU v4 chip: 2 cores x 4 MXUs of 128x128 at 1.05 GHz
    // (tpu-v4-isca2023.txt Table 4: 275 TFLOP/s peak). Each MXU takes 4096 / 8 = 512 columns:
    // weight-stationary, 4096 / 128 = 32 row folds by 512 / 128 = 4 column folds, 128 folds,
    // each streaming T = 4096 rows. The MXUs double-buffer their weights (Jouppi et al. 2017,
    // section 2), so a fold starts every max(T, R) = 4096 cycles after the first tile's
    // R = 128 cycles of loading, and the last fold adds its T rows, R rows of partial sums
    // and its 128 columns: 128 + 127 x 4096 + 4096 + 128 + 128 = 524,672 cycles, over the
    // clock; and no less than the peak allows: 2 x 4096^3 / (8 x 128 x 128 x 2 x 1.05e9).
    let dir = std::env::temp_dir().join(format!("podsim-wl-gemm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("gemm.toml");
    std::fs::write(
        &p,
        "[machine]\npreset = \"tpuv4:slice=4x4x4\"\nmodel = \"analytic\"\n[[task]]\nname = \"mm\"\ncompute = { gemm = [4096, 4096, 4096], format = \"bf16\" }\n",
    )
    .unwrap();
    let w = json(&["workload", p.to_str().unwrap(), "--json"]);
    let expected = (128.0 + 127.0 * 4096.0 + 4096.0 + 128.0 + 128.0) / 1.05e9;
    let t = w["time_s"].as_f64().unwrap();
    assert!((t - expected).abs() < 1e-12, "{t} vs {expected}");
    assert!(t >= 2.0 * 4096f64.powi(3) / (8.0 * 128.0 * 128.0 * 2.0 * 1.05e9));
    assert_eq!(w["compute_busy_s"], w["time_s"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn exposed_communication_is_the_communication_on_the_critical_path() {
    // examples/workload-pipeline.toml: the critical path crosses three stage-to-stage sends.
    // Chip i of a stage sends 64 MiB to chip i of the next, a z neighbour: 16 disjoint ICI
    // links, so each send takes 64 MiB / 50 GB/s + one 0.3 us hop = 1.34247728 ms, and the
    // exposed communication is three of them: 4.02743184 ms. Sends off the path (other
    // microbatches) overlap the stages' compute and are not exposed.
    let v = json(&["workload", "examples/workload-pipeline.toml", "--json"]);
    let e = v["exposed_communication_s"].as_f64().unwrap();
    let want = 3.0 * (64.0 * 1048576.0 / 50e9 + 0.3e-6);
    assert!((e - want).abs() < 1e-9, "{e} vs {want}");
    let sends = v["critical_path"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n.as_str().unwrap().starts_with("send"))
        .count();
    assert_eq!(sends, 3);
    assert!(v["communication_time_s"].as_f64().unwrap() > e);
}

#[test]
fn a_scenario_runs_workload_files() {
    // examples/training-steps.toml names both workload examples; each reports what
    // `podsim workload` reports for it.
    let runs = json(&["run", "examples/training-steps.toml", "--json"]);
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (r, file) in runs.iter().zip([
        "examples/workload-data-parallel.toml",
        "examples/workload-pipeline.toml",
    ]) {
        let alone = json(&["workload", file, "--json"]);
        assert_eq!(r["time_s"], alone["time_s"]);
        assert_eq!(r["critical_path"], alone["critical_path"]);
    }
}

#[test]
fn a_working_set_that_fits_in_cmem_streams_at_cmem_bandwidth() {
    // examples/cmem-stream.toml: 100 x 96 MiB per chip. CMEM on: 100 x 100,663,296 B /
    // 4.8 TB/s = 2.0972 ms; off: / 1.2 TB/s (HBM, Table 4) = 8.3886 ms. The GEMMs beside it
    // take less (1.95 ms), so the stream sets the time.
    let on = json(&["workload", "examples/cmem-stream.toml", "--json"]);
    let off = json(&[
        "workload",
        "examples/cmem-stream.toml",
        "--cmem",
        "off",
        "--json",
    ]);
    let t = |v: &Value| v["time_s"].as_f64().unwrap();
    assert!(
        (t(&on) - 100.0 * 100_663_296.0 / 4.8e12).abs() < 1e-9,
        "{on}"
    );
    assert!(
        (t(&off) - 100.0 * 100_663_296.0 / 1.2e12).abs() < 1e-9,
        "{off}"
    );
    // A working set on a compute task is an error, as is CMEM on a chip without it.
    let dir = std::env::temp_dir().join(format!("podsim-cmem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[machine]\npreset = \"dojo:die\"\ncmem = true\n[[task]]\nname = \"a\"\nmemory = \"1 MiB\"\n",
    )
    .unwrap();
    let o = podsim(&["workload", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("machine.cmem"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(
        &bad,
        "[machine]\npreset = \"tpuv4:slice=4x4x4\"\n[[task]]\nname = \"a\"\ncompute = { flops = \"1 TFLOP\", efficiency = 1.0 }\nworking_set = \"1 MiB\"\n",
    )
    .unwrap();
    let o = podsim(&["workload", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("working_set"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn dojo_task_errors_name_the_key() {
    let dir = std::env::temp_dir().join(format!("podsim-wl-dojo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let die = "[machine]\npreset = \"dojo:die\"\n[[task]]\nname = \"a\"\n";
    let cases = [
        (
            format!("{die}send = \"1 KiB\"\nto = \"up\"\n"),
            "`task[0].to`: `up`: expected a direction",
        ),
        (
            format!("{die}barrier = \"software\"\nfan_in = 4\n"),
            "`task[0].fan_in`: a software barrier has no tree",
        ),
        (
            format!("{die}barrier = \"hardware\"\nfan_in = 1\n"),
            "`task[0].fan_in`: 1: expected a whole number of at least 2",
        ),
        (
            format!("{die}barrier = \"sometimes\"\n"),
            "`task[0].barrier`: `sometimes`",
        ),
        (
            format!("{die}memory = \"1 MiB\"\nfan_in = 4\n"),
            "`fan_in` has no effect on a memory task",
        ),
        (
            format!("{die}dma = \"1 MiB\"\nbarrier = \"hardware\"\n"),
            "has dma and barrier",
        ),
        (
            "[machine]\npreset = \"fattree:4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\nsend = \"1 KiB\"\nto = \"east\"\n".to_string(),
            "directions need a DOJO plane or a mesh",
        ),
    ];
    usage_errors(&dir, &cases);
    // Runtime refusals: a DMA on a die (no DIPs) and a barrier off DOJO.
    for (text, want) in [
        (format!("{die}dma = \"1 KiB\"\n"), "has none"),
        (
            "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\nbarrier = \"hardware\"\n".to_string(),
            "not a DOJO plane",
        ),
    ] {
        let p = dir.join("r.toml");
        std::fs::write(&p, &text).unwrap();
        let o = podsim(&["workload", p.to_str().unwrap()]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && e.contains(want), "{e}");
    }
    // `to = "east"` on a 4x4 torus: every chip sends to +x, the last column wraps.
    let p = dir.join("east.toml");
    std::fs::write(
        &p,
        "[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"a\"\nsend = \"1 MiB\"\nto = \"east\"\n",
    )
    .unwrap();
    let o = podsim(&["workload", p.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}
