//! Topology metrics as a side-by-side table and as JSON.

use podsim_topology::{Metrics, Network, metrics};
use podsim_units::Bandwidth;
use serde_json::{Value, json};

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
fn big(v: u128) -> Value {
    u64::try_from(v).map_or_else(|_| json!(v as f64), |x| json!(x))
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

/// The JSON object of `podsim topo --json` (keys documented in the README).
pub fn metrics_json(net: &Network, m: &Metrics) -> Value {
    let link = net.link();
    let by_kind: serde_json::Map<String, Value> = m
        .links_by_kind
        .iter()
        .map(|(k, n)| (k.name().to_string(), json!(n)))
        .collect();
    let mut v = json!({
        "topology": net.shorthand(),
        "nodes": m.nodes,
        "links": m.links,
        "links_by_kind": by_kind,
        "degree_max": m.degree_max,
        "ports_per_node_max": m.degree_max,
        "degree_min": m.degree_min,
        "diameter": m.diameter,
        "average_distance": m.average_distance,
        "distance_method": m.distance_method.token(),
        "bisection_links": m.bisection_links,
        "bisection_bandwidth_bytes_per_s": big(m.bisection_bandwidth_bytes_per_s),
        "bisection_method": m.bisection_method.token(),
        "link_bandwidth_bytes_per_s": link.bandwidth.bytes_per_s(),
        "link_latency_s": link.latency.as_secs_f64(),
        "switches": m.switches,
        "interfaces_per_node": m.interfaces,
        "injection_bandwidth_bytes_per_s": m.injection_bandwidth_bytes_per_s,
        "total_injection_bandwidth_bytes_per_s": big(m.total_injection_bandwidth_bytes_per_s),
        "all_to_all_bytes_per_s_per_node": m.all_to_all_bytes_per_s_per_node,
        "all_to_all_limited_by": m.all_to_all_limited_by,
    });
    if let Network::Tenstorrent(g) = net {
        v["workers"] = json!(g.workers());
        v["dram_banks"] = json!(g.dram_banks());
        v["harvested_rows"] = json!(g.harvested_rows());
        v["noc_clock_hz"] = json!(g.clock().as_hz());
    }
    if let Network::Dojo(d) = net {
        v["dies"] = json!(d.dies());
        v["routers"] = json!(d.routers());
        v["sram_bytes"] = json!(d.sram().0);
        v["dips"] = json!(d.dips());
        v["hosts"] = json!(d.hosts());
        v["dip_hbm_bytes"] = json!(u64::from(d.dips()) * podsim_topology::DIP_HBM.0);
    }
    if let Network::Tofu(tofu) = net {
        v["generation"] = json!(tofu.generation().name());
        v["link_bandwidth_arithmetic"] = json!(tofu.generation().link_arithmetic());
        if let Some(vt) = tofu.virtual_torus() {
            let vm = metrics(vt);
            v["virtual_torus"] = json!(vt.shorthand());
            v["virtual_bisection_bandwidth_bytes_per_s"] = big(vm.bisection_bandwidth_bytes_per_s);
        }
    }
    v
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
