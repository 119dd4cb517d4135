//! What a command line names: an input file read as text, the system a `--topology` (or
//! `topo`'s SPEC) gives, a file or a shorthand; and the command line's own text (values that
//! look like flags, the parser's errors on one line).

use std::path::Path;

use podsim_system::SystemSpec;

use crate::ConfigError;

/// The largest input file podsim reads: scenario, workload, validation, topology, router and
/// matrix files are text of a few kilobytes; anything past this is not one (`/dev/zero`).
pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// An input file podsim could not read as text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: cannot read: {why}")]
pub struct ReadError {
    /// The file as it was named.
    pub path: String,
    /// Why it could not be read.
    pub why: String,
}

/// Read an input file of at most [`MAX_INPUT_BYTES`] (a Chakra trace is binary).
pub fn read_input_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let fail = |why: String| ReadError {
        path: path.display().to_string(),
        why,
    };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(fail(format!(
            "larger than the {} an input file may have",
            podsim_units::Bytes(MAX_INPUT_BYTES)
        )));
    }
    Ok(bytes)
}

/// Read a text input file of at most [`MAX_INPUT_BYTES`].
pub fn read_input(path: &Path) -> Result<String, ReadError> {
    String::from_utf8(read_input_bytes(path)?).map_err(|_| ReadError {
        path: path.display().to_string(),
        why: "not UTF-8 text".into(),
    })
}

/// Why the system a command line names could not be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SystemArgError {
    /// Its file could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Its file, shorthand or flags are not a system.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The system a command line names, with the file its errors cite.
#[derive(Debug, Clone)]
pub struct SystemArg {
    /// The system.
    pub spec: SystemSpec,
    /// The file it came from (`<command line>` for a shorthand).
    pub file: String,
    /// A note on the shorthand's reading, for stderr (a preset's stated assumption).
    pub note: Option<String>,
}

/// A usage error of the command line's `flag`.
fn flag_err(flag: &str, why: String) -> ConfigError {
    ConfigError {
        file: "<command line>".into(),
        line: None,
        key: flag.into(),
        why,
    }
}

/// The system `spec` names on a command line: a machine file (chips, nodes, link classes and
/// tiers; `nodes` from `--nodes` replaces its node count), a system TOML file (the keys of a
/// scenario's [[system]]), each of which states its own links, or a shorthand or preset with
/// the link flags. A bad shorthand's error names `flag`.
pub fn system_arg(
    flag: &str,
    spec: &str,
    link_bandwidth: Option<&str>,
    link_latency: Option<&str>,
    interfaces: Option<&str>,
    nodes: Option<u32>,
) -> Result<SystemArg, SystemArgError> {
    let path = Path::new(spec);
    if path.is_file() {
        let given = [
            ("--link-bandwidth", link_bandwidth),
            ("--link-latency", link_latency),
            ("--interfaces", interfaces),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, v)| v.is_some()) {
            return Err(flag_err(
                flag,
                format!("{spec} is a file, which states its own links; set the value there"),
            )
            .into());
        }
        let text = read_input(path)?;
        let system = if crate::is_machine_file(&text) {
            crate::machine_system(spec, &text, nodes)?
        } else if nodes.is_some() {
            return Err(flag_err(
                "--nodes",
                format!(
                    "{spec} is a system file, not a machine file ([chip] and [[tier]]s), so it has no nodes to count; drop the flag"
                ),
            )
            .into());
        } else {
            crate::parse_system(spec, &text)?
        };
        return Ok(SystemArg {
            spec: system,
            file: spec.to_string(),
            note: None,
        });
    }
    if nodes.is_some() {
        return Err(flag_err(
            "--nodes",
            format!(
                "`{spec}` is a shorthand; --nodes sets the node count of a machine file (such as examples/machines/dgx-a100.toml)"
            ),
        )
        .into());
    }
    let system = crate::system_from_cli(spec, link_bandwidth, link_latency, interfaces).map_err(
        |mut e| {
            if e.key == "SPEC" {
                e.key = flag.into();
            }
            e
        },
    )?;
    Ok(SystemArg {
        note: system.topology.note(),
        spec: system,
        file: "<command line>".to_string(),
    })
}

/// `podsim numerics --format bf16 -inf`: clap reads `-inf` as the short flags `-i -n -f` (it
/// takes only digits after a `-` for a negative number). When a `numerics` value is `-inf`,
/// `-infinity` or `-nan`, the values are moved after a `--`, in their order, so that every
/// value is read as a value; other command lines are left as they are.
pub fn negative_values_last(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let is_special = |a: &std::ffi::OsString| {
        a.to_str().is_some_and(|s| {
            matches!(
                s.to_ascii_lowercase().as_str(),
                "-inf" | "-infinity" | "-nan"
            )
        })
    };
    if args.get(1).and_then(|a| a.to_str()) != Some("numerics")
        || !args.iter().any(is_special)
        || args.iter().any(|a| a == "--")
    {
        return args;
    }
    // The numerics flags that take a value (`--format bf16` or `--format=bf16`).
    const VALUED: [&str; 3] = ["--format", "--rounding", "--seed"];
    let (mut flags, mut values) = (args[..2].to_vec(), Vec::new());
    let mut i = 2;
    while i < args.len() {
        let a = &args[i];
        let s = a.to_str().unwrap_or("");
        if VALUED.contains(&s) {
            flags.push(a.clone());
            if let Some(v) = args.get(i + 1) {
                flags.push(v.clone());
            }
            i += 2;
            continue;
        }
        if s.starts_with("--")
            || (s.starts_with('-') && !is_special(a) && s.parse::<f64>().is_err())
        {
            flags.push(a.clone());
        } else {
            values.push(a.clone());
        }
        i += 1;
    }
    flags.push("--".into());
    flags.extend(values);
    flags
}

/// The argument parser's error in one line, as podsim's other errors are: the message (with
/// the list of missing arguments run together), its tips, and the usage.
pub fn one_line(text: &str) -> String {
    let mut message = Vec::new();
    let mut tips = Vec::new();
    let mut usage = None;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(u) = line.strip_prefix("Usage: ") {
            usage = Some(u.to_string());
        } else if line.starts_with("tip:") {
            tips.push(line.to_string());
        } else if line.starts_with("For more information") {
        } else if usage.is_none() {
            message.push(line.to_string());
        }
    }
    let mut out = message.join(" ");
    for t in tips {
        out.push_str("; ");
        out.push_str(&t);
    }
    if let Some(u) = usage {
        out.push_str(&format!(" (usage: {u}; more with --help)"));
    }
    out
}
