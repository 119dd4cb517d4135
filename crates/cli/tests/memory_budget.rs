//! Issue 40, "Done means": every command, driven under `--memory-limit "64 MiB"` with a size
//! that grows (by about 10x a step) until it is refused, ends in success or a refusal (exit 1
//! or 2 with an `error:` line), never an abort (exit 134 for an allocation, 101 for a panic,
//! or a signal), and no run's peak resident memory passes the limit plus [`SLACK`].
//!
//! Each ladder stops at its first refusal; its sizes are chosen so that the runs before the
//! refusal take well under a second or two each (the growth in time, not memory, is issue
//! 40's item 3). The children's peak RSS is read with `getrusage(RUSAGE_CHILDREN)`; this file
//! holds this one test so that no other test's children count.

use nix::sys::resource::{UsageWho, getrusage};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The limit every run is given.
const LIMIT: u64 = 64 << 20;
/// What a run may hold beyond the limit: the binary, its libraries and the allocator's own
/// state (the empty process peaks at 6 to 14 MB) and what the estimates leave out (they
/// count the simulation's tables, not every small buffer).
const SLACK: u64 = 32 << 20;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Run {
    code: Option<i32>,
    signal: Option<i32>,
    stderr: String,
    peak_bytes: u64,
}

/// Run podsim with `args` under the limit: its exit, and the largest peak RSS of any child
/// this test has run so far (`getrusage(RUSAGE_CHILDREN)`; the test runs its children one at
/// a time, so a rise is this child's).
fn run(args: &[String]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(["--memory-limit", "64MiB", "--quiet"])
        .args(args)
        .current_dir(repo())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("podsim runs");
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    Run {
        code: out.status.code(),
        signal: out.status.signal(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        // ru_maxrss is in KiB on Linux.
        peak_bytes: usage.max_rss() as u64 * 1024,
    }
}

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("podsim-memory-budget-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(name: &str, text: &str) -> String {
    let p = scratch().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn ones(name: &str, rows: u64, cols: u64) -> String {
    let row = vec!["1"; cols as usize].join(",");
    let text: String = (0..rows).map(|_| format!("{row}\n")).collect();
    write(name, &text)
}

type Ladder = (&'static str, Box<dyn Fn(u64) -> Vec<String>>, Vec<u64>);

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn ladders() -> Vec<Ladder> {
    let csv = scratch().join("sweep.csv").display().to_string();
    let csv2 = csv.clone();
    let pow = |from: u32, to: u32| (from..=to).map(|i| 10u64.pow(i)).collect::<Vec<_>>();
    let chakra: Vec<String> = (0..4)
        .map(|i| format!("examples/chakra/data-parallel/step.{i}.et"))
        .collect();
    vec![
        (
            "topo",
            Box::new(|n| s(&["topo", &format!("ring:{n}")])),
            pow(1, 9),
        ),
        (
            "collective all-reduce",
            Box::new(move |n| {
                s(&[
                    "collective",
                    "all-reduce",
                    "--topology",
                    &format!("ring:{n}"),
                    "--sweep",
                    "1000000",
                    "--csv",
                    &csv,
                    "--no-resume",
                ])
            }),
            pow(1, 5),
        ),
        (
            "collective all-to-all",
            Box::new(move |n| {
                s(&[
                    "collective",
                    "all-to-all",
                    "--topology",
                    &format!("ring:{n}"),
                    "--sweep",
                    "1MB",
                    "--csv",
                    &csv2,
                    "--no-resume",
                ])
            }),
            pow(1, 4),
        ),
        (
            "microbench",
            Box::new(|n| {
                s(&[
                    "microbench",
                    "put-latency",
                    "--topology",
                    &format!("torus:{n}x{n}x{n}"),
                ])
            }),
            vec![10, 100],
        ),
        (
            "gemm",
            Box::new(|n| {
                let n = n.to_string();
                s(&[
                    "gemm",
                    "--array",
                    "128x128",
                    "--dataflow",
                    "ws",
                    "--m",
                    &n,
                    "--n",
                    &n,
                    "--k",
                    &n,
                ])
            }),
            pow(1, 7),
        ),
        (
            "availability",
            Box::new(|n| {
                s(&[
                    "availability",
                    "--slice-chips",
                    "64",
                    "--host-availability",
                    "0.99",
                    "--trials",
                    &n.to_string(),
                ])
            }),
            pow(1, 5),
        ),
        (
            "systolic",
            Box::new(|n| {
                let a = ones(&format!("a{n}.csv"), n, n);
                let b = ones(&format!("b{n}.csv"), n, n);
                let n = n.to_string();
                s(&["systolic", "--size", &n, "--k", &n, "--a", &a, "--b", &b])
            }),
            vec![4, 40, 400, 4000],
        ),
        (
            "noc",
            Box::new(|n| {
                s(&[
                    "noc",
                    "--topology",
                    &format!("mesh:{n}x{n}"),
                    "--traffic",
                    "neighbor",
                    "--rate",
                    "0.1",
                    "--cycles",
                    "100",
                ])
            }),
            vec![4, 40, 400],
        ),
        (
            "noc cycles",
            Box::new(|n| {
                s(&[
                    "noc",
                    "--topology",
                    "mesh:4x4",
                    "--traffic",
                    "uniform",
                    "--rate",
                    "0.1",
                    "--cycles",
                    &n.to_string(),
                ])
            }),
            pow(2, 6),
        ),
        (
            "workload collective",
            Box::new(|n| {
                let f = write(
                    &format!("ring{n}.toml"),
                    &format!(
                        "name = \"x\"\n[machine]\npreset = \"ring:{n}\"\nchip = \"tpuv4\"\nmodel = \"flow\"\n[[task]]\nname = \"ar\"\ncollective = \"all-reduce\"\nbytes = \"1000000\"\n"
                    ),
                );
                s(&["workload", &f])
            }),
            pow(1, 4),
        ),
        (
            "workload repeat",
            Box::new(|n| {
                let f = write(
                    &format!("repeat{n}.toml"),
                    &format!(
                        "name = \"x\"\n[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\nmodel = \"flow\"\n[[task]]\nname = \"c\"\ncompute = {{ flops = \"1 GFLOP\", efficiency = 0.5 }}\nrepeat = {n}\n"
                    ),
                );
                s(&["workload", &f])
            }),
            pow(1, 9),
        ),
        (
            "train",
            Box::new(|n| {
                let chips = (n * n * n).to_string();
                s(&[
                    "train",
                    "--model",
                    "gpt3-1.3b",
                    "--batch",
                    &chips,
                    "--system",
                    &format!("torus:{n}x{n}x{n}"),
                    "--parallel",
                    &format!("pipeline=1,data={chips},model1=1,model2=1"),
                ])
            }),
            vec![4, 16, 64],
        ),
        (
            "train search",
            Box::new(|n| {
                s(&[
                    "train",
                    "--model",
                    "gpt3-175b",
                    "--search",
                    "--chips",
                    &(64 * n).to_string(),
                    "--flow-survivors",
                    "1",
                ])
            }),
            pow(0, 2),
        ),
        (
            "dlrm",
            Box::new(|n| s(&["dlrm", "--system", &format!("tpuv4:slice=4x4x{n}")])),
            vec![4, 16, 64],
        ),
        (
            "apps",
            Box::new(|n| s(&["apps", "--chips", &n.to_string()])),
            vec![64, 1024],
        ),
        (
            "schedule",
            Box::new(|n| {
                s(&[
                    "schedule",
                    "--mix",
                    "table2",
                    "--load",
                    "0.5",
                    "--hours",
                    &n.to_string(),
                ])
            }),
            pow(1, 5),
        ),
        (
            "tofu barrier",
            Box::new(|n| {
                s(&[
                    "tofu",
                    "barrier",
                    "--points",
                    "1",
                    "--nodes",
                    &format!("tofud:{n}x{n}x{n}"),
                ])
            }),
            vec![2, 16, 64],
        ),
        (
            "tofu slicing",
            Box::new(|n| {
                s(&[
                    "tofu",
                    "slicing",
                    "--ber",
                    "1e-6",
                    "--packets",
                    &n.to_string(),
                ])
            }),
            vec![100, 10_000, 10_000_000],
        ),
        (
            "tofu node",
            Box::new(|n| {
                s(&[
                    "tofu",
                    "node",
                    "--generation",
                    "tofud",
                    "--processes",
                    &n.to_string(),
                ])
            }),
            pow(0, 2),
        ),
        (
            "dojo node",
            Box::new(|n| {
                let f = write(
                    &format!("kernel{n}.toml"),
                    &format!(
                        "name = \"k\"\n[[thread]]\niterations = {n}\nbody = {{ load = 1, simd = 4, loop = 1 }}\n"
                    ),
                );
                s(&["dojo", "node", "--kernel", &f])
            }),
            (0..7).map(|i| 10u64.pow(1 + 3 * i)).collect(),
        ),
        (
            "dojo barrier",
            Box::new(|n| {
                s(&[
                    "dojo",
                    "barrier",
                    "--topology",
                    &format!("dojo:system={n}x{n}"),
                ])
            }),
            vec![1, 2, 4, 8],
        ),
        (
            "dojo transfer",
            Box::new(|n| {
                s(&[
                    "dojo",
                    "transfer",
                    "broadcast",
                    "--from",
                    "0,0",
                    "--bytes",
                    &(64 * n).to_string(),
                ])
            }),
            pow(0, 5),
        ),
        (
            "dojo shortcuts",
            Box::new(|n| {
                s(&[
                    "dojo",
                    "shortcuts",
                    "--topology",
                    &format!("dojo:system={n}x{n}"),
                    "--global-fraction",
                    "0.1",
                ])
            }),
            vec![1, 2, 4],
        ),
        (
            "dram",
            Box::new(|n| s(&["dram", "--bytes", &(139_264 * n).to_string()])),
            vec![1, 10, 100, 10_000],
        ),
        (
            "matmul",
            Box::new(|n| {
                s(&[
                    "matmul",
                    "--m",
                    "32",
                    "--k",
                    &(32 * n).to_string(),
                    "--n",
                    &(384 * n).to_string(),
                ])
            }),
            pow(0, 3),
        ),
        (
            "import scalesim",
            Box::new(|n| {
                let mut t = String::from("Layer, M, N, K,\n");
                for i in 0..n {
                    t.push_str(&format!("g{i}, 64, 64, 64,\n"));
                }
                let f = write(&format!("layers{n}.csv"), &t);
                s(&["import", "scalesim", "examples/scalesim/scale.cfg", &f])
            }),
            vec![1, 100, 10_000, 1_000_000],
        ),
        (
            "import booksim",
            Box::new(|n| {
                let f = write(
                    &format!("mesh{n}.cfg"),
                    &format!(
                        "topology = mesh;\nk = {n};\nn = 2;\nrouting_function = dor;\ntraffic = uniform;\ninjection_rate = 0.1;\n"
                    ),
                );
                s(&["import", "booksim", &f])
            }),
            vec![2, 8, 64, 1024],
        ),
        (
            "import chakra",
            Box::new(move |n| {
                let mut a = s(&[
                    "import",
                    "chakra",
                    "--machine",
                    &format!("torus:{n}x{n}x{n}"),
                ]);
                a.extend(chakra.iter().cloned());
                a
            }),
            vec![2, 10, 100],
        ),
        (
            "run",
            Box::new(|n| {
                let f = write(
                    &format!("scenario{n}.toml"),
                    &format!(
                        "name = \"x\"\n[[system]]\nname = \"r\"\ntopology = \"ring:{n}\"\nlink_bandwidth = \"50 GB/s\"\n[[run]]\nwhat = \"collective\"\nkind = \"all-reduce\"\nbytes = \"1000000\"\n"
                    ),
                );
                s(&["run", &f])
            }),
            pow(1, 4),
        ),
    ]
}

#[test]
fn every_command_under_a_small_limit_succeeds_or_refuses_and_stays_under_it() {
    let mut refused = Vec::new();
    for (name, args, sizes) in ladders() {
        for n in sizes {
            let a = args(n);
            let r = run(&a);
            assert!(
                r.signal.is_none() && matches!(r.code, Some(0..=2)),
                "{name} at {n}: exit {:?}, signal {:?} (an abort, a panic or a kill)\n{}",
                r.code,
                r.signal,
                r.stderr
            );
            assert!(
                r.peak_bytes <= LIMIT + SLACK,
                "{name} at {n}: peak RSS {} MiB, above the 64 MiB limit and its {} MiB slack",
                r.peak_bytes >> 20,
                SLACK >> 20
            );
            assert!(
                !r.stderr.contains("panicked"),
                "{name} at {n}: {}",
                r.stderr
            );
            if r.code != Some(0) {
                assert!(
                    r.stderr.lines().any(|l| l.starts_with("error:")),
                    "{name} at {n}: refused without an error line:\n{}",
                    r.stderr
                );
                refused.push(name);
                break;
            }
        }
    }
    // The ladders that grow memory reach a refusal (the others stop at their last size):
    // the limit is what stops them, not the end of the ladder.
    for name in [
        "collective all-reduce",
        "collective all-to-all",
        "microbench",
        "systolic",
        "noc",
        "workload collective",
        "workload repeat",
        "train",
        "dlrm",
        "apps",
        "tofu barrier",
        "tofu slicing",
        "dojo barrier",
        "dojo transfer",
        "dojo shortcuts",
        "import chakra",
        "run",
    ] {
        assert!(refused.contains(&name), "{name} was never refused");
    }
}
