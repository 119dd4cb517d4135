//! Issue 35, item 6: every network model is built in one place, `crates/system/src/machine.rs`
//! (`new_model`, `new_model_at`, `flow_model`, `dojo_flow_model`, `Models`), so a preset's
//! timing and the memory limit apply to every command, scenario, validation case and workload.
//!
//! The rule, on source text: outside `machine.rs`, no library or binary source of the workspace
//! (every `.rs` file under a `src/` directory of `crates/`, and `python/src/`) names a
//! constructor of a network model ([`CONSTRUCTORS`]): the analytic, flow and packet models of
//! `podsim-net` and `podsim-noc`, the packet-level engine `Noc`, and the runs of synthetic
//! traffic that build one inside `podsim-noc`. Not scanned: the crates that define the models
//! (`crates/net`, `crates/noc`), comments and string literals, and test code (files under
//! `tests/` and `benches/`, modules declared `#[cfg(test)] mod name;` and every item marked
//! `#[cfg(test)]`), which builds models directly to check them against each other.
//!
//! The exceptions are named in [`EXCEPTIONS`], each with its reason; an exception that no
//! longer builds a model fails the test too, so the list shrinks as they are routed through
//! `machine.rs`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What building a network model looks like in source text.
const CONSTRUCTORS: &[&str] = &[
    "FlowModel::new",
    "AnalyticModel::new",
    "PacketModel::new",
    "Noc::new",
    "podsim_noc::run(",
    "podsim_noc::run_logged(",
    "podsim_noc::sweep(",
];

/// The one place models are built.
const MACHINE: &str = "crates/system/src/machine.rs";

/// The crates that define the models (their own tests and internals build them).
const MODEL_CRATES: &[&str] = &["crates/net", "crates/noc"];

/// Files that build a model outside `machine.rs`: (file, constructor, why).
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "crates/machines/tenstorrent/src/dram.rs",
        "Noc::new",
        "the DRAM study runs its own packet-level engine (banks holding credits, VC lanes); to be routed through machine.rs",
    ),
    (
        "crates/cli/src/noc_cmd.rs",
        "podsim_noc::run(",
        "`podsim noc` runs synthetic traffic on a router configuration the user gives (cycles, not a preset's timing); to be routed through machine.rs",
    ),
    (
        "crates/cli/src/noc_cmd.rs",
        "podsim_noc::run_logged(",
        "`podsim noc --packet-log`: the same run as `podsim noc`, keeping its packets; to be routed through machine.rs",
    ),
    (
        "python/src/results.rs",
        "podsim_noc::run(",
        "the Python `noc` calls what `podsim noc` calls; to be routed through machine.rs",
    ),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `path` relative to the workspace root, with `/` separators.
fn rel(path: &Path) -> String {
    let r = path.strip_prefix(root()).unwrap_or(path);
    r.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Every `.rs` file under `dir`, recursively, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every `src/` directory under `dir` (not inside `target/`, `tests/` or `benches/`).
fn src_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries.into_iter().filter(|p| p.is_dir()) {
        match p.file_name().and_then(|n| n.to_str()) {
            Some("src") => out.push(p),
            Some("target" | "tests" | "benches" | ".git") => {}
            _ => src_dirs(&p, out),
        }
    }
}

/// `src` with comments and the insides of string and character literals blanked (each byte
/// a space, newlines kept), so positions stay where they were.
fn blank(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank_range = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank_range(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank_range(&mut out, i, j);
                i = j;
            }
            // A raw string: r"...", r#"..."#, br#"..."#.
            b'r' if (i == 0
                || !ident(b[i - 1])
                || (b[i - 1] == b'b' && (i < 2 || !ident(b[i - 2]))))
                && matches!(b.get(i + 1), Some(b'"' | b'#')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let open = i + 1 + hashes;
                if b.get(open) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let end = b[open + 1..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| open + 1 + p);
                blank_range(&mut out, open + 1, end);
                i = (end + close.len()).min(b.len());
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank_range(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            // A character literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            b'\'' => {
                let is_char = match b.get(i + 1) {
                    Some(b'\\') => true,
                    Some(_) => {
                        // One character (possibly several bytes), then the closing quote.
                        let c = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                        b.get(i + 1 + c) == Some(&b'\'')
                    }
                    None => false,
                };
                if is_char {
                    let mut j = i + 1;
                    while j < b.len() && b[j] != b'\'' {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                    blank_range(&mut out, i + 1, j.min(b.len()));
                    i = j + 1;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("only ASCII was written over whole characters")
}

/// The end of the attribute starting at `at` (`#[...]`), by bracket depth.
fn attribute_end(code: &[u8], at: usize) -> usize {
    let mut depth = 0;
    for (j, &c) in code.iter().enumerate().skip(at + 1) {
        match c {
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The end of the item, field or statement starting at `at`: a `;` or `,` at depth 0, the
/// `}` that closes its body, or just before a closing bracket of what holds it.
fn item_end(code: &[u8], at: usize) -> usize {
    let mut depth = 0i32;
    for (j, &c) in code.iter().enumerate().skip(at) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth < 0 {
                    return j;
                }
                if depth == 0 && c == b'}' {
                    return j + 1;
                }
            }
            b';' | b',' if depth == 0 => return j + 1,
            _ => {}
        }
    }
    code.len()
}

/// The code of `file` (blanked, see [`blank`]) with every `#[cfg(test)]` item blanked too, and
/// the module files its `#[cfg(test)] mod name;` items declare.
fn non_test_code(file: &Path, src: &str) -> (String, Vec<PathBuf>) {
    let code = blank(src);
    let mut bytes = code.clone().into_bytes();
    let mut test_files = Vec::new();
    let dir = file.parent().expect("a file has a directory");
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let mod_dir = if matches!(stem, "lib" | "main" | "mod") {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    let mut from = 0;
    while let Some(p) = code[from..].find("#[cfg(test)]") {
        let at = from + p;
        let mut i = at + "#[cfg(test)]".len();
        let mut path_attr = None;
        // Further attributes, then the item.
        loop {
            while i < code.len() && code.as_bytes()[i].is_ascii_whitespace() {
                i += 1;
            }
            if code[i..].starts_with("#[") {
                let end = attribute_end(code.as_bytes(), i);
                if code[i..end].starts_with("#[path") {
                    // The path is a string literal: read it from the source.
                    let text = &src[i..end];
                    if let (Some(a), Some(b)) = (text.find('"'), text.rfind('"')) {
                        path_attr = Some(text[a + 1..b].to_string());
                    }
                }
                i = end;
            } else {
                break;
            }
        }
        let end = item_end(code.as_bytes(), i);
        let item: Vec<&str> = code[i..end]
            .split(|c: char| c.is_whitespace() || c == ';')
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(k) = item.iter().position(|&w| w == "mod")
            && item.len() == k + 2
        {
            let name = item[k + 1];
            match &path_attr {
                Some(p) => test_files.push(dir.join(p)),
                None => {
                    test_files.push(mod_dir.join(format!("{name}.rs")));
                    test_files.push(mod_dir.join(name).join("mod.rs"));
                }
            }
        }
        for c in &mut bytes[at..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end.max(at + 1);
    }
    (
        String::from_utf8(bytes).expect("ASCII over whole characters"),
        test_files,
    )
}

/// (file, constructor, line) for every constructor outside `machine.rs`.
fn constructions() -> (Vec<(String, &'static str, usize)>, usize) {
    let root = root();
    let mut dirs = Vec::new();
    src_dirs(&root.join("crates"), &mut dirs);
    dirs.push(root.join("python/src"));
    let mut files = Vec::new();
    for d in &dirs {
        let r = rel(d);
        if MODEL_CRATES
            .iter()
            .any(|m| r == format!("{m}/src") || r.starts_with(&format!("{m}/")))
        {
            continue;
        }
        rust_files(d, &mut files);
    }
    let mut sources = Vec::new();
    let mut test_files = BTreeSet::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let (code, tests) = non_test_code(f, &src);
        test_files.extend(tests.iter().map(|t| rel(t)));
        sources.push((rel(f), code));
    }
    let mut found = Vec::new();
    let mut in_machine = 0;
    for (file, code) in &sources {
        if test_files.contains(file) || code.contains("#![cfg(test)]") {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            for &c in CONSTRUCTORS {
                if line.contains(c) {
                    if file == MACHINE {
                        in_machine += 1;
                    } else {
                        found.push((file.clone(), c, n + 1));
                    }
                }
            }
        }
    }
    (found, in_machine)
}

#[test]
fn every_network_model_is_built_in_machine_rs() {
    let (found, in_machine) = constructions();
    // The scan sees machine.rs's own constructors (the analytic, flow and packet models and the
    // DOJO studies' flow model), so it reads the right files.
    assert!(in_machine >= 3, "machine.rs builds {in_machine} models?");
    let outside: Vec<String> = found
        .iter()
        .filter(|(f, c, _)| !EXCEPTIONS.iter().any(|(ef, ec, _)| f == ef && c == ec))
        .map(|(f, c, n)| format!("{f}:{n}: {c}"))
        .collect();
    assert!(
        outside.is_empty(),
        "network models built outside {MACHINE} (build them there: new_model, new_model_at, \
         flow_model, dojo_flow_model, Models; or name the exception with its reason in \
         crates/system/tests/architecture.rs):\n{}",
        outside.join("\n")
    );
    let stale: Vec<String> = EXCEPTIONS
        .iter()
        .filter(|(ef, ec, _)| !found.iter().any(|(f, c, _)| f == ef && c == ec))
        .map(|(f, c, why)| format!("{f}: {c} ({why})"))
        .collect();
    assert!(
        stale.is_empty(),
        "exceptions that no longer build a model; drop them:\n{}",
        stale.join("\n")
    );
}

/// The scanner itself: comments, strings and test items are not code; a test module's file is
/// found from its declaration.
#[test]
fn the_scan_skips_comments_strings_and_tests() {
    let src = r##"
// FlowModel::new in a comment
/* and /* nested */ Noc::new */
fn f() -> &'static str { let _c = '"'; "FlowModel::new(" }
fn g() -> String { r#"Noc::new"#.to_string() }
#[cfg(test)]
mod tests;
#[cfg(test)]
#[path = "other_tests.rs"]
mod other;
struct S {
    #[cfg(test)]
    lazy: Vec<[u8; 4]>,
    kept: u8,
}
#[cfg(test)]
mod inline {
    fn h() { let _ = FlowModel::new(); }
}
fn k() { AnalyticModel::new(); }
"##;
    let file = Path::new("/x/src/lib.rs");
    let (code, tests) = non_test_code(file, src);
    assert!(!code.contains("FlowModel::new"), "{code}");
    assert!(!code.contains("Noc::new"), "{code}");
    assert!(!code.contains("lazy"), "{code}");
    assert!(code.contains("kept: u8"), "{code}");
    assert!(code.contains("AnalyticModel::new"), "{code}");
    assert_eq!(code.len(), src.len());
    assert!(
        tests.contains(&PathBuf::from("/x/src/tests.rs")),
        "{tests:?}"
    );
    assert!(
        tests.contains(&PathBuf::from("/x/src/other_tests.rs")),
        "{tests:?}"
    );
}
