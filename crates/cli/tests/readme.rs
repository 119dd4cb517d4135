//! Every command block in `README.md` against the real command ("every output block in the
//! README comes from the real command").
//!
//! The rules:
//!
//! - A block is a fenced block (a line starting with three backticks, any info string, up to
//!   the next such line) whose first line starts with `$ `. Each line starting with `$ ` in it
//!   is a command; the lines after it, up to the next `$ ` line or the fence, are its expected
//!   output. Fenced blocks that do not open with `$ ` (a table, a file, an error shown alone)
//!   are not checked.
//! - A command starting with `podsim ` runs from the repository root as
//!   `sh -c 'exec 2>&1; COMMAND'`, with the directory of this test's `podsim` binary first on
//!   `PATH`, `NO_COLOR=1` and stdin empty. So a pipe (`| tail -4`, `| head -3`, `| grep ...`)
//!   and a glob apply as in a shell, and the expected output is stdout and stderr merged in
//!   the order written, as a terminal shows them (`note:` and `error:` lines in place). A
//!   pipe's filter sees stdout only (podsim's stderr goes around it, as on a terminal), so a
//!   piped command must write nothing to stderr, or the order would be a race. The exit code
//!   is not compared.
//! - Lines are compared whole, trailing spaces ignored. A line that is exactly `...` matches
//!   any number of lines, zero included; nothing else is elided (`...` inside a line is
//!   literal text). Output that depends on the machine (a memory limit, a wall time, a rate)
//!   is made deterministic in the README's command (e.g. `--memory-limit "16 GiB"`) or its
//!   whole line is `...`.
//! - Any other command (`cargo`, `mpirun`, `pip`, `python`), and a `podsim` command that
//!   cannot run here, is in [`SKIP`] with its reason; a block with a command neither run nor
//!   listed fails, and so does an entry of [`SKIP`] that no longer matches a README command.
//!   A skipped command's expected lines are not compared.
//!
//! A stale block fails with its README line, its command, the first expected line that does
//! not match and the real output in full, to paste.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Commands (as written after `$ `) not run, each with its reason.
const SKIP: &[(&str, &str)] = &[
    (
        "cargo build --release -p podsim --features mpi",
        "builds podsim again, with a system MPI (crates/cli/tests/mpi.rs checks MPI sweeps)",
    ),
    (
        "mpirun -n 4 target/release/podsim noc --topology mesh:16x16 --sweep 0.05:0.6:0.05",
        "needs MPI and the binary the block's `cargo build` makes; crates/cli/tests/mpi.rs checks it",
    ),
    (
        "mpirun -n 4 target/release/podsim validate",
        "needs MPI and the binary the block's `cargo build` makes; crates/cli/tests/mpi.rs checks it",
    ),
    (
        "mpirun -n 4 target/release/podsim train --model gpt3-175b --search --chips 512",
        "needs MPI and the binary the block's `cargo build` makes; crates/cli/tests/mpi.rs checks it (on 64 chips)",
    ),
    (
        "pip install ./python",
        "installs a Python package (needs maturin and the network)",
    ),
    (
        "python -c \"import podsim; print(podsim.collective('all-reduce', 'torus:4x4x4', '64 MiB'))\"",
        "needs the Python package installed; python/tests/test_podsim.py checks the bindings",
    ),
    (
        "podsim train --model gpt3-175b --system tpuv4:slice=8x8x8 --parallel \"[8,1,8,8]\" --partition 2d/2d --energy --plot energy.svg",
        "writes energy.svg into the working directory (the repository); the block shows the command only",
    ),
    (
        "podsim collective all-to-all --topology tpuv4:slice=4x4x8:twisted --bytes \"16 MiB\" --heatmap heat.svg",
        "writes heat.svg into the working directory (the repository); the block shows the command only",
    ),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// One `$ ` command of a README block: its 1-based README line, the command after `$ `, and
/// the expected lines with their README lines.
struct Case {
    line: usize,
    command: String,
    expected: Vec<(usize, String)>,
}

/// Every command of every fenced block whose first line starts with `$ `.
fn cases(readme: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut lines = readme.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((_, l)) = lines.next() {
        if !l.starts_with("```") {
            continue;
        }
        let mut block = Vec::new();
        for (n, l) in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            block.push((n, l));
        }
        if !block.first().is_some_and(|(_, l)| l.starts_with("$ ")) {
            continue;
        }
        for (n, l) in block {
            match l.strip_prefix("$ ") {
                Some(command) => cases.push(Case {
                    line: n,
                    command: command.trim().to_string(),
                    expected: Vec::new(),
                }),
                None => cases
                    .last_mut()
                    .expect("a block opens with a command")
                    .expected
                    .push((n, l.trim_end().to_string())),
            }
        }
    }
    cases
}

/// Run one README command as the module comment says: stdout and stderr merged.
fn run(command: &str) -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_podsim"));
    let dir = bin.parent().expect("the binary's directory");
    let mut path = std::ffi::OsString::from(dir);
    if let Some(p) = std::env::var_os("PATH") {
        path.push(":");
        path.push(p);
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1; {command}"))
        .current_dir(repo())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("sh runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Where `expected` (with `...` lines) stops matching `actual`: `None` when it matches;
/// otherwise the index of the first expected line that cannot be matched (or
/// `expected.len()` when the output goes on past the block) and the index of the actual
/// line where the match had got to.
fn mismatch(expected: &[&str], actual: &[&str]) -> Option<(usize, usize)> {
    // reach[j]: after the expected lines so far, actual[..j] can have been consumed.
    let mut reach = vec![false; actual.len() + 1];
    reach[0] = true;
    for (k, e) in expected.iter().enumerate() {
        let first = reach
            .iter()
            .position(|&r| r)
            .expect("a match in progress reaches somewhere");
        let mut next = vec![false; actual.len() + 1];
        if *e == "..." {
            next[first..].iter_mut().for_each(|r| *r = true);
        } else {
            for j in 0..actual.len() {
                if reach[j] && actual[j] == *e {
                    next[j + 1] = true;
                }
            }
        }
        if !next.iter().any(|&r| r) {
            return Some((k, first));
        }
        reach = next;
    }
    if reach[actual.len()] {
        None
    } else {
        let last = reach.iter().rposition(|&r| r).unwrap_or(0);
        Some((expected.len(), last))
    }
}

#[test]
fn readme_blocks_are_real_output() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let cases = cases(&readme);
    // The front door's tour (the long one is in docs/, checked below): a parse that finds
    // fewer has lost blocks.
    assert!(
        cases.len() >= 15,
        "only {} commands found in README.md",
        cases.len()
    );
    let mut problems = Vec::new();
    for (skip, _) in SKIP {
        if !cases.iter().any(|c| c.command == *skip) {
            problems.push(format!(
                "SKIP lists `{skip}`, which no README block runs any more: remove it"
            ));
        }
    }
    problems.extend(stale_blocks("README.md", &cases, SKIP));
    assert!(
        problems.is_empty(),
        "{} README problem(s) (rules: crates/cli/tests/readme.rs):\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// The guide's pages (`docs/*.md`) by the same rules, with nothing skipped.
#[test]
fn guide_blocks_are_real_output() {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    assert!(!pages.is_empty(), "no guide pages in docs/");
    let mut problems = Vec::new();
    for page in pages {
        let name = format!(
            "docs/{}",
            page.file_name().unwrap_or_default().to_string_lossy()
        );
        let text = std::fs::read_to_string(&page).expect("a guide page");
        let cases = cases(&text);
        if cases.is_empty() {
            problems.push(format!("{name}: no `$ podsim` block to check"));
        }
        problems.extend(stale_blocks(&name, &cases, &[]));
    }
    assert!(
        problems.is_empty(),
        "{} guide problem(s) (rules: crates/cli/tests/readme.rs):\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// Run the podsim commands of `cases` (from the file `name`) and say which blocks are stale
/// or not podsim commands (unless in `skip`).
fn stale_blocks(name: &str, cases: &[Case], skip: &[(&str, &str)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut todo = Vec::new();
    for c in cases {
        if skip.iter().any(|(s, _)| c.command == *s) {
            continue;
        }
        if c.command.starts_with("podsim ") {
            todo.push(c);
        } else {
            problems.push(format!(
                "{name}:{}: `$ {}` is not a podsim command: list it in SKIP (crates/cli/tests/readme.rs) with the reason it cannot run",
                c.line, c.command
            ));
        }
    }
    // Two at a time (the machine this runs on may have two cores), in README order.
    let next = AtomicUsize::new(0);
    let outputs: Mutex<Vec<Option<String>>> = Mutex::new(vec![None; todo.len()]);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(c) = todo.get(i) else { break };
                    let got = run(&c.command);
                    outputs.lock().unwrap()[i] = Some(got);
                }
            });
        }
    });
    let outputs = outputs.into_inner().unwrap();

    for (c, got) in todo.iter().zip(outputs) {
        let got = got.expect("every command ran");
        let actual: Vec<&str> = got.lines().map(str::trim_end).collect();
        let expected: Vec<&str> = c.expected.iter().map(|(_, l)| l.as_str()).collect();
        let Some((k, j)) = mismatch(&expected, &actual) else {
            continue;
        };
        let at = |j: usize| actual.get(j).copied().unwrap_or("<end of output>");
        let what = match c.expected.get(k) {
            Some((n, e)) => format!(
                "{name}:{n}: expected `{e}`\n  the output there: `{}`",
                at(j)
            ),
            None => format!(
                "{name}:{}: the block ends, the output goes on with `{}`",
                c.expected.last().map_or(c.line, |(n, _)| *n),
                at(j)
            ),
        };
        problems.push(format!(
            "{name}:{}: `$ {}` is stale\n  {what}\n  the real output ({} lines):\n{}",
            c.line,
            c.command,
            actual.len(),
            actual
                .iter()
                .map(|l| format!("    | {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    problems
}

#[test]
fn ellipsis_matches_any_lines() {
    let out = ["a", "b", "c", "d"];
    assert_eq!(mismatch(&["a", "b", "c", "d"], &out), None);
    assert_eq!(mismatch(&["...", "d"], &out), None);
    assert_eq!(mismatch(&["a", "...", "b", "...", "d"], &out), None);
    assert_eq!(mismatch(&["a", "...", "d", "..."], &out), None);
    assert_eq!(mismatch(&["..."], &[]), None);
    assert_eq!(mismatch(&["a", "c", "..."], &out), Some((1, 1)));
    assert_eq!(mismatch(&["a", "b"], &out), Some((2, 2)));
    assert_eq!(mismatch(&["...", "x"], &out), Some((1, 0)));
    assert_eq!(mismatch(&["a b..."], &["a b c"]), Some((0, 0)));
}
