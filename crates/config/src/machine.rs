//! Machine files: a whole machine (its chip, identical nodes, link classes and tiers of
//! network) as TOML -> [`MachineSpec`]. The keys, as `--help` and `docs/machine-file.md` list
//! them:
//!
//! ```toml
//! name = "DGX A100"                  # its name in reports
//! description = "..."                # optional
//! chips_per_node = 8                 # chips in a node (default 1)
//! nodes = 8                          # nodes (default 1; --nodes overrides)
//! endpoint_overhead = "2 us"         # optional: per one-way transfer, sender plus receiver
//! endpoint_overhead_source = "..."   # where that figure comes from
//!
//! [chip]
//! preset = "a100"                    # a chip preset, or name + the three figures below
//! name = "h100"
//! matrix_flops = "989 TFLOP/s"       # peak dense BF16; or the matrix units, which set it:
//! matrix_unit = "16x16"              #   rows x columns of multiply-accumulate cells,
//! matrix_units = 432                 #   how many (default 1),
//! clock = "1.41 GHz"                 #   and their clock;
//! tiling = "grid"                    #   grid (default) or columns: how the arrays share a product
//! memory = "80 GiB"                  # capacity
//! memory_bandwidth = "3.35 TB/s"
//! matrix_efficiency = 0.85           # optional: the fraction of the matrix units' modelled
//!                                    #   rate a GEMM kernel sustains (default 1)
//! memory_efficiency = 0.4            # optional: the fraction of memory_bandwidth the work
//!                                    #   outside GEMMs sustains (default 1)
//! efficiency_source = "..."          # where those two come from (needed with either)
//! source = "..."
//!
//! [[link]]                           # a link class
//! name = "nvlink3"
//! bandwidth = "300 GB/s"             # line rate, per direction
//! payload = "128 B"                  # optional: data per packet, with
//! header = "32 B"                    #   the bytes each packet adds: the link then carries
//!                                    #   data at bandwidth x payload / (payload + header)
//! latency = "0 ns"                   # time of flight (default 0)
//! kind = "electrical"                # on-chip | electrical | optical (default electrical)
//! source = "..."
//!
//! [[tier]]                           # a tier of network
//! name = "nvswitch"
//! scope = "node"                     # node (one per node) | machine (across every node)
//! fabric = "switch"                  # switch | fat-tree | rail-fat-tree | ring:N | mesh:AxB | torus:AxBxC
//! link = "nvlink3"                   # the class of its links
//! nic_link = "pcie4"                 # optional: a NIC per chip, joined to it by this class
//! switch_ports = 40                  # fat trees: ports per switch (even)
//! switch_latency = "130 ns"          # switch and fat trees: time to cross one switch
//! source = "..."
//! ```

use serde::Deserialize;
use toml::Spanned;

use podsim_system::choices::Tiling;
use podsim_system::cluster::{
    Fabric, Fraction, LinkClass, MachineChip, MachineSpec, MatrixUnit, Scope, Tier,
};
use podsim_system::{SystemSpec, TopoSpec};
use podsim_units::{Bandwidth, Bytes, FlopRate, Frequency, SimDuration};

use crate::ctx::Ctx;
use crate::error::{ConfigError, from_toml, nearest};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMachine {
    name: Spanned<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    chips_per_node: Option<Spanned<i64>>,
    #[serde(default)]
    nodes: Option<Spanned<i64>>,
    #[serde(default)]
    endpoint_overhead: Option<Spanned<String>>,
    #[serde(default)]
    endpoint_overhead_source: Option<String>,
    chip: Spanned<RawChip>,
    #[serde(default)]
    link: Vec<Spanned<RawLink>>,
    #[serde(default)]
    tier: Vec<Spanned<RawTier>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChip {
    #[serde(default)]
    preset: Option<Spanned<String>>,
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    matrix_flops: Option<Spanned<String>>,
    #[serde(default)]
    matrix_unit: Option<Spanned<String>>,
    #[serde(default)]
    matrix_units: Option<Spanned<i64>>,
    #[serde(default)]
    clock: Option<Spanned<String>>,
    #[serde(default)]
    tiling: Option<Spanned<String>>,
    #[serde(default)]
    memory: Option<Spanned<String>>,
    #[serde(default)]
    memory_bandwidth: Option<Spanned<String>>,
    #[serde(default)]
    matrix_efficiency: Option<Spanned<f64>>,
    #[serde(default)]
    memory_efficiency: Option<Spanned<f64>>,
    #[serde(default)]
    efficiency_source: Option<Spanned<String>>,
    #[serde(default)]
    source: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    name: Spanned<String>,
    bandwidth: Spanned<String>,
    #[serde(default)]
    payload: Option<Spanned<String>>,
    #[serde(default)]
    header: Option<Spanned<String>>,
    #[serde(default)]
    latency: Option<Spanned<String>>,
    #[serde(default)]
    kind: Option<Spanned<String>>,
    #[serde(default)]
    source: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTier {
    name: Spanned<String>,
    scope: Spanned<String>,
    fabric: Spanned<String>,
    #[serde(default)]
    link: Option<Spanned<String>>,
    #[serde(default)]
    nic_link: Option<Spanned<String>>,
    #[serde(default)]
    switch_ports: Option<Spanned<i64>>,
    #[serde(default)]
    switch_latency: Option<Spanned<String>>,
    #[serde(default)]
    source: Option<String>,
}

/// The fabrics a tier may name (besides the `ring:`, `mesh:` and `torus:` shorthands).
pub const FABRICS: [&str; 3] = ["switch", "fat-tree", "rail-fat-tree"];

/// Whether `text` (TOML) is a machine file rather than a system file: it has `[[tier]]`s or a
/// `[chip]` table.
pub fn is_machine_file(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .map(|t| t.contains_key("tier") || t.contains_key("chip"))
        .unwrap_or(false)
}

/// Parse a machine file into its spec; `nodes` (from `--nodes`) replaces the file's count.
pub fn parse_machine(
    file: &str,
    text: &str,
    nodes: Option<u32>,
) -> Result<MachineSpec, ConfigError> {
    let raw: RawMachine = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
    let ctx = Ctx {
        file,
        text,
        machines: None,
    };
    let count = |v: &Option<Spanned<i64>>, key: &str| -> Result<u32, ConfigError> {
        match v {
            None => Ok(1),
            Some(v) => match u32::try_from(*v.get_ref()) {
                Ok(n) if n > 0 => Ok(n),
                _ => ctx.err(
                    Some(v.span()),
                    key,
                    format!("{} is not a positive whole number", v.get_ref()),
                ),
            },
        }
    };
    let chips_per_node = count(&raw.chips_per_node, "chips_per_node")?;
    let nodes_flag = nodes;
    let nodes = match nodes {
        Some(n) => n,
        None => count(&raw.nodes, "nodes")?,
    };
    let endpoint_overhead = match &raw.endpoint_overhead {
        None => SimDuration::ZERO,
        Some(v) => time(&ctx, v, "endpoint_overhead")?,
    };
    if raw.endpoint_overhead.is_none() && raw.endpoint_overhead_source.is_some() {
        return ctx.err(
            None,
            "endpoint_overhead_source",
            "names the source of an endpoint_overhead the file does not give; add endpoint_overhead or drop the key",
        );
    }
    let chip = chip(&ctx, &raw.chip)?;
    let mut links: Vec<LinkClass> = Vec::new();
    for (i, l) in raw.link.iter().enumerate() {
        let l = l.get_ref();
        let key = |k: &str| format!("link[{i}].{k}");
        if links.iter().any(|c| &c.name == l.name.get_ref()) {
            return ctx.err(
                Some(l.name.span()),
                &key("name"),
                format!("a link class `{}` is already defined", l.name.get_ref()),
            );
        }
        let bandwidth = l.bandwidth.get_ref().parse::<Bandwidth>().or_else(|e| {
            ctx.err(
                Some(l.bandwidth.span()),
                &key("bandwidth"),
                format!("{e}; expected a positive bandwidth such as \"300 GB/s\""),
            )
        })?;
        let size = |v: &Spanned<String>, k: &str| -> Result<u64, ConfigError> {
            match v.get_ref().parse::<Bytes>() {
                Ok(b) => Ok(b.0),
                Err(e) => ctx.err(
                    Some(v.span()),
                    &key(k),
                    format!("{e}; expected a size such as \"128 B\""),
                ),
            }
        };
        let line_rate = bandwidth;
        let bandwidth = match (&l.payload, &l.header) {
            (None, None) => bandwidth,
            (Some(p), Some(h)) => {
                let (payload, header) = (size(p, "payload")?, size(h, "header")?);
                if payload == 0 {
                    return ctx.err(
                        Some(p.span()),
                        &key("payload"),
                        "a packet carries at least one byte of data",
                    );
                }
                let data = u128::from(bandwidth.bytes_per_s()) * u128::from(payload)
                    / (u128::from(payload) + u128::from(header));
                Bandwidth::from_bytes_per_s(u64::try_from(data).unwrap_or(u64::MAX)).map_or_else(
                    || {
                        ctx.err(
                            Some(h.span()),
                            &key("header"),
                            "leaves the link no bandwidth for data",
                        )
                    },
                    Ok,
                )?
            }
            (Some(v), None) | (None, Some(v)) => {
                return ctx.err(
                    Some(v.span()),
                    &key(if l.payload.is_some() { "header" } else { "payload" }),
                    "payload and header come together: the data per packet and the bytes each packet adds",
                );
            }
        };
        let latency = match &l.latency {
            None => SimDuration::ZERO,
            Some(v) => time(&ctx, v, &key("latency"))?,
        };
        let kind = match &l.kind {
            None => podsim_topology::LinkKind::Electrical,
            Some(v) => crate::ctx::kind(&ctx, v, &key("kind"))?,
        };
        links.push(LinkClass {
            name: l.name.get_ref().clone(),
            spec: podsim_topology::LinkSpec {
                kind,
                bandwidth,
                latency,
            },
            source: l.source.clone().unwrap_or_default(),
            line_rate,
        });
    }
    if raw.tier.is_empty() && u64::from(chips_per_node) * u64::from(nodes) > 1 {
        return ctx.err(
            Some(raw.name.span()),
            "tier",
            "a machine file of more than one chip needs at least one [[tier]] of network joining them",
        );
    }
    let class = |v: &Spanned<String>, key: &str| -> Result<usize, ConfigError> {
        links
            .iter()
            .position(|c| &c.name == v.get_ref())
            .map_or_else(
                || {
                    let names: Vec<&str> = links.iter().map(|c| c.name.as_str()).collect();
                    ctx.err(
                        Some(v.span()),
                        key,
                        if names.is_empty() {
                            format!("no [[link]] class `{}`: the file defines none", v.get_ref())
                        } else {
                            format!(
                                "no [[link]] class `{}`; the nearest is `{}` (classes: {})",
                                v.get_ref(),
                                nearest(v.get_ref(), &names).unwrap_or(names[0]),
                                names.join(", ")
                            )
                        },
                    )
                },
                Ok,
            )
    };
    let mut tiers = Vec::new();
    for (i, t) in raw.tier.iter().enumerate() {
        let t = t.get_ref();
        let key = |k: &str| format!("tier[{i}].{k}");
        let scope = match t.scope.get_ref().as_str() {
            "node" => Scope::Node,
            "machine" => Scope::Machine,
            other => {
                return ctx.err(
                    Some(t.scope.span()),
                    &key("scope"),
                    format!(
                        "`{other}` is not a scope; expected `node` (one instance a node) or `machine` (one across every node)"
                    ),
                );
            }
        };
        let f = t.fabric.get_ref().as_str();
        let preset_spec = preset(f);
        let fabric = match (f, preset_spec) {
            ("switch", _) => Fabric::Switch,
            ("fat-tree" | "rail-fat-tree", _) => {
                let Some(p) = &t.switch_ports else {
                    return ctx.err(
                        Some(t.fabric.span()),
                        &key("switch_ports"),
                        "a fat tree needs switch_ports, the ports of each switch (even, at least 2)",
                    );
                };
                let ports = match u32::try_from(*p.get_ref()) {
                    Ok(n) if n >= 2 && n % 2 == 0 && n <= 1024 => n,
                    _ => {
                        return ctx.err(
                            Some(p.span()),
                            &key("switch_ports"),
                            format!(
                                "{} is not an even number of ports from 2 to 1024",
                                p.get_ref()
                            ),
                        );
                    }
                };
                Fabric::FatTree {
                    ports,
                    rails: f == "rail-fat-tree",
                }
            }
            (_, Some(spec)) => {
                let given = [
                    ("link", t.link.as_ref().map(|v| v.span())),
                    ("nic_link", t.nic_link.as_ref().map(|v| v.span())),
                    ("switch_ports", t.switch_ports.as_ref().map(|v| v.span())),
                    (
                        "switch_latency",
                        t.switch_latency.as_ref().map(|v| v.span()),
                    ),
                ];
                if let Some((k, span)) = given.into_iter().find(|g| g.1.is_some()) {
                    return ctx.err(
                        span,
                        &key(k),
                        format!("the preset `{f}` sets its own links and switches; drop the key"),
                    );
                }
                if raw.tier.len() > 1 || scope != Scope::Machine {
                    return ctx.err(
                        Some(t.fabric.span()),
                        &key("fabric"),
                        "a preset network is the whole machine: the only [[tier]], with scope = \"machine\"",
                    );
                }
                let counts = [
                    (
                        "chips_per_node",
                        raw.chips_per_node.as_ref().map(|v| v.span()),
                    ),
                    ("nodes", raw.nodes.as_ref().map(|v| v.span())),
                ];
                if let Some((k, span)) = counts.into_iter().find(|g| g.1.is_some()) {
                    return ctx.err(
                        span,
                        k,
                        format!(
                            "the preset `{f}` fixes how many chips the machine has; drop the key"
                        ),
                    );
                }
                if nodes_flag.is_some() {
                    return Err(ConfigError {
                        file: file.into(),
                        line: None,
                        key: "--nodes".into(),
                        why: format!(
                            "the preset `{f}` fixes how many chips the machine has; drop the flag"
                        ),
                    });
                }
                Fabric::Preset {
                    topology: Box::new(spec.topology),
                    link: spec.link,
                }
            }
            (_, None) if f.contains(':') => {
                let shape = crate::shorthand::parse_shorthand(f)
                    .or_else(|e| ctx.err(Some(t.fabric.span()), &key("fabric"), e.0))?;
                if shape.twist.is_some() {
                    return ctx.err(
                        Some(t.fabric.span()),
                        &key("fabric"),
                        "a tier's chips are linked as a plain ring, mesh or torus; twists are not supported here",
                    );
                }
                Fabric::Cube {
                    dims: shape.dims,
                    wrap: shape.wrap,
                }
            }
            (other, None) => {
                let mut all: Vec<&str> = FABRICS.to_vec();
                all.extend(["ring:N", "mesh:AxB", "torus:AxBxC"]);
                return ctx.err(
                    Some(t.fabric.span()),
                    &key("fabric"),
                    format!(
                        "`{other}` is not a fabric; the nearest is `{}` (fabrics: {})",
                        nearest(other, &all).unwrap_or("switch"),
                        all.join(", ")
                    ),
                );
            }
        };
        if let (Some(p), false) = (&t.switch_ports, matches!(fabric, Fabric::FatTree { .. })) {
            return ctx.err(
                Some(p.span()),
                &key("switch_ports"),
                "only a fat tree reads switch_ports; drop the key",
            );
        }
        let switch_latency = match (&t.switch_latency, &fabric) {
            (None, _) => SimDuration::ZERO,
            (Some(v), Fabric::Cube { .. }) => {
                return ctx.err(
                    Some(v.span()),
                    &key("switch_latency"),
                    "chips linked directly have no switch to cross; drop the key",
                );
            }
            (Some(v), _) => time(&ctx, v, &key("switch_latency"))?,
        };
        let link = match (&t.link, &fabric) {
            (_, Fabric::Preset { .. }) => None,
            (Some(v), _) => Some(class(v, &key("link"))?),
            (None, _) => {
                return ctx.err(
                    Some(t.fabric.span()),
                    &key("link"),
                    "a tier names the class of its links (link = \"...\", a [[link]]'s name)",
                );
            }
        };
        tiers.push(Tier {
            name: t.name.get_ref().clone(),
            scope,
            fabric,
            link,
            nic_link: t
                .nic_link
                .as_ref()
                .map(|v| class(v, &key("nic_link")))
                .transpose()?,
            switch_latency,
        });
        let _ = &t.source;
    }
    if let Some(unused) = links.iter().enumerate().find(|(i, _)| {
        !tiers
            .iter()
            .any(|t| t.link == Some(*i) || t.nic_link == Some(*i))
    }) {
        return ctx.err(
            None,
            "link",
            format!(
                "link class `{}` is used by no tier; use it or drop it",
                unused.1.name
            ),
        );
    }
    let _ = (&raw.description, &raw.endpoint_overhead_source);
    Ok(MachineSpec {
        name: raw.name.get_ref().clone(),
        chip,
        chips_per_node,
        nodes,
        links,
        tiers,
        endpoint_overhead,
    })
}

/// A machine file as a system (what `--topology FILE` and `--system FILE` run on).
pub fn machine_system(
    file: &str,
    text: &str,
    nodes: Option<u32>,
) -> Result<SystemSpec, ConfigError> {
    let m = parse_machine(file, text, nodes)?;
    if let Some(preset) = m.preset() {
        return Ok(preset);
    }
    if m.tiers.is_empty() {
        return Err(ConfigError {
            file: file.into(),
            line: None,
            key: "tier".into(),
            why: format!(
                "`{}` is one chip and no network (no [[tier]]): there is nothing to route; `podsim gemm --system` runs on its chip",
                m.name
            ),
        });
    }
    let link = m.link().ok_or_else(|| ConfigError {
        file: file.into(),
        line: None,
        key: "link".into(),
        why: "a machine file needs at least one [[link]] class".into(),
    })?;
    Ok(SystemSpec {
        name: m.name.clone(),
        topology: TopoSpec::Machine(Box::new(m)),
        link,
        blocks: None,
        interfaces: None,
    })
}

fn time(ctx: &Ctx<'_>, v: &Spanned<String>, key: &str) -> Result<SimDuration, ConfigError> {
    v.get_ref().parse::<SimDuration>().or_else(|e| {
        ctx.err(
            Some(v.span()),
            key,
            format!("{e}; expected a time such as \"130 ns\""),
        )
    })
}

fn chip(ctx: &Ctx<'_>, raw: &Spanned<RawChip>) -> Result<MachineChip, ConfigError> {
    let span = raw.span();
    let raw = raw.get_ref();
    let preset = match &raw.preset {
        None => None,
        Some(p) => Some(
            podsim_system::choices::Chip::preset(p.get_ref()).map_or_else(
                || {
                    let names: Vec<&str> = podsim_system::choices::CHIPS
                        .iter()
                        .map(|c| c.name)
                        .collect();
                    ctx.err(
                        Some(p.span()),
                        "chip.preset",
                        format!(
                            "no chip preset `{}`; the nearest is `{}` (presets: {}); or give name, matrix_flops, memory and memory_bandwidth",
                            p.get_ref(),
                            nearest(p.get_ref(), &names).unwrap_or(names[0]),
                            names.join(", ")
                        ),
                    )
                },
                Ok,
            )?,
        ),
    };
    let need = |key: &str| ConfigError {
        file: ctx.file.into(),
        line: Some(crate::error::line_of(ctx.text, span.start)),
        key: format!("chip.{key}"),
        why: "a chip without a preset states its name, matrix_flops, memory and memory_bandwidth"
            .into(),
    };
    let name = match (&raw.name, &preset) {
        (Some(n), _) => n.get_ref().clone(),
        (None, Some(p)) => p.name.to_string(),
        (None, None) => return Err(need("name")),
    };
    let unit = matrix_unit(ctx, raw)?;
    if let (Some(v), Some(p)) = (&raw.matrix_flops, &preset) {
        return ctx.err(
            Some(v.span()),
            "chip.matrix_flops",
            format!(
                "the {} preset's matrix units set its peak; drop matrix_flops, or give matrix_unit, matrix_units and clock to change them",
                p.name
            ),
        );
    }
    let matrix_flops = match (&raw.matrix_flops, unit, &preset) {
        (Some(v), Some(_), _) => {
            return ctx.err(
                Some(v.span()),
                "chip.matrix_flops",
                "give matrix_flops or matrix_unit with clock (which set it), not both",
            );
        }
        (Some(v), None, _) => v.get_ref().parse::<FlopRate>().or_else(|e| {
            ctx.err(
                Some(v.span()),
                "chip.matrix_flops",
                format!("{e}; expected a rate such as \"312 TFLOP/s\""),
            )
        })?,
        (None, Some(u), _) => FlopRate(u.peak_flops() as u64),
        (None, None, Some(p)) => FlopRate(p.peak_matrix_flops() as u64),
        (None, None, None) => return Err(need("matrix_flops")),
    };
    let unit = unit.or_else(|| {
        preset.and_then(|p| {
            Some(MatrixUnit {
                rows: u32::try_from(p.unit.0).ok()?,
                cols: u32::try_from(p.unit.1).ok()?,
                count: u32::try_from(p.cores * p.units_per_core).ok()?,
                clock: Frequency::from_hz(p.clock_hz)?,
                tiling: p.tiling,
            })
        })
    });
    let memory_bandwidth = match (&raw.memory_bandwidth, &preset) {
        (Some(v), _) => v.get_ref().parse::<Bandwidth>().or_else(|e| {
            ctx.err(
                Some(v.span()),
                "chip.memory_bandwidth",
                format!("{e}; expected a bandwidth such as \"2039 GB/s\""),
            )
        })?,
        (None, Some(p)) => match Bandwidth::from_bytes_per_s(p.memory_bytes_per_s) {
            Some(b) => b,
            None => return Err(need("memory_bandwidth")),
        },
        (None, None) => return Err(need("memory_bandwidth")),
    };
    let memory = match (&raw.memory, &preset) {
        (Some(v), _) => v.get_ref().parse::<Bytes>().or_else(|e| {
            ctx.err(
                Some(v.span()),
                "chip.memory",
                format!("{e}; expected a size such as \"80 GiB\""),
            )
        })?,
        (None, Some(p)) => match p.tpu {
            Some(t) => Bytes(t.hbm_bytes),
            None => {
                return ctx.err(
                    Some(span),
                    "chip.memory",
                    format!(
                        "the {} preset states no memory capacity; give memory (such as \"80 GiB\")",
                        p.name
                    ),
                );
            }
        },
        (None, None) => return Err(need("memory")),
    };
    let fraction = |v: &Option<Spanned<f64>>, key: &str| -> Result<Option<Fraction>, ConfigError> {
        match v {
            None => Ok(None),
            Some(e) if Fraction::new(*e.get_ref()).is_some() => Ok(Fraction::new(*e.get_ref())),
            Some(e) => ctx.err(
                Some(e.span()),
                key,
                format!(
                    "{} is no fraction of the peak; expected a number above 0 and at most 1, such as 0.85",
                    e.get_ref()
                ),
            ),
        }
    };
    let matrix_efficiency = fraction(&raw.matrix_efficiency, "chip.matrix_efficiency")?;
    let memory_efficiency = fraction(&raw.memory_efficiency, "chip.memory_efficiency")?;
    match (
        &raw.efficiency_source,
        matrix_efficiency.or(memory_efficiency),
    ) {
        (None, Some(_)) => {
            return ctx.err(
                Some(span),
                "chip.efficiency_source",
                "matrix_efficiency and memory_efficiency name where they come from (a measurement, a fit, an assumption); give efficiency_source",
            );
        }
        (Some(v), None) => {
            return ctx.err(
                Some(v.span()),
                "chip.efficiency_source",
                "names the source of matrix_efficiency or memory_efficiency, and the chip states neither; drop the key",
            );
        }
        _ => {}
    }
    Ok(MachineChip {
        name,
        matrix_flops,
        memory,
        memory_bandwidth,
        matrix_unit: unit,
        matrix_efficiency,
        memory_efficiency,
        source: raw.source.clone().unwrap_or_default(),
    })
}

/// The chip's `matrix_unit` (\"RxC\"), `matrix_units` (how many, default 1) and `clock`, all
/// three or none (`matrix_units` may be left out).
fn matrix_unit(ctx: &Ctx<'_>, raw: &RawChip) -> Result<Option<MatrixUnit>, ConfigError> {
    let (shape, clock) = match (&raw.matrix_unit, &raw.clock) {
        (None, None) => {
            if let Some(t) = &raw.tiling {
                return ctx.err(
                    Some(t.span()),
                    "chip.tiling",
                    "tiling says how a matrix_unit's arrays share a product; give matrix_unit and clock too",
                );
            }
            if let Some(n) = &raw.matrix_units {
                return ctx.err(
                    Some(n.span()),
                    "chip.matrix_units",
                    "matrix_units counts the arrays of a matrix_unit; give matrix_unit and clock too",
                );
            }
            return Ok(None);
        }
        (Some(u), Some(c)) => (u, c),
        (Some(u), None) => {
            return ctx.err(
                Some(u.span()),
                "chip.clock",
                "a matrix_unit needs the clock it runs at, such as \"1.41 GHz\"",
            );
        }
        (None, Some(c)) => {
            return ctx.err(
                Some(c.span()),
                "chip.matrix_unit",
                "clock sets the matrix units' rate; give matrix_unit (rows x columns, such as \"16x16\")",
            );
        }
    };
    let dims: Vec<Option<u32>> = shape
        .get_ref()
        .split('x')
        .map(|d| d.trim().parse::<u32>().ok().filter(|&d| d > 0))
        .collect();
    let [Some(rows), Some(cols)] = dims[..] else {
        return ctx.err(
            Some(shape.span()),
            "chip.matrix_unit",
            format!(
                "`{}` is not rows x columns of multiply-accumulate cells, such as \"16x16\"",
                shape.get_ref()
            ),
        );
    };
    let clock = clock.get_ref().parse::<Frequency>().or_else(|e| {
        ctx.err(
            Some(clock.span()),
            "chip.clock",
            format!("{e}; expected a frequency such as \"1.41 GHz\""),
        )
    })?;
    let count = match &raw.matrix_units {
        None => 1,
        Some(n) => match u32::try_from(*n.get_ref()) {
            Ok(n) if n > 0 => n,
            _ => {
                return ctx.err(
                    Some(n.span()),
                    "chip.matrix_units",
                    format!("{} is not a positive whole number", n.get_ref()),
                );
            }
        },
    };
    let tiling = match raw.tiling.as_ref().map(|t| (t, t.get_ref().as_str())) {
        None | Some((_, "grid")) => Tiling::Grid,
        Some((_, "columns")) => Tiling::Columns,
        Some((t, other)) => {
            return ctx.err(
                Some(t.span()),
                "chip.tiling",
                format!("`{other}`: expected grid (each unit a tile of rows and columns, as a GPU's SMs) or columns (the units split the columns, as a TPU's MXUs)"),
            );
        }
    };
    Ok(Some(MatrixUnit {
        rows,
        cols,
        count,
        clock,
        tiling,
    }))
}

/// The system a preset shorthand names (a TPU v4 slice, Tofu, DOJO, Tenstorrent, a hybrid or
/// a fat tree: every shorthand but a plain ring, mesh or torus, which a tier builds itself).
fn preset(f: &str) -> Option<SystemSpec> {
    if FABRICS.contains(&f) {
        return None;
    }
    match crate::shorthand::parse_topology(f) {
        Ok(TopoSpec::Cube(shape)) if shape.twist.is_none() => None,
        Ok(_) => crate::system_from_cli(f, None, None, None).ok(),
        Err(_) => None,
    }
}
