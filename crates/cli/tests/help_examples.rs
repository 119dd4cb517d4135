//! Issue 39, item 4: the examples `--help` shows work. Every `$ podsim ...` line of every
//! command's help (the EXAMPLES sections) runs as shown, every value a flag's help gives after
//! "e.g." is accepted beside that flag, every file path under `examples/` that any command's
//! help names exists (`tofu frame --decode` used to show a header that its own decoder
//! refused; `dojo node` named a kernel file that did not exist), and `podsim man --out` writes
//! every page the pages refer to.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn help(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(args)
        .arg("--help")
        .current_dir(repo())
        .output()
        .expect("podsim runs");
    assert!(o.status.success(), "{args:?} --help");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The subcommands listed under "Commands:" in a help text (not `help`).
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// Every command and its subcommands at every depth (`dojo node`, `tofu put`, ...), as the
/// words after `podsim`.
fn commands() -> Vec<Vec<String>> {
    fn walk(at: Vec<String>, out: &mut Vec<Vec<String>>) {
        let args: Vec<&str> = at.iter().map(String::as_str).collect();
        for c in subcommands(&help(&args)) {
            let mut next = at.clone();
            next.push(c);
            out.push(next.clone());
            walk(next, out);
        }
    }
    let mut out = Vec::new();
    walk(Vec::new(), &mut out);
    assert!(out.len() > 30, "{out:?}");
    out
}

/// A command line's words as a POSIX shell splits them (double and single quotes; no
/// variables, globs, pipes or redirections, which the examples do not use).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for ch in line.chars() {
        match (quote, ch) {
            (None, '"' | '\'') => (quote, any) = (Some(ch), true),
            (Some(q), _) if ch == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            (_, c) => {
                word.push(c);
                any = true;
            }
        }
    }
    assert!(quote.is_none(), "unbalanced quote in `{line}`");
    if any {
        words.push(word);
    }
    words
}

/// A scratch directory in which `examples/` and `validation/` are the repository's (links),
/// so that examples read the files they name and write their outputs (`--csv sweep.csv`,
/// `--trace trace.json`) here, not into the repository.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("podsim-help-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    for d in ["examples", "validation"] {
        std::os::unix::fs::symlink(repo().join(d), dir.join(d)).unwrap();
    }
    dir
}

/// `podsim ARGS` in `dir`: Ok, or the failure with its stderr.
fn runs(dir: &Path, args: &[String]) -> Result<(), String> {
    let o = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(args)
        .arg("--quiet")
        .current_dir(dir)
        .output()
        .expect("podsim runs");
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`podsim {}` exits {:?}: {}",
            args.join(" "),
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// The main commands each show an EXAMPLES section, and every `$ podsim ...` line of any
/// command's help runs as shown from a fresh clone's root.
#[test]
fn every_dollar_example_in_help_runs() {
    let dir = scratch("dollar");
    let mut failures = Vec::new();
    let mut ran = 0;
    for c in std::iter::once(Vec::new()).chain(commands()) {
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        let text = help(&args);
        let examples: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("$ podsim "))
            .collect();
        let main = [
            "run",
            "collective",
            "noc",
            "gemm",
            "workload",
            "train",
            "validate",
            "dram",
            "tofu",
            "dojo",
        ];
        if c.len() == 1 && main.contains(&c[0].as_str()) {
            assert!(
                text.contains("\nExamples:\n") && examples.len() >= 2,
                "`podsim {} --help` has no EXAMPLES section of two or more commands",
                c[0]
            );
        }
        for line in examples {
            assert!(
                !line.contains(['|', '>', '<', '*', '$']),
                "`podsim {line}`: an example is one command, without shell syntax"
            );
            ran += 1;
            if let Err(e) = runs(&dir, &shell_words(line)) {
                failures.push(format!("in `podsim {} --help`: {e}", c.join(" ")));
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran >= 30, "only {ran} examples in help");
}

/// The values a help text gives after "e.g.": `e.g. "64 MiB"`, `e.g. 32x32 or 128x128`,
/// `e.g. "12 GT/s", "14 GT/s"`, `e.g. 5 (N150: one) or 2,8 (N300: two)`, `e.g.
/// torus:4x4x8, tpuv4:slice=4x4x8:twisted; ...`.
fn eg_values(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(at) = text.find("e.g. ") else {
        return out;
    };
    let mut rest = text[at + 5..].trim_start();
    loop {
        let (value, mut after, mut more) = if let Some(r) = rest.strip_prefix('"') {
            let end = r.find('"').expect("a closing quote");
            (&r[..end], &r[end + 1..], false)
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let word = &rest[..end];
            let value = word.trim_end_matches([',', ';', ':', ')', ']', '.']);
            (value, &rest[end..], &word[value.len()..] == ",")
        };
        out.push(value.to_string());
        if let Some(a) = after.strip_prefix(',') {
            (after, more) = (a, true);
        }
        let mut a = after.trim_start();
        if a.starts_with('(') {
            a = a[a.find(')').map_or(a.len(), |i| i + 1)..].trim_start();
        }
        if let Some(r) = a.strip_prefix("or ") {
            (a, more) = (r, true);
        }
        if !more {
            return out;
        }
        rest = a.trim_start();
    }
}

/// Every value a flag's help gives after "e.g." is accepted beside that flag, in a command
/// that otherwise runs (the table below: the command and the flag, the other arguments); a
/// new "e.g." in a flag's help fails here until it is in the table.
#[test]
fn every_e_g_value_in_help_is_accepted() {
    // (command, flag, the command's other arguments); "*" for the global flags.
    let base: &[(&str, &str, &[&str])] = &[
        ("*", "--memory-limit", &["topo", "ring:4"]),
        ("*", "--time-limit", &["topo", "ring:4"]),
        ("topo", "--link-bandwidth", &["topo", "ring:4"]),
        ("topo", "--link-latency", &["topo", "ring:4"]),
        (
            "availability",
            "--host-availability",
            &["availability", "--slice-chips", "64"],
        ),
        (
            "collective",
            "--topology",
            &["collective", "all-reduce", "--bytes", "1 MiB"],
        ),
        (
            "collective",
            "--bytes",
            &["collective", "all-reduce", "--topology", "torus:4x4"],
        ),
        (
            "collective",
            "--sweep",
            &[
                "collective",
                "all-reduce",
                "--topology",
                "torus:4x4",
                "--csv",
                "sweep.csv",
            ],
        ),
        (
            "noc",
            "--sweep",
            &[
                "noc",
                "--topology",
                "mesh:4x4",
                "--csv",
                "noc.csv",
                "--svg",
                "noc.svg",
            ],
        ),
        (
            "gemm",
            "--array",
            &[
                "gemm",
                "--dataflow",
                "os",
                "--m",
                "64",
                "--n",
                "64",
                "--k",
                "64",
            ],
        ),
        (
            "train",
            "--mapping",
            &[
                "train",
                "--model",
                "gpt3-175b",
                "--system",
                "tpuv4:slice=8x8x8",
                "--parallel",
                "[8,1,8,8]",
            ],
        ),
        ("dram", "--data-rate", &["dram"]),
        ("dram", "--harvested-rows", &["dram"]),
        ("dojo node", "--kernel", &["dojo", "node"]),
        ("dojo dma", "--shape", &["dojo", "dma", "--to", "1,1"]),
        ("dojo host", "--bytes", &["dojo", "host"]),
        (
            "dojo transfer",
            "--bytes",
            &["dojo", "transfer", "push", "--from", "0,0", "--to", "1,1"],
        ),
        (
            "tofu barrier",
            "--nodes",
            &["tofu", "barrier", "--points", "1"],
        ),
        ("tofu frame", "--encode", &["tofu", "frame"]),
        ("tofu frame", "--decode", &["tofu", "frame"]),
        (
            "tofu slicing",
            "--lane-fault-at",
            &["tofu", "slicing", "--ber", "1e-6"],
        ),
        (
            "tofu slicing",
            "--lane-recover-at",
            &[
                "tofu",
                "slicing",
                "--ber",
                "1e-6",
                "--lane-fault-at",
                "100 us",
            ],
        ),
    ];
    // "e.g." in prose, not a flag's value: what it shows is run here where it is a command.
    let prose = ["e.g. from PyTorch", "e.g. `podsim completions bash >"];
    let dir = scratch("eg");
    let (mut failures, mut checked) = (Vec::new(), std::collections::BTreeSet::new());
    for c in commands() {
        let name = c.join(" ");
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        let text = help(&args);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains("e.g. ") {
                continue;
            }
            if prose.iter().any(|p| line.contains(p)) {
                continue;
            }
            // The flag the line describes: on the line, or (long help) on the line above.
            let flag_of = |l: &str| {
                l.trim_start()
                    .starts_with('-')
                    .then(|| l.split_whitespace().find(|w| w.starts_with("--")))
                    .flatten()
                    .map(|w| w.trim_end_matches(',').to_string())
            };
            let flag = flag_of(line).or_else(|| {
                (line.starts_with("          ") && i > 0)
                    .then(|| flag_of(lines[i - 1]))
                    .flatten()
            });
            let Some(flag) = flag else {
                failures.push(format!(
                    "`podsim {name} --help`: an \"e.g.\" outside a flag's help: {line}"
                ));
                continue;
            };
            let Some((_, _, other)) = base
                .iter()
                .find(|(cmd, f, _)| *f == flag && (*cmd == name || *cmd == "*"))
            else {
                failures.push(format!(
                    "`podsim {name} --help`: {flag}'s example is in no row of the table: {line}"
                ));
                continue;
            };
            let values = eg_values(line);
            assert!(!values.is_empty(), "{name} {flag}: {line}");
            for v in values {
                if !checked.insert((other.join(" "), flag.clone(), v.clone())) {
                    continue;
                }
                let mut run: Vec<String> = other.iter().map(|s| s.to_string()).collect();
                run.push(flag.clone());
                run.push(v);
                if let Err(e) = runs(&dir, &run) {
                    failures.push(format!(
                        "`podsim {name} --help` gives {flag}'s example: {e}"
                    ));
                }
            }
        }
    }
    // The completion script the help of `completions` shows how to install.
    if let Err(e) = runs(&dir, &["completions".into(), "bash".into()]) {
        failures.push(e);
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked.len() >= 30, "only {} values checked", checked.len());
}

/// `podsim man --out DIR` writes every page a page refers to (`podsim-dojo.1` lists
/// `podsim-dojo-node(1)`, ...), and no `help` page is referred to.
#[test]
fn man_out_writes_every_page_referred_to() {
    let dir = std::env::temp_dir().join(format!("podsim-help-man-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let o = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(["man", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut pages = 0;
    for c in commands() {
        let page = dir.join(format!("podsim-{}.1", c.join("-")));
        assert!(page.exists(), "{} is missing", page.display());
    }
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap().replace("\\-", "-");
        pages += 1;
        for (at, _) in text.match_indices("(1)") {
            let name = text[..at]
                .rsplit(|ch: char| !(ch.is_alphanumeric() || ch == '-'))
                .next()
                .unwrap();
            if !name.starts_with("podsim") {
                continue;
            }
            assert!(
                !name.ends_with("-help"),
                "{} refers to {name}(1)",
                path.display()
            );
            assert!(
                dir.join(format!("{name}.1")).exists(),
                "{} refers to {name}(1), which was not written",
                path.display()
            );
        }
    }
    // A page's EXAMPLES are those of the command's help, a command to a line, and the page's
    // preamble is written once.
    let page = std::fs::read_to_string(dir.join("podsim-dojo.1")).unwrap();
    assert!(
        page.contains("\n.SH EXAMPLES\n")
            && page.contains(
                "\n.nf\n$ podsim dojo node \\-\\-kernel examples/dojo/matmul.toml\n.fi\n"
            ),
        "{page}"
    );
    assert_eq!(page.matches(".ds Aq").count(), 2, "{page}");
    std::fs::remove_dir_all(&dir).ok();
    assert!(pages > 40, "{pages} pages");
}

#[test]
fn every_example_file_that_help_names_exists() {
    let commands = commands();
    let mut named = 0;
    for c in &commands {
        let args: Vec<&str> = c.iter().map(String::as_str).collect();
        let text = help(&args);
        for word in text.split(|ch: char| ch.is_whitespace() || "(),;`\"'".contains(ch)) {
            let Some(at) = word.find("examples/") else {
                continue;
            };
            let path = word[at..].trim_end_matches(['.', ':']);
            // A directory or glob pattern named in prose is not a file example.
            if path.ends_with('/') || path.contains('*') {
                continue;
            }
            named += 1;
            assert!(
                repo().join(path).exists(),
                "`podsim {} --help` names {path}, which does not exist",
                c.join(" ")
            );
        }
    }
    assert!(named >= 3, "only {named} example files named in help");
}

#[test]
fn the_header_tofu_frame_help_shows_decodes() {
    let text = help(&["tofu", "frame"]);
    let hex = text
        .split("(e.g. ")
        .nth(1)
        .and_then(|s| s.split([':', ')']).next())
        .expect("an example header in the help");
    let o = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(["tofu", "frame", "--decode", hex.trim()])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{hex}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The fields the help says it holds.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("LEN 4 DABC1 0 DX 2 DY 3 DZ 1")
            && out.contains("DI 2")
            && out.contains("VC 1"),
        "{out}"
    );
}

#[test]
fn train_says_what_it_requires_and_dojo_describes_every_subcommand() {
    // Issue 39, item 4: `--system` and `--parallel` are required unless `--search`, and the
    // usage says so; `podsim dojo --help` describes all six subcommands, not only `node`.
    let t = help(&["train"]);
    assert!(
        t.contains("--system <SPEC> --parallel <SPEC>") && t.contains("--search --chips <N>"),
        "{t}"
    );
    let d = help(&["dojo"]);
    let about = d.lines().next().unwrap_or("");
    for sub in [
        "`node`",
        "`barrier`",
        "`transfer`",
        "`shortcuts`",
        "`dma`",
        "`host`",
    ] {
        assert!(about.contains(sub), "{sub} missing from: {about}");
    }
    // The man page's NAME line names podsim once.
    let o = Command::new(env!("CARGO_BIN_EXE_podsim"))
        .arg("man")
        .output()
        .unwrap();
    let man = String::from_utf8_lossy(&o.stdout);
    let name = man
        .lines()
        .skip_while(|l| !l.starts_with(".SH NAME"))
        .nth(1)
        .unwrap_or("");
    assert_eq!(name.matches("podsim").count(), 1, "{name}");
}

/// Closed choices show `[possible values: ...]` in `--help` (and so in the completions), and a
/// value outside them is refused in one line that names the flag (exit 2).
#[test]
fn closed_choices_list_their_values_and_refuse_others_in_one_line() {
    let train = [
        "train",
        "--model",
        "gpt3-175b",
        "--system",
        "tpuv4:slice=8x8x8",
        "--parallel",
        "[8,1,8,8]",
    ];
    let noc = ["noc", "--topology", "mesh:4x4", "--rate", "0.1"];
    let collective = [
        "collective",
        "all-reduce",
        "--topology",
        "ring:4",
        "--bytes",
        "1 MiB",
    ];
    let gemm = ["gemm", "--array", "4x4", "--m", "4", "--n", "4", "--k", "4"];
    // (the command, the flag, a value it refuses, one value it lists)
    let cases: &[(&[&str], &str, &str, &str)] = &[
        (&noc, "--routing", "dimension", "dor"),
        (&noc, "--traffic", "random", "tornado"),
        (&noc, "--arbitration", "oldest", "fcfs"),
        (&noc, "--router", "gem5", "booksim"),
        (&collective, "--model", "cycle", "packet"),
        (&collective, "--algorithm", "rings", "halving-doubling"),
        (&gemm, "--dataflow", "rs", "ws"),
        (&train, "--remat", "some", "full"),
        (&train, "--partition", "3d/1d", "2d/2d"),
        (&train, "--model-fidelity", "packet", "analytic"),
        (&train, "--cmem", "maybe", "off"),
        (&["numerics", "1.5"], "--format", "fp64", "bf16"),
        (&["dram"], "--placement", "diagonal", "next-to-bank"),
        (&["tofu", "put"], "--generation", "tofu3", "tofud"),
        (
            &["workload", "examples/workload-data-parallel.toml"],
            "--model",
            "exact",
            "flow",
        ),
    ];
    for (args, flag, bad, listed) in cases {
        // The command's words before its positional values: `noc`, `tofu put`, ...
        let words: Vec<&str> = args
            .iter()
            .take_while(|a| !a.starts_with('-'))
            .copied()
            .collect();
        let command: Vec<&str> = if words.len() > 1 && !["tofu", "dojo"].contains(&words[0]) {
            vec![words[0]]
        } else {
            words
        };
        let text = help(&command);
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{flag} ")))
            .unwrap_or_else(|| panic!("{flag} in `podsim {} --help`", command.join(" ")));
        let pv = line
            .split("[possible values: ")
            .nth(1)
            .unwrap_or_else(|| panic!("{flag} lists no possible values: {line}"));
        assert!(
            pv.split([',', ']']).any(|v| v.trim() == *listed),
            "{flag}: {line}"
        );
        let o = Command::new(env!("CARGO_BIN_EXE_podsim"))
            .args(*args)
            .args([flag, bad])
            .current_dir(repo())
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag} {bad}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{flag} {bad}: {e}");
        assert!(
            e.contains(flag),
            "{flag} {bad}: the error names no flag: {e}"
        );
    }
}

/// Every value `[possible values: ...]` lists is one the command takes: each runs beside a
/// command that takes all of its flag's values.
#[test]
fn every_listed_value_runs() {
    let train: &[&str] = &[
        "train",
        "--model",
        "gpt3-175b",
        "--system",
        "tpuv4:slice=8x8x8",
        "--parallel",
        "[8,1,8,8]",
    ];
    let noc: &[&str] = &[
        "noc",
        "--topology",
        "mesh:4x4",
        "--rate",
        "0.1",
        "--cycles",
        "1000",
    ];
    let matmul: &[&str] = &["matmul", "--m", "32", "--k", "64", "--n", "64"];
    let gemm: &[&str] = &["gemm", "--array", "4x4", "--m", "8", "--n", "8", "--k", "8"];
    // (the words of the command whose help lists the values, its other arguments, the flag)
    let cases: &[(&[&str], &[&str], &str)] = &[
        (&["noc"], noc, "--traffic"),
        (&["noc"], noc, "--arbitration"),
        (&["noc"], noc, "--router"),
        (
            &["collective"],
            &[
                "collective",
                "all-reduce",
                "--topology",
                "ring:4",
                "--bytes",
                "1 MiB",
            ],
            "--model",
        ),
        (&["gemm"], gemm, "--dataflow"),
        (
            &["gemm"],
            &[gemm, &["--dataflow", "os"]].concat(),
            "--convention",
        ),
        (&["train"], train, "--remat"),
        (&["train"], train, "--partition"),
        (&["train"], train, "--model-fidelity"),
        (&["train"], train, "--cmem"),
        (&["numerics"], &["numerics", "1.5"], "--format"),
        (&["dram"], &["dram"], "--chip"),
        (&["dram"], &["dram"], "--placement"),
        (&["dram"], &["dram"], "--layout"),
        (&["dram"], &["dram"], "--vcs"),
        (&["matmul"], matmul, "--tile"),
        (&["matmul"], matmul, "--dtype"),
        (&["matmul"], matmul, "--in0"),
        (&["matmul"], matmul, "--buffering"),
        (&["tofu", "put"], &["tofu", "put"], "--generation"),
        (
            &["tofu", "rdma"],
            &["tofu", "rdma", "--generation", "tofud"],
            "--op",
        ),
        (
            &["tofu", "slicing"],
            &["tofu", "slicing", "--ber", "1e-6"],
            "--mode",
        ),
        (
            &["tofu", "barrier"],
            &["tofu", "barrier", "--points", "4"],
            "--allocation",
        ),
        (
            &["tofu", "barrier"],
            &["tofu", "barrier", "--points", "4"],
            "--allreduce",
        ),
        (
            &["dojo", "transfer"],
            &[
                "dojo", "transfer", "push", "--from", "0,0", "--to", "1,1", "--bytes", "64KiB",
            ],
            "--model",
        ),
        (&["roofline"], &["roofline"], "--chip"),
        (&["apps"], &["apps", "--chips", "64"], "--cmem"),
        (
            &["dlrm"],
            &["dlrm", "--system", "tpuv4:slice=4x4x8"],
            "--embeddings",
        ),
        (
            &["workload"],
            &["workload", "examples/workload-data-parallel.toml"],
            "--cmem",
        ),
    ];
    let mut failures = Vec::new();
    let dir = scratch("listed");
    for (command, other, flag) in cases {
        let text = help(command);
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{flag} ")))
            .unwrap_or_else(|| panic!("{flag} in `podsim {} --help`", command.join(" ")));
        let values = line
            .split("[possible values: ")
            .nth(1)
            .and_then(|v| v.split(']').next())
            .unwrap_or_else(|| panic!("{flag} lists no possible values: {line}"));
        for v in values.split(", ") {
            let mut run: Vec<String> = other.iter().map(|s| s.to_string()).collect();
            run.push(flag.to_string());
            run.push(v.to_string());
            if let Err(e) = runs(&dir, &run) {
                failures.push(e);
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
