//! Golden snapshots of whole commands: `podsim run` (the default scenario and every example),
//! `podsim validate`, and a fixed list of `topo`, `collective`, `microbench`, `noc`, `gemm`,
//! `systolic` and `numerics` commands, text and `--json`. Each command's exit code, stdout and
//! stderr are compared byte for byte with `crates/cli/tests/snapshots/NAME.txt`.
//!
//! A change to a snapshot is deliberate: review it with
//! `PODSIM_UPDATE_SNAPSHOTS=1 cargo test -p podsim --test snapshots` (which rewrites the files)
//! and `git diff crates/cli/tests/snapshots`, and name it in the change's note.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (snapshot name, arguments). Every example scenario is added by `cases`.
const COMMANDS: &[(&str, &[&str])] = &[
    ("run-default", &["run"]),
    ("run-default-json", &["run", "--json"]),
    ("validate", &["validate"]),
    ("topo-torus-4x4x8", &["topo", "torus:4x4x8"]),
    ("topo-torus-4x4x8-json", &["topo", "torus:4x4x8", "--json"]),
    (
        "topo-mesh-8x8-flags",
        &[
            "topo",
            "mesh:8x8",
            "--link-bandwidth",
            "12.8 GiB/s",
            "--link-latency",
            "500 ns",
        ],
    ),
    (
        "topo-twisted-json",
        &["topo", "torus:4x4x8:twisted", "--json"],
    ),
    ("topo-tpuv4-slice", &["topo", "tpuv4:slice=4x4x8:twisted"]),
    ("topo-tofu-k", &["topo", "tofu:k"]),
    ("topo-tofu-fugaku-json", &["topo", "tofu:fugaku", "--json"]),
    ("topo-dojo-tile", &["topo", "dojo:tile"]),
    ("topo-dojo-die-json", &["topo", "dojo:die", "--json"]),
    ("topo-grayskull", &["topo", "grayskull"]),
    (
        "topo-wormhole-json",
        &["topo", "wormhole:harvest=1", "--json"],
    ),
    ("topo-fattree", &["topo", "fattree:16"]),
    ("topo-hybrid-json", &["topo", "hybrid:64", "--json"]),
    ("topo-kncube", &["topo", "kncube:4x3x2:wrap=tmt"]),
    ("topo-ring-json", &["topo", "ring:16", "--json"]),
    (
        "collective-all-reduce",
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:4x4x8",
            "--bytes",
            "64 MiB",
        ],
    ),
    (
        "collective-dgx-a100-8-nodes-json",
        &[
            "collective",
            "all-reduce",
            "--system",
            "examples/machines/dgx-a100.toml",
            "--nodes",
            "8",
            "--bytes",
            "1 GiB",
            "--json",
        ],
    ),
    (
        "topo-dgx-h100",
        &["topo", "examples/machines/dgx-h100.toml"],
    ),
    (
        "collective-all-reduce-json",
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:4x4x8",
            "--bytes",
            "64 MiB",
            "--json",
        ],
    ),
    (
        "collective-bidir-analytic",
        &[
            "collective",
            "all-reduce",
            "--topology",
            "ring:8",
            "--bytes",
            "1 MiB",
            "--algorithm",
            "bidirectional-ring",
            "--model",
            "analytic",
        ],
    ),
    (
        "collective-dimension-json",
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:4x4",
            "--bytes",
            "4 MiB",
            "--algorithm",
            "dimension",
            "--json",
        ],
    ),
    (
        "collective-hd-json",
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:4x4",
            "--bytes",
            "4 MiB",
            "--algorithm",
            "halving-doubling",
            "--json",
        ],
    ),
    (
        "collective-dbt",
        &[
            "collective",
            "all-reduce",
            "--topology",
            "mesh:4x4",
            "--bytes",
            "4 MiB",
            "--algorithm",
            "double-binary-tree",
        ],
    ),
    (
        "collective-reduce-scatter-json",
        &[
            "collective",
            "reduce-scatter",
            "--topology",
            "ring:8",
            "--bytes",
            "8 MiB",
            "--json",
        ],
    ),
    (
        "collective-all-gather",
        &[
            "collective",
            "all-gather",
            "--topology",
            "torus:4x4",
            "--bytes",
            "8 MiB",
        ],
    ),
    (
        "collective-broadcast-json",
        &[
            "collective",
            "broadcast",
            "--topology",
            "mesh:4x4",
            "--bytes",
            "1 MiB",
            "--json",
        ],
    ),
    (
        "collective-broadcast-ring",
        &[
            "collective",
            "broadcast",
            "--topology",
            "ring:8",
            "--bytes",
            "8 MiB",
            "--algorithm",
            "ring",
            "--chunk",
            "1 MiB",
        ],
    ),
    (
        "collective-reduce-json",
        &[
            "collective",
            "reduce",
            "--topology",
            "mesh:4x4",
            "--bytes",
            "1 MiB",
            "--json",
        ],
    ),
    (
        "collective-all-to-all-twisted",
        &[
            "collective",
            "all-to-all",
            "--topology",
            "tpuv4:slice=4x4x8:twisted",
            "--bytes",
            "16 MiB",
        ],
    ),
    (
        "collective-all-to-all-dimension-json",
        &[
            "collective",
            "all-to-all",
            "--topology",
            "torus:4x4",
            "--bytes",
            "1 MiB",
            "--algorithm",
            "dimension",
            "--json",
        ],
    ),
    (
        "collective-barrier-json",
        &[
            "collective",
            "barrier",
            "--topology",
            "torus:4x4",
            "--link-latency",
            "100 ns",
            "--json",
        ],
    ),
    (
        "collective-packet",
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:4x4",
            "--bytes",
            "1 MiB",
            "--model",
            "packet",
        ],
    ),
    (
        "collective-hybrid-json",
        &[
            "collective",
            "all-reduce",
            "--topology",
            "hybrid:64",
            "--bytes",
            "16 MiB",
            "--json",
        ],
    ),
    (
        "collective-error-kind",
        &[
            "collective",
            "all-reduse",
            "--topology",
            "ring:4",
            "--bytes",
            "1 MiB",
        ],
    ),
    (
        "microbench-put-latency",
        &[
            "microbench",
            "put-latency",
            "--topology",
            "torus:4x4",
            "--link-latency",
            "100 ns",
        ],
    ),
    (
        "microbench-put-throughput-json",
        &[
            "microbench",
            "put-throughput",
            "--topology",
            "torus:4x4",
            "--json",
        ],
    ),
    (
        "microbench-injection-tofu",
        &[
            "microbench",
            "injection",
            "--topology",
            "tofu:fugaku",
            "--packet-payload",
            "2016 B",
            "--packet-header",
            "136 B",
        ],
    ),
    (
        "microbench-all-to-all-json",
        &[
            "microbench",
            "all-to-all",
            "--topology",
            "torus:4x4",
            "--json",
        ],
    ),
    (
        "noc-mesh",
        &[
            "noc",
            "--topology",
            "mesh:8x8",
            "--rate",
            "0.3",
            "--cycles",
            "2000",
        ],
    ),
    (
        "noc-torus-json",
        &[
            "noc",
            "--topology",
            "torus:4x4",
            "--rate",
            "0.2",
            "--cycles",
            "2000",
            "--json",
        ],
    ),
    (
        "noc-booksim-config",
        &[
            "noc",
            "--config",
            "examples/booksim/podsim-router.toml",
            "--topology",
            "mesh:8x8",
            "--rate",
            "0.3",
            "--cycles",
            "2000",
        ],
    ),
    (
        "noc-router-booksim-json",
        &[
            "noc",
            "--topology",
            "mesh:8x8",
            "--rate",
            "0.3",
            "--cycles",
            "3000",
            "--router",
            "booksim",
            "--json",
        ],
    ),
    (
        "noc-transpose-links",
        &[
            "noc",
            "--topology",
            "mesh:4x4",
            "--traffic",
            "transpose",
            "--rate",
            "0.1",
            "--cycles",
            "1000",
            "--links",
        ],
    ),
    (
        "availability-ocs",
        &[
            "availability",
            "--slice-chips",
            "1024",
            "--host-availability",
            "0.99",
        ],
    ),
    (
        "availability-static-json",
        &[
            "availability",
            "--slice-chips",
            "1024",
            "--host-availability",
            "0.999",
            "--static",
            "--trials",
            "2000",
            "--json",
        ],
    ),
    (
        "train-gpt3-expert",
        &[
            "train",
            "--model",
            "gpt3-175b",
            "--system",
            "tpuv4:slice=8x8x8",
            "--parallel",
            "[8,1,8,8]",
            "--partition",
            "2d/2d",
        ],
    ),
    (
        "train-llm-best-json",
        &[
            "train",
            "--model",
            "llm-table3",
            "--system",
            "tpuv4:slice=8x8x8",
            "--parallel",
            "pipeline=1,data=1,model1=64,model2=8",
            "--partition",
            "1d/2d",
            "--json",
        ],
    ),
    (
        "train-moe-twisted",
        &[
            "train",
            "--model",
            "examples/models/glam-like-moe.toml",
            "--system",
            "tpuv4:slice=4x4x8:twisted",
            "--parallel",
            "pipeline=1,data=128,model1=1,model2=1,expert=128",
        ],
    ),
    (
        "train-glam-analytic-json",
        &[
            "train",
            "--model",
            "glam-64b-64e",
            "--system",
            "tpuv4:slice=8x16x16",
            "--parallel",
            "[1,64,1,32,64]",
            "--mapping",
            "model2,data,model1,pipeline",
            "--model-fidelity",
            "analytic",
            "--json",
        ],
    ),
    ("dlrm-tpuv4-128", &["dlrm", "--system", "tpuv4:slice=4x4x8"]),
    ("apps-128", &["apps"]),
    (
        "apps-rnn1-cmem-off-json",
        &["apps", "--app", "rnn1", "--cmem", "off", "--json"],
    ),
    ("apps-error-chips", &["apps", "--chips", "100"]),
    (
        "dlrm-tpuv4-host-json",
        &[
            "dlrm",
            "--system",
            "tpuv4:slice=4x4x8",
            "--embeddings",
            "host",
            "--json",
        ],
    ),
    (
        "schedule-table2",
        &["schedule", "--mix", "table2", "--hours", "500"],
    ),
    (
        "tofu-put-tofud-far",
        &["tofu", "put", "--generation", "tofud", "--far"],
    ),
    (
        "tofu-barrier-table6",
        &["tofu", "barrier", "--points", "1,4,8,16,48"],
    ),
    (
        "tofu-barrier-mpi-nodes-json",
        &[
            "tofu",
            "barrier",
            "--points",
            "6",
            "--allocation",
            "mpi",
            "--nodes",
            "tofud:2x2x2",
            "--json",
        ],
    ),
    (
        "tofu-slicing-auto-fault",
        &[
            "tofu",
            "slicing",
            "--ber",
            "1e-7",
            "--lane-fault-at",
            "100 us",
            "--lane-recover-at",
            "300 us",
            "--packets",
            "2000",
        ],
    ),
    (
        "tofu-rdma-get-tofud-far",
        &[
            "tofu",
            "rdma",
            "--op",
            "get",
            "--generation",
            "tofud",
            "--far",
        ],
    ),
    (
        "tofu-node-tofud",
        &[
            "tofu",
            "node",
            "--generation",
            "tofud",
            "--processes",
            "4",
            "--cqs",
            "6",
            "--bchs",
            "1",
        ],
    ),
    (
        "dojo-node-matmul",
        &["dojo", "node", "--kernel", "examples/dojo/matmul.toml"],
    ),
    (
        "dojo-node-list-walk-json",
        &[
            "dojo",
            "node",
            "--kernel",
            "examples/dojo/list-walk.toml",
            "--json",
        ],
    ),
    (
        "dojo-barrier-domains",
        &["dojo", "barrier", "--domains", "examples/dojo/domains.toml"],
    ),
    (
        "dojo-barrier-die-fan-in",
        &["dojo", "barrier", "--fan-in", "2,4,8,16"],
    ),
    (
        "dojo-transfer-push-tile",
        &[
            "dojo",
            "transfer",
            "push",
            "--from",
            "5,5",
            "--to",
            "40,5",
            "--bytes",
            "16KiB",
            "--topology",
            "dojo:tile",
            "--retry",
            "0.05",
        ],
    ),
    (
        "dojo-shortcuts-tile",
        &["dojo", "shortcuts", "--global-fraction", "0.05"],
    ),
    (
        "dojo-dma-strided",
        &[
            "dojo",
            "dma",
            "--to",
            "40,50",
            "--shape",
            "8,8,4,4",
            "--stride",
            "2,512,8192,65536",
            "--element-bytes",
            "2",
        ],
    ),
    (
        "dojo-dma-json",
        &["dojo", "dma", "--to", "1,10", "--shape", "65536", "--json"],
    ),
    ("dojo-host", &["dojo", "host", "--bytes", "16GiB"]),
    ("dram-wormhole", &["dram"]),
    (
        "import-booksim",
        &["import", "booksim", "examples/booksim/mesh88.cfg"],
    ),
    (
        "import-scalesim",
        &["import", "scalesim", "examples/scalesim/scale.cfg"],
    ),
    (
        "import-astra-sim",
        &[
            "import",
            "astra-sim",
            "examples/astra-sim/tpu_v3_32_2dtorus.yml",
            "examples/astra-sim/tpu_v3_32_2dtorus.json",
        ],
    ),
    (
        "import-chakra",
        &[
            "import",
            "chakra",
            "examples/chakra/data-parallel/step.0.et",
            "examples/chakra/data-parallel/step.1.et",
            "examples/chakra/data-parallel/step.2.et",
            "examples/chakra/data-parallel/step.3.et",
        ],
    ),
    (
        "dram-top-rows-json",
        &["dram", "--placement", "top-rows", "--json"],
    ),
    (
        "dram-n300-logical",
        &["dram", "--harvested-rows", "1,4", "--relocation", "logical"],
    ),
    ("dram-grayskull", &["dram", "--chip", "grayskull"]),
    ("dram-shared-vcs", &["dram", "--vcs", "shared"]),
    ("dram-wormhole-energy", &["dram", "--energy"]),
    (
        "matmul-energy-json",
        &[
            "matmul", "--m", "32", "--k", "8192", "--n", "3072", "--energy", "--json",
        ],
    ),
    (
        "matmul-llama-ff1",
        &["matmul", "--m", "32", "--k", "8192", "--n", "3584"],
    ),
    (
        "matmul-single-json",
        &[
            "matmul",
            "--m",
            "32",
            "--k",
            "8192",
            "--n",
            "3584",
            "--tile",
            "32x16",
            "--buffering",
            "single",
            "--json",
        ],
    ),
    (
        "workload-dojo-tile-step",
        &["workload", "examples/dojo/tile-step.toml"],
    ),
    (
        "tofu-frame-encode",
        &[
            "tofu",
            "frame",
            "--encode",
            "len=63,dx=1,dy=2,dz=3,dabc2=5,di=2,vc=1,seq=7",
        ],
    ),
    (
        "roofline-tpuv4",
        &["roofline", "--chip", "tpuv4", "--intensity", "100"],
    ),
    (
        "roofline-a100-json",
        &[
            "roofline",
            "--chip",
            "a100",
            "--intensity",
            "1000",
            "--json",
        ],
    ),
    (
        "gemm-os",
        &[
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
        ],
    ),
    (
        "gemm-ws-scalesim-json",
        &[
            "gemm",
            "--array",
            "32x32",
            "--dataflow",
            "ws",
            "--m",
            "256",
            "--n",
            "512",
            "--k",
            "1024",
            "--convention",
            "scalesim",
            "--json",
        ],
    ),
    (
        "gemm-is-json",
        &[
            "gemm",
            "--array",
            "128x128",
            "--dataflow",
            "is",
            "--m",
            "1000",
            "--n",
            "300",
            "--k",
            "700",
            "--json",
        ],
    ),
    (
        "numerics-bf16",
        &[
            "numerics", "--format", "bf16", "1.0", "3.14159", "65504", "1e-40",
        ],
    ),
    (
        "numerics-cfp8-json",
        &[
            "numerics",
            "--format",
            "cfp8:e4:bias=7",
            "0.3",
            "-2.5",
            "--json",
        ],
    ),
    (
        "numerics-e5m2",
        &["numerics", "--format", "e5m2", "57344", "0.0001"],
    ),
    (
        "workload-step-json",
        &[
            "workload",
            "crates/cli/tests/data/workload-step.toml",
            "--json",
        ],
    ),
    (
        "workload-data-parallel-analytic",
        &[
            "workload",
            "examples/workload-data-parallel.toml",
            "--model",
            "analytic",
        ],
    ),
];

/// Every command: the fixed list, then `podsim run` on every example scenario.
fn cases() -> Vec<(String, Vec<String>)> {
    let mut v: Vec<(String, Vec<String>)> = COMMANDS
        .iter()
        .map(|(n, a)| (n.to_string(), a.iter().map(|s| s.to_string()).collect()))
        .collect();
    let mut examples: Vec<PathBuf> = std::fs::read_dir(repo().join("examples"))
        .expect("examples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    examples.sort();
    for p in examples {
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let rel = format!("examples/{}", p.file_name().unwrap().to_string_lossy());
        v.push((format!("example-{stem}"), vec!["run".into(), rel]));
    }
    v
}

/// What a snapshot holds: the command line, the exit code, stdout and stderr.
fn record(args: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .output()
        .expect("podsim runs");
    let quoted: Vec<String> = args
        .iter()
        .map(|a| {
            if a.contains(' ') || a.is_empty() {
                format!("\"{a}\"")
            } else {
                a.clone()
            }
        })
        .collect();
    format!(
        "$ podsim {}\n[exit {}]\n[stdout]\n{}[stderr]\n{}",
        quoted.join(" "),
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn golden_snapshots() {
    let dir = repo().join("crates/cli/tests/snapshots");
    let update = std::env::var_os("PODSIM_UPDATE_SNAPSHOTS").is_some();
    if update {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let cases = cases();
    // Two at a time: the commands are independent processes.
    let results: Vec<(String, String)> = std::thread::scope(|s| {
        let (left, right) = cases.split_at(cases.len() / 2);
        let run = |part: &[(String, Vec<String>)]| {
            part.iter()
                .map(|(n, a)| (n.clone(), record(a)))
                .collect::<Vec<_>>()
        };
        let h = s.spawn(move || run(right));
        let mut v = run(left);
        v.extend(h.join().unwrap());
        v
    });
    let mut differ = Vec::new();
    for (name, got) in &results {
        let path = dir.join(format!("{name}.txt"));
        if update {
            std::fs::write(&path, got).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if &want == got => {}
            Ok(want) => {
                let line = want
                    .lines()
                    .zip(got.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(want.lines().count().min(got.lines().count()));
                let cut = |s: &str| s.chars().take(200).collect::<String>();
                differ.push(format!(
                    "{name}: differs from line {}:\n  want: {}\n  got:  {}",
                    line + 1,
                    cut(want.lines().nth(line).unwrap_or("<end>")),
                    cut(got.lines().nth(line).unwrap_or("<end>"))
                ));
            }
            Err(_) => differ.push(format!("{name}: no snapshot at {}", path.display())),
        }
    }
    if update {
        // Snapshots of commands no longer in the list are removed.
        let names: Vec<String> = results.iter().map(|(n, _)| format!("{n}.txt")).collect();
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let f = e.file_name().to_string_lossy().to_string();
            if !names.contains(&f) {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
    }
    assert!(
        differ.is_empty(),
        "{} snapshot(s) differ (review with PODSIM_UPDATE_SNAPSHOTS=1 cargo test -p podsim --test snapshots; git diff):\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// Issue 40's invariants on every JSON the snapshots hold (every `--json` command listed
/// above, `run --json` included): no number at a 64-bit type's maximum (a saturated
/// counter), every utilisation within 0 and 1, and a time never below the lower bound printed
/// beside it. (JSON has no NaN or infinity: serde_json writes them as null, and a null where a
/// figure should be is caught by the commands' own tests.)
#[test]
fn no_snapshot_prints_an_impossible_figure() {
    fn walk(v: &serde_json::Value, path: &str, name: &str, bad: &mut Vec<String>) {
        match v {
            serde_json::Value::Number(n) => {
                if n.as_u64() == Some(u64::MAX) || n.as_i64() == Some(i64::MAX) {
                    bad.push(format!("{name}: {path} = {n}: a type's maximum"));
                }
                let key = path.rsplit('.').next().unwrap_or("");
                if key.contains("utilization") || key.contains("utilisation") {
                    let x = n.as_f64().unwrap_or(0.0);
                    if !(0.0..=1.0 + 1e-9).contains(&x) {
                        bad.push(format!(
                            "{name}: {path} = {x}: a utilisation outside [0, 1]"
                        ));
                    }
                }
            }
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{path}[{i}]"), name, bad);
                }
            }
            serde_json::Value::Object(o) => {
                if let (Some(t), Some(b)) = (
                    o.get("time_s").and_then(serde_json::Value::as_f64),
                    o.get("lower_bound_time_s")
                        .and_then(serde_json::Value::as_f64),
                ) && t < b * (1.0 - 1e-12)
                {
                    bad.push(format!("{name}: {path}: time {t} s below its bound {b} s"));
                }
                for (k, x) in o {
                    walk(x, &format!("{path}.{k}"), name, bad);
                }
            }
            _ => {}
        }
    }
    let dir = repo().join("crates/cli/tests/snapshots");
    let (mut bad, mut seen) = (Vec::new(), 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let Some(start) = text.find("[stdout]\n") else {
            continue;
        };
        let out = &text[start + 9..];
        let out = &out[..out.find("\n[stderr]").unwrap_or(out.len())];
        for line in out
            .lines()
            .filter(|l| l.starts_with('{') || l.starts_with('['))
        {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                seen += 1;
                walk(&v, "", &name, &mut bad);
            }
        }
    }
    // 35 snapshot files are --json commands; some print one object a line.
    assert!(seen >= 30, "only {seen} JSON documents found");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
