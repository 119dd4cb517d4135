//! Machine files through the binary (issue 35): GPU clusters described in
//! `examples/machines/`, run with `--system FILE --nodes N`, against hand calculations.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

fn json(args: &[&str]) -> serde_json::Value {
    let o = podsim(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// Within 1e-8: the models keep time in whole picoseconds, and each of a ring's steps (a few
/// ms here, 10^9 ps) rounds its end up by less than one.
fn close(got: f64, want: f64) {
    assert!(
        ((got - want) / want).abs() < 1e-8,
        "got {got}, want {want} (hand calculation)"
    );
}

const GIB: f64 = 1_073_741_824.0;

#[test]
fn one_dgx_node_all_reduces_at_nvlink_data_rate() {
    // A ring on a non-blocking switch moves each GPU's share over its own link once a step, so
    // nccl-tests' busbw is a GPU's NVLink data rate: 300 GB/s x 128 / (128 + 32) = 240 GB/s.
    let j = json(&[
        "collective",
        "all-reduce",
        "--system",
        "examples/machines/dgx-a100.toml",
        "--bytes",
        "1 GiB",
        "--json",
    ]);
    assert_eq!(j["ranks"], 8);
    assert_eq!(j["algorithm"], "ring");
    close(j["bus_bandwidth_bytes_per_s"].as_f64().unwrap(), 240e9);
}

/// HDR's data rate per NIC: 25 GB/s x 4096 / (4096 + 26), the InfiniBand packet headers the
/// file states.
const HDR_DATA: f64 = 25e9 * 4096.0 / 4122.0;

#[test]
fn two_dgx_nodes_all_reduce_inside_then_across_on_the_rails() {
    // Hierarchical (dimension): reduce-scatter over the node's 8 GPUs (7 steps of S/8 at
    // 240 GB/s), all-reduce of each GPU's S/8 with the same GPU of the other node on its rail
    // (2 steps of S/16 at the HDR NIC's data rate, each crossing one 130 ns leaf switch), then
    // all-gather inside (7 steps of S/8):
    //   t = 2 x 7/8 x S / 240e9 + 2 x 1/2 x (S/8) / HDR_DATA + 2 x 130 ns.
    let j = json(&[
        "collective",
        "all-reduce",
        "--system",
        "examples/machines/dgx-a100.toml",
        "--nodes",
        "2",
        "--bytes",
        "1 GiB",
        "--algorithm",
        "dimension",
        "--json",
    ]);
    assert_eq!(j["ranks"], 16);
    assert_eq!(j["algorithm"], "dimension");
    let t = 2.0 * 7.0 / 8.0 * GIB / 240e9 + (GIB / 8.0) / HDR_DATA + 2.0 * 130e-9;
    close(j["time_s"].as_f64().unwrap(), t);
    assert_eq!(j["link_latency_source"], "machine file");
}

#[test]
fn several_dgx_nodes_all_reduce_on_rings_at_eight_nics() {
    // The default on several nodes is multi-ring: 8 rings, one per GPU of a node, each on S/8
    // and each crossing between two nodes on its own rail, so each NIC carries one ring. A
    // ring of n ranks moves 2 (n - 1) steps of (S/8)/n, each bound by a NIC:
    //   t = 2 (n - 1) (S / 8n) / HDR_DATA, so busbw = t^-1 S 2 (n - 1)/n = 8 HDR_DATA,
    // whatever the number of nodes (the NVLink hops, 7 rings on 240 GB/s, are faster).
    for nodes in ["2", "4"] {
        let j = json(&[
            "collective",
            "all-reduce",
            "--system",
            "examples/machines/dgx-a100.toml",
            "--nodes",
            nodes,
            "--bytes",
            "1 GiB",
            "--json",
        ]);
        assert_eq!(j["algorithm"], "multi-ring");
        assert_eq!(j["verified"], true);
        let busbw = j["bus_bandwidth_bytes_per_s"].as_f64().unwrap();
        // Within 1%: the rings' steps wait on each other, which the closed form ignores.
        assert!(
            (busbw / (8.0 * HDR_DATA) - 1.0).abs() < 0.01,
            "{nodes} nodes: {busbw} against {}",
            8.0 * HDR_DATA
        );
    }
}

#[test]
fn the_h100_file_predicts_its_ring_from_the_a100_packets() {
    // 450 GB/s line rate x 128 / 160 = 360 GB/s busbw on one node.
    let j = json(&[
        "collective",
        "all-reduce",
        "--system",
        "examples/machines/dgx-h100.toml",
        "--bytes",
        "1 GiB",
        "--json",
    ]);
    close(j["bus_bandwidth_bytes_per_s"].as_f64().unwrap(), 360e9);
}

#[test]
fn nodes_on_a_shorthand_is_a_usage_error() {
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        "torus:4x4",
        "--nodes",
        "2",
        "--bytes",
        "1 MiB",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--nodes") && e.contains("machine file"), "{e}");
}

#[test]
fn a_machine_file_error_names_the_file_and_the_key() {
    let dir = std::env::temp_dir().join(format!("podsim-machine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "bad-class.toml",
            "name = \"m\"\n[chip]\npreset = \"tpuv4\"\n[[link]]\nname = \"ici\"\nbandwidth = \"50 GB/s\"\n[[tier]]\nname = \"t\"\nscope = \"machine\"\nfabric = \"switch\"\nlink = \"icy\"\n",
            "tier[0].link",
        ),
        (
            "rails-in-node.toml",
            "name = \"m\"\nchips_per_node = 4\n[chip]\npreset = \"tpuv4\"\n[[link]]\nname = \"ib\"\nbandwidth = \"25 GB/s\"\n[[tier]]\nname = \"t\"\nscope = \"node\"\nfabric = \"rail-fat-tree\"\nswitch_ports = 8\nlink = \"ib\"\n",
            "tier.rails",
        ),
        (
            "unknown-key.toml",
            "name = \"m\"\nnodez = 3\n[chip]\npreset = \"tpuv4\"\n",
            "nodez",
        ),
        (
            "no-memory.toml",
            "name = \"m\"\n[chip]\npreset = \"a100\"\n[[link]]\nname = \"ib\"\nbandwidth = \"25 GB/s\"\n[[tier]]\nname = \"t\"\nscope = \"machine\"\nfabric = \"switch\"\nlink = \"ib\"\n",
            "chip.memory",
        ),
        (
            "flops-twice.toml",
            "name = \"m\"\n[chip]\nname = \"c\"\nmatrix_flops = \"1 TFLOP/s\"\nmatrix_unit = \"4x4\"\nclock = \"1 GHz\"\nmemory = \"1 GiB\"\nmemory_bandwidth = \"1 GB/s\"\n",
            "chip.matrix_flops",
        ),
        (
            "preset-flops.toml",
            "name = \"m\"\n[chip]\npreset = \"a100\"\nmatrix_flops = \"400 TFLOP/s\"\nmemory = \"80 GiB\"\n",
            "chip.matrix_flops",
        ),
        (
            "efficiency-range.toml",
            "name = \"m\"\n[chip]\npreset = \"a100\"\nmemory = \"80 GiB\"\nmatrix_efficiency = 1.5\nefficiency_source = \"x\"\n",
            "chip.matrix_efficiency",
        ),
        (
            "efficiency-zero.toml",
            "name = \"m\"\n[chip]\npreset = \"a100\"\nmemory = \"80 GiB\"\nmemory_efficiency = 0.0\nefficiency_source = \"x\"\n",
            "chip.memory_efficiency",
        ),
        (
            "efficiency-no-source.toml",
            "name = \"m\"\n[chip]\npreset = \"a100\"\nmemory = \"80 GiB\"\nmatrix_efficiency = 0.8\n",
            "chip.efficiency_source",
        ),
        (
            "source-no-efficiency.toml",
            "name = \"m\"\n[chip]\npreset = \"a100\"\nmemory = \"80 GiB\"\nefficiency_source = \"x\"\n",
            "chip.efficiency_source",
        ),
        (
            "unit-no-clock.toml",
            "name = \"m\"\n[chip]\nname = \"c\"\nmatrix_unit = \"4x4\"\nmemory = \"1 GiB\"\nmemory_bandwidth = \"1 GB/s\"\n",
            "chip.clock",
        ),
        (
            "unit-shape.toml",
            "name = \"m\"\n[chip]\nname = \"c\"\nmatrix_unit = \"4x\"\nclock = \"1 GHz\"\nmemory = \"1 GiB\"\nmemory_bandwidth = \"1 GB/s\"\n",
            "chip.matrix_unit",
        ),
        (
            "one-chip.toml",
            "name = \"m\"\n[chip]\nname = \"c\"\nmatrix_unit = \"4x4\"\nclock = \"1 GHz\"\nmemory = \"1 GiB\"\nmemory_bandwidth = \"1 GB/s\"\n",
            "nothing to route",
        ),
        (
            "no-tier.toml",
            "name = \"m\"\nchips_per_node = 2\n[chip]\npreset = \"tpuv4\"\n",
            "`tier`",
        ),
    ];
    for (name, text, key) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        let o = podsim(&[
            "collective",
            "all-reduce",
            "--system",
            p,
            "--bytes",
            "1 MiB",
        ]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {e}");
        assert!(e.contains(name) && e.contains(key), "{name}: {e}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_packet_level_routes_through_the_switches() {
    // Two DGX A100 nodes, uniform traffic (a destination drawn from all 16 chips, the source
    // included). By hand: to itself 0 hops; to the 7 others of its node 2 (GPU, NVSwitch, GPU);
    // to its rail peer 4 (NIC, leaf, NIC, GPU); to the 7 others of the other node 6 (NIC, leaf,
    // spine, leaf, NIC, GPU): (0 + 7 x 2 + 4 + 7 x 6) / 16 = 3.75 hops. The run samples 7,833
    // packets (a standard error near 0.03 hops): within 0.1.
    let j = json(&[
        "noc",
        "--system",
        "examples/machines/dgx-a100.toml",
        "--nodes",
        "2",
        "--rate",
        "0.05",
        "--json",
    ]);
    assert_eq!(j["saturated"], false);
    let hops = j["average_hops"].as_f64().unwrap();
    assert!((hops - 3.75).abs() < 0.1, "average hops {hops}");
}

#[test]
fn a_training_step_runs_on_a_gpu_cluster() {
    // The command: GPT-3 175B on 64 DGX A100 nodes, [8,8,8,1], closed form, with the
    // axes in the order the hand calculation below takes (model1 inside a node, then data
    // across nodes; without --mapping podsim takes the fastest order, which differs).
    let j = json(&[
        "train",
        "--model",
        "gpt3-175b",
        "--system",
        "examples/machines/dgx-a100.toml",
        "--nodes",
        "64",
        "--parallel",
        "pipeline=8,data=8,model1=8,model2=1",
        "--mapping",
        "model2,model1,data,pipeline",
        "--model-fidelity",
        "analytic",
        "--json",
    ]);
    assert_eq!(j["chips"], 512);
    assert_eq!(j["cmem"], "none");
    // Weights: every parameter once over 8 pipeline stages (no tensor parallelism), bf16, plus
    // at most the 1.3 GB embedding on the largest stage.
    let params = j["parameters"].as_f64().unwrap();
    let w = j["memory"]["weights_bytes"].as_f64().unwrap();
    assert!(
        w >= params * 2.0 / 8.0 && w <= params * 2.0 / 8.0 + 1.3e9,
        "{w}"
    );
    // 41 GiB of weights and as many of gradients do not fit in 80 GiB.
    assert_eq!(j["fits_in_memory"], false);
    // The gradient sum, by hand: a ring over the 8 nodes of the data axis, on the rail (HDR's
    // data rate, one 130 ns leaf a step, 14 steps), then over the node's 8 GPUs of model1 on
    // NVLink (240 GB/s of data) with an eighth of the bytes.
    let g = j["memory"]["gradients_bytes"].as_f64().unwrap();
    let sync = 2.0 * 7.0 / 8.0 * g / HDR_DATA + 14.0 * 130e-9 + 2.0 * 7.0 / 8.0 * (g / 8.0) / 240e9;
    close(j["gradient_sync_s"].as_f64().unwrap(), sync);
}

#[test]
fn train_on_a_gpu_refuses_settings_it_cannot_honour() {
    let base = [
        "train",
        "--model",
        "gpt3-1.3b",
        "--system",
        "examples/machines/dgx-a100.toml",
        "--parallel",
        "pipeline=1,data=8,model1=1,model2=1",
    ];
    // No CMEM on an A100: --cmem has nothing to turn on or off.
    let mut args = base.to_vec();
    args.extend(["--cmem", "off"]);
    let o = podsim(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no CMEM"));
    // A chip that states its peak but not its matrix units, which time the GEMMs.
    let dir = std::env::temp_dir().join(format!("podsim-peak-only-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("peak-only.toml");
    std::fs::write(
        &file,
        "name = \"m\"\nchips_per_node = 8\n[chip]\nname = \"c\"\nmatrix_flops = \"100 TFLOP/s\"\nmemory = \"80 GiB\"\nmemory_bandwidth = \"2 TB/s\"\n[[link]]\nname = \"l\"\nbandwidth = \"100 GB/s\"\n[[tier]]\nname = \"t\"\nscope = \"node\"\nfabric = \"switch\"\nlink = \"l\"\n",
    )
    .unwrap();
    let mut args = base.to_vec();
    args[4] = file.to_str().unwrap();
    let o = podsim(&args);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("neither a chip preset nor described by its matrix units"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The H100 file's chip is described by its tensor cores: a step runs.
    let mut args = base.to_vec();
    args[4] = "examples/machines/dgx-h100.toml";
    args.push("--json");
    let j = json(&args);
    assert_eq!(j["chips"], 8);
}

/// `v` without the keys that name the system (its file or its name).
fn unnamed(mut v: serde_json::Value) -> serde_json::Value {
    if let Some(o) = v.as_object_mut() {
        for k in ["system", "topology", "name"] {
            o.remove(k);
        }
    }
    v
}

#[test]
fn the_seed_machine_files_give_their_presets_results() {
    for (file, preset) in [
        ("examples/machines/tpu-v4.toml", "tpuv4:slice=4x4x8:twisted"),
        ("examples/machines/fugaku.toml", "tofu:fugaku"),
        ("examples/machines/dojo-tile.toml", "dojo:tile"),
        ("examples/machines/wormhole-n150.toml", "wormhole:harvest=1"),
    ] {
        let a = unnamed(json(&["topo", file, "--json"]));
        let b = unnamed(json(&["topo", preset, "--json"]));
        assert_eq!(a, b, "{file} against {preset}");
    }
    let run = |system: &str| {
        unnamed(json(&[
            "collective",
            "all-reduce",
            "--system",
            system,
            "--bytes",
            "1 MiB",
            "--json",
        ]))
    };
    assert_eq!(
        run("examples/machines/tpu-v4.toml"),
        run("tpuv4:slice=4x4x8:twisted")
    );
}

#[test]
fn a_preset_machine_fixes_its_size() {
    let o = podsim(&[
        "topo",
        "examples/machines/tpu-v4.toml",
        "--link-bandwidth",
        "1 GB/s",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--system",
        "examples/machines/tpu-v4.toml",
        "--nodes",
        "2",
        "--bytes",
        "1 MiB",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("fixes how many chips"));
}

#[test]
fn a_workload_runs_on_a_machine_file() {
    // The data-parallel example on 8 DGX A100 nodes: its first task streams 800 MB from each
    // A100's HBM at the file's memory_efficiency of its 2039 GB/s: 800e6 / (2039e9 x 0.437)
    // = 0.898 ms.
    let j = json(&[
        "workload",
        "examples/workload-data-parallel.toml",
        "--system",
        "examples/machines/dgx-a100.toml",
        "--nodes",
        "8",
        "--json",
    ]);
    let first = &j["tasks"][0];
    assert_eq!(first["name"], "load weights");
    let took = first["end_s"].as_f64().unwrap() - first["start_s"].as_f64().unwrap();
    close(took, 800e6 / (2039e9 * 0.437));
}

#[test]
fn a_scenario_system_may_be_a_machine_file() {
    let dir = std::env::temp_dir().join(format!("podsim-scenario-machine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ok = "name = \"s\"\n[[system]]\nmachine = \"examples/machines/dgx-a100.toml\"\nnodes = 2\n[[run]]\nwhat = \"metrics\"\n";
    let bad_both = "name = \"s\"\n[[system]]\ntopology = \"ring:4\"\nmachine = \"examples/machines/dgx-a100.toml\"\n[[run]]\nwhat = \"metrics\"\n";
    let bad_nodes = "name = \"s\"\n[[system]]\ntopology = \"ring:4\"\nlink_bandwidth = \"1 GB/s\"\nnodes = 2\n[[run]]\nwhat = \"metrics\"\n";
    let missing = "name = \"s\"\n[[system]]\nmachine = \"no-such-machine.toml\"\n[[run]]\nwhat = \"metrics\"\n";
    for (name, text, want) in [
        ("ok.toml", ok, None),
        ("both.toml", bad_both, Some("system[0].topology")),
        ("nodes.toml", bad_nodes, Some("system[0].nodes")),
        ("missing.toml", missing, Some("system[0].machine")),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let o = podsim(&["run", path.to_str().unwrap(), "--json"]);
        let e = String::from_utf8_lossy(&o.stderr);
        match want {
            // The built-in machine file by its path from the repository's root: 16 chips.
            None => {
                assert!(o.status.success(), "{e}");
                assert!(String::from_utf8_lossy(&o.stdout).contains("\"nodes\":16"));
            }
            Some(key) => {
                assert_eq!(o.status.code(), Some(2), "{name}: {e}");
                assert!(e.contains(name) && e.contains(key), "{name}: {e}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_lecture_machine_is_its_systolic_array() {
    // examples/machines/ece327-systolic.toml: one 4x4 matrix unit at 1 GHz, 192 KiB of memory
    // (three 64 KiB scratchpads) at 8 GB/s (8 bytes a cycle); the same run as the flags.
    for dataflow in ["os", "ws", "is"] {
        let common = ["--dataflow", dataflow, "--m", "10", "--n", "7", "--k", "9"];
        let mut file = vec![
            "gemm",
            "--system",
            "examples/machines/ece327-systolic.toml",
            "--json",
        ];
        file.extend(common);
        let mut flags = vec![
            "gemm",
            "--array",
            "4x4",
            "--sram",
            "64 KiB",
            "--dram-bytes-per-cycle",
            "8",
            "--json",
        ];
        flags.extend(common);
        assert_eq!(json(&file), json(&flags), "{dataflow}");
    }
    // A chip of many matrix units is not one array.
    let o = podsim(&[
        "gemm",
        "--system",
        "examples/machines/dgx-a100.toml",
        "--dataflow",
        "os",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("432 matrix units"));
}
