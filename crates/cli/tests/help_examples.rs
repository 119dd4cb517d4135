//! Issue 39, item 4 (part): the examples `--help` shows work. Every file path under
//! `examples/` that any command's help names exists, and the values help gives as examples
//! are accepted (`tofu frame --decode` used to show a header that its own decoder refused;
//! `dojo node` named a kernel file that did not exist).

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

#[test]
fn every_example_file_that_help_names_exists() {
    // Every command and its subcommands, one level down (tofu, dojo, import).
    let mut commands: Vec<Vec<String>> = Vec::new();
    for c in subcommands(&help(&[])) {
        let nested = subcommands(&help(&[c.as_str()]));
        commands.push(vec![c.clone()]);
        for n in nested {
            commands.push(vec![c.clone(), n]);
        }
    }
    assert!(commands.len() > 30, "{commands:?}");
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
