//! Routing on a DOJO plane (dojo-microarchitecture.txt, "System Network").
//!
//! By default a packet follows its row, then its column, to the destination (X then Y). Each
//! die's routing table can do two more things, both modelled here:
//! * turn a packet off its row or column to avoid a failed link or router: when the X-then-Y
//!   path crosses a fault the packet takes a shortest surviving path instead
//!   ([`crate::route_around`]);
//! * send a far-travelling packet to the nearest DIP, over Ethernet through the switch to the
//!   DIP nearest the destination, and back into the mesh (the Z-dimension shortcut). The
//!   [`Shortcut`] policy decides when.

use podsim_topology::{Dojo, DojoNode, Network, NodeId};

use crate::{Faults, RouteError, route_around};

/// When to take the DIP shortcut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    /// Always stay in the mesh.
    Never,
    /// Take it when the mesh route is longer than this many hops and the shortcut occupies
    /// fewer mesh links.
    Beyond(u64),
}

/// The X-then-Y mesh path between two routers, as the routers after `a`.
pub fn xy_path(d: &Dojo, a: NodeId, b: NodeId) -> Vec<NodeId> {
    let (Some(DojoNode::Router { mut x, mut y }), Some(DojoNode::Router { x: bx, y: by })) =
        (d.node(a), d.node(b))
    else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(x.abs_diff(bx) as usize + y.abs_diff(by) as usize);
    while x != bx {
        x = if bx > x { x + 1 } else { x - 1 };
        out.push(d.router(x, y));
    }
    while y != by {
        y = if by > y { y + 1 } else { y - 1 };
        out.push(d.router(x, y));
    }
    out
}

/// The path between any two nodes of a plane, as the nodes after `a`: X then Y between
/// routers; an interface processor enters and leaves the mesh at its router; a host reaches a
/// DIP of its own directly and anything else through its first DIP; the switch reaches every
/// DIP directly and the mesh through the DIP nearest the destination. Empty when `a == b` or
/// either node does not exist.
pub fn dojo_path(d: &Dojo, a: NodeId, b: NodeId) -> Vec<NodeId> {
    let (Some(na), Some(nb)) = (d.node(a), d.node(b)) else {
        return Vec::new();
    };
    if a == b {
        return Vec::new();
    }
    if let (DojoNode::Router { .. }, DojoNode::Router { .. }) = (na, nb) {
        return xy_path(d, a, b);
    }
    if d.links_of(a).iter().any(|&(v, _)| v == b) {
        return vec![b];
    }
    let host_dip = |h: u32| d.id(DojoNode::Dip(h * podsim_topology::DIPS_PER_HOST));
    // Host and switch meet at the host's first DIP.
    match (na, nb) {
        (DojoNode::Host(h), DojoNode::Switch) => return vec![host_dip(h), b],
        (DojoNode::Switch, DojoNode::Host(h)) => return vec![host_dip(h), b],
        _ => {}
    }
    // The chain from a non-router node to the mesh router it enters at, `toward` the other
    // end: the nodes after it, ending at the router.
    let chain = |n: DojoNode, toward: NodeId| -> Vec<NodeId> {
        match n {
            DojoNode::Router { .. } => Vec::new(),
            DojoNode::Dip(i) => vec![d.dip_entry(i, toward)],
            DojoNode::Host(h) => {
                let dip = h * podsim_topology::DIPS_PER_HOST;
                vec![d.id(DojoNode::Dip(dip)), d.dip_entry(dip, toward)]
            }
            DojoNode::Switch => {
                let dip = d.nearest_dip(toward).unwrap_or(0);
                vec![d.id(DojoNode::Dip(dip)), d.dip_entry(dip, toward)]
            }
        }
    };
    let up = chain(na, b);
    let ra = up.last().copied().unwrap_or(a);
    let down = chain(nb, a);
    let rb = down.last().copied().unwrap_or(b);
    let mut out = up;
    out.extend(xy_path(d, ra, rb));
    // The way down is the chain from b reversed, minus the router already reached, then b.
    out.extend(down.iter().rev().skip(1).copied());
    if !down.is_empty() {
        out.push(b);
    }
    out
}

/// Mesh links a path occupies: hops between two routers.
pub fn mesh_links(d: &Dojo, from: NodeId, path: &[NodeId]) -> u64 {
    let mut at = from;
    let mut n = 0;
    for &v in path {
        if matches!(d.node(at), Some(DojoNode::Router { .. }))
            && matches!(d.node(v), Some(DojoNode::Router { .. }))
        {
            n += 1;
        }
        at = v;
    }
    n
}

/// The route from router `src` to router `dst`: X then Y, around faults, and through the DIPs
/// when `shortcut` says so. Returns the nodes after `src`.
pub fn dojo_route(
    d: &Dojo,
    faults: &Faults,
    src: NodeId,
    dst: NodeId,
    shortcut: Shortcut,
) -> Result<Vec<NodeId>, RouteError> {
    let leg = |a: NodeId, b: NodeId| -> Result<Vec<NodeId>, RouteError> {
        let p = dojo_path(d, a, b);
        let mut at = a;
        if p.iter().all(|&v| {
            let ok = faults.hop_ok(at, v);
            at = v;
            ok
        }) {
            Ok(p)
        } else {
            route_around(&Network::Dojo(d.clone()), faults, a, b)
        }
    };
    let direct = leg(src, dst);
    let Shortcut::Beyond(limit) = shortcut else {
        return direct;
    };
    let (Some(a), Some(b)) = (d.nearest_dip(src), d.nearest_dip(dst)) else {
        return direct;
    };
    if d.mesh_distance(src, dst) <= limit || a == b {
        return direct;
    }
    let (ra, rb) = (d.dip_entry(a, src), d.dip_entry(b, dst));
    let (da, db, sw) = (
        d.id(DojoNode::Dip(a)),
        d.id(DojoNode::Dip(b)),
        d.id(DojoNode::Switch),
    );
    let via_ok = faults.hop_ok(ra, da)
        && faults.hop_ok(da, sw)
        && faults.hop_ok(sw, db)
        && faults.hop_ok(db, rb);
    if !via_ok {
        return direct;
    }
    let mut via = leg(src, ra)?;
    via.extend([da, sw, db, rb]);
    via.extend(leg(rb, dst)?);
    match &direct {
        Ok(p) if mesh_links(d, src, p) <= mesh_links(d, src, &via) => direct,
        _ => Ok(via),
    }
}
