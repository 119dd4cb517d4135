//! Topology metrics as a side-by-side table and as JSON.

use podsim_topology::{Metrics, Network, metrics};
use podsim_units::Bandwidth;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

use crate::render;

fn bw(v: u128) -> String {
    match u64::try_from(v) {
        Ok(v) => {
            Bandwidth::from_bytes_per_s(v).map_or_else(|| "0 B/s".to_string(), |b| b.to_string())
        }
        // Beyond 64 bits (a bandwidth type's range): exact, in PB/s.
        Err(_) => {
            let (whole, frac) = (v / 1_000_000_000_000_000, v % 1_000_000_000_000_000);
            let frac = format!("{frac:015}");
            let frac = frac.trim_end_matches('0');
            if frac.is_empty() {
                format!("{whole} PB/s")
            } else {
                format!("{whole}.{frac} PB/s")
            }
        }
    }
}

/// A count for JSON: exact when it fits 64 bits, else the nearest double.
fn big<S: serde::Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
    match u64::try_from(*v) {
        Ok(x) => s.serialize_u64(x),
        Err(_) => s.serialize_f64(*v as f64),
    }
}

/// Round a rate for display (three significant figures are what papers print).
fn bw_f(v: f64) -> String {
    if v <= 0.0 {
        return "0 B/s".into();
    }
    let units = [
        (1e15, "PB/s"),
        (1e12, "TB/s"),
        (1e9, "GB/s"),
        (1e6, "MB/s"),
        (1e3, "kB/s"),
        (1.0, "B/s"),
    ];
    let (div, name) = units
        .iter()
        .copied()
        .find(|(d, _)| v >= *d)
        .unwrap_or((1.0, "B/s"));
    format!("{:.4} {name}", v / div)
}

/// A topology's metrics as `podsim topo --json` prints them and Python's `podsim.machine`
/// returns them (keys documented in the README): one struct, so the two cannot drift.
/// Serialize it with [`crate::to_json`], which orders the keys as the command prints them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopoOutput {
    /// The topology's shorthand.
    pub topology: String,
    /// Nodes (endpoints and switches).
    pub nodes: u64,
    /// Bidirectional links.
    pub links: u64,
    /// Links of each kind, by the kind's name.
    pub links_by_kind: BTreeMap<&'static str, u64>,
    /// The most links at a node.
    pub degree_max: u32,
    /// The same figure, by the name papers give it.
    pub ports_per_node_max: u32,
    /// The fewest links at a node.
    pub degree_min: u32,
    /// Hops between the farthest two endpoints.
    pub diameter: u64,
    /// Mean hops between endpoints.
    pub average_distance: f64,
    /// How the distances were found.
    pub distance_method: &'static str,
    /// Links across the bisection.
    pub bisection_links: u64,
    /// Bandwidth across the bisection (exact up to 64 bits, else the nearest double).
    #[serde(serialize_with = "big")]
    pub bisection_bandwidth_bytes_per_s: u128,
    /// How the bisection was found.
    pub bisection_method: &'static str,
    /// The link bandwidth each way.
    pub link_bandwidth_bytes_per_s: u64,
    /// The per-hop link latency, seconds.
    pub link_latency_s: f64,
    /// Switches.
    pub switches: u64,
    /// Network interfaces per endpoint.
    pub interfaces_per_node: u32,
    /// What one endpoint injects.
    pub injection_bandwidth_bytes_per_s: u64,
    /// What every endpoint together injects (as `bisection_bandwidth_bytes_per_s`).
    #[serde(serialize_with = "big")]
    pub total_injection_bandwidth_bytes_per_s: u128,
    /// The all-to-all rate per endpoint.
    pub all_to_all_bytes_per_s_per_node: f64,
    /// What limits the all-to-all rate.
    pub all_to_all_limited_by: &'static str,
    /// A Tenstorrent grid's own figures.
    #[serde(flatten)]
    pub tenstorrent: Option<TenstorrentTopo>,
    /// A DOJO system's own figures.
    #[serde(flatten)]
    pub dojo: Option<DojoTopo>,
    /// A Tofu machine's own figures.
    #[serde(flatten)]
    pub tofu: Option<TofuTopo>,
}

/// The keys only a Tenstorrent grid has in [`TopoOutput`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TenstorrentTopo {
    /// Worker tiles.
    pub workers: usize,
    /// DRAM banks.
    pub dram_banks: usize,
    /// Harvested worker rows.
    pub harvested_rows: Vec<u32>,
    /// The NoC's clock, hertz.
    pub noc_clock_hz: u64,
}

/// The keys only a DOJO system has in [`TopoOutput`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DojoTopo {
    /// Dies.
    pub dies: u64,
    /// Routers (nodes of the mesh).
    pub routers: u64,
    /// SRAM over every node, bytes.
    pub sram_bytes: u64,
    /// DOJO interface processors.
    pub dips: u32,
    /// Hosts.
    pub hosts: u32,
    /// HBM over every DIP, bytes.
    pub dip_hbm_bytes: u64,
}

/// The keys only a Tofu machine has in [`TopoOutput`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TofuTopo {
    /// Tofu, Tofu2 or TofuD.
    pub generation: &'static str,
    /// How the link bandwidth follows from the lanes.
    pub link_bandwidth_arithmetic: String,
    /// The virtual 3-D torus of a job's nodes, where there is one.
    #[serde(flatten)]
    pub virtual_torus: Option<VirtualTorus>,
}

/// A Tofu machine's virtual 3-D torus in [`TofuTopo`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VirtualTorus {
    /// Its shorthand.
    pub virtual_torus: String,
    /// Its bisection bandwidth (as `bisection_bandwidth_bytes_per_s`).
    #[serde(serialize_with = "big")]
    pub virtual_bisection_bandwidth_bytes_per_s: u128,
}

impl TopoOutput {
    /// The metrics `m` of `net`.
    pub fn new(net: &Network, m: &Metrics) -> TopoOutput {
        let link = net.link();
        TopoOutput {
            topology: net.shorthand(),
            nodes: m.nodes,
            links: m.links,
            links_by_kind: m
                .links_by_kind
                .iter()
                .map(|(k, n)| (k.name(), *n))
                .collect(),
            degree_max: m.degree_max,
            ports_per_node_max: m.degree_max,
            degree_min: m.degree_min,
            diameter: m.diameter,
            average_distance: m.average_distance,
            distance_method: m.distance_method.token(),
            bisection_links: m.bisection_links,
            bisection_bandwidth_bytes_per_s: m.bisection_bandwidth_bytes_per_s,
            bisection_method: m.bisection_method.token(),
            link_bandwidth_bytes_per_s: link.bandwidth.bytes_per_s(),
            link_latency_s: link.latency.as_secs_f64(),
            switches: m.switches,
            interfaces_per_node: m.interfaces,
            injection_bandwidth_bytes_per_s: m.injection_bandwidth_bytes_per_s,
            total_injection_bandwidth_bytes_per_s: m.total_injection_bandwidth_bytes_per_s,
            all_to_all_bytes_per_s_per_node: m.all_to_all_bytes_per_s_per_node,
            all_to_all_limited_by: m.all_to_all_limited_by,
            tenstorrent: match net {
                Network::Tenstorrent(g) => Some(TenstorrentTopo {
                    workers: g.workers(),
                    dram_banks: g.dram_banks(),
                    harvested_rows: g.harvested_rows().to_vec(),
                    noc_clock_hz: g.clock().as_hz(),
                }),
                _ => None,
            },
            dojo: match net {
                Network::Dojo(d) => Some(DojoTopo {
                    dies: d.dies(),
                    routers: d.routers(),
                    sram_bytes: d.sram().0,
                    dips: d.dips(),
                    hosts: d.hosts(),
                    dip_hbm_bytes: u64::from(d.dips()) * podsim_topology::DIP_HBM.0,
                }),
                _ => None,
            },
            tofu: match net {
                Network::Tofu(tofu) => Some(TofuTopo {
                    generation: tofu.generation().name(),
                    link_bandwidth_arithmetic: tofu.generation().link_arithmetic(),
                    virtual_torus: tofu.virtual_torus().map(|vt| VirtualTorus {
                        virtual_torus: vt.shorthand(),
                        virtual_bisection_bandwidth_bytes_per_s: metrics(vt)
                            .bisection_bandwidth_bytes_per_s,
                    }),
                }),
                _ => None,
            },
        }
    }
}

/// The JSON object of `podsim topo --json`: [`TopoOutput`] serialized.
pub fn metrics_json(net: &Network, m: &Metrics) -> Value {
    crate::to_json(&TopoOutput::new(net, m))
}

/// Rows of a side-by-side metrics table: one column per system.
pub fn metrics_table(names: &[String], systems: &[(Network, Metrics)]) -> String {
    let mut rows: Vec<(String, Vec<String>)> = vec![("".into(), names.to_vec())];
    let mut row = |label: &str, f: &dyn Fn(&Network, &Metrics) -> String| {
        rows.push((
            label.to_string(),
            systems.iter().map(|(t, m)| f(t, m)).collect(),
        ));
    };
    row("topology", &|t, _| t.shorthand());
    row("shape", &|t, _| t.shape());
    row("nodes", &|_, m| m.nodes.to_string());
    row("links", &|_, m| m.links.to_string());
    for kind in podsim_topology::LinkKind::ALL {
        if systems
            .iter()
            .any(|(_, m)| m.links_by_kind.iter().any(|(k, _)| *k == kind))
        {
            row(&format!("  {kind}"), &|_, m| {
                m.links_by_kind
                    .iter()
                    .find(|(k, _)| *k == kind)
                    .map_or(0, |(_, n)| *n)
                    .to_string()
            });
        }
    }
    row("link bandwidth (each way)", &|t, _| {
        t.link().bandwidth.to_string()
    });
    if systems.iter().any(|(_, m)| m.switches > 0) {
        row("switches", &|_, m| m.switches.to_string());
    }
    row("degree (min..max)", &|_, m| {
        format!("{}..{}", m.degree_min, m.degree_max)
    });
    row("diameter (hops)", &|_, m| m.diameter.to_string());
    row("average distance (hops)", &|_, m| {
        format!("{:.4}", m.average_distance)
    });
    row("bisection links", &|_, m| m.bisection_links.to_string());
    row("bisection bandwidth (2-way)", &|_, m| {
        bw(m.bisection_bandwidth_bytes_per_s)
    });
    row("bisection method", &|_, m| {
        m.bisection_method.token().to_string()
    });
    row("injection per node", &|_, m| {
        format!(
            "{} ({} NICs)",
            bw(u128::from(m.injection_bandwidth_bytes_per_s)),
            m.interfaces
        )
    });
    row("total injection", &|_, m| {
        bw(m.total_injection_bandwidth_bytes_per_s)
    });
    if systems.iter().any(|(t, _)| matches!(t, Network::Tofu(_))) {
        let virt = |t: &Network| match t {
            Network::Tofu(x) => x.virtual_torus().cloned(),
            Network::Cube(_)
            | Network::FatTree(_)
            | Network::Dojo(_)
            | Network::Tenstorrent(_)
            | Network::Hybrid(_)
            | Network::Graph(_) => None,
        };
        row("virtual torus", &|t, _| {
            virt(t).map_or("-".into(), |v| v.shorthand())
        });
        row("virtual bisection (2-way)", &|t, _| {
            virt(t).map_or("-".into(), |v| {
                bw(metrics(&v).bisection_bandwidth_bytes_per_s)
            })
        });
    }
    if systems
        .iter()
        .any(|(t, _)| matches!(t, Network::Tenstorrent(_)))
    {
        let grid = |t: &Network| match t {
            Network::Tenstorrent(g) => Some(g.clone()),
            Network::Cube(_)
            | Network::Tofu(_)
            | Network::FatTree(_)
            | Network::Dojo(_)
            | Network::Hybrid(_)
            | Network::Graph(_) => None,
        };
        row("Tensix workers", &|t, _| {
            grid(t).map_or("-".into(), |g| g.workers().to_string())
        });
        row("DRAM banks", &|t, _| {
            grid(t).map_or("-".into(), |g| g.dram_banks().to_string())
        });
        row("harvested rows", &|t, _| {
            grid(t).map_or("-".into(), |g| format!("{:?}", g.harvested_rows()))
        });
    }
    if systems.iter().any(|(t, _)| matches!(t, Network::Dojo(_))) {
        let dojo = |t: &Network| match t {
            Network::Dojo(d) => Some(d.clone()),
            Network::Cube(_)
            | Network::Tofu(_)
            | Network::FatTree(_)
            | Network::Tenstorrent(_)
            | Network::Hybrid(_)
            | Network::Graph(_) => None,
        };
        row("dies", &|t, _| {
            dojo(t).map_or("-".into(), |d| d.dies().to_string())
        });
        row("routers", &|t, _| {
            dojo(t).map_or("-".into(), |d| d.routers().to_string())
        });
        row("node SRAM", &|t, _| {
            dojo(t).map_or("-".into(), |d| d.sram().to_string())
        });
        row("DIPs / hosts", &|t, _| {
            dojo(t).map_or("-".into(), |d| format!("{} / {}", d.dips(), d.hosts()))
        });
    }
    row("all-to-all bound per node", &|_, m| {
        format!(
            "{} ({})",
            bw_f(m.all_to_all_bytes_per_s_per_node),
            m.all_to_all_limited_by
        )
    });
    render(&rows)
}
