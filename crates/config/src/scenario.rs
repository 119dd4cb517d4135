//! Scenario files: what the file says (serde) -> a validated [`Scenario`] -> built topologies.
//!
//! ```toml
//! name = "TPU v4: one 4x4x4 block vs a 4x4x8 slice"
//! description = "..."
//!
//! [[system]]
//! name = "4x4x4 block"
//! topology = "mesh:4x4x4"          # mesh:AxB.., torus:AxB.., ring:N, kncube:AxB..:wrap=tmt
//! link_bandwidth = "50 GB/s"       # per direction
//! link_latency = "0 ns"
//! link_kind = "electrical"         # on-chip | electrical | optical (default electrical)
//! interfaces = 6                   # network interfaces per node (default: one per port)
//! twist = [[0, 0, 4], [0, 0, 4], [0, 0, 0]]  # optional: twist[d][j], see KAryNCube::with_twist
//! [system.blocks]                  # optional: links leaving a block differ
//! shape = [4, 4, 4]
//! kind = "optical"
//! bandwidth = "50 GB/s"            # default: link_bandwidth
//! latency = "0 ns"                 # default: link_latency
//!
//! [[run]]
//! what = "metrics"                 # topology metrics, side by side
//! systems = ["4x4x4 block"]        # default: every system
//!
//! [[run]]
//! what = "collective"              # a collective on each system
//! kind = "all-to-all"              # as `podsim collective`
//! bytes = "16 MiB"                 # per rank
//! algorithm = "direct"             # default: the kind's first
//! model = "flow"                   # analytic | flow (default flow)
//! chunk = "4 KiB"                  # pipeline piece or DMA size (default none)
//! baseline = "4x4x4 block"         # optional: report speed relative to this system
//!
//! [[run]]
//! what = "workload"                # a workload file on its own machine (no [[system]] needed
//! file = "workload-pipeline.toml"  # when every run is a workload), relative to this file
//! ```

use serde::Deserialize;
use toml::Spanned;

use podsim_system::choices::{Setup, parse_names};
use podsim_system::{RUN_KINDS, RunSpec, Scenario, SystemSpec, TopoSpec};
use podsim_topology::{Blocks, LinkKind, LinkSpec};
use podsim_units::{Bandwidth, Bytes, SimDuration};

use crate::error::{ConfigError, from_toml, line_of, nearest};
use crate::shorthand::parse_topology;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    seed: Option<Spanned<i64>>,
    #[serde(default)]
    system: Vec<RawSystem>,
    #[serde(default)]
    run: Vec<RawRun>,
}

/// A system as written in a file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSystem {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    topology: Option<Spanned<String>>,
    #[serde(default)]
    machine: Option<Spanned<String>>,
    #[serde(default)]
    nodes: Option<Spanned<i64>>,
    #[serde(default)]
    link_bandwidth: Option<Spanned<String>>,
    #[serde(default)]
    link_latency: Option<Spanned<String>>,
    #[serde(default)]
    link_kind: Option<Spanned<String>>,
    #[serde(default)]
    interfaces: Option<Spanned<i64>>,
    #[serde(default)]
    twist: Option<Spanned<Vec<Vec<i64>>>>,
    #[serde(default)]
    blocks: Option<RawBlocks>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBlocks {
    shape: Spanned<Vec<i64>>,
    #[serde(default)]
    kind: Option<Spanned<String>>,
    #[serde(default)]
    bandwidth: Option<Spanned<String>>,
    #[serde(default)]
    latency: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    what: Spanned<String>,
    #[serde(default)]
    file: Option<Spanned<String>>,
    #[serde(default)]
    systems: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    kind: Option<Spanned<String>>,
    #[serde(default)]
    bytes: Option<Spanned<String>>,
    #[serde(default)]
    algorithm: Option<Spanned<String>>,
    #[serde(default)]
    model: Option<Spanned<String>>,
    #[serde(default)]
    chunk: Option<Spanned<String>>,
    #[serde(default)]
    baseline: Option<Spanned<String>>,
    #[serde(default)]
    args: Option<Spanned<Vec<String>>>,
}

/// Helps validation name the file and line of a value.
pub(crate) struct Ctx<'a> {
    pub file: &'a str,
    pub text: &'a str,
    /// Where machine files named by `machine = PATH` are found (`None`: nowhere).
    pub machines: Option<crate::validation::MachineFiles<'a>>,
}

impl Ctx<'_> {
    pub fn err<T>(
        &self,
        span: Option<std::ops::Range<usize>>,
        key: &str,
        why: impl std::fmt::Display,
    ) -> Result<T, ConfigError> {
        Err(ConfigError {
            file: self.file.into(),
            line: span.map(|s| line_of(self.text, s.start)),
            key: key.into(),
            why: why.to_string(),
        })
    }
}

fn bandwidth(ctx: &Ctx<'_>, v: &Spanned<String>, key: &str) -> Result<Bandwidth, ConfigError> {
    v.get_ref().parse::<Bandwidth>().or_else(|e| {
        ctx.err(
            Some(v.span()),
            key,
            format!("{e}; expected a positive bandwidth such as \"50 GB/s\""),
        )
    })
}

fn duration(ctx: &Ctx<'_>, v: &Spanned<String>, key: &str) -> Result<SimDuration, ConfigError> {
    v.get_ref().parse::<SimDuration>().or_else(|e| {
        ctx.err(
            Some(v.span()),
            key,
            format!("{e}; expected a time such as \"100 ns\""),
        )
    })
}

pub(crate) fn kind(ctx: &Ctx<'_>, v: &Spanned<String>, key: &str) -> Result<LinkKind, ConfigError> {
    let s = v.get_ref().as_str();
    LinkKind::ALL
        .iter()
        .copied()
        .find(|k| k.name() == s)
        .map_or_else(
            || {
                let names: Vec<&str> = LinkKind::ALL.iter().map(|k| k.name()).collect();
                ctx.err(
                    Some(v.span()),
                    key,
                    format!(
                        "`{s}` is not a link kind; the nearest is `{}` (kinds: {})",
                        nearest(s, &names).unwrap_or("electrical"),
                        names.join(", ")
                    ),
                )
            },
            Ok,
        )
}

fn positive_u32(ctx: &Ctx<'_>, v: &Spanned<i64>, key: &str) -> Result<u32, ConfigError> {
    match u32::try_from(*v.get_ref()) {
        Ok(n) if n > 0 => Ok(n),
        _ => ctx.err(
            Some(v.span()),
            key,
            format!("{} is not a positive whole number", v.get_ref()),
        ),
    }
}

impl RawSystem {
    /// A `machine = PATH` system: the machine file found by `ctx.machines`, with `nodes` and
    /// `name` from the table; every key that sets links is refused (the file sets them).
    fn machine_file(
        &self,
        ctx: &Ctx<'_>,
        prefix: &str,
        path: &Spanned<String>,
    ) -> Result<SystemSpec, ConfigError> {
        let key = |k: &str| format!("{prefix}.{k}");
        let links = [
            (
                "link_bandwidth",
                self.link_bandwidth.as_ref().map(|v| v.span()),
            ),
            ("link_latency", self.link_latency.as_ref().map(|v| v.span())),
            ("link_kind", self.link_kind.as_ref().map(|v| v.span())),
            ("interfaces", self.interfaces.as_ref().map(|v| v.span())),
            ("twist", self.twist.as_ref().map(|v| v.span())),
        ];
        if let Some((k, span)) = links.into_iter().find(|l| l.1.is_some()) {
            return ctx.err(
                span,
                &key(k),
                "a machine file sets its own links; drop the key",
            );
        }
        if self.blocks.is_some() {
            return ctx.err(
                Some(path.span()),
                &key("blocks"),
                "a machine file sets its own links; drop [blocks]",
            );
        }
        let nodes = match &self.nodes {
            None => None,
            Some(n) => Some(positive_u32(ctx, n, &key("nodes"))?),
        };
        let text = ctx.machines.and_then(|f| f(path.get_ref())).map_or_else(
            || {
                ctx.err(
                    Some(path.span()),
                    &key("machine"),
                    format!(
                        "cannot read the machine file `{}` (a path from this file's directory, or one of examples/machines/)",
                        path.get_ref()
                    ),
                )
            },
            Ok,
        )?;
        let mut spec = crate::machine::machine_system(path.get_ref(), &text, nodes)?;
        if let Some(n) = &self.name {
            spec.name = n.clone();
        }
        Ok(spec)
    }

    pub(crate) fn validate(&self, ctx: &Ctx<'_>, prefix: &str) -> Result<SystemSpec, ConfigError> {
        let key = |k: &str| format!("{prefix}.{k}");
        let topology_text = match (&self.topology, &self.machine) {
            (Some(t), None) => t,
            (None, Some(m)) => return self.machine_file(ctx, prefix, m),
            (Some(t), Some(_)) => {
                return ctx.err(
                    Some(t.span()),
                    &key("topology"),
                    "a system is a topology or a machine file, not both; drop one",
                );
            }
            (None, None) => {
                return ctx.err(
                    None,
                    &key("topology"),
                    "missing: a system names its topology (a shorthand) or a machine file (machine = PATH)",
                );
            }
        };
        if let Some(n) = &self.nodes {
            return ctx.err(
                Some(n.span()),
                &key("nodes"),
                "sets a machine file's node count, and this system is a shorthand; drop the key",
            );
        }
        let mut topology = parse_topology(topology_text.get_ref())
            .or_else(|e| ctx.err(Some(topology_text.span()), &key("topology"), e))?;
        let preset = match &topology {
            TopoSpec::Tofu(spec) => Some(format!(
                "{} sets this itself (links from lanes x rate x coding, one interface per TNI); remove the key",
                spec.generation
            )),
            TopoSpec::TpuV4 { .. } => Some(
                "a TPU v4 slice sets this itself (6 ICI links per chip at 50 GB/s, optical between blocks); remove the key"
                    .to_string(),
            ),
            TopoSpec::Dojo(_) => Some(
                "a DOJO system sets this itself (its links per level come from the seed); remove the key"
                    .to_string(),
            ),
            TopoSpec::Hybrid { .. } => Some(
                "a hybrid sets this itself (400 Gb/s ICI, 200 Gb/s InfiniBand); remove the key"
                    .to_string(),
            ),
            TopoSpec::Grayskull | TopoSpec::Wormhole { .. } => Some(
                "a Tenstorrent grid sets this itself (32 B/cycle NoC links at the chip clock); remove the key"
                    .to_string(),
            ),
            TopoSpec::Machine(_) => Some(
                "a machine file sets its own link classes; remove the key".to_string(),
            ),
            TopoSpec::Cube(_) | TopoSpec::FatTree { .. } => None,
        };
        if let Some(why) = preset {
            // Presets set their own links, interfaces and geometry.
            let fixed: [(&str, Option<std::ops::Range<usize>>); 5] = [
                (
                    "link_bandwidth",
                    self.link_bandwidth.as_ref().map(|s| s.span()),
                ),
                ("link_kind", self.link_kind.as_ref().map(|s| s.span())),
                ("interfaces", self.interfaces.as_ref().map(|s| s.span())),
                ("twist", self.twist.as_ref().map(|s| s.span())),
                ("blocks", self.blocks.as_ref().map(|b| b.shape.span())),
            ];
            for (k, span) in fixed {
                if span.is_some() {
                    return ctx.err(span, &key(k), why);
                }
            }
            // A Tofu network takes its link latency from here; the other presets do not, and
            // the key used to be accepted and ignored.
            if let (Some(l), false) = (&self.link_latency, matches!(topology, TopoSpec::Tofu(_))) {
                return ctx.err(
                    Some(l.span()),
                    &key("link_latency"),
                    format!("{why} (its link latencies are not read from this key)"),
                );
            }
        }
        if let (Some(tw), TopoSpec::Cube(shape)) = (&self.twist, &mut topology) {
            let mut rows = Vec::new();
            for row in tw.get_ref() {
                let mut r = Vec::new();
                for &v in row {
                    match u32::try_from(v) {
                        Ok(x) => r.push(x),
                        Err(_) => {
                            return ctx.err(
                                Some(tw.span()),
                                &key("twist"),
                                format!("shift {v} is not a non-negative whole number"),
                            );
                        }
                    }
                }
                rows.push(r);
            }
            shape.twist = Some(rows);
        }
        let link = LinkSpec {
            kind: match &self.link_kind {
                Some(k) => kind(ctx, k, &key("link_kind"))?,
                None => LinkKind::Electrical,
            },
            bandwidth: match (&self.link_bandwidth, topology.preset_bandwidth()) {
                (Some(b), _) => bandwidth(ctx, b, &key("link_bandwidth"))?,
                (None, Ok(Some(b))) => b,
                (None, Err(e)) => {
                    return ctx.err(Some(topology_text.span()), &key("topology"), e.why);
                }
                (None, Ok(None)) => {
                    return ctx.err(Some(topology_text.span()), &key("link_bandwidth"), "missing: a mesh, torus or ring needs its link bandwidth, e.g. link_bandwidth = \"50 GB/s\"");
                }
            },
            latency: match &self.link_latency {
                Some(l) => duration(ctx, l, &key("link_latency"))?,
                None => topology.preset_latency(),
            },
        };
        let blocks = match &self.blocks {
            None => None,
            Some(b) => {
                let shape_key = key("blocks.shape");
                let mut sizes = Vec::new();
                for &s in b.shape.get_ref() {
                    match u32::try_from(s) {
                        Ok(v) if v > 0 => sizes.push(v),
                        _ => {
                            return ctx.err(
                                Some(b.shape.span()),
                                &shape_key,
                                format!("block size {s} is not a positive whole number"),
                            );
                        }
                    }
                }
                Some(Blocks {
                    shape: sizes,
                    between: LinkSpec {
                        kind: match &b.kind {
                            Some(k) => kind(ctx, k, &key("blocks.kind"))?,
                            None => link.kind,
                        },
                        bandwidth: match &b.bandwidth {
                            Some(v) => bandwidth(ctx, v, &key("blocks.bandwidth"))?,
                            None => link.bandwidth,
                        },
                        latency: match &b.latency {
                            Some(v) => duration(ctx, v, &key("blocks.latency"))?,
                            None => link.latency,
                        },
                    },
                })
            }
        };
        let interfaces = match &self.interfaces {
            Some(i) => Some(positive_u32(ctx, i, &key("interfaces"))?),
            None => None,
        };
        let spec = SystemSpec {
            name: self
                .name
                .clone()
                .unwrap_or_else(|| topology_text.get_ref().clone()),
            topology,
            link,
            blocks,
            interfaces,
        };
        // Build once so that every shape error is reported here, with its line.
        if let Err(e) = spec.build() {
            let span = match e.key {
                "blocks.shape" => self.blocks.as_ref().map(|b| b.shape.span()),
                "interfaces" => self.interfaces.as_ref().map(|i| i.span()),
                "twist" => self
                    .twist
                    .as_ref()
                    .map(|t| t.span())
                    .or(Some(topology_text.span())),
                _ => Some(topology_text.span()),
            };
            let k = if matches!(e.key, "blocks.shape" | "interfaces" | "twist") {
                key(e.key)
            } else {
                key("topology")
            };
            return ctx.err(span, &k, e.why);
        }
        Ok(spec)
    }
}

/// The largest file a scenario names that podsim reads (as the command line's inputs).
pub const MAX_INCLUDED_BYTES: u64 = 16 << 20;

/// The text of `path`, if it is a regular file of at most [`MAX_INCLUDED_BYTES`].
fn read_capped(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    f.take(MAX_INCLUDED_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_INCLUDED_BYTES {
        return Err(format!(
            "larger than {MAX_INCLUDED_BYTES} bytes, the most podsim reads"
        ));
    }
    Ok(text)
}

/// Parse and validate the scenario in `text`, read from `file`. A workload run's file is
/// read relative to `file`'s directory.
pub fn parse_scenario(file: &str, text: &str) -> Result<Scenario, ConfigError> {
    scenario_in(file, text, None)
}

fn scenario_in(
    file: &str,
    text: &str,
    machines: Option<crate::validation::MachineFiles<'_>>,
) -> Result<Scenario, ConfigError> {
    let raw: RawScenario = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
    let ctx = Ctx {
        file,
        text,
        machines,
    };
    // Workload and command runs bring their own machines.
    let only_workloads = !raw.run.is_empty()
        && raw
            .run
            .iter()
            .all(|r| matches!(r.what.get_ref().as_str(), "workload" | "command"));
    if raw.system.is_empty() && !only_workloads {
        return ctx.err(None, "system", "a scenario needs at least one [[system]]");
    }
    let mut systems = Vec::new();
    for (i, s) in raw.system.iter().enumerate() {
        let spec = s.validate(&ctx, &format!("system[{i}]"))?;
        if systems.iter().any(|x: &SystemSpec| x.name == spec.name) {
            return ctx.err(
                s.topology.as_ref().or(s.machine.as_ref()).map(|t| t.span()),
                &format!("system[{i}].name"),
                format!("two systems are named `{}`", spec.name),
            );
        }
        systems.push(spec);
    }
    if raw.run.is_empty() {
        return ctx.err(
            None,
            "run",
            "a scenario needs at least one [[run]], e.g. `[[run]]` with `what = \"metrics\"`",
        );
    }
    let mut runs = Vec::new();
    for (i, r) in raw.run.iter().enumerate() {
        let what = r.what.get_ref().as_str();
        if !RUN_KINDS.contains(&what) {
            return ctx.err(
                Some(r.what.span()),
                &format!("run[{i}].what"),
                format!(
                    "`{what}` is not an analysis; the nearest is `{}` (analyses: {})",
                    nearest(what, &RUN_KINDS).unwrap_or("metrics"),
                    RUN_KINDS.join(", ")
                ),
            );
        }
        let picked = match &r.systems {
            None => (0..systems.len()).collect(),
            Some(names) => {
                let mut out = Vec::new();
                for n in names {
                    let all: Vec<&str> = systems.iter().map(|s| s.name.as_str()).collect();
                    match all.iter().position(|s| s == n.get_ref()) {
                        Some(p) => out.push(p),
                        None => {
                            return ctx.err(
                                Some(n.span()),
                                &format!("run[{i}].systems"),
                                format!(
                                    "no system is named `{}`; the nearest is `{}`",
                                    n.get_ref(),
                                    nearest(n.get_ref(), &all).unwrap_or("")
                                ),
                            );
                        }
                    }
                }
                out
            }
        };
        let key = |k: &str| format!("run[{i}].{k}");
        // The collective keys, which metrics and workload runs do not read.
        let collective_keys = [
            ("kind", r.kind.as_ref().map(|v| v.span())),
            ("bytes", r.bytes.as_ref().map(|v| v.span())),
            ("algorithm", r.algorithm.as_ref().map(|v| v.span())),
            ("model", r.model.as_ref().map(|v| v.span())),
            ("chunk", r.chunk.as_ref().map(|v| v.span())),
            ("baseline", r.baseline.as_ref().map(|v| v.span())),
        ];
        let refuse = |keys: &[(&str, Option<std::ops::Range<usize>>)], why: &str| match keys
            .iter()
            .find(|(_, span)| span.is_some())
        {
            Some((k, span)) => ctx.err(span.clone(), &key(k), why),
            None => Ok(()),
        };
        let systems_span = r.systems.as_ref().and_then(|v| v.first()).map(|v| v.span());
        if what == "command" {
            refuse(
                &[
                    &[
                        ("systems", systems_span.clone()),
                        ("file", r.file.as_ref().map(|v| v.span())),
                    ][..],
                    &collective_keys[..],
                ]
                .concat(),
                "a command run is a podsim command line in `args`; this key would have no effect",
            )?;
            let Some(args) = &r.args else {
                return ctx.err(
                    Some(r.what.span()),
                    &key("args"),
                    "missing: the command line after `podsim`, e.g. args = [\"noc\", \"--topology\", \"mesh:8x8\", \"--rate\", \"0.3\"]",
                );
            };
            if args.get_ref().is_empty() {
                return ctx.err(
                    Some(args.span()),
                    &key("args"),
                    "empty: expected a command and its flags, e.g. [\"gemm\", \"--m\", \"128\"]",
                );
            }
            runs.push(RunSpec::Command {
                args: args.get_ref().clone(),
            });
            continue;
        }
        if let Some(a) = &r.args {
            return ctx.err(
                Some(a.span()),
                &key("args"),
                "only a command run (what = \"command\") takes args; this key would have no effect",
            );
        }
        if what == "workload" {
            let systems = systems_span;
            refuse(
                &[&[("systems", systems)][..], &collective_keys[..]].concat(),
                "a workload run takes its machine, model and tasks from its file; this key would have no effect",
            )?;
            let Some(f) = &r.file else {
                return ctx.err(
                    Some(r.what.span()),
                    &key("file"),
                    "missing: the workload file, e.g. file = \"workload-data-parallel.toml\" (relative to this scenario)",
                );
            };
            let path = std::path::Path::new(file)
                .parent()
                .unwrap_or(std::path::Path::new(""))
                .join(f.get_ref());
            let shown = path.display().to_string();
            let text = read_capped(&path).or_else(|why| {
                ctx.err(Some(f.span()), &key("file"), format!("`{shown}`: {why}"))
            })?;
            let spec = crate::workload::parse_workload(&shown, &text)?;
            runs.push(RunSpec::Workload {
                spec: Box::new(spec),
            });
            continue;
        }
        if let Some(f) = &r.file {
            return ctx.err(
                Some(f.span()),
                &key("file"),
                "only a workload run reads a file; this key would have no effect",
            );
        }
        if what == "metrics" {
            refuse(
                &collective_keys,
                "a metrics run takes no collective keys; this one would have no effect",
            )?;
            runs.push(RunSpec::Metrics { systems: picked });
            continue;
        }
        let Some(kind) = &r.kind else {
            return ctx.err(
                Some(r.what.span()),
                &key("kind"),
                "missing: a collective run names its collective, e.g. kind = \"all-to-all\"",
            );
        };
        // Each name is checked on its own, so the error points at the key that is wrong.
        parse_names(kind.get_ref(), None, "flow")
            .or_else(|e| ctx.err(Some(kind.span()), &key("kind"), e))?;
        if let Some(a) = &r.algorithm {
            parse_names(kind.get_ref(), Some(a.get_ref()), "flow")
                .or_else(|e| ctx.err(Some(a.span()), &key("algorithm"), e))?;
        }
        if let Some(m) = &r.model {
            parse_names(kind.get_ref(), None, m.get_ref())
                .or_else(|e| ctx.err(Some(m.span()), &key("model"), e))?;
        }
        let (k, algorithm, model) = parse_names(
            kind.get_ref(),
            r.algorithm.as_ref().map(|a| a.get_ref().as_str()),
            r.model.as_ref().map_or("flow", |m| m.get_ref().as_str()),
        )
        .or_else(|e| ctx.err(Some(kind.span()), &key("kind"), e))?;
        let bytes = match &r.bytes {
            Some(b) => {
                b.get_ref()
                    .parse::<Bytes>()
                    .or_else(|e| {
                        ctx.err(
                            Some(b.span()),
                            &key("bytes"),
                            format!("{e}; expected a size such as \"16 MiB\""),
                        )
                    })?
                    .0
            }
            None if k == podsim_system::choices::Kind::Barrier => 0,
            None => {
                return ctx.err(
                    Some(r.what.span()),
                    &key("bytes"),
                    "missing: each rank's buffer, e.g. bytes = \"16 MiB\"",
                );
            }
        };
        let chunk = match &r.chunk {
            Some(c) => {
                c.get_ref()
                    .parse::<Bytes>()
                    .or_else(|e| {
                        ctx.err(
                            Some(c.span()),
                            &key("chunk"),
                            format!("{e}; expected a size such as \"4 KiB\""),
                        )
                    })?
                    .0
            }
            None => 0,
        };
        let baseline = match &r.baseline {
            None => None,
            Some(b) => match picked.iter().position(|&s| systems[s].name == *b.get_ref()) {
                Some(p) => Some(picked[p]),
                None => {
                    return ctx.err(
                        Some(b.span()),
                        &key("baseline"),
                        format!("`{}` is not one of this run's systems", b.get_ref()),
                    );
                }
            },
        };
        let setup = Setup {
            kind: k,
            algorithm,
            bytes,
            model,
            packets: podsim_system::choices::Packetization::NONE,
            chunk,
            ecmp: true,
            memory_limit: u64::MAX,
        };
        runs.push(RunSpec::Collective {
            systems: picked,
            setup,
            baseline,
        });
    }
    // No analysis a scenario runs draws random numbers (metrics are closed forms, collectives
    // are deterministic schedules on deterministic models), so a seed would change nothing.
    if let Some(s) = &raw.seed {
        return ctx.err(
            Some(s.span()),
            "seed",
            "no analysis in a scenario draws random numbers, so a seed has no effect; remove the key (`podsim noc --seed` seeds the packet level's traffic)",
        );
    }
    let seed = 0;
    Ok(Scenario {
        file: file.into(),
        name: raw.name,
        description: raw.description,
        seed,
        systems,
        runs,
    })
}

/// As [`parse_scenario`], with `machines` finding the machine files its systems name
/// (`machine = PATH`).
pub fn parse_scenario_with(
    file: &str,
    text: &str,
    machines: crate::validation::MachineFiles<'_>,
) -> Result<Scenario, ConfigError> {
    scenario_in(file, text, Some(machines))
}

/// Parse a file that describes one system at its top level (the keys of a `[[system]]`).
pub fn parse_system(file: &str, text: &str) -> Result<SystemSpec, ConfigError> {
    let raw: RawSystem = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
    raw.validate(
        &Ctx {
            file,
            text,
            machines: None,
        },
        "system",
    )
}

/// The link bandwidth `podsim topo` assumes for a mesh, torus or ring when none is given:
/// a TPU v4 ICI link (tpu-v4-isca2023.txt, Table 4).
pub const DEFAULT_LINK_BANDWIDTH: &str = "50 GB/s";

/// A system from the command line: a topology shorthand and the optional values of
/// `--link-bandwidth`, `--link-latency` and `--interfaces`. Errors name the flag.
pub fn system_from_cli(
    spec: &str,
    link_bandwidth: Option<&str>,
    link_latency: Option<&str>,
    interfaces: Option<&str>,
) -> Result<SystemSpec, ConfigError> {
    let err = |key: &str, why: String| ConfigError {
        file: "<command line>".into(),
        line: None,
        key: key.into(),
        why,
    };
    let topology = parse_topology(spec).map_err(|e| err("SPEC", e.0))?;
    let latency = match link_latency {
        None => topology.preset_latency(),
        Some(s) => s.parse().map_err(|e| {
            err(
                "--link-latency",
                format!("{e}; expected a time such as \"100 ns\""),
            )
        })?,
    };
    let interfaces = match interfaces {
        None => None,
        Some(s) => match s.parse::<u32>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                return Err(err(
                    "--interfaces",
                    format!("`{s}` is not a positive whole number"),
                ));
            }
        },
    };
    let preset = topology
        .preset_bandwidth()
        .map_err(|e| err("SPEC", e.why))?;
    let bandwidth = match (&topology, link_bandwidth) {
        (
            TopoSpec::Tofu(_)
            | TopoSpec::Dojo(_)
            | TopoSpec::Grayskull
            | TopoSpec::Wormhole { .. }
            | TopoSpec::Hybrid { .. }
            | TopoSpec::Machine(_)
            | TopoSpec::TpuV4 { .. },
            None,
        ) => preset.ok_or_else(|| {
            err(
                "SPEC",
                "this preset states no link bandwidth; give --link-bandwidth".into(),
            )
        })?,
        (TopoSpec::Machine(_), Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a machine file sets its own link classes; drop the flag".to_string(),
            ));
        }
        (TopoSpec::Hybrid { .. }, Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a hybrid has 400 Gb/s ICI and 200 Gb/s InfiniBand links; drop the flag"
                    .to_string(),
            ));
        }
        (TopoSpec::Grayskull | TopoSpec::Wormhole { .. }, Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a Tenstorrent grid has 32 B/cycle NoC links at its clock; drop the flag"
                    .to_string(),
            ));
        }
        (TopoSpec::Dojo(_), Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a DOJO system sets its link bandwidths per level from the seed; drop the flag"
                    .to_string(),
            ));
        }
        (TopoSpec::TpuV4 { .. }, Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a TPU v4 slice has 50 GB/s ICI links (Table 4); drop the flag".to_string(),
            ));
        }
        (TopoSpec::Tofu(t), Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                format!(
                    "{} sets its link bandwidth from lanes x rate x coding; drop the flag",
                    t.generation
                ),
            ));
        }
        (TopoSpec::Cube(_) | TopoSpec::FatTree { .. }, b) => {
            b.unwrap_or(DEFAULT_LINK_BANDWIDTH).parse().map_err(|e| {
                err(
                    "--link-bandwidth",
                    format!("{e}; expected a bandwidth such as \"50 GB/s\""),
                )
            })?
        }
    };
    if link_latency.is_some() {
        let fixed = match &topology {
            TopoSpec::Cube(_) | TopoSpec::FatTree { .. } | TopoSpec::Tofu(_) => None,
            TopoSpec::TpuV4 { .. } => Some("a TPU v4 slice"),
            TopoSpec::Hybrid { .. } => Some("a hybrid ICI/InfiniBand system"),
            TopoSpec::Dojo(_) => Some("a DOJO system"),
            TopoSpec::Machine(_) => Some("a machine file"),
            TopoSpec::Grayskull | TopoSpec::Wormhole { .. } => Some("a Tenstorrent grid"),
        };
        if let Some(what) = fixed {
            // The flag used to be accepted and silently ignored.
            return Err(err(
                "--link-latency",
                format!(
                    "{what} sets its own link latencies, which the flag would not change; drop the flag"
                ),
            ));
        }
    }
    if let (false, Some(_)) = (matches!(topology, TopoSpec::Cube(_)), interfaces) {
        // Presets (and a fat tree's one link per host) fix the interfaces per node.
        return Err(err(
                "--interfaces",
                "this preset sets its own interfaces per node (Tofu TNIs, TPU v4 ICI links); drop the flag".into(),
            ));
    }
    let spec = SystemSpec {
        name: spec.to_string(),
        topology,
        link: LinkSpec {
            kind: LinkKind::Electrical,
            bandwidth,
            latency,
        },
        blocks: None,
        interfaces,
    };
    spec.build()
        .map_err(|e| err("SPEC", format!("`{spec}`: {}", e.why, spec = spec.name)))?;
    Ok(spec)
}
