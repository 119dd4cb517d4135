//! Z-plane shortcuts under mixed load (dojo-microarchitecture.txt, "Communication Mechanisms",
//! "System Network", Figures 4 and 5): "a packet which traverses a 10-hops route keeps 10 links
//! occupied", so sending far packets to a DIP and over Ethernet to a DIP near their destination
//! frees the mesh for local traffic, "while the shortcuts do not always offer lower latency".
//!
//! The experiment, on the flow model (max-min fair) under sustained load: every router
//! streams to its east neighbour (local traffic; the last column streams west), and one
//! router in `1 / fraction` (every k-th id, k the nearest whole number) also streams to the
//! router at the mirrored position (global traffic, across the plane). All streams run at
//! once and do not end, so their rates are the max-min fair allocation with every stream
//! active (one solve: a 5 x 5-tile plane's 236,000 streams take seconds). With shortcuts the
//! die routing tables send a global stream through the DIPs when its mesh route is longer
//! than [`SHORTCUT_BEYOND_HOPS`] and the shortcut occupies fewer mesh links
//! ([`podsim_routing::dojo_route`]); without, every stream follows X then Y.
//!
//! Reported: the local traffic's throughput (the sum of the local streams' rates), the time a
//! global transfer of `bytes` takes at its stream's rate plus its route's latency (the mean
//! over global streams) and the same for the slowest local stream, the most loaded mesh
//! link's utilisation, how many global streams took a shortcut and how many mesh links a
//! global stream occupies (Figure 4's point: occupancy grows with route length).

use podsim_net::NetworkModel;
use podsim_routing::{Faults, Shortcut, dojo_route, mesh_links};
use podsim_topology::{Dojo, DojoNode, Network, NodeId};
use podsim_units::{Bytes, SimTime};

/// Routes longer than this many mesh hops may take a shortcut: one die's width and height
/// (18 + 20 = 38 hops), so that traffic within a die never leaves the mesh (an assumption; the
/// paper leaves the tables' contents to software).
pub const SHORTCUT_BEYOND_HOPS: u64 = 38;

/// What a mixed run measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MixResult {
    /// The local streams' throughput: the sum of their rates, bytes/s.
    pub local_throughput_bytes_per_s: f64,
    /// The slowest local stream: `bytes` at its rate plus its link's latency, s.
    pub local_last_s: f64,
    /// Global streams: `bytes` at each one's rate plus its route's latency, the mean, s.
    pub global_latency_s: f64,
    /// The most loaded mesh link, a fraction of its bandwidth.
    pub max_link_utilization: f64,
    /// Local streams.
    pub local_transfers: u64,
    /// Global streams.
    pub global_transfers: u64,
    /// Global streams routed through the DIPs.
    pub shortcut_transfers: u64,
    /// Mesh links a global stream occupies, on average.
    pub global_mesh_links: f64,
}

/// The latency of a route (the nodes after `from`), ps.
fn route_latency_ps(d: &Dojo, from: NodeId, path: &[NodeId]) -> u64 {
    let mut at = from;
    let mut ps = 0;
    for &v in path {
        ps += d
            .links_of(at)
            .iter()
            .find(|(n, _)| *n == v)
            .map_or(0, |(_, l)| l.latency.as_ps());
        at = v;
    }
    ps
}

/// Run the mix on `d` (which must have DIPs) with global `fraction` (0 to 1) and `bytes` per
/// transfer.
pub fn mixed(d: &Dojo, fraction: f64, shortcuts: bool, bytes: u64) -> Result<MixResult, String> {
    if d.dips() == 0 {
        return Err(format!(
            "{} has no DIPs: shortcuts need a system with its interface processors (dojo:system=RxC; dojo:tile here means dojo:system=1x1)",
            d.spec().label
        ));
    }
    if !(0.0..=1.0).contains(&fraction) || fraction.is_nan() {
        return Err(format!(
            "--global-fraction {fraction}: expected a fraction from 0 to 1"
        ));
    }
    if bytes == 0 {
        return Err("--bytes: at least one byte".into());
    }
    let (w, h) = (d.width(), d.height());
    // Memory, before the model is built: the network's tables, about 1 KiB a flow, and 20
    // bytes a hop of a global flow's route (up to w + h hops). Measured on dojo:plane: 305 MB
    // with 1% of the routers sending a global transfer, 1.38 GB with half of them; this
    // estimate gives 0.56 and 2.5 GB.
    {
        let routers = u128::from(w) * u128::from(h);
        let globals = if fraction > 0.0 {
            routers.div_ceil(((1.0 / fraction).round() as u128).max(1))
        } else {
            0
        };
        let estimate = podsim_system::machine::model_base_bytes(&Network::Dojo(d.clone())).1
            + (routers + globals) * 1024
            + globals * 20 * u128::from(w + h);
        let limit = podsim_system::machine::memory_limit();
        if estimate > u128::from(limit) {
            return Err(format!(
                "{} local and {globals} global transfers on the {w}x{h} plane need about {}, more than the memory limit of {} (--memory-limit)",
                routers,
                podsim_units::Bytes(u64::try_from(estimate).unwrap_or(u64::MAX)),
                podsim_units::Bytes(limit)
            ));
        }
    }
    let shortcut = if shortcuts {
        Shortcut::Beyond(SHORTCUT_BEYOND_HOPS)
    } else {
        Shortcut::Never
    };
    let mut m = podsim_system::machine::dojo_flow_model(d, shortcut);
    let every = if fraction > 0.0 {
        Some(((1.0 / fraction).round() as u64).max(1))
    } else {
        None
    };
    // Each stream's route latency, by transfer id; which are global.
    let mut latency = std::collections::HashMap::new();
    let mut global_ids = std::collections::HashSet::new();
    let (mut shortcut_n, mut links_sum) = (0u64, 0u64);
    let faults = Faults::new();
    for y in 0..h {
        for x in 0..w {
            let src = d.router(x, y);
            let nx = if x + 1 < w { x + 1 } else { x - 1 };
            let dst = d.router(nx, y);
            let id = m
                .send(SimTime::ZERO, src, dst, Bytes(bytes), 0)
                .map_err(|e| e.to_string())?;
            latency.insert(id, route_latency_ps(d, src, &[dst]));
            if every.is_some_and(|k| src.0.is_multiple_of(k)) {
                let dst = d.router(w - 1 - x, h - 1 - y);
                if dst == src {
                    continue;
                }
                let path = dojo_route(d, &faults, src, dst, shortcut).map_err(|e| e.to_string())?;
                if path
                    .iter()
                    .any(|&v| matches!(d.node(v), Some(DojoNode::Dip(_))))
                {
                    shortcut_n += 1;
                }
                links_sum += mesh_links(d, src, &path);
                let id = m
                    .send(SimTime::ZERO, src, dst, Bytes(bytes), 1)
                    .map_err(|e| e.to_string())?;
                latency.insert(id, route_latency_ps(d, src, &path));
                global_ids.insert(id);
            }
        }
    }
    if global_ids.is_empty() {
        // Nothing would take a shortcut: the comparison would print a global latency of 0.
        return Err(format!(
            "--global-fraction {fraction}: no router of the {w}x{h} plane sends a global transfer; give at least {:.2e} (one router in {})",
            1.0 / (w as f64 * h as f64),
            w as u64 * h as u64
        ));
    }
    let loads = m.link_loads();
    let mesh = loads.len() - 2 * d.node_count() as usize;
    let max_util = loads[..mesh]
        .iter()
        .filter(|(_, c)| *c > 0.0)
        .map(|(l, c)| l / c)
        .fold(0.0, f64::max);
    let (mut local_rate, mut local_last, mut global_sum) = (0f64, 0f64, 0f64);
    let mut local_n = 0u64;
    for (id, rate) in m.rates() {
        let t = bytes as f64 / rate + latency.get(&id).copied().unwrap_or(0) as f64 * 1e-12;
        if global_ids.contains(&id) {
            global_sum += t;
        } else {
            local_n += 1;
            local_rate += rate;
            local_last = local_last.max(t);
        }
    }
    if let Some(f) = m.failure() {
        return Err(f);
    }
    let g = global_ids.len() as u64;
    Ok(MixResult {
        local_throughput_bytes_per_s: local_rate,
        local_last_s: local_last,
        global_latency_s: if g > 0 { global_sum / g as f64 } else { 0.0 },
        max_link_utilization: max_util,
        local_transfers: local_n,
        global_transfers: g,
        shortcut_transfers: shortcut_n,
        global_mesh_links: if g > 0 {
            links_sum as f64 / g as f64
        } else {
            0.0
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use podsim_topology::DojoSpec;

    /// One tile with its DIPs, 5% global traffic: the shortcuts take the global transfers off
    /// the mesh (fewer mesh links per transfer, all of them through the DIPs), and the local
    /// traffic's throughput rises.
    #[test]
    fn shortcuts_raise_local_throughput() {
        let d = Dojo::new(DojoSpec::system(1, 1)).unwrap();
        let off = mixed(&d, 0.05, false, 1 << 20).unwrap();
        let on = mixed(&d, 0.05, true, 1 << 20).unwrap();
        assert_eq!(off.shortcut_transfers, 0);
        assert!(on.shortcut_transfers > 0);
        assert!(on.global_mesh_links < off.global_mesh_links);
        assert!(
            on.local_throughput_bytes_per_s > off.local_throughput_bytes_per_s,
            "{on:?} vs {off:?}"
        );
        let d0 = Dojo::new(DojoSpec::tile()).unwrap();
        assert!(mixed(&d0, 0.05, true, 1 << 20).is_err());
        assert!(mixed(&d, 1.5, true, 1 << 20).is_err());
    }
}
