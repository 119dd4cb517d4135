//! Regression tests for the defects of the correctness-and-robustness issue, through the
//! binary: each failed before its fix.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

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

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_closed_stdout_ends_quietly_with_success() {
    // `podsim run | head -1`: the reader goes away after the title line; the next write gets
    // EPIPE, which used to panic (exit 101).
    let mut child = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .arg("run")
        .current_dir(repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("TPU v4"), "{first}");
    // The reader is dropped here, closing the pipe.
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

/// The exit code and the one-line error of a failing command.
fn fails(args: &[&str]) -> (i32, String) {
    let o = podsim(args);
    assert!(!o.status.success(), "{args:?} succeeded: {}", stdout(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.starts_with("error: "), "{e}");
    (o.status.code().unwrap(), e)
}

#[test]
fn numerics_takes_negative_infinity_and_nan() {
    // `-inf` was read as the short flags -i -n -f (exit 2).
    let o = podsim(&["numerics", "--format", "bf16", "-inf", "-1.5", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // bf16 -inf: sign 1, exponent all ones, mantissa 0 = 0xff80; -1.5 = 0xbfc0.
    assert_eq!(v["values"][0]["bits"], "0xff80");
    assert_eq!(v["values"][1]["bits"], "0xbfc0");
    let o = podsim(&["numerics", "-NaN", "--format", "e4m3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // E4M3 has one NaN pattern per sign: 0x7f / 0xff.
    assert!(stdout(&o).contains("0xff = NaN"), "{}", stdout(&o));
}

#[test]
fn help_prints_each_default_once() {
    for cmd in [
        "topo",
        "run",
        "collective",
        "microbench",
        "gemm",
        "systolic",
        "noc",
        "numerics",
        "validate",
        "workload",
        "roofline",
        "availability",
        "train",
        "dlrm",
        "schedule",
        "tofu",
        "dojo",
        "dram",
        "matmul",
        "completions",
        "man",
        "import",
        "report",
    ] {
        let o = podsim(&[cmd, "--help"]);
        for line in stdout(&o).lines() {
            assert!(
                line.matches("[default:").count() <= 1,
                "`podsim {cmd} --help` prints a default twice: {line}"
            );
        }
    }
}

#[test]
fn topo_help_lists_the_presets_and_the_shorthand_grammar() {
    let help = stdout(&podsim(&["topo", "--help"]));
    for example in [
        "mesh:8x8",
        "torus:4x4x8:twisted",
        "ring:N",
        "kncube:24x18x16:wrap=tmt",
        "tofu:XxYxZ",
        "tofu2: + XxYxZ[:wrap=ttm]",
        "fattree:K",
        "hybrid:N",
        "tpuv4:pod",
        "tpuv4:slice=4x4x8:twisted",
        "tofu:k",
        "tofu:fugaku",
        "tofu:fx100",
        "dojo:die",
        "dojo:tile",
        "dojo:plane",
        "dojo:system=RxC",
        "grayskull",
        "wormhole[:harvest=N]",
    ] {
        assert!(
            help.contains(example),
            "`topo --help` does not list {example}"
        );
    }
    // The forms with N, K or RxC in them, filled in with numbers, are accepted.
    for shorthand in [
        "hybrid:16",
        "tofu2:2x2x2:wrap=ttm",
        "dojo:system=1x1",
        "wormhole:harvest=2",
    ] {
        let o = podsim(&["topo", shorthand]);
        assert!(o.status.success(), "{shorthand}: {}", stderr(&o));
    }
}

#[test]
fn settings_without_effect_are_usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "collective",
                "barrier",
                "--topology",
                "ring:4",
                "--bytes",
                "1 MiB",
            ],
            "`--bytes`",
        ),
        (
            &[
                "collective",
                "all-reduce",
                "--topology",
                "ring:4",
                "--bytes",
                "1 MiB",
                "--chunk",
                "64 KiB",
            ],
            "`--chunk`",
        ),
        (
            &[
                "collective",
                "all-reduce",
                "--topology",
                "ring:4",
                "--bytes",
                "1 MiB",
                "--sweep",
                "1 MiB,2 MiB",
            ],
            "`--bytes`",
        ),
        (
            &[
                "collective",
                "all-reduce",
                "--topology",
                "ring:4",
                "--bytes",
                "1 MiB",
                "--csv",
                "x.csv",
            ],
            "`--csv`",
        ),
        (
            &[
                "noc",
                "--topology",
                "mesh:4x4",
                "--rate",
                "0.1",
                "--svg",
                "x.svg",
            ],
            "`--svg`",
        ),
        (
            &[
                "topo",
                "examples/booksim-mesh-8x8.toml",
                "--link-latency",
                "1 ns",
            ],
            "is a file",
        ),
        (
            &[
                "gemm",
                "--array",
                "32x32",
                "--dataflow",
                "os",
                "--m",
                "64",
                "--n",
                "64",
                "--k",
                "64",
                "--sram",
                "0B",
            ],
            "`--sram`",
        ),
        (
            &[
                "noc",
                "--topology",
                "mesh:4x4",
                "--rate",
                "0.1",
                "--cycles",
                "1",
            ],
            "`--cycles`",
        ),
        (&["run", "--memory-limit", "lots"], "`--memory-limit`"),
    ];
    for (args, key) in cases {
        let (code, e) = fails(args);
        assert_eq!(code, 2, "{args:?}: {e}");
        assert!(e.contains(key), "{args:?}: {e}");
    }
}

#[test]
fn link_latency_on_a_preset_that_fixes_its_own_is_an_error() {
    // Used to be accepted and silently ignored.
    for topo in [
        "tpuv4:slice=4x4x4",
        "grayskull",
        "wormhole:harvest=0",
        "dojo:die",
    ] {
        let (code, e) = fails(&[
            "collective",
            "barrier",
            "--topology",
            topo,
            "--link-latency",
            "100 ns",
        ]);
        assert_eq!(code, 2, "{topo}: {e}");
        assert!(e.contains("`--link-latency`"), "{topo}: {e}");
    }
}

#[test]
fn a_sweep_prints_json_when_asked() {
    // `--json` used to be ignored with `--sweep`.
    let dir = std::env::temp_dir().join(format!("podsim-sweep-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("s.csv");
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        "ring:4",
        "--sweep",
        "1 MiB,2 MiB",
        "--json",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 2);
    assert_eq!(a[0]["bytes"], 1 << 20);
    assert_eq!(a[1]["bytes"], 2 << 20);
    // Ring all-reduce on ring:4 at 50 GB/s: 2 x 3 steps of bytes/4 = 1.5 x bytes / 50 GB/s.
    let t = a[1]["time_s"].as_f64().unwrap();
    assert!((t - 1.5 * 2097152.0 / 50e9).abs() < 1e-12, "{t}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validate_on_an_empty_directory_fails() {
    // Used to print an empty table and "0 passed, 0 failed" with success.
    let dir = std::env::temp_dir().join(format!("podsim-empty-validation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (code, e) = fails(&["validate", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(e.contains("no validation cases"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn runs_too_large_for_memory_are_refused_up_front() {
    // `noc --topology torus:1000x1000` aborted after 8 GB; uniform traffic at 0.01 over the
    // longest run meets about 2 x 10^8 pairs of a million endpoints, each route ~500 hops.
    let (code, e) = fails(&[
        "noc",
        "--topology",
        "torus:1000x1000",
        "--rate",
        "0.01",
        "--memory-limit",
        "16 GiB",
    ]);
    assert_eq!(code, 1, "{e}");
    assert!(e.contains("more than the memory limit of 16 GiB"), "{e}");
    // `systolic --size 100000` asked for 80 GB: 10^10 PEs x 48 bytes = 480 GB, plus the
    // 2 x 10^5 input edges x 8 bytes = 1.6 MB.
    let (code, e) = fails(&[
        "systolic",
        "--size",
        "100000",
        "--k",
        "2",
        "--a",
        "a.csv",
        "--b",
        "b.csv",
        "--memory-limit",
        "16 GiB",
    ]);
    assert_eq!(code, 1, "{e}");
    assert!(e.contains("480.0016 GB"), "{e}");
}

#[test]
fn endless_or_binary_inputs_are_refused() {
    // Regression: `podsim run /dev/zero` read until memory ran out.
    let (code, e) = fails(&["run", "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(e.contains("larger than the 16 MiB"), "{e}");
    for args in [
        &["topo", "/dev/zero"][..],
        &[
            "collective",
            "all-reduce",
            "--topology",
            "/dev/zero",
            "--bytes",
            "1 MiB",
        ],
        &["noc", "--topology", "/dev/zero", "--rate", "0.1"],
        &["workload", "/dev/zero"],
    ] {
        let (code, e) = fails(args);
        assert_eq!(code, 2, "{args:?}: {e}");
    }
}

#[test]
fn a_packet_level_run_of_days_is_refused_up_front() {
    // 4 PiB all-reduce on 4 ranks: 2 x 3/4 x 4 PiB per rank in 64-byte flits is ~4e14 flits,
    // days at the packet level's few million flit-hops per second; it used to run until killed.
    for args in [
        &[
            "collective",
            "all-reduce",
            "--topology",
            "torus:2x2",
            "--bytes",
            "4 PiB",
            "--model",
            "packet",
        ][..],
        &[
            "microbench",
            "put-throughput",
            "--topology",
            "torus:2x2",
            "--bytes",
            "1 TiB",
            "--model",
            "packet",
        ][..],
    ] {
        let o = podsim(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("use the flow or analytic model"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn train_refuses_bad_configurations_with_the_reason() {
    let base = [
        "train",
        "--model",
        "gpt3-175b",
        "--system",
        "tpuv4:slice=8x8x8",
    ];
    let cases: &[(&[&str], &str)] = &[
        // 8 x 1 x 8 x 4 = 256 chips on a 512-chip slice.
        (
            &["--parallel", "[8,1,8,4]"],
            "needs 256 chips but the slice has 512",
        ),
        (
            &["--parallel", "pipeline=8,data=1,model1=8"],
            "`model2` is missing",
        ),
        (
            &["--parallel", "[8,1,8,8]", "--partition", "3d/1d"],
            "--partition",
        ),
        (
            &["--parallel", "[8,1,8,8]", "--mapping", "data,model1"],
            "name all four axes",
        ),
        (
            &["--parallel", "[8,1,8,8]", "--top", "3"],
            "only --search takes it",
        ),
        // 1536 sequences do not split over data x model1 = 7 x ... : 512 = 1 x 512 x 1 x 1.
        (
            &["--parallel", "[1,1,512,1]", "--batch", "1000"],
            "does not split",
        ),
        (
            &["--parallel", "[8,1,8,8]", "--model-fidelity", "packet"],
            "not analytic or flow",
        ),
    ];
    for (extra, want) in cases {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        let o = podsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    let o = podsim(&[
        "train",
        "--model",
        "gpt4",
        "--system",
        "tpuv4:slice=8x8x8",
        "--parallel",
        "[8,1,8,8]",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("neither a built-in model"),
        "{}",
        stderr(&o)
    );
    let o = podsim(&[
        "train",
        "--search",
        "--model",
        "gpt3-175b",
        "--chips",
        "500",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("multiple of 64"), "{}", stderr(&o));
}

#[test]
fn train_refuses_expert_axes_and_keys_that_do_nothing_or_do_not_split() {
    let moe = "examples/models/glam-like-moe.toml";
    let cases: &[(&[&str], &str)] = &[
        // A dense model has no experts to split.
        (
            &[
                "--model",
                "gpt3-1.3b",
                "--parallel",
                "pipeline=1,data=128,model1=1,model2=1,expert=2",
            ],
            "--parallel expert=2: the model gpt3-1.3b is dense",
        ),
        // Even an expert axis of 1 has no effect there.
        (
            &["--model", "gpt3-1.3b", "--parallel", "[1,128,1,1,1]"],
            "--parallel expert=1: the model gpt3-1.3b is dense",
        ),
        // The expert axis is carved out of data: 3 does not divide 128.
        (
            &["--model", moe, "--parallel", "[1,128,1,1,3]"],
            "does not divide data = 128",
        ),
        // Nor can it be larger than data: 64 of a data axis of 32.
        (
            &["--model", moe, "--parallel", "[1,32,1,4,64]"],
            "64 does not divide data = 32",
        ),
        (
            &[
                "--model",
                moe,
                "--parallel",
                "[1,128,1,1,128]",
                "--shard",
                "weights",
            ],
            "with a mixture of experts is not modelled",
        ),
        (
            &["--model", moe, "--parallel", "[1,128,1,1,128,2]"],
            "takes four sizes",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["train", "--system", "tpuv4:slice=4x4x8"];
        args.extend_from_slice(extra);
        let (code, e) = fails(&args);
        assert_eq!(code, 2, "{args:?}: {e}");
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // Nor does the search shard an MoE model's gradients or weights.
    let (code, e) = fails(&[
        "train", "--model", moe, "--search", "--chips", "128", "--shard", "weights",
    ]);
    assert_eq!(code, 2, "{e}");
    assert!(
        e.contains("--shard weights with a mixture of experts"),
        "{e}"
    );
    // A model file's expert keys on a dense model name the file and the key.
    let dir = std::env::temp_dir().join(format!("podsim-moe-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("dense.toml");
    std::fs::write(
        &file,
        "layers = 4\nd_model = 1024\nheads = 16\nd_ff = 4096\nvocabulary = 32000\nsequence = 512\nbatch = 64\nexperts_per_token = 2\n",
    )
    .unwrap();
    let (code, e) = fails(&[
        "train",
        "--model",
        file.to_str().unwrap(),
        "--system",
        "tpuv4:slice=4x4x4",
        "--parallel",
        "[1,64,1,1]",
    ]);
    assert_eq!(code, 2, "{e}");
    assert!(
        e.contains("dense.toml") && e.contains("experts_per_token") && e.contains("no effect"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn train_says_when_a_configuration_does_not_fit_in_hbm() {
    // GPT-3 175B with no pipeline and no rematerialisation on 64 chips: 175e9 weights / 64
    // model-parallel chips x 16 bytes (bf16 weight and gradient, fp32 master and two moments)
    // = 43.6 GB before any activation, over the 34.4 GB of 32 GiB.
    let o = podsim(&[
        "train",
        "--model",
        "gpt3-175b",
        "--system",
        "tpuv4:slice=4x4x4",
        "--parallel",
        "[1,1,8,8]",
        "--batch",
        "64",
        "--microbatches",
        "1",
        "--model-fidelity",
        "analytic",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["fits_in_memory"], false, "{j}");
    assert!(j["memory_bytes_per_chip"].as_f64().unwrap() > 43.6e9);
}

#[test]
fn dlrm_refuses_unknown_systems_and_placements() {
    let o = podsim(&["dlrm", "--system", "torus:8x8"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a TPU slice"), "{}", stderr(&o));
    let o = podsim(&[
        "dlrm",
        "--system",
        "tpuv3:8x16",
        "--embeddings",
        "tensorcore",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not sparsecore or host"),
        "{}",
        stderr(&o)
    );
    let o = podsim(&["dlrm", "--system", "tpuv3:64x64"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("at most 32 x 32"), "{}", stderr(&o));
}

#[test]
fn schedule_refuses_out_of_range_settings() {
    for (args, want) in [
        (vec!["--mix", "table3", "--hours", "10"], "not a mix"),
        (vec!["--mix", "table2", "--hours", "0"], "hours"),
        (vec!["--mix", "table2", "--hours", "1e9"], "100,000"),
        (
            vec![
                "--mix",
                "table2",
                "--hours",
                "10",
                "--host-availability",
                "1.5",
            ],
            "availability",
        ),
        (
            vec!["--mix", "table2", "--hours", "10", "--load", "0"],
            "load",
        ),
    ] {
        let mut a = vec!["schedule"];
        a.extend(args);
        let o = podsim(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        assert!(stderr(&o).contains(want), "{a:?}: {}", stderr(&o));
    }
}

#[test]
fn model_files_name_the_key_that_is_wrong() {
    let dir = std::env::temp_dir().join(format!("podsim-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("m.toml");
    let base =
        "layers = 2\nd_model = 1000\nheads = 7\nd_ff = 4000\nvocabulary = 10\nsequence = 8\n";
    for (text, want) in [
        (
            base.to_string(),
            "`heads`: d_model 1000 is not a multiple of 7 heads",
        ),
        (
            base.replace("heads = 7", "heads = 8\nkv_head = 2"),
            "kv_heads",
        ),
        (
            base.replace("heads = 7", "heads = 8\nffn_matrices = 4"),
            "`ffn_matrices`",
        ),
    ] {
        std::fs::write(&f, text).unwrap();
        let o = podsim(&[
            "train",
            "--model",
            f.to_str().unwrap(),
            "--system",
            "tpuv4:slice=4x4x4",
            "--parallel",
            "[1,64,1,1]",
            "--batch",
            "64",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("m.toml"), "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{want}: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tofu_frame_encodes_the_header_bit_for_bit() {
    // Fields in Fig. 4's order with podsim's widths: marker 1 | LEN 63 = 111111 | DABC1 0000 |
    // DX 00000001 | DY 00000010 | DZ 00000011 | DABC2 0101 | DI 010 | B 0 S 0 reserved 0 |
    // VC 01 | PAT 000 | STAT 00 | SEQ 000000000111, by hand:
    // 1111 1110 0000 0000 0010 0000 0100 0000 0110 1010 1000 0010 0000 0000 0000 0111.
    let o = podsim(&[
        "tofu",
        "frame",
        "--encode",
        "len=63,dx=1,dy=2,dz=3,dabc2=5,di=2,vc=1,seq=7",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["header_hex"], "fe0020406a820007");
    // 2048-byte TLP split over two lanes: 2 x (8 + 8 + 1024 + 24 + 12) = 2152 bytes.
    assert_eq!(j["split_wire_bytes"], 2152);
    let o = podsim(&["tofu", "frame", "--decode", "fe0020406a820007", "--json"]);
    let d: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(d["fields"], j["fields"]);
    for (args, want) in [
        (vec!["--encode", "di=6"], "DI = 6"),
        (vec!["--encode", "pat=5"], "reserved"),
        (vec!["--decode", "7e0020406a820007"], "marker bit"),
        (vec!["--decode", "xyz"], "not a 64-bit hexadecimal"),
    ] {
        let mut a = vec!["tofu", "frame"];
        a.extend(args);
        let o = podsim(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        assert!(stderr(&o).contains(want), "{a:?}: {}", stderr(&o));
    }
}

#[test]
fn tofu_put_breaks_down_every_table3_row() {
    // tofu-interconnect-d.txt Table III; the components add up to the row, the packet transfer
    // is Fig. 7's 0.1 us (Tofu, TofuD) or 0.3 us (Tofu2), and the same put on the flow model
    // lands within 1% (it adds 8 bytes at the link rate). Tofu's and Tofu2's rows are fitted,
    // so they are the table's; TofuD's are predicted by hand from Tofu2's endpoints (section
    // V.B): 0.71 - 0.3 + 0.1 = 0.51 us near (paper 0.49), + 0.05 us far = 0.56 (paper 0.54).
    for (generation, setting, us, packet) in [
        ("tofu", "descriptor-on-memory", 1.15, 0.1),
        ("tofu", "direct-descriptor", 0.91, 0.1),
        ("tofu2", "cache-injection-off", 0.87, 0.3),
        ("tofu2", "cache-injection-on", 0.71, 0.3),
        ("tofud", "far-cmg", 0.56, 0.1),
        ("tofud", "near-cmg", 0.51, 0.1),
    ] {
        let o = podsim(&[
            "tofu",
            "put",
            "--generation",
            generation,
            "--setting",
            setting,
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let t = j["latency_s"].as_f64().unwrap();
        assert!((t - us * 1e-6).abs() < 1e-12, "{setting}: {t}");
        let b = &j["breakdown"];
        let sum: f64 = ["sender", "packet_transfer", "receiver", "far_cmgs"]
            .iter()
            .map(|k| b[*k].as_f64().unwrap())
            .sum();
        assert!((sum - t).abs() < 1e-12, "{setting}: {sum} vs {t}");
        assert!((b["packet_transfer"].as_f64().unwrap() - packet * 1e-6).abs() < 1e-12);
        let flow = j["flow_model_latency_s"].as_f64().unwrap();
        assert!((flow - t).abs() / t < 0.01, "{setting}: flow {flow} vs {t}");
    }
    let o = podsim(&["tofu", "put", "--generation", "tofu2", "--far"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("only TofuD has far CMGs"),
        "{}",
        stderr(&o)
    );
    let o = podsim(&["tofu", "put", "--generation", "tofud", "--setting", "warp"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("near-cmg, far-cmg"), "{}", stderr(&o));
}

#[test]
fn tofu_barrier_reproduces_table_vi_and_refuses_what_a_node_lacks() {
    // tofu-interconnect-d.txt Table VI: points -> TNIs, BCHs per TNI, BGs per TNI, stages;
    // serialized latency by hand: 0.19 + 0.29 b + 0.13 (BGs - b) us.
    for (points, tnis, bchs, bgs, stages, us) in [
        (1, 1, 1, 2, 2, 0.61),
        (4, 4, 1, 2, 2, 0.61),
        (8, 6, 2, 5, 4, 1.16),
        (16, 6, 3, 9, 6, 1.84),
        (48, 6, 8, 24, 9, 4.59),
    ] {
        let p = points.to_string();
        let o = podsim(&[
            "tofu",
            "barrier",
            "--generation",
            "tofud",
            "--points",
            &p,
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(j["tnis"], tnis, "{points}");
        assert_eq!(j["bchs_per_tni"], bchs, "{points}");
        assert_eq!(j["bgs_per_tni"], bgs, "{points}");
        assert_eq!(j["stages"], stages, "{points}");
        let t = j["latency_s"].as_f64().unwrap();
        assert!((t - us * 1e-6).abs() < 1e-12, "{points}: {t}");
    }
    refuses(
        &["tofu", "barrier"],
        &[
            (vec!["--points", "97"], "out of BCHs on TNI 0"),
            (vec!["--points", "0"], "at least one point"),
            (vec!["--points", "4", "--generation", "tofu2"], "tofud only"),
            (
                vec!["--points", "4", "--allocation", "any"],
                "not test or mpi",
            ),
            (
                vec!["--points", "4", "--nodes", "mesh:4x4"],
                "not a Tofu network",
            ),
        ],
    );
    // A one-element all-reduce through the BGs: 16 points giving (p + 1)(e + 1) sum to
    // 136 (e + 1) by hand, at every point.
    let o = podsim(&[
        "tofu",
        "barrier",
        "--points",
        "16",
        "--allreduce",
        "sum",
        "--elements",
        "8",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["allreduce"]["all_points_agree"], true);
    assert_eq!(j["allreduce"]["result"][7], 136 * 8);
    refuses(
        &["tofu", "barrier", "--points", "4"],
        &[
            (
                vec!["--allreduce", "sum", "--elements", "9"],
                "eight integers",
            ),
            (
                vec!["--allreduce", "fsum", "--elements", "4"],
                "three floating",
            ),
            (vec!["--allreduce", "xor"], "not sum, max"),
            (vec!["--elements", "2"], "--allreduce"),
        ],
    );
    // Huge inputs get errors, not an abort for memory.
    refuses(
        &["tofu", "barrier"],
        &[
            (vec!["--points", "4000000000"], "out of BCHs"),
            (
                vec!["--points", "4000000000", "--allreduce", "max"],
                "at most 96",
            ),
        ],
    );
    refuses(
        &["tofu", "slicing", "--ber", "0"],
        &[(
            vec!["--packets", "18000000000000000000"],
            "at most 10000000",
        )],
    );
    refuses(
        &["dojo", "transfer", "push", "--from", "0,0", "--to", "1,0"],
        &[(vec!["--bytes", "1 TiB"], "--model flow for more")],
    );
    refuses(
        &["dojo", "dma", "--to", "1,10"],
        &[
            (vec!["--shape", "1,1,1,1,1"], "1 to 4"),
            (vec!["--shape", "4", "--stride", "1,2"], "one per dimension"),
            (vec!["--shape", "4000000000"], "SRAM"),
            (vec!["--shape", "4", "--offset", "32000000000"], "HBM"),
            (vec!["--shape", "4", "--dip", "10"], "DIPs 0 to 9"),
            (vec!["--shape", "4", "--topology", "dojo:die"], "no DIPs"),
            (vec!["--shape", "18446744073709551615,2"], "SRAM"),
        ],
    );
    refuses(
        &["dojo", "host"],
        &[
            (vec!["--bytes", "1GiB", "--dips", "6"], "has 5 DIPs"),
            (vec!["--bytes", "1GiB", "--host", "2"], "hosts 0 to 1"),
            (vec!["--bytes", "1PiB"], "HBM"),
            (vec!["--bytes", "0"], "--bytes"),
        ],
    );
    // Fugaku with 48 processes per node: some 39 million gates, refused under 1 GiB up front.
    let o = podsim(&[
        "tofu",
        "barrier",
        "--points",
        "48",
        "--nodes",
        "tofu:fugaku",
        "--memory-limit",
        "1 GiB",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("more than the memory limit"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn tofu_slicing_loses_nothing_when_a_lane_fails_mid_run() {
    // Lane 1 fails at 100 us and returns at 300 us, with bit errors on both lanes: auto mode
    // (TofuD) and duplicate mode deliver every frame once, intact; split alone gives frames up.
    for mode in ["auto", "duplicate", "degrade"] {
        let o = podsim(&[
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
            "--mode",
            mode,
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(j["packets_sent"], 2000, "{mode}");
        assert_eq!(j["packets_delivered"], 2000, "{mode}");
        assert_eq!(j["packets_lost"], 0, "{mode}");
        assert_eq!(j["duplicates_discarded"], 0, "{mode}");
        assert_eq!(j["corrupted_deliveries"], 0, "{mode}");
        assert!(
            j["slices_lost"].as_u64().unwrap() > 0,
            "{mode}: the fault hit"
        );
        for k in ["latency_s", "throughput_bytes_per_s", "retransmissions"] {
            assert!(j[k].is_number(), "{mode}: {k}");
        }
    }
    // Split vs duplicate latency, no errors: 1076 vs 2108 wire bytes per lane at 3.4 GB/s,
    // plus the 0.1 us hop: 0.4165 us and 0.7200 us.
    let lat = |mode: &str| {
        let o = podsim(&[
            "tofu",
            "slicing",
            "--ber",
            "0",
            "--mode",
            mode,
            "--packets",
            "10",
            "--json",
        ]);
        let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        j["latency_s"].as_f64().unwrap()
    };
    assert!((lat("split") - 0.4165e-6).abs() < 1e-9);
    assert!((lat("duplicate") - 0.7200e-6).abs() < 1e-9);
    refuses(
        &["tofu", "slicing"],
        &[
            (vec!["--ber", "0.5"], "--ber"),
            (vec!["--ber", "0", "--mode", "quad"], "not auto, split"),
            (vec!["--ber", "0", "--bytes", "100"], "steps of 32"),
            (
                vec!["--ber", "0", "--lane-fault-at", "soon"],
                "expected a time",
            ),
            (
                vec!["--ber", "0", "--lane-recover-at", "5 us"],
                "needs --lane-fault-at",
            ),
        ],
    );
}

#[test]
fn tofu_rdma_get_and_atomic_follow_from_the_put_components() {
    // Tofu2 cache injection off (Table III 0.87 us: sender 0.205, packet 0.3, receiver 0.365):
    // a get is 0.205 + 0.3 + 0.365 + 0.3 + 0.365 = 1.535 us by hand; the flow model adds 8 B
    // at 12.5 GB/s per crossing (0.64 ns each).
    let o = podsim(&[
        "tofu",
        "rdma",
        "--op",
        "get",
        "--generation",
        "tofu2",
        "--setting",
        "cache-injection-off",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!((j["latency_s"].as_f64().unwrap() - 1.535e-6).abs() < 1e-12);
    let flow = j["flow_model_latency_s"].as_f64().unwrap();
    assert!((flow - 1.535e-6 - 2.0 * 0.64e-9).abs() < 1e-11, "{flow}");
    assert!(j["packet_model_latency_s"].as_f64().unwrap() >= flow);
    let o = podsim(&["tofu", "rdma", "--op", "atomic", "--generation", "tofu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("arrived with Tofu2"), "{}", stderr(&o));
    let o = podsim(&["tofu", "rdma", "--op", "swap", "--generation", "tofud"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not put, get or atomic"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn tofu_node_placement_names_the_resource_that_runs_out() {
    // Table II: TofuD 6 TNIs x 12 CQs; 12 processes of 6 CQs use all 72, a 13th finds none.
    let o = podsim(&[
        "tofu",
        "node",
        "--generation",
        "tofud",
        "--processes",
        "12",
        "--cqs",
        "6",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["processes"].as_array().unwrap().len(), 12);
    assert_eq!(j["processes"][2]["far"], true);
    refuses(
        &["tofu", "node", "--generation", "tofud"],
        &[
            (
                vec!["--processes", "13", "--cqs", "6"],
                "process 12: out of CQs",
            ),
            (vec!["--processes", "17", "--bchs", "6"], "out of BCHs"),
            (
                vec!["--processes", "1", "--bchs", "7"],
                "7 BCHs from different TNIs",
            ),
            (
                vec!["--processes", "2", "--cmgs", "0,4"],
                "CMG 4 does not exist",
            ),
            (vec!["--processes", "2", "--cmgs", "0"], "one per process"),
        ],
    );
}

/// Each `(args, want)` appended to `prefix` exits 2 with `want` in its error.
fn refuses(prefix: &[&str], cases: &[(Vec<&str>, &str)]) {
    for (args, want) in cases {
        let mut a = prefix.to_vec();
        a.extend(args);
        let o = podsim(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        assert!(stderr(&o).contains(want), "{a:?}: {}", stderr(&o));
    }
}

#[test]
fn dojo_node_names_the_binding_stage() {
    // By hand (crates/compute/src/dojo_node.rs): matmul.toml, 8192 x 2 matmuls hold the four
    // units 8 cycles each: 16384 x 8 / 4 = 32768 cycles at 512 FLOPs a cycle; simd.toml, 4096 x
    // 4 SIMD ops on the two-wide vector stage: 8192 cycles; list-walk.toml, 2 x 2048 x 16
    // instructions through the eight-wide decode: 8192 cycles.
    for (kernel, stage, cycles) in [
        ("matmul", "matmul_units", 32768),
        ("simd", "vector", 8192),
        ("list-walk", "decode", 8192),
    ] {
        let path = format!(
            "{}/../../examples/dojo/{kernel}.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let o = podsim(&["dojo", "node", "--kernel", &path, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(j["binding_stage"], stage, "{kernel}");
        assert_eq!(j["cycles"], cycles, "{kernel}");
        assert!((j["utilization"][stage].as_f64().unwrap() - 1.0).abs() < 1e-12);
    }
    let dir = std::env::temp_dir().join(format!("podsim-dojo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (text, want) in [
        (
            "[[thread]]\niterations = 1\nbody = { warp = 1 }\n",
            "thread[0].body.warp",
        ),
        ("[[thread]]\niterations = 1\n", "needs its body"),
        (
            "[[thread]]\niterations = 1\nops = [\"loop\"]\nbody = { loop = 1 }\n",
            "not both",
        ),
        ("name = \"x\"\n", "1 to 4 threads"),
    ] {
        let f = dir.join("k.toml");
        std::fs::write(&f, text).unwrap();
        let o = podsim(&["dojo", "node", "--kernel", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        assert!(stderr(&o).contains(want), "{text}: {}", stderr(&o));
        assert!(stderr(&o).contains("k.toml"), "names the file");
    }
}

#[test]
fn dojo_barrier_trees_beat_software_and_refuse_a_fifth_tree() {
    let o = podsim(&[
        "dojo",
        "barrier",
        "--topology",
        "dojo:die",
        "--fan-in",
        "2,8",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let (k2, k8) = (&j[0], &j[1]);
    // A wider tree is shallower; both beat nine software rounds of at least 10 ns each.
    assert!(k8["domains"][0]["depth"].as_u64() < k2["domains"][0]["depth"].as_u64());
    for r in [k2, k8] {
        let hw = r["latency_s"].as_f64().unwrap();
        let sw = r["domains"][0]["software_latency_s"].as_f64().unwrap();
        assert!(hw < sw && sw > 90e-9, "{hw} vs {sw}");
    }
    let o = podsim(&["dojo", "barrier", "--software", "--json"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["latency_s"], j["domains"][0]["software_latency_s"]);
    let dir = std::env::temp_dir().join(format!("podsim-dojo-dom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("five.toml");
    let five: String = (0..5)
        .map(|i| format!("[[domain]]\nname = \"d{i}\"\nrect = [0, 0, 1, 1]\n"))
        .collect();
    std::fs::write(&f, five).unwrap();
    let o = podsim(&["dojo", "barrier", "--domains", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("would belong to 5 barrier trees"),
        "{}",
        stderr(&o)
    );
    refuses(
        &["dojo", "barrier"],
        &[
            (vec!["--fan-in", "1"], "at least 2"),
            (vec!["--topology", "mesh:4x4"], "not a DOJO network"),
        ],
    );
}

#[test]
fn dojo_transfer_counts_out_of_order_packets_and_keeps_the_data() {
    // Across three dies of a tile with link retries: out of order, still correct.
    let o = podsim(&[
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
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["packets"], 256);
    assert!(j["out_of_order_packets"].as_u64().unwrap() > 0);
    assert_eq!(j["data_correct"], true);
    // A push to the neighbour, by hand: 1024 packets one a cycle, one cycle a hop, a cycle to
    // wake: 1023 x 0.5 + 0.5 + 0.5 = 512.5 ns.
    let o = podsim(&[
        "dojo", "transfer", "push", "--from", "0,0", "--to", "1,0", "--bytes", "64KiB", "--json",
    ]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!((j["time_s"].as_f64().unwrap() - 512.5e-9).abs() < 1e-15);
    assert_eq!(j["out_of_order_packets"], 0);
    refuses(
        &["dojo", "transfer"],
        &[
            (
                vec!["broadcast", "--from", "0,0", "--to", "1,1", "--bytes", "64"],
                "drop --to",
            ),
            (vec!["push", "--from", "0,0", "--bytes", "64"], "need --to"),
            (
                vec!["push", "--from", "0;0", "--to", "1,1", "--bytes", "64"],
                "x,y",
            ),
            (
                vec!["push", "--from", "0,0", "--to", "99,0", "--bytes", "64"],
                "not on the",
            ),
            (
                vec![
                    "push",
                    "--from",
                    "0,0",
                    "--to",
                    "1,0",
                    "--bytes",
                    "64",
                    "--semaphore",
                    "32",
                ],
                "32 (0 to 31)",
            ),
            (
                vec!["swap", "--from", "0,0", "--to", "1,0", "--bytes", "64"],
                "not push, pull",
            ),
            (
                vec![
                    "push",
                    "--from",
                    "0,5",
                    "--to",
                    "6,5",
                    "--bytes",
                    "64",
                    "--fail-link",
                    "3,5-5,5",
                ],
                "not neighbours",
            ),
            (
                vec![
                    "broadcast",
                    "--from",
                    "0,5",
                    "--bytes",
                    "64",
                    "--fail-link",
                    "3,5-4,5",
                ],
                "replication tree",
            ),
        ],
    );
    // The flow model, by hand: 64 KiB at 128 GB/s (512 ns), a cycle of link, a cycle to wake.
    let o = podsim(&[
        "dojo", "transfer", "push", "--from", "0,0", "--to", "1,0", "--bytes", "64KiB", "--model",
        "flow", "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!((j["time_s"].as_f64().unwrap() - 513e-9).abs() < 1e-15);
    assert!(j["out_of_order_packets"].is_null());
    let o = podsim(&[
        "dojo", "transfer", "push", "--from", "0,0", "--to", "1,0", "--bytes", "64", "--model",
        "flow", "--retry", "0.1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("packet level only"), "{}", stderr(&o));
    // A failed link on the way: routed around (two more hops), nothing lost.
    let o = podsim(&[
        "dojo",
        "transfer",
        "push",
        "--from",
        "0,5",
        "--to",
        "6,5",
        "--bytes",
        "4KiB",
        "--fail-link",
        "3,5-4,5",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["data_correct"], true);
    assert_eq!(j["packets"], 64);
}

#[test]
fn dojo_shortcuts_raise_local_throughput_under_mixed_load() {
    let run = |off: bool| {
        let mut a = vec!["dojo", "shortcuts", "--global-fraction", "0.2", "--json"];
        if off {
            a.push("--off");
        }
        let o = podsim(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    let (on, off) = (run(false), run(true));
    let f = |j: &serde_json::Value, k: &str| j[k].as_f64().unwrap();
    assert!(f(&on, "local_throughput_bytes_per_s") > f(&off, "local_throughput_bytes_per_s"));
    assert!(f(&on, "global_mesh_links") < f(&off, "global_mesh_links"));
    assert!(f(&on, "shortcut_transfers") > 0.0 && f(&off, "shortcut_transfers") == 0.0);
    for j in [&on, &off] {
        assert!(f(j, "global_latency_s") > 0.0);
        assert!(f(j, "max_link_utilization") <= 1.0 + 1e-9);
    }
    refuses(
        &["dojo", "shortcuts"],
        &[
            (vec!["--global-fraction", "2"], "fraction from 0 to 1"),
            (
                vec!["--global-fraction", "0.1", "--topology", "dojo:die"],
                "no DIPs",
            ),
        ],
    );
}

#[test]
fn dram_and_matmul_refuse_bad_settings() {
    refuses(
        &["dram"],
        &[
            (
                vec!["--chip", "blackhole"],
                "`--chip`: `blackhole`: expected wormhole, grayskull",
            ),
            (
                vec!["--data-rate", "12"],
                "`--data-rate`: `12`: expected a rate",
            ),
            (vec!["--data-rate", "-3 GT/s"], "`--data-rate`"),
            (
                vec!["--placement", "diagonal"],
                "`--placement`: `diagonal`: expected top-rows",
            ),
            (vec!["--vcs", "many"], "`--vcs`"),
            (vec!["--layout", "tiled"], "`--layout`"),
            (vec!["--noc", "2"], "`--noc`: 2: expected 0 or 1"),
            (vec!["--outstanding", "0"], "`--outstanding`"),
            (vec!["--block", "0 B"], "`--block`"),
            (
                vec!["--page", "16 KiB"],
                "`--page`: 16384 bytes: expected 1 byte to 8 KiB",
            ),
            (vec!["--bytes", "1 KiB"], "`--bytes`"),
            (
                vec!["--bytes", "256 MiB", "--block", "1 KiB", "--page", "1 B"],
                "`--page`: 268435456 read requests a reader",
            ),
            (vec!["--bytes", "64 GiB"], "`--bytes`"),
            (
                vec!["--harvested-rows", "6"],
                "`--harvested-rows`: `harvest`: row y = 6 has no workers",
            ),
            (
                vec!["--relocation", "logical"],
                "`--relocation`: only moves next-to-bank readers",
            ),
            (
                vec!["--harvested-rows", "3", "--relocation", "nearest"],
                "`--relocation`: `nearest`: expected document, logical",
            ),
        ],
    );
    refuses(
        &["matmul"],
        &[
            (
                vec!["--m", "32", "--k", "100", "--n", "64"],
                "`--k`: 100: expected a multiple of 32",
            ),
            (vec!["--m", "0", "--k", "64", "--n", "64"], "`--m`: 0"),
            (vec!["--m", "4096", "--k", "64", "--n", "64"], "`--m`: 4096"),
            (
                vec!["--m", "32", "--k", "64", "--n", "64", "--tile", "32x4"],
                "`--tile`",
            ),
            (
                vec!["--m", "32", "--k", "64", "--n", "64", "--in0", "broadcast"],
                "`--in0`",
            ),
            (
                vec![
                    "--m",
                    "32",
                    "--k",
                    "64",
                    "--n",
                    "64",
                    "--buffering",
                    "triple",
                ],
                "`--buffering`",
            ),
            (
                vec!["--m", "32", "--k", "64", "--n", "64", "--dtype", "fp32"],
                "`--dtype`",
            ),
            (
                vec!["--m", "32", "--k", "64", "--n", "64", "--chip", "grayskull"],
                "`--chip`: the DRAM-bound matmul is modelled on Wormhole",
            ),
            (
                vec!["--m", "32", "--k", "1048576", "--n", "1048576"],
                "`--n`: in1 of more than 2^31 elements",
            ),
        ],
    );
}

#[test]
fn dram_reproduces_the_u_benchmark_and_reports_overlaps() {
    // The calibration point (validation/tenstorrent-dram.toml): 267 GB/s at 12 GT/s, and the
    // document's overlap of banks 2 and 10 on the top rows.
    let o = podsim(&["dram", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let bw = v["bandwidth_bytes_per_s"].as_f64().unwrap();
    assert!((bw - 267e9).abs() < 0.5e9, "{bw}");
    assert!((v["utilization"].as_f64().unwrap() - bw / 288e9).abs() < 1e-9);
    assert_eq!(v["per_bank_bytes_per_s"].as_array().unwrap().len(), 12);
    assert_eq!(v["reader_coordinates"].as_array().unwrap().len(), 12);
    assert!(v["overlapping_routes"].as_array().unwrap().is_empty());
    let m = v["max_link_utilization"].as_f64().unwrap();
    assert!(m > 0.0 && m <= 1.0);
    let o = podsim(&["dram", "--placement", "top-rows", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v["overlapping_routes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["banks"] == serde_json::json!([2, 10]))
    );
    let o = podsim(&[
        "matmul", "--m", "32", "--k", "8192", "--n", "3584", "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    for key in [
        "time_s",
        "dram_bandwidth_bytes_per_s",
        "utilization",
        "compute_time_s",
        "imbalance",
    ] {
        assert!(v[key].as_f64().is_some(), "{key}");
    }
}

/// A collective sweep killed with SIGKILL keeps the sizes it finished; run again with the same
/// settings it keeps those rows as they are, runs only the rest, and ends with the file a run
/// that was never killed writes (its context and rows). Settings that differ are refused.
#[test]
fn a_killed_collective_sweep_resumes_where_it_stopped() {
    let dir = std::env::temp_dir().join(format!("podsim-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (csv, clean) = (dir.join("s.csv"), dir.join("clean.csv"));
    let sizes = "1 MiB,2 MiB,3 MiB,4 MiB,5 MiB";
    let args = |file: &std::path::Path| -> Vec<String> {
        [
            "collective",
            "all-to-all",
            "--topology",
            "torus:5x5x5",
            "--sweep",
            sizes,
            "--csv",
            file.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("bytes,"))
            .map(String::from)
            .collect()
    };
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(args(&csv))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once it has finished a size (or at the latest when it is done).
    loop {
        let text = std::fs::read_to_string(&csv).unwrap_or_default();
        if !rows(&text).is_empty() || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().ok();
    child.wait().unwrap();
    let before = std::fs::read_to_string(&csv).unwrap();
    let kept = rows(&before);
    assert!(!kept.is_empty());
    let a: Vec<String> = args(&csv);
    let o = podsim(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let after = std::fs::read_to_string(&csv).unwrap();
    let resumed = rows(&after);
    assert_eq!(resumed.len(), 5);
    assert_eq!(
        resumed[..kept.len()],
        kept[..],
        "the kept rows are not rewritten"
    );
    let b: Vec<String> = args(&clean);
    let o = podsim(&b.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows(&std::fs::read_to_string(&clean).unwrap()), resumed);
    let context = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("# ") && !l.starts_with("# command:"))
            .map(String::from)
            .collect()
    };
    assert_eq!(
        context(&after),
        context(&std::fs::read_to_string(&clean).unwrap())
    );
    assert!(after.contains("# topology: torus:5x5x5") && after.contains("# model: flow"));
    // Another topology into the same file is refused, naming what differs.
    let o = podsim(&[
        "collective",
        "all-to-all",
        "--topology",
        "torus:4x4x4",
        "--sweep",
        sizes,
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("topology: torus:5x5x5 there, torus:4x4x4 now"));
    std::fs::remove_dir_all(&dir).ok();
}

/// A size that fails (here one the packet level refuses) is recorded in the CSV with its reason
/// and the sweep goes on; the run exits 1 and says so. Run again, the failed size is retried.
#[test]
fn a_failed_sweep_point_is_recorded_and_the_sweep_goes_on() {
    let dir = std::env::temp_dir().join(format!("podsim-sweep-fail-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("f.csv");
    let args = [
        "collective",
        "all-reduce",
        "--topology",
        "ring:4",
        "--model",
        "packet",
        "--sweep",
        "1 KiB,1 TiB,2 KiB",
        "--csv",
        csv.to_str().unwrap(),
    ];
    let o = podsim(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("1 of the sweep's sizes failed"));
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 4);
    assert!(rows[1].starts_with("1024,") && rows[1].ends_with(','));
    assert!(rows[2].starts_with("1099511627776,,") && rows[2].contains("limit"));
    assert!(rows[3].starts_with("2048,"));
    // Run again: the two good sizes are kept, the failed one is tried (and fails) once more.
    let o = podsim(&args);
    assert_eq!(o.status.code(), Some(1));
    let again = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(
        again
            .lines()
            .filter(|l| l.starts_with("1099511627776,"))
            .count(),
        1
    );
    assert_eq!(again.lines().filter(|l| !l.starts_with('#')).count(), 4);
    std::fs::remove_dir_all(&dir).ok();
}

/// A noc sweep killed with SIGKILL keeps the loads it finished; run again it runs only the
/// rest and ends with the rows a run never killed writes.
#[test]
fn a_killed_noc_sweep_resumes_where_it_stopped() {
    let dir = std::env::temp_dir().join(format!("podsim-noc-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = |name: &str| -> Vec<String> {
        [
            "noc",
            "--topology",
            "mesh:8x8",
            "--sweep",
            "0.05:0.4:0.05",
            "--cycles",
            "20000",
            "--csv",
            dir.join(format!("{name}.csv")).to_str().unwrap(),
            "--svg",
            dir.join(format!("{name}.svg")).to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let rows = |name: &str| -> Vec<String> {
        std::fs::read_to_string(dir.join(format!("{name}.csv")))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("offered"))
            .map(String::from)
            .collect()
    };
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(args("s"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    loop {
        if !rows("s").is_empty() || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().ok();
    child.wait().unwrap();
    let kept = rows("s");
    assert!(!kept.is_empty());
    let run = |name: &str| {
        let a = args(name);
        let o = podsim(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", stderr(&o));
    };
    run("s");
    let resumed = rows("s");
    assert_eq!(resumed[..kept.len()], kept[..]);
    run("clean");
    assert_eq!(rows("clean"), resumed);
    assert_eq!(resumed.len(), 8);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 40, item 1: a command that records its command line (a sweep's `--csv`, `report
/// --out`) with a path that is not valid UTF-8 used to panic in `std::env::args()` (exit 101).
/// The file is written, and its context shows the byte escaped.
#[cfg(unix)]
#[test]
fn a_path_that_is_not_utf8_is_recorded_escaped() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = std::env::temp_dir().join(format!("podsim-non-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join(OsStr::from_bytes(b"c_\xff.csv"));
    let o = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args([
            "collective",
            "all-reduce",
            "--topology",
            "torus:4x4x4",
            "--sweep",
            "1KiB",
            "--quiet",
            "--csv",
        ])
        .arg(&csv)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.contains("c_\\xff.csv"), "{text}");
    let html = dir.join(OsStr::from_bytes(b"r_\xfe.html"));
    let o = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(["report", "--out"])
        .arg(&html)
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains("r_\\xfe.html")
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 40, item 6: settings that mean nothing are refused, naming the flag and what would
/// make sense (each used to run and print a figure: an empty header, a zero global latency, a
/// sweep point twice, a one-node network's traffic).
#[test]
fn settings_that_mean_nothing_are_refused() {
    for (args, fragments) in [
        (
            &["tofu", "frame", "--encode", ""][..],
            &["--encode", "no fields"][..],
        ),
        (
            &[
                "dram", "--page", "8KiB", "--block", "4KiB", "--bytes", "8KiB",
            ],
            &["--page", "larger than a block"],
        ),
        (
            &[
                "collective",
                "all-reduce",
                "--topology",
                "torus:4x4",
                "--sweep",
                "1KiB,2KiB,1KiB",
            ],
            &["--sweep", "given twice", "points 1 and 3"],
        ),
        (
            &[
                "dojo",
                "shortcuts",
                "--topology",
                "dojo:system=1x1",
                "--global-fraction",
                "0",
            ],
            &["--global-fraction", "no router"],
        ),
        (
            &["noc", "--topology", "mesh:1x1", "--rate", "0.1"],
            &["--topology", "1 node"],
        ),
        (
            // 1 MiB in 1-byte pieces: 1,048,576 against the 64 x 16 the ring broadcast
            // pipelines; it used to raise the chunk to 1 KiB without a word.
            &[
                "collective",
                "broadcast",
                "--algorithm",
                "ring",
                "--topology",
                "torus:4x4",
                "--bytes",
                "1MiB",
                "--chunk",
                "1B",
            ],
            &["--chunk", "at most 1024", "give at least 1 KiB"],
        ),
        (
            &["tofu", "node", "--generation", "tofud", "--processes", "0"],
            &["--processes", "nothing to place"],
        ),
        (
            &["tofu", "node", "--generation", "tofud", "--cqs", "0"],
            &["--cqs", "0 BCHs"],
        ),
        (
            &[
                "noc",
                "--topology",
                "mesh:4x4",
                "--router",
                "booksim",
                "--pipeline-stages",
                "2",
            ],
            &["--pipeline-stages", "--router booksim does not run"],
        ),
        (
            &[
                "noc",
                "--topology",
                "mesh:4x4",
                "--router",
                "booksim",
                "--link-cycles",
                "2",
            ],
            &["--link-cycles", "--router booksim does not run"],
        ),
        (
            &[
                "noc",
                "--topology",
                "mesh:4x4",
                "--router",
                "booksim",
                "--arbitration",
                "fcfs",
            ],
            &["--arbitration", "--router booksim does not run"],
        ),
    ] {
        let (code, e) = fails(args);
        assert_eq!(code, 2, "{args:?}: {e}");
        for f in fragments {
            assert!(e.contains(f), "{args:?}: {e}");
        }
    }
}

/// Issue 40, item 7: messages that misled. A fat tree's microbenchmarks used to fail with "no
/// route from n0 to n16" (node 0's neighbour is its edge switch): they now run between the
/// nearest hosts, two links through the edge switch, 8 B at 50 GB/s = 0.16 ns (the flow model
/// pipelines the two links). A barrier on a machine of 10^12 nodes said "the network has no
/// nodes"; a gemm with an element of 2^64 - 1 bytes blamed --sram.
#[test]
fn misleading_messages_name_the_real_cause() {
    let o = podsim(&[
        "microbench",
        "put-latency",
        "--topology",
        "fattree:4",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        (v["time_s"].as_f64().unwrap() - 0.16e-9).abs() < 1e-15,
        "{v}"
    );
    let (code, e) = fails(&[
        "tofu",
        "barrier",
        "--points",
        "1",
        "--nodes",
        "tofud:1000x1000x1000",
    ]);
    assert_eq!(code, 2);
    assert!(
        e.contains("--nodes") && e.contains("12000000000 nodes"),
        "{e}"
    );
    let (code, e) = fails(&[
        "gemm",
        "--array",
        "8x8",
        "--dataflow",
        "os",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "8",
        "--output-bytes",
        "18446744073709551615",
    ]);
    assert_eq!(code, 2);
    assert!(e.contains("--output-bytes") && !e.contains("--sram"), "{e}");
}

/// Issue 40, item 6: `--csv` onto a file podsim did not write is refused, even with
/// --no-resume (it used to be overwritten); the file is left as it was. An empty file is taken.
#[test]
fn a_csv_that_is_not_podsims_is_never_overwritten() {
    let dir = std::env::temp_dir().join(format!("podsim-not-ours-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("data.csv");
    std::fs::write(&csv, "year,value\n2024,1\n").unwrap();
    let path = csv.to_str().unwrap();
    for extra in [&[][..], &["--no-resume"][..]] {
        let mut args = vec![
            "collective",
            "all-reduce",
            "--topology",
            "torus:4x4",
            "--sweep",
            "1KiB",
            "--csv",
            path,
        ];
        args.extend_from_slice(extra);
        let (code, e) = fails(&args);
        assert_eq!(code, 2);
        assert!(e.contains("not a CSV podsim wrote"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&csv).unwrap(),
            "year,value\n2024,1\n"
        );
    }
    std::fs::write(&csv, "").unwrap();
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        "torus:4x4",
        "--sweep",
        "1KiB",
        "--csv",
        path,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 40, item 6: `import booksim` with an injection rate above one flit a node a cycle
/// used to print a `podsim noc` command that noc then rejected; it is refused, naming the key.
#[test]
fn an_injection_rate_above_one_flit_a_cycle_is_refused_on_import() {
    let dir = std::env::temp_dir().join(format!("podsim-bs-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(repo().join("examples/booksim/mesh88.cfg")).unwrap();
    let start = text
        .find("injection_rate =")
        .expect("the example sets a rate");
    let end = start + text[start..].find(';').unwrap();
    let cfg = dir.join("b.cfg");
    std::fs::write(
        &cfg,
        format!("{}injection_rate = 1.5{}", &text[..start], &text[end..]),
    )
    .unwrap();
    let (code, e) = fails(&["import", "booksim", cfg.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(e.contains("b.cfg") && e.contains("`injection_rate`"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 40, item 6: a workload group that names a chip twice, and a send from a chip to
/// itself, used to run (the first as a collective over a repeated rank, the second as a
/// transfer that never touches the network); both are refused, naming the file and the key.
#[test]
fn a_repeated_chip_and_a_send_to_self_are_refused() {
    let dir = std::env::temp_dir().join(format!("podsim-wl-dup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let head = "name = \"w\"\n[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"t\"\n";
    for (body, key, why) in [
        (
            "collective = \"all-reduce\"\nbytes = \"1 MB\"\ngroup = [0, 1, 1]\n",
            "task[0].group",
            "chip 1 is listed twice",
        ),
        (
            "send = \"1 MB\"\ngroup = [0, 1]\nto = [1, 1]\n",
            "task[0].to",
            "chip 1 sends to itself",
        ),
    ] {
        let f = dir.join("w.toml");
        std::fs::write(&f, format!("{head}{body}")).unwrap();
        let (code, e) = fails(&["workload", f.to_str().unwrap()]);
        assert_eq!(code, 2);
        assert!(
            e.contains("w.toml") && e.contains(key) && e.contains(why),
            "{e}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 40, item 4: a GEMM whose DRAM stalls pass 64 bits of cycles used to wrap and print
/// fewer cycles than its compute, 1.8e19 stalls and 1,525,878% utilisation. It is refused,
/// naming the rate; at a rate that fits, cycles are at least the compute and the utilisation
/// at most 1: 10^6 x 10^6 x 10^6 on 32x32 is 10^18 / 1024 = 9.77e14 MAC cycles at least.
#[test]
fn a_gemm_never_prints_fewer_cycles_than_its_compute() {
    let args = |rate: &'static str| {
        vec![
            "gemm",
            "--array",
            "32x32",
            "--dataflow",
            "os",
            "--m",
            "1000000",
            "--n",
            "1000000",
            "--k",
            "1000000",
            "--dram-bytes-per-cycle",
            rate,
        ]
    };
    let (code, e) = fails(&args("0.001"));
    assert_eq!(code, 2);
    assert!(
        e.contains("--dram-bytes-per-cycle") && e.contains("64 bits"),
        "{e}"
    );
    let mut ok = args("1000");
    ok.push("--json");
    let o = podsim(&ok);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cycles = v["cycles"].as_u64().unwrap();
    assert!(cycles >= v["compute_cycles"].as_u64().unwrap(), "{v}");
    assert!(cycles as f64 >= 1e18 / 1024.0, "{v}");
    let u = v["utilization"].as_f64().unwrap();
    assert!(u > 0.0 && u <= 1.0, "{v}");
}

/// Issue 40, item 4: a DOJO kernel of 2^64 - 1 iterations used to print saturated counters
/// (instructions and cycles at the type's maximum, 2.00 IPC, inf% and NaN%); it is refused,
/// naming the file.
#[test]
fn a_dojo_kernel_past_64_bits_is_refused() {
    let dir = std::env::temp_dir().join(format!("podsim-dojo-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(repo().join("examples/dojo/matmul.toml")).unwrap();
    let big: String = text
        .lines()
        .map(|l| {
            if l.starts_with("iterations =") {
                "iterations = 18446744073709551615".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let f = dir.join("k.toml");
    std::fs::write(&f, big).unwrap();
    let (code, e) = fails(&["dojo", "node", "--kernel", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{e}");
    assert!(e.contains("k.toml") && e.contains("64 bits"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 40, item 4: a link that delivers nothing (BER 1e-2: every frame fails its FCS until
/// given up) used to print a mean latency of 0.000 us, below its own unloaded 0.416 us, and a
/// throughput "over 0.000 us". The latency is undefined and says so (JSON null); the run's
/// time runs to the last frame given up.
#[test]
fn a_link_that_delivers_nothing_prints_no_latency() {
    let o = podsim(&[
        "tofu",
        "slicing",
        "--ber",
        "0.01",
        "--packets",
        "100",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["packets_delivered"], 0, "{v}");
    assert!(v["latency_s"].is_null(), "{v}");
    assert!(v["time_s"].as_f64().unwrap() > v["unloaded_latency_s"].as_f64().unwrap());
    let o = podsim(&["tofu", "slicing", "--ber", "0.01", "--packets", "100"]);
    assert!(
        stdout(&o).contains("- (no frame delivered"),
        "{}",
        stdout(&o)
    );
}

/// Issue 40, item 4: the memory refusal of a 10^9-rank ring all-reduce printed its plan's
/// 2 x 10^18 transfers beside an estimate of 25 TB, which counts only the transfers a ring
/// holds at once (two steps of 10^9: 2 x 10^9). Both counts are named now.
#[test]
fn a_memory_refusal_names_the_transfers_it_counts() {
    let (code, e) = fails(&[
        "collective",
        "all-reduce",
        "--topology",
        "torus:1000x1000x1000",
        "--bytes",
        "1MiB",
        "--memory-limit",
        "1GiB",
    ]);
    assert_eq!(code, 1, "{e}");
    assert!(
        e.contains("2000000000 transfers held at once, of 1999999998000000000 in all"),
        "{e}"
    );
}

/// Issue 40, item 5: `podsim report` put an input SVG into the page verbatim, `<script>` and
/// event handlers included. It goes in as an image now (a data URL, which a browser neither
/// scripts nor lets fetch anything); none of the file's markup is in the page. A CSV podsim did
/// not write is refused (it used to make a section and "0 plots").
#[test]
fn the_report_never_carries_an_input_svgs_markup() {
    let dir = std::env::temp_dir().join(format!("podsim-report-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("evil.svg");
    std::fs::write(
        &svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"><script>alert(2)</script>\
         <image href=\"http://example.com/x.png\"/><rect width=\"10\" height=\"10\"/></svg>",
    )
    .unwrap();
    let out = dir.join("r.html");
    let o = podsim(&[
        "report",
        "--out",
        out.to_str().unwrap(),
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    for markup in ["alert(1)", "alert(2)", "onload=", "example.com", "<rect"] {
        let at = html.find(markup).unwrap_or(0);
        assert!(
            !html.contains(markup),
            "{markup} is in the page: {}",
            &html[at.saturating_sub(200)..(at + 50).min(html.len())]
        );
    }
    assert!(html.contains("src=\"data:image/svg+xml;base64,"));
    let csv = dir.join("data.csv");
    std::fs::write(&csv, "a,b\n1,2\n").unwrap();
    let (code, e) = fails(&[
        "report",
        "--out",
        out.to_str().unwrap(),
        csv.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        e.contains("data.csv") && e.contains("not a CSV podsim wrote"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 40, item 6: a schedule whose jobs never start (half the hosts down) reported a mean
/// wait of zero hours; the wait is undefined and says so, with the count waiting (JSON null).
#[test]
fn a_schedule_with_no_job_started_has_no_mean_wait() {
    let args = [
        "schedule",
        "--mix",
        "table2",
        "--load",
        "4",
        "--host-availability",
        "0.5",
        "--hours",
        "10",
    ];
    let o = podsim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("- (no job started; "), "{}", stdout(&o));
    let mut json = args.to_vec();
    json.push("--json");
    let v: serde_json::Value = serde_json::from_slice(&podsim(&json).stdout).unwrap();
    assert_eq!(v["started"], 0, "{v}");
    assert!(
        v["mean_wait_hours"].is_null() && v["mean_wait_large_hours"].is_null(),
        "{v}"
    );
}

/// Issue 40, item 6: the same Chakra trace given twice used to become two ranks running one
/// rank's trace; it is refused, naming the file.
#[test]
fn the_same_chakra_trace_twice_is_refused() {
    let (code, e) = fails(&[
        "import",
        "chakra",
        "examples/chakra/data-parallel/step.0.et",
        "./examples/chakra/data-parallel/step.0.et",
    ]);
    assert_eq!(code, 2);
    assert!(e.contains("step.0.et") && e.contains("given twice"), "{e}");
}

/// Issue 40, item 2 (part): every network model is built in one place, which now refuses a
/// network whose tables alone pass the memory limit. `workload` and `microbench` on
/// torus:200x200x200 (48 M directed links, about 4.8 GB) used to abort with "memory
/// allocation of N bytes failed" (exit 134); under `--memory-limit`, and under an
/// address-space limit (`ulimit -v`: the default limit is three quarters of it), they are
/// refused in one line, naming the estimate.
#[test]
fn a_network_too_large_for_the_limit_is_refused_not_aborted() {
    let dir = std::env::temp_dir().join(format!("podsim-big-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wl = dir.join("w.toml");
    std::fs::write(
        &wl,
        "name = \"w\"\n[machine]\npreset = \"torus:200x200x200\"\nchip = \"tpuv4\"\n[[task]]\nname = \"t\"\ncompute = { flops = \"1 TFLOP\", efficiency = 0.5 }\n",
    )
    .unwrap();
    let wl = wl.to_str().unwrap();
    for args in [
        &["workload", wl, "--memory-limit", "64MiB"][..],
        &[
            "microbench",
            "put-latency",
            "--topology",
            "torus:200x200x200",
            "--memory-limit",
            "64MiB",
        ],
    ] {
        let (code, e) = fails(args);
        assert_eq!(code, 1, "{e}");
        // 200^3 nodes x 6 directed links = 4.8 x 10^7 at 128 B, and 8 x 10^6 nodes at 24 B:
        // 6.144 + 0.192 = 6.336 GB.
        assert!(
            e.contains("48000000 directed links") && e.contains("6.336 GB") && e.contains("64 MiB"),
            "{e}"
        );
    }
    // The default limit under `ulimit -v` (4 GB of address space: a limit of 3 GB).
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 4000000 && exec \"{}\" microbench put-latency --topology torus:200x200x200",
            env!("CARGO_BIN_EXE_podsim")
        ))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("more than the memory limit"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 40, item 2 (part): a workload task with `repeat = 100000000` used to abort on its
/// 8 GB of task runs; it is refused up front, naming the runs and the estimate (160 bytes a
/// run: 16 GB).
#[test]
fn a_repeat_past_the_memory_limit_is_refused() {
    let dir = std::env::temp_dir().join(format!("podsim-repeat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("w.toml");
    std::fs::write(
        &f,
        "name = \"w\"\n[machine]\npreset = \"torus:4x4\"\nchip = \"tpuv4\"\n[[task]]\nname = \"t\"\ncompute = { flops = \"1 GFLOP\", efficiency = 0.5 }\nrepeat = 100000000\n",
    )
    .unwrap();
    let (code, e) = fails(&["workload", f.to_str().unwrap(), "--memory-limit", "1GiB"]);
    assert_eq!(code, 1, "{e}");
    assert!(
        e.contains("w.toml") && e.contains("100000000 task runs") && e.contains("16 GB"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 40, item 2 (part): a DOJO broadcast of 64 MiB to a die's other nodes took 3.1 GB
/// whatever `--memory-limit` said; its packets' records are estimated first (1 Mi packets x
/// 359 destinations x 16 B + the payload: 5.7 GiB) and the run is refused past the limit.
#[test]
fn a_dojo_broadcast_past_the_memory_limit_is_refused() {
    let (code, e) = fails(&[
        "dojo",
        "transfer",
        "broadcast",
        "--from",
        "0,0",
        "--bytes",
        "64MiB",
        "--memory-limit",
        "1MiB",
    ]);
    assert_eq!(code, 1, "{e}");
    assert!(
        e.contains("1048576 packets to 359 destinations") && e.contains("1 MiB"),
        "{e}"
    );
}

/// Issue 40, item 2 (part): `dlrm` timed its collectives with no memory limit at all; they
/// are held to `--memory-limit` now, like every other collective.
#[test]
fn dlrm_collectives_honour_the_memory_limit() {
    let (code, e) = fails(&[
        "dlrm",
        "--system",
        "tpuv4:slice=16x16x16",
        "--memory-limit",
        "64MiB",
    ]);
    assert_eq!(code, 1, "{e}");
    assert!(e.contains("more than the memory limit of 64 MiB"), "{e}");
}

/// Issue 40, item 2 (part): `dojo shortcuts` on a plane took 1.4 GB under any limit; its
/// flows are estimated first (225,000 local and 112,500 global: about 2.6 GB) and the run is
/// refused past `--memory-limit`.
#[test]
fn dojo_shortcuts_past_the_memory_limit_are_refused() {
    let (code, e) = fails(&[
        "dojo",
        "shortcuts",
        "--topology",
        "dojo:plane",
        "--global-fraction",
        "0.5",
        "--memory-limit",
        "1GiB",
    ]);
    assert_eq!(code, 1, "{e}");
    assert!(
        e.contains("225000 local and 112500 global transfers") && e.contains("1 GiB"),
        "{e}"
    );
}

/// Issue 40, item 2 (part): `dram` and `matmul` built their packet-level NoC with no memory
/// limit; the routers' estimate (120 routers, 720 channels, 76,800 flit buffers: 2.3 MB) is
/// held to `--memory-limit` now.
#[test]
fn the_tenstorrent_noc_honours_the_memory_limit() {
    for args in [
        &["dram", "--memory-limit", "1MiB"][..],
        &[
            "matmul",
            "--m",
            "32",
            "--k",
            "8192",
            "--n",
            "3584",
            "--memory-limit",
            "1MiB",
        ],
    ] {
        let (code, e) = fails(args);
        assert_eq!(code, 1, "{e}");
        assert!(e.contains("120 routers") && e.contains("1 MiB"), "{e}");
    }
}

#[test]
fn a_slice_inside_one_block_is_said_to_be_a_mesh() {
    // tpu-v4-isca2023.txt section 2: only whole 4x4x4 blocks close a torus through the OCS; a
    // 3x4x4 slice lies inside one block, so it is a mesh on the block's electrical links.
    let o = podsim(&["topo", "tpuv4:slice=3x4x4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("mesh:3x4x4"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("inside one 4x4x4 block: it is a mesh"),
        "{}",
        stderr(&o)
    );
    // A whole-block slice is a torus and gets no note.
    let o = podsim(&["topo", "tpuv4:slice=4x4x4"]);
    assert!(stdout(&o).contains("torus:4x4x4"), "{}", stdout(&o));
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));
}

#[test]
fn a_scalesim_topology_without_layers_is_refused() {
    let dir = std::env::temp_dir().join(format!("podsim-scalesim-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("s.cfg");
    std::fs::write(
        &cfg,
        "[general]\nrun_name = x\n[architecture_presets]\nArrayHeight: 8\nArrayWidth: 8\nDataflow: ws\n",
    )
    .unwrap();
    let topo = dir.join("t.csv");
    std::fs::write(
        &topo,
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n",
    )
    .unwrap();
    let o = podsim(&[
        "import",
        "scalesim",
        cfg.to_str().unwrap(),
        topo.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("no layers"), "{}", stderr(&o));
}

/// Issue 40, item 2 (part): `dojo barrier` on ten by ten training tiles held 200 MB whatever
/// the limit; its trees are estimated first (256 B a member: 900,000 routers, 230 MB).
#[test]
fn dojo_barrier_trees_honour_the_memory_limit() {
    let (code, e) = fails(&[
        "dojo",
        "barrier",
        "--topology",
        "dojo:system=10x10",
        "--memory-limit",
        "64MiB",
    ]);
    assert_eq!(code, 1, "{e}");
    assert!(
        e.contains("900000 domain members") && e.contains("64 MiB"),
        "{e}"
    );
}

/// Issue 40, item 2 (part): a workload's collective was planned whole with no estimate, so an
/// all-reduce over a 16x16x16 torus held 6 GB under a 64 MiB limit. The plans are estimated
/// first: 4096 ranks x 2 x 4095 steps = 33,546,240 transfers at 200 B each.
#[test]
fn a_workload_collective_past_the_memory_limit_is_refused() {
    let dir = std::env::temp_dir().join(format!("podsim-wl-coll-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("w.toml");
    std::fs::write(
        &f,
        "name = \"x\"\n[machine]\npreset = \"torus:16x16x16\"\nchip = \"tpuv4\"\nmodel = \"flow\"\n[[task]]\nname = \"ar\"\ncollective = \"all-reduce\"\nbytes = \"1 MB\"\n",
    )
    .unwrap();
    let (code, e) = fails(&["workload", f.to_str().unwrap(), "--memory-limit", "64MiB"]);
    assert_eq!(code, 1, "{e}");
    assert!(
        e.contains("33546240 transfers") && e.contains("64 MiB"),
        "{e}"
    );
}

/// Issue 40, item 2 (part): `tofu slicing` kept 21 B a frame whatever the limit (10^7 frames:
/// 210 MB); it is estimated at 24 B a frame and refused past --memory-limit.
#[test]
fn tofu_slicing_frames_honour_the_memory_limit() {
    let (code, e) = fails(&[
        "tofu",
        "slicing",
        "--ber",
        "1e-6",
        "--packets",
        "10000000",
        "--memory-limit",
        "64MiB",
    ]);
    assert_eq!(code, 2, "{e}");
    // 10^7 x 24 B = 240 MB.
    assert!(
        e.contains("--packets") && e.contains("240 MB") && e.contains("64 MiB"),
        "{e}"
    );
}

/// Issue 40, item 3: a long run says so before it starts, with its estimate, and
/// `--time-limit` stops it cleanly: exit 124 (as timeout(1)), no result, and how far it got.
#[test]
fn a_long_run_is_announced_and_stopped_at_the_time_limit() {
    // Hosts up 10^-9 of the time: 1024 hosts fail and recover every ~2 h, 10^8 changes in
    // 100,000 h (2 x 1024 x 10^5 / 2).
    let o = podsim(&[
        "schedule",
        "--mix",
        "table2",
        "--hours",
        "100000",
        "--load",
        "4",
        "--host-availability",
        "1e-9",
        "--time-limit",
        "1s",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(124), "{e}");
    assert!(e.contains("note: about 1.0e8 events"), "{e}");
    assert!(e.contains("stopped: --time-limit 1s reached"), "{e}");
    assert!(e.contains("of 100000 simulated hours"), "{e}");
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    // At a bit error rate of 1%, every 2 KiB frame's slices are hit: 17 transmissions each.
    let o = podsim(&[
        "tofu",
        "slicing",
        "--ber",
        "0.01",
        "--packets",
        "1000000",
        "--time-limit",
        "1s",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(124), "{e}");
    assert!(e.contains("note: about 1.7e7 slice transmissions"), "{e}");
    assert!(e.contains("frames delivered or given up"), "{e}");
    // A sweep stopped mid-way says where its finished points are.
    let dir = std::env::temp_dir().join(format!("podsim-time-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("noc.csv");
    let o = podsim(&[
        "noc",
        "--topology",
        "mesh:16x16",
        "--traffic",
        "uniform",
        "--sweep",
        "0.05:0.5:0.05",
        "--cycles",
        "10000000",
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        dir.join("noc.svg").to_str().unwrap(),
        "--time-limit",
        "1s",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(124), "{e}");
    // Each load announces the same run; the note is said once.
    assert_eq!(e.matches("note: a load of").count(), 1, "{e}");
    assert!(
        e.contains("finished loads are kept in") && e.contains("cycles simulated"),
        "{e}"
    );
}

/// Issue 40, item 3: a run of unbounded length is refused up front; bad limits are refused.
#[test]
fn an_endless_noc_run_and_bad_time_limits_are_refused() {
    let (code, e) = fails(&[
        "noc",
        "--topology",
        "mesh:4x4",
        "--traffic",
        "uniform",
        "--rate",
        "0.1",
        "--cycles",
        "18446744073709551615",
    ]);
    assert_eq!(code, 2, "{e}");
    assert!(e.contains("--cycles") && e.contains("router-cycles"), "{e}");
    for (bad, why) in [
        ("0", "above zero"),
        ("ten", "expected a time"),
        ("5 days", "unknown unit"),
    ] {
        let (code, e) = fails(&["topo", "ring:4", "--time-limit", bad]);
        assert_eq!(code, 2, "{bad}: {e}");
        assert!(e.contains("--time-limit") && e.contains(why), "{bad}: {e}");
    }
}

/// Issue 40, item 3: a packet-level workload past the packet level's flit limit ran for
/// minutes before its sends were refused; it is refused before anything runs. (The example's
/// four 200 MB all-reduces on 64 chips: 4 x 2 x 63 x 200 MB / 64 B = 1.575 x 10^9 flits.)
/// A packet-level collective says how long it will take before it starts: a ring all-reduce
/// of 256 MiB on 16 ranks sends 2 x 15/16 x 256 MiB = 480 MiB a rank, 7.5 GiB in all, 1.26 x
/// 10^8 flits of 64 B, each over torus:4x4's average distance of 2 hops: 2.5 x 10^8
/// flit-hops, about 25 s at 10^7 a second.
#[test]
fn packet_level_runs_are_estimated_before_they_start() {
    let (code, e) = fails(&[
        "workload",
        "examples/workload-data-parallel.toml",
        "--model",
        "packet",
    ]);
    assert_eq!(code, 1, "{e}");
    assert!(
        e.contains("1575000000 flits") && e.contains("use the flow"),
        "{e}"
    );
    let o = podsim(&[
        "collective",
        "all-reduce",
        "--topology",
        "torus:4x4",
        "--bytes",
        "256MiB",
        "--model",
        "packet",
        "--time-limit",
        "3s",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(124), "{e}");
    assert!(e.contains("flit-hops at the packet level: about"), "{e}");
    assert!(e.contains("stopped: --time-limit 3s reached"), "{e}");
}

/// Issue 39, item 5: the argument parser's errors are one line too, with their tips and the
/// usage, like every other error (exit 2).
#[test]
fn argument_errors_are_one_line() {
    let (code, e) = fails(&[
        "collective",
        "all-reduce",
        "--topology",
        "ring:4",
        "--size",
        "1",
    ]);
    assert_eq!(code, 2, "{e}");
    assert!(
        e.contains("unexpected argument '--size'")
            && e.contains("tip:")
            && e.contains("usage: podsim collective"),
        "{e}"
    );
    let (code, e) = fails(&["gemm", "--m", "1"]);
    assert_eq!(code, 2, "{e}");
    assert!(
        e.contains("required arguments were not provided: --dataflow")
            && e.contains("--array <RxC>"),
        "{e}"
    );
    let (code, e) = fails(&["frobnicate"]);
    assert_eq!(code, 2, "{e}");
    assert!(e.contains("unrecognized subcommand 'frobnicate'"), "{e}");
}
