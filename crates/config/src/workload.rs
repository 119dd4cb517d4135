//! Workload files: what the file says (serde) -> a validated [`WorkloadSpec`] (a machine and a
//! `podsim_system::workload::Workload`).
//!
//! ```toml
//! name = "data-parallel step"          # optional
//! description = "..."                  # optional
//!
//! [machine]
//! preset = "tpuv4:slice=4x4x4"         # any topology shorthand (or a [machine.system] table
//!                                      # with the keys of a scenario's [[system]])
//! model = "flow"                       # analytic | flow | packet (default flow)
//! chip = "tpuv4"                       # tpuv4 | dojo-node | d1 (default: the preset's own
//!                                      # chip: tpuv4 for TPU v4 slices, dojo-node for DOJO)
//! cmem = true                          # TPU v4's 128 MiB CMEM on (default) or off
//!
//! [[task]]
//! name = "fwd"
//! compute = { flops = "2.75 TFLOP", efficiency = 1.0 }   # per chip; unit = "matrix" (default)
//!                                                         # or "vector"
//! # or a GEMM through the chip's matrix units (M x K by K x N, the columns split over the
//! # units, each timed by the tiling model at the chip's clock):
//! # compute = { gemm = [4096, 4096, 4096], format = "bf16" }   # a format the units take
//! group = "all"                        # all | "dim:x" (y, z, or a number: every line of that
//!                                      # dimension, for collectives) | [0, 5, 9] | "0-15"
//!
//! [[task]]
//! name = "weights"
//! memory = "2 GiB"                     # per chip, HBM/DRAM to on-chip memory
//! working_set = "64 MiB"               # optional: the data streamed; if it fits in the
//!                                      # chip's CMEM it streams at CMEM bandwidth
//!
//! [[task]]
//! name = "grads"
//! collective = "all-reduce"            # any kind `podsim collective` accepts
//! algorithm = "ring"                   # default: the kind's first
//! bytes = "64 MiB"                     # per rank (not for barrier)
//! after = ["fwd"]                      # tasks defined above this one
//! repeat = 1                           # back-to-back runs (a layer stack); default 1
//!
//! [[task]]
//! name = "activations"
//! send = "16 MiB"                      # chip group[i] sends to chip to[i]
//! group = [0, 1]
//! to = [2, 3]
//!
//! [[task]]
//! name = "shift"
//! send = "32 KiB"
//! to = "east"                          # or a direction: each chip of the group sends to its
//!                                      # neighbour (east +x, west -x, north +y, south -y) on a
//!                                      # DOJO plane or a mesh/torus; chips on the edge with no
//!                                      # such neighbour do not send
//!
//! # DOJO planes only (examples/dojo/tile-step.toml):
//! [[task]]
//! name = "stream weights"
//! dma = "128 KiB"                      # per chip, from the HBM of the DIP nearest it by the
//!                                      # DIP's DMA engine (a plane with DIPs: dojo:system=RxC)
//!
//! [[task]]
//! name = "sync"
//! barrier = "hardware"                 # an ARM/GRANT tree in the routers (at most four per
//!                                      # node over the workload), or "software" (dissemination)
//! fan_in = 4                           # hardware only; default 4
//! ```
//!
//! A task has exactly one of `compute`, `memory`, `collective`, `send`, `dma` and `barrier`;
//! a key that does not apply to its kind (`bytes` on a compute task, `to` on a collective) is
//! an error.

use serde::Deserialize;
use toml::Spanned;

use podsim_system::TopoSpec;
use podsim_system::choices::{Kind, ModelKind, parse_names};
use podsim_system::workload::{ChipSpec, Group, Task, Unit, Work, Workload, WorkloadSpec};
use podsim_units::{Bytes, Flops};

use crate::ctx::Ctx;
use crate::error::{ConfigError, from_toml};
use crate::system::RawSystem;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: String,
    machine: RawMachine,
    #[serde(default)]
    task: Vec<RawTask>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMachine {
    #[serde(default)]
    preset: Option<Spanned<String>>,
    #[serde(default)]
    system: Option<RawSystem>,
    #[serde(default)]
    model: Option<Spanned<String>>,
    #[serde(default)]
    chip: Option<Spanned<String>>,
    #[serde(default)]
    cmem: Option<Spanned<bool>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompute {
    #[serde(default)]
    flops: Option<Spanned<String>>,
    #[serde(default)]
    efficiency: Option<Spanned<f64>>,
    #[serde(default)]
    unit: Option<Spanned<String>>,
    #[serde(default)]
    gemm: Option<Spanned<Vec<i64>>>,
    #[serde(default)]
    format: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    name: Spanned<String>,
    #[serde(default)]
    compute: Option<Spanned<RawCompute>>,
    #[serde(default)]
    memory: Option<Spanned<String>>,
    #[serde(default)]
    working_set: Option<Spanned<String>>,
    #[serde(default)]
    collective: Option<Spanned<String>>,
    #[serde(default)]
    send: Option<Spanned<String>>,
    #[serde(default)]
    algorithm: Option<Spanned<String>>,
    #[serde(default)]
    bytes: Option<Spanned<String>>,
    #[serde(default)]
    to: Option<Spanned<toml::Value>>,
    #[serde(default)]
    dma: Option<Spanned<String>>,
    #[serde(default)]
    barrier: Option<Spanned<String>>,
    #[serde(default)]
    fan_in: Option<Spanned<i64>>,
    #[serde(default)]
    group: Option<Spanned<toml::Value>>,
    #[serde(default)]
    after: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    repeat: Option<Spanned<i64>>,
}

/// The chip preset a topology implies, if any.
fn default_chip(t: &TopoSpec) -> Option<&'static str> {
    match t {
        TopoSpec::TpuV4 { .. } => Some("tpuv4"),
        TopoSpec::Dojo(_) => Some("dojo-node"),
        TopoSpec::Cube(_)
        | TopoSpec::Tofu(_)
        | TopoSpec::FatTree { .. }
        | TopoSpec::Grayskull
        | TopoSpec::Wormhole { .. }
        | TopoSpec::Hybrid { .. }
        | TopoSpec::Machine(_) => None,
    }
}

fn chip_list(
    chips: &Spanned<Vec<i64>>,
    n: u64,
    ctx: &Ctx<'_>,
    key: &str,
) -> Result<Vec<u64>, ConfigError> {
    let mut out = Vec::with_capacity(chips.get_ref().len());
    for &c in chips.get_ref() {
        if c < 0 || c as u64 >= n {
            return ctx.err(
                Some(chips.span()),
                key,
                format!(
                    "chip {c} does not exist: the machine has chips 0 to {}",
                    n - 1
                ),
            );
        }
        out.push(c as u64);
    }
    if out.is_empty() {
        return ctx.err(Some(chips.span()), key, "the list names no chip");
    }
    Ok(out)
}

fn group(v: &Spanned<toml::Value>, n: u64, ctx: &Ctx<'_>, key: &str) -> Result<Group, ConfigError> {
    let span = Some(v.span());
    let expected = "expected \"all\", \"dim:x\" (y, z or a dimension number), a list of chips such as [0, 5, 9], or a range such as \"0-15\"";
    match v.get_ref() {
        toml::Value::String(s) if s == "all" => Ok(Group::All),
        toml::Value::String(s) if s.starts_with("dim:") => {
            let d = match &s[4..] {
                "x" => 0,
                "y" => 1,
                "z" => 2,
                other => match other.parse::<usize>() {
                    Ok(d) => d,
                    Err(_) => return ctx.err(span, key, format!("`{s}`: {expected}")),
                },
            };
            Ok(Group::Dim(d))
        }
        toml::Value::String(s) => {
            let Some((a, b)) = s.split_once('-') else {
                return ctx.err(span, key, format!("`{s}`: {expected}"));
            };
            let (Ok(a), Ok(b)) = (a.trim().parse::<u64>(), b.trim().parse::<u64>()) else {
                return ctx.err(span, key, format!("`{s}`: {expected}"));
            };
            if a > b || b >= n {
                return ctx.err(
                    span,
                    key,
                    format!("`{s}`: expected a range within chips 0 to {}", n - 1),
                );
            }
            Ok(Group::List((a..=b).collect()))
        }
        toml::Value::Array(items) => {
            let mut list = Vec::with_capacity(items.len());
            for it in items {
                match it.as_integer() {
                    Some(c) => list.push(c),
                    None => return ctx.err(span, key, format!("`{it}` is not a chip number")),
                }
            }
            let spanned = Spanned::new(v.span(), list);
            let chips = chip_list(&spanned, n, ctx, key)?;
            if let Some(i) = (1..chips.len()).find(|&i| chips[..i].contains(&chips[i])) {
                return ctx.err(
                    span,
                    key,
                    format!(
                        "chip {} is listed twice: a group names each chip once",
                        chips[i]
                    ),
                );
            }
            Ok(Group::List(chips))
        }
        other => ctx.err(span, key, format!("`{other}`: {expected}")),
    }
}

/// The indices of the tasks `t` comes after (each defined above it).
fn after_of(
    t: &RawTask,
    tasks: &[Task],
    ctx: &Ctx<'_>,
    key: &str,
) -> Result<Vec<usize>, ConfigError> {
    let mut after = Vec::new();
    if let Some(a) = &t.after {
        for dep in a.get_ref() {
            match tasks.iter().position(|x| &x.name == dep) {
                Some(j) => after.push(j),
                None => {
                    return ctx.err(
                        Some(a.span()),
                        key,
                        format!("no task named `{dep}` is defined above this one"),
                    );
                }
            }
        }
    }
    Ok(after)
}

/// `repeat`, 1 by default.
fn repeat_of(t: &RawTask, ctx: &Ctx<'_>, key: &str) -> Result<u32, ConfigError> {
    match &t.repeat {
        None => Ok(1),
        Some(r) => match u32::try_from(*r.get_ref()) {
            Ok(v) if v >= 1 => Ok(v),
            _ => ctx.err(
                Some(r.span()),
                key,
                format!(
                    "{}: expected a whole number from 1 to {}",
                    r.get_ref(),
                    u32::MAX
                ),
            ),
        },
    }
}

/// The senders of `group` that have a neighbour in direction `dir` (east: +x, west: -x,
/// north: +y, south: -y) and those neighbours: on a DOJO plane's mesh, or a mesh or torus
/// (dimensions x and y; a torus wraps). Chips on an edge with no such neighbour do not send.
fn neighbours(
    net: &podsim_topology::Network,
    group: &Group,
    n: u64,
    dir: &str,
) -> Result<(Vec<u64>, Vec<u64>), String> {
    let (dim, up) = match dir {
        "east" => (0, true),
        "west" => (0, false),
        "north" => (1, true),
        "south" => (1, false),
        other => {
            return Err(format!(
                "`{other}`: expected a direction (east, west, north, south) or a list of chips"
            ));
        }
    };
    let from: Vec<u64> = match group {
        Group::All => (0..n).collect(),
        Group::List(l) => l.clone(),
        Group::Lines(l, _) => l.concat(),
        Group::Dim(_) => return Err("a `dim:` group is for collectives".into()),
    };
    let (mut senders, mut to) = (Vec::new(), Vec::new());
    match net {
        podsim_topology::Network::Dojo(d) => {
            let (w, h) = (u64::from(d.width()), u64::from(d.height()));
            for c in from {
                let (x, y) = (c % w, c / w);
                let next = match (dim, up) {
                    (0, true) if x + 1 < w => Some(c + 1),
                    (0, false) if x > 0 => Some(c - 1),
                    (1, true) if y + 1 < h => Some(c + w),
                    (1, false) if y > 0 => Some(c - w),
                    _ => None,
                };
                if let Some(t) = next {
                    senders.push(c);
                    to.push(t);
                }
            }
        }
        _ => {
            let Some(cube) = net.cube().filter(|c| c.dims().len() >= 2) else {
                return Err(format!(
                    "directions need a DOJO plane or a mesh or torus of two or more dimensions; {} is neither; list the receivers",
                    net.shorthand()
                ));
            };
            let port = podsim_topology::Port {
                dim,
                dir: if up {
                    podsim_topology::Direction::Plus
                } else {
                    podsim_topology::Direction::Minus
                },
            };
            for c in from {
                if let Some(t) = cube.neighbor(podsim_topology::NodeId(c), port) {
                    senders.push(c);
                    to.push(t.0);
                }
            }
        }
    }
    if senders.is_empty() {
        return Err(format!("no chip of the group has a neighbour to the {dir}"));
    }
    Ok((senders, to))
}

/// Parse and validate a workload file.
pub fn parse_workload(file: &str, text: &str) -> Result<WorkloadSpec, ConfigError> {
    let raw: RawWorkload = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
    let ctx = Ctx {
        file,
        text,
        machines: None,
    };
    let m = &raw.machine;
    let system = match (&m.preset, &m.system) {
        (Some(p), None) => {
            crate::system_from_cli(p.get_ref(), None, None, None).map_err(|e| ConfigError {
                file: file.into(),
                line: Some(crate::error::line_of(text, p.span().start)),
                key: "machine.preset".into(),
                why: e.why,
            })?
        }
        (None, Some(s)) => s.validate(&ctx, "machine.system")?,
        (Some(p), Some(_)) => {
            return ctx.err(
                Some(p.span()),
                "machine.preset",
                "give either `preset` or a [machine.system] table, not both",
            );
        }
        (None, None) => {
            return ctx.err(
                None,
                "machine",
                "name the machine: preset = \"tpuv4:slice=4x4x4\" (any topology shorthand) or a [machine.system] table",
            );
        }
    };
    let net = system.build().map_err(|e| ConfigError {
        file: file.into(),
        line: None,
        key: "machine".into(),
        why: e.why,
    })?;
    let n = net.endpoints();
    let model = match &m.model {
        None => ModelKind::Flow,
        Some(s) => match parse_names("barrier", None, s.get_ref()) {
            Ok((_, _, model)) => model,
            Err(e) => return ctx.err(Some(s.span()), "machine.model", e),
        },
    };
    let chip = match (&m.chip, default_chip(&system.topology)) {
        (Some(c), _) => ChipSpec::preset(c.get_ref()).ok_or_else(|| ConfigError {
            file: file.into(),
            line: Some(crate::error::line_of(text, c.span().start)),
            key: "machine.chip".into(),
            why: format!(
                "`{}` is not a chip preset (choose from: {})",
                c.get_ref(),
                ChipSpec::names().join(", ")
            ),
        })?,
        (None, Some(d)) => ChipSpec::preset(d).ok_or_else(|| ConfigError {
            file: file.into(),
            line: None,
            key: "machine.chip".into(),
            why: format!("the preset chip `{d}` is missing"),
        })?,
        (None, None) => {
            return ctx.err(
                m.preset.as_ref().map(|p| p.span()),
                "machine.chip",
                format!(
                    "this machine has no chip of its own; name one: chip = \"tpuv4\" (choose from: {})",
                    ChipSpec::names().join(", ")
                ),
            );
        }
    };
    let mut chip = chip;
    if let Some(c) = &m.cmem {
        match (c.get_ref(), chip.cmem.is_some()) {
            (true, true) => {}
            (false, true) => chip.cmem = None,
            (_, false) => {
                return ctx.err(
                    Some(c.span()),
                    "machine.cmem",
                    format!(
                        "the {} chip has no CMEM (only tpuv4 does); drop the key",
                        chip.name
                    ),
                );
            }
        }
    }
    if raw.task.is_empty() {
        return ctx.err(None, "task", "a workload needs at least one [[task]]");
    }
    let mut tasks: Vec<Task> = Vec::new();
    for (i, t) in raw.task.iter().enumerate() {
        let key = |k: &str| format!("task[{i}].{k}");
        let name = t.name.get_ref().clone();
        if tasks.iter().any(|x| x.name == name) {
            return ctx.err(
                Some(t.name.span()),
                &key("name"),
                format!("two tasks are named `{name}`"),
            );
        }
        let kinds = [
            t.compute.as_ref().map(|c| ("compute", c.span())),
            t.memory.as_ref().map(|c| ("memory", c.span())),
            t.collective.as_ref().map(|c| ("collective", c.span())),
            t.send.as_ref().map(|c| ("send", c.span())),
            t.dma.as_ref().map(|c| ("dma", c.span())),
            t.barrier.as_ref().map(|c| ("barrier", c.span())),
        ];
        let given: Vec<(&str, std::ops::Range<usize>)> = kinds.into_iter().flatten().collect();
        if given.len() != 1 {
            return ctx.err(
                Some(given.get(1).map_or(t.name.span(), |g| g.1.clone())),
                &key(given.get(1).map_or("compute", |g| g.0)),
                format!(
                    "a task does exactly one of compute, memory, collective, send, dma and barrier; `{name}` has {}",
                    if given.is_empty() {
                        "none".to_string()
                    } else {
                        given.iter().map(|g| g.0).collect::<Vec<_>>().join(" and ")
                    }
                ),
            );
        }
        let kind = given[0].0;
        // Keys that belong to other kinds of task.
        let misplaced = [
            (
                "algorithm",
                t.algorithm.as_ref().map(|s| s.span()),
                kind == "collective",
            ),
            (
                "bytes",
                t.bytes.as_ref().map(|s| s.span()),
                kind == "collective",
            ),
            ("to", t.to.as_ref().map(|s| s.span()), kind == "send"),
            (
                "working_set",
                t.working_set.as_ref().map(|s| s.span()),
                kind == "memory",
            ),
            (
                "fan_in",
                t.fan_in.as_ref().map(|s| s.span()),
                kind == "barrier",
            ),
        ];
        for (k, span, ok) in misplaced {
            if let (Some(span), false) = (span, ok) {
                return ctx.err(
                    Some(span),
                    &key(k),
                    format!("`{k}` has no effect on a {kind} task; drop it"),
                );
            }
        }
        let group = match &t.group {
            None => Group::All,
            Some(g) => group(g, n, &ctx, &key("group"))?,
        };
        if matches!(group, Group::Dim(_)) && kind != "collective" {
            return ctx.err(
                t.group.as_ref().map(|g| g.span()),
                &key("group"),
                "a `dim:` group names lines for collectives; a compute, memory or send task takes \"all\", a list or a range",
            );
        }
        let size = |v: &Spanned<String>, k: &str| -> Result<Bytes, ConfigError> {
            v.get_ref().parse::<Bytes>().or_else(|e| {
                ctx.err(
                    Some(v.span()),
                    &key(k),
                    format!("{e}; expected a size such as \"64 MiB\""),
                )
            })
        };
        let work = match kind {
            "compute" => {
                let c = t
                    .compute
                    .as_ref()
                    .map(|c| c.get_ref())
                    .ok_or_else(|| ConfigError {
                        file: file.into(),
                        line: None,
                        key: key("compute"),
                        why: "missing".into(),
                    })?;
                let span = t.compute.as_ref().map(|c| c.span());
                if let Some(g) = &c.gemm {
                    for (k, given) in [
                        ("flops", c.flops.is_some()),
                        ("efficiency", c.efficiency.is_some()),
                        ("unit", c.unit.is_some()),
                    ] {
                        if given {
                            return ctx.err(
                                Some(g.span()),
                                &key(&format!("compute.{k}")),
                                "a GEMM is timed on the chip's matrix units by the tiling model; give either `gemm` and `format` or `flops` and `efficiency`",
                            );
                        }
                    }
                    let dims: Vec<u64> = g
                        .get_ref()
                        .iter()
                        .filter_map(|&v| u64::try_from(v).ok().filter(|&v| v > 0))
                        .collect();
                    let [m, n, k] = dims[..] else {
                        return ctx.err(
                            Some(g.span()),
                            &key("compute.gemm"),
                            "expected [M, N, K], three positive whole numbers",
                        );
                    };
                    let Some(format) = &c.format else {
                        return ctx.err(
                            Some(g.span()),
                            &key("compute.format"),
                            format!(
                                "missing: the input format, one the {} matrix units take ({})",
                                chip.name,
                                chip.arrays.formats.join(", ")
                            ),
                        );
                    };
                    if let Err(why) = chip.arrays.gemm_time(m, n, k, format.get_ref()) {
                        return ctx.err(Some(format.span()), &key("compute.format"), why);
                    }
                    Work::Gemm {
                        m,
                        n,
                        k,
                        format: format.get_ref().clone(),
                    }
                } else {
                    let Some(flops_v) = &c.flops else {
                        return ctx.err(
                            span,
                            &key("compute.flops"),
                            "missing: give `flops` and `efficiency`, or `gemm` and `format`",
                        );
                    };
                    if let Some(f) = &c.format {
                        return ctx.err(
                            Some(f.span()),
                            &key("compute.format"),
                            "a format applies to a `gemm`; drop it",
                        );
                    }
                    let flops = flops_v.get_ref().parse::<Flops>().or_else(|e| {
                        ctx.err(
                            Some(flops_v.span()),
                            &key("compute.flops"),
                            format!("{e}; expected an operation count such as \"2.75 TFLOP\""),
                        )
                    })?;
                    let Some(eff) = &c.efficiency else {
                        return ctx.err(
                            Some(flops_v.span()),
                            &key("compute.efficiency"),
                            "missing: the fraction of the unit's peak, e.g. efficiency = 0.6",
                        );
                    };
                    let e = *eff.get_ref();
                    if !(e > 0.0 && e <= 1.0) {
                        return ctx.err(
                            Some(eff.span()),
                            &key("compute.efficiency"),
                            format!("{e}: expected a fraction of the peak above 0 and at most 1"),
                        );
                    }
                    let unit = match c.unit.as_ref().map(|u| u.get_ref().as_str()) {
                        None | Some("matrix") => Unit::Matrix,
                        Some("vector") => {
                            if chip.vector.is_none() {
                                return ctx.err(
                                    c.unit.as_ref().map(|u| u.span()),
                                    &key("compute.unit"),
                                    format!(
                                        "the {} chip preset gives no vector-unit rate",
                                        chip.name
                                    ),
                                );
                            }
                            Unit::Vector
                        }
                        Some(other) => {
                            return ctx.err(
                                c.unit.as_ref().map(|u| u.span()),
                                &key("compute.unit"),
                                format!("`{other}`: expected matrix or vector"),
                            );
                        }
                    };
                    Work::Compute {
                        flops,
                        efficiency: e,
                        unit,
                    }
                }
            }
            "memory" => Work::Memory {
                bytes: size(t.memory.as_ref().expect("kind is memory"), "memory")?,
                working_set: match &t.working_set {
                    Some(w) => Some(size(w, "working_set")?),
                    None => None,
                },
            },
            "send" => {
                let bytes = size(t.send.as_ref().expect("kind is send"), "send")?;
                let Some(to) = &t.to else {
                    return ctx.err(
                        Some(t.name.span()),
                        &key("to"),
                        "a send needs `to`: the receiving chips, one per chip of the group",
                    );
                };
                if let toml::Value::String(dir) = to.get_ref() {
                    let (from, to) = match neighbours(&net, &group, n, dir) {
                        Ok(p) => p,
                        Err(why) => return ctx.err(Some(to.span()), &key("to"), why),
                    };
                    tasks.push(Task {
                        name,
                        work: Work::Send { to, bytes },
                        group: Group::List(from),
                        after: after_of(t, &tasks, &ctx, &key("after"))?,
                        repeat: repeat_of(t, &ctx, &key("repeat"))?,
                    });
                    continue;
                }
                let to = match to.get_ref() {
                    toml::Value::Array(items) => {
                        let mut list = Vec::with_capacity(items.len());
                        for it in items {
                            match it.as_integer() {
                                Some(c) => list.push(c),
                                None => {
                                    return ctx.err(
                                        Some(to.span()),
                                        &key("to"),
                                        format!("`{it}` is not a chip number"),
                                    );
                                }
                            }
                        }
                        chip_list(&Spanned::new(to.span(), list), n, &ctx, &key("to"))?
                    }
                    other => {
                        return ctx.err(
                            Some(to.span()),
                            &key("to"),
                            format!(
                                "`{other}`: expected a list of chips, one per chip of the group, or a direction (east, west, north, south)"
                            ),
                        );
                    }
                };
                let from = match &group {
                    Group::All => n,
                    Group::List(l) => l.len() as u64,
                    Group::Lines(l, _) => l.iter().map(|x| x.len() as u64).sum(),
                    Group::Dim(_) => 0,
                };
                if from != to.len() as u64 {
                    return ctx.err(
                        t.to.as_ref().map(|s| s.span()),
                        &key("to"),
                        format!(
                            "{from} senders in the group but {} receivers in `to`",
                            to.len()
                        ),
                    );
                }
                let sender = |i: usize| match &group {
                    Group::List(l) => l.get(i).copied(),
                    Group::All => Some(i as u64),
                    Group::Lines(..) | Group::Dim(_) => None,
                };
                if let Some((i, c)) = to.iter().enumerate().find(|&(i, &c)| sender(i) == Some(c)) {
                    return ctx.err(
                        t.to.as_ref().map(|s| s.span()),
                        &key("to"),
                        format!(
                            "chip {c} sends to itself (receiver {} of `to`): a send crosses the network; drop the pair",
                            i + 1
                        ),
                    );
                }
                Work::Send { to, bytes }
            }
            "dma" => podsim_dojo::workload::dma(size(t.dma.as_ref().expect("kind is dma"), "dma")?),
            "barrier" => {
                let b = t.barrier.as_ref().expect("kind is barrier");
                let hardware = match b.get_ref().as_str() {
                    "hardware" => true,
                    "software" => false,
                    other => {
                        return ctx.err(
                            Some(b.span()),
                            &key("barrier"),
                            format!(
                                "`{other}`: expected hardware (DOJO's ARM/GRANT trees) or software (a dissemination barrier)"
                            ),
                        );
                    }
                };
                let fan_in = match &t.fan_in {
                    None => 4,
                    Some(f) if !hardware => {
                        return ctx.err(
                            Some(f.span()),
                            &key("fan_in"),
                            "a software barrier has no tree; drop `fan_in`",
                        );
                    }
                    Some(f) => match u32::try_from(*f.get_ref()) {
                        Ok(k) if k >= 2 => k,
                        _ => {
                            return ctx.err(
                                Some(f.span()),
                                &key("fan_in"),
                                format!("{}: expected a whole number of at least 2", f.get_ref()),
                            );
                        }
                    },
                };
                podsim_dojo::workload::barrier(hardware, fan_in)
            }
            _ => {
                let c = t.collective.as_ref().expect("kind is collective");
                let (kind, algorithm, _) = parse_names(
                    c.get_ref(),
                    t.algorithm.as_ref().map(|a| a.get_ref().as_str()),
                    "flow",
                )
                .or_else(|e| {
                    let (span, k) = match &t.algorithm {
                        Some(a) if Kind::from_name(c.get_ref()).is_some() => {
                            (a.span(), "algorithm")
                        }
                        _ => (c.span(), "collective"),
                    };
                    ctx.err(Some(span), &key(k), e)
                })?;
                let bytes = match (&t.bytes, kind) {
                    (Some(b), Kind::Barrier) => {
                        return ctx.err(
                            Some(b.span()),
                            &key("bytes"),
                            "a barrier moves no payload; drop `bytes`",
                        );
                    }
                    (None, Kind::Barrier) => Bytes(0),
                    (Some(b), _) => size(b, "bytes")?,
                    (None, _) => {
                        return ctx.err(
                            Some(c.span()),
                            &key("bytes"),
                            "a collective needs `bytes`: each rank's buffer, e.g. \"64 MiB\"",
                        );
                    }
                };
                Work::Collective {
                    kind,
                    algorithm,
                    bytes,
                }
            }
        };
        let after = after_of(t, &tasks, &ctx, &key("after"))?;
        let repeat = repeat_of(t, &ctx, &key("repeat"))?;
        tasks.push(Task {
            name,
            work,
            group,
            after,
            repeat,
        });
    }
    Ok(WorkloadSpec {
        file: file.into(),
        name: raw.name.unwrap_or_else(|| file.to_string()),
        description: raw.description,
        system,
        model,
        chip,
        workload: Workload { tasks },
    })
}
