//! A system as a file writes it (a scenario's `[[system]]`, a workload's `[machine]`, a
//! validation case's system, a system file): a topology shorthand or a machine file, with its
//! links, interfaces, twist and blocks.

use serde::Deserialize;
use toml::Spanned;

use podsim_system::{SystemSpec, TopoSpec};
use podsim_topology::{Blocks, LinkKind, LinkSpec};

use crate::ctx::{Ctx, bandwidth, duration, kind, positive_u32};
use crate::error::{ConfigError, from_toml};
use crate::shorthand::parse_topology;

/// A system as written in a file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSystem {
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) topology: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) machine: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) nodes: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) link_bandwidth: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) link_latency: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) link_kind: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) interfaces: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) twist: Option<Spanned<Vec<Vec<i64>>>>,
    #[serde(default)]
    pub(crate) blocks: Option<RawBlocks>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawBlocks {
    pub(crate) shape: Spanned<Vec<i64>>,
    #[serde(default)]
    pub(crate) kind: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) bandwidth: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) latency: Option<Spanned<String>>,
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
