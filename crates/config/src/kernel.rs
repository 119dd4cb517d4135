//! DOJO node kernel files for `podsim dojo node`: up to four SMT threads, each a loop body
//! given as an instruction-class mix or as a list of instructions.
//!
//! ```toml
//! name = "dot-product"        # optional (default: the file's name)
//!
//! [[thread]]
//! name = "dot"                # optional (default: thread0, thread1, ...)
//! iterations = 4096           # times the body runs
//! body = { load = 2, matmul = 1, loop = 1, agen = 1 }
//!
//! [[thread]]
//! iterations = 1024
//! ops = ["load", "simd", "store", "counter"]   # or the body as a list, one entry per op
//! ```
//!
//! Classes: loop, counter, predicate (front-end: retire in decode); scalar, branch, agen, sync,
//! load, store, push (scalar stage; load, store and push also take an SRAM port); matmul, simd
//! (vector stage); net_commit (a packet from the network committed to SRAM: the network store
//! port, no instruction).

use serde::Deserialize;

use podsim_dojo::dojo_node::{Class, Kernel, THREADS, Thread};

use crate::error::{ConfigError, parse_toml};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKernel {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    thread: Vec<RawThread>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThread {
    #[serde(default)]
    name: Option<String>,
    iterations: u64,
    #[serde(default)]
    body: Option<std::collections::BTreeMap<String, u64>>,
    #[serde(default)]
    ops: Option<Vec<String>>,
}

/// Parse a kernel file (`file` names it in errors).
pub fn parse_kernel(file: &str, text: &str) -> Result<Kernel, ConfigError> {
    let raw: RawKernel = parse_toml(file, text)?;
    let err = |key: String, why: String| ConfigError {
        file: file.into(),
        line: None,
        key,
        why,
    };
    if raw.thread.is_empty() || raw.thread.len() > THREADS {
        return Err(err(
            "thread".into(),
            format!(
                "a DOJO node runs 1 to {THREADS} threads ([[thread]] tables); the file has {}",
                raw.thread.len()
            ),
        ));
    }
    let names: Vec<&str> = Class::ALL.iter().map(|(n, _)| *n).collect();
    let class = |key: String, s: &str| {
        Class::parse(s).ok_or_else(|| {
            err(
                key,
                format!("`{s}` is not an instruction class ({})", names.join(", ")),
            )
        })
    };
    let mut threads = Vec::new();
    for (i, t) in raw.thread.into_iter().enumerate() {
        let key = |k: &str| format!("thread[{i}].{k}");
        if t.iterations == 0 {
            return Err(err(key("iterations"), "expected at least 1".into()));
        }
        let mut body: Vec<(Class, u64)> = Vec::new();
        match (t.body, t.ops) {
            (Some(b), None) => {
                for (name, n) in b {
                    body.push((class(key(&format!("body.{name}")), &name)?, n));
                }
            }
            (None, Some(ops)) => {
                for (j, op) in ops.iter().enumerate() {
                    let c = class(key(&format!("ops[{j}]")), op)?;
                    match body.iter_mut().find(|(x, _)| *x == c) {
                        Some(e) => e.1 += 1,
                        None => body.push((c, 1)),
                    }
                }
            }
            (Some(_), Some(_)) => {
                return Err(err(
                    key("ops"),
                    "give the body as a mix (body) or as a list (ops), not both".into(),
                ));
            }
            (None, None) => {
                return Err(err(
                    key("body"),
                    "a thread needs its body: a mix (body = { load = 2, ... }) or a list (ops = [...])".into(),
                ));
            }
        }
        if body.iter().all(|(_, n)| *n == 0) {
            return Err(err(key("body"), "the body executes no instructions".into()));
        }
        threads.push(Thread {
            name: t.name.unwrap_or_else(|| format!("thread{i}")),
            iterations: t.iterations,
            body,
        });
    }
    let stem = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| file.to_string());
    Ok(Kernel {
        name: raw.name.unwrap_or(stem),
        threads,
    })
}

/// `[[domain]]` of a DOJO barrier domains file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDomain {
    name: String,
    #[serde(default)]
    rect: Option<[u32; 4]>,
    #[serde(default)]
    nodes: Option<Vec<[u32; 2]>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDomains {
    #[serde(default)]
    domain: Vec<RawDomain>,
}

/// Parse a DOJO barrier domains file for `podsim dojo barrier --domains`:
///
/// ```toml
/// [[domain]]
/// name = "blue"
/// rect = [0, 0, 5, 3]          # x0, y0, x1, y1 (inclusive) on the mesh
///
/// [[domain]]
/// name = "yellow"
/// nodes = [[4, 0], [9, 3]]     # and/or single nodes, [x, y]
/// ```
pub fn parse_domains(
    file: &str,
    text: &str,
) -> Result<Vec<podsim_dojo::barrier::Domain>, ConfigError> {
    let raw: RawDomains = parse_toml(file, text)?;
    let err = |key: String, why: String| ConfigError {
        file: file.into(),
        line: None,
        key,
        why,
    };
    if raw.domain.is_empty() {
        return Err(err(
            "domain".into(),
            "no [[domain]] tables: give at least one domain".into(),
        ));
    }
    let mut out = Vec::new();
    for (i, d) in raw.domain.into_iter().enumerate() {
        let mut members = Vec::new();
        if let Some([x0, y0, x1, y1]) = d.rect {
            if x1 < x0 || y1 < y0 {
                return Err(err(
                    format!("domain[{i}].rect"),
                    "expected [x0, y0, x1, y1] with x0 <= x1 and y0 <= y1".into(),
                ));
            }
            let area = (u64::from(x1 - x0) + 1) * (u64::from(y1 - y0) + 1);
            if area > 1 << 24 {
                return Err(err(
                    format!("domain[{i}].rect"),
                    format!(
                        "{area} nodes: a domain has at most 16,777,216 (larger than any DOJO plane podsim builds)"
                    ),
                ));
            }
            members.extend((y0..=y1).flat_map(|y| (x0..=x1).map(move |x| (x, y))));
        }
        for [x, y] in d.nodes.unwrap_or_default() {
            members.push((x, y));
        }
        if members.is_empty() {
            return Err(err(
                format!("domain[{i}]"),
                "a domain needs members: rect = [x0, y0, x1, y1] and/or nodes = [[x, y], ...]"
                    .into(),
            ));
        }
        out.push(podsim_dojo::barrier::Domain {
            name: d.name,
            members,
        });
    }
    Ok(out)
}
