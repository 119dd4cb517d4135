//! Routing as pure functions: from (topology, current node, packet) to the next hop and the
//! virtual-channel class it must use.
//!
//! # Dimension-order routing
//! A packet corrects its coordinates one dimension at a time, in the order given by
//! [`DimensionOrder`] (ascending `[0, 1, 2]` is X-then-Y-then-Z; `[1, 0]` on a 2-D grid is
//! Y-then-X). Along a mesh dimension it moves straight towards the destination. Along a
//! wrapped dimension it takes the shorter way round; when both ways are equally short (an
//! even ring, destination exactly k/2 away) the [`TieBreak`] decides, `Plus` (towards larger
//! coordinates) by default.
//!
//! # Deadlock freedom: dateline virtual-channel classes
//! Dimension order already forbids any cycle of waits between dimensions; inside a ring the
//! wrap-around link would close one. Each wrapped dimension therefore has a dateline on its
//! wrap-around link (between coordinates k-1 and 0). A packet uses class 0 in a dimension until
//! it crosses that dimension's dateline and class 1 from the crossing hop on, until it turns
//! into the next dimension (where it starts in class 0 again). No minimal route crosses a
//! dateline twice, so class-0 channels never include the wrap link and class-1 channels never
//! include the link into coordinate k-1 from below on the Plus side (nor its mirror on the
//! Minus side): neither class closes a ring, and the channel dependency graph is acyclic
//! (Dally and Seitz). Tests build that graph for every small torus and check it.
//!
//! # Faults
//! [`route_around`] takes any [`podsim_topology::Network`] with failed links and nodes and
//! returns a loop-free surviving path, or says the destination is unreachable.
//!
//! Architecture invariant: routing knows nothing about time, buffers or bandwidth; it is a pure
//! function of the topology and the packet's source, position and destination.

use std::fmt;

mod dojo;
mod faults;
pub use dojo::{Shortcut, dojo_path, dojo_route, mesh_links, xy_path};
pub use faults::{Faults, RouteError, preferred_route, route_around};

use podsim_topology::{Direction, KAryNCube, NodeId, Port, Tofu};

/// An order in which to correct dimensions: a permutation of `0..n`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DimensionOrder(Vec<usize>);

/// Why a dimension order is unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderError(pub String);

impl fmt::Display for OrderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OrderError {}

impl DimensionOrder {
    /// Dimensions in ascending order: 0, 1, 2, ...
    pub fn ascending(ndims: usize) -> Self {
        DimensionOrder((0..ndims).collect())
    }

    /// `order`, which must name each of the `ndims` dimensions exactly once.
    pub fn new(order: Vec<usize>, ndims: usize) -> Result<Self, OrderError> {
        let mut seen = vec![false; ndims];
        for &d in &order {
            if d >= ndims {
                return Err(OrderError(format!(
                    "dimension {d} does not exist (the topology has {ndims})"
                )));
            }
            if std::mem::replace(&mut seen[d], true) {
                return Err(OrderError(format!("dimension {d} is named twice")));
            }
        }
        if order.len() != ndims {
            return Err(OrderError(format!(
                "{} dimensions named, but the topology has {ndims}",
                order.len()
            )));
        }
        Ok(DimensionOrder(order))
    }

    /// The dimensions in the order they are corrected.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }
}

/// Which way to go round a ring when both ways are equally short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TieBreak {
    /// Towards larger coordinates.
    #[default]
    Plus,
    /// Towards smaller coordinates.
    Minus,
}

/// A virtual-channel class: 0 before the dimension's dateline, 1 after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VcClass(pub u8);

/// The dateline rule, written once for every model that splits virtual channels on tori: a
/// route that entered a dimension of size `k` at coordinate `entered` and has taken `steps`
/// hops along it in direction `dir` (this one included) has crossed that dimension's
/// wrap-around link (the dateline, between coordinates k-1 and 0) iff, moving `Plus`,
/// `entered + steps >= k`, or, moving `Minus`, `steps > entered`; it uses class 1 from that
/// hop on and class 0 before. A route walks at most k steps along a dimension (a full turn
/// only on a twisted torus), so it crosses at most once. `wraps`: whether the dimension has
/// wrap-around links at all.
pub fn past_dateline(wraps: bool, dir: Direction, k: u32, entered: u32, steps: u64) -> bool {
    wraps
        && match dir {
            Direction::Plus => u64::from(entered) + steps >= u64::from(k),
            Direction::Minus => steps > u64::from(entered),
        }
}

/// One hop of a path from [`paths`]: where it starts and ends, and on a cube the index of the
/// output port it leaves by (in [`KAryNCube::ports`] order, which tells parallel links apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PathHop {
    /// Where the hop starts.
    pub from: NodeId,
    /// Where it arrives.
    pub to: NodeId,
    /// The output port's index on a cube; `None` elsewhere (one link joins the two nodes).
    pub port: Option<usize>,
}

/// The one routing entry point for every model: the paths a transfer from `src` to `dst`
/// takes by the network's own routing. One path for cubes (minimal dimension-ordered routing,
/// twisted tori included; Tofu and Tenstorrent grids as their tori), DOJO planes (X then Y)
/// and a hybrid's ICI groups; every equal-cost path for fat trees and a hybrid's InfiniBand
/// tree (ECMP). Empty when there is no route.
pub fn paths(net: &podsim_topology::Network, src: NodeId, dst: NodeId) -> Vec<Vec<PathHop>> {
    use podsim_topology::Network;
    let by_nodes = |nodes: &[NodeId]| -> Vec<PathHop> {
        let mut at = src;
        nodes
            .iter()
            .map(|&to| {
                let h = PathHop {
                    from: at,
                    to,
                    port: None,
                };
                at = to;
                h
            })
            .collect()
    };
    match net {
        Network::FatTree(f) => f.paths(src.0, dst.0).iter().map(|p| by_nodes(p)).collect(),
        Network::Dojo(d) => vec![by_nodes(&dojo_path(d, src, dst))],
        Network::Hybrid(h) if h.same_group(src, dst) => vec![by_nodes(&h.ici_path(src, dst))],
        Network::Hybrid(h) => h
            .fat_tree()
            .paths(src.0, dst.0)
            .iter()
            .map(|p| by_nodes(p))
            .collect(),
        Network::Graph(g) => g.paths(src, dst).iter().map(|p| by_nodes(p)).collect(),
        Network::Cube(_) | Network::Tofu(_) | Network::Tenstorrent(_) => {
            let Some(c) = net.cube() else {
                return Vec::new();
            };
            let mut out = Vec::new();
            for h in Routing::Minimal.route(c, src, dst) {
                let Some(i) = c.port_index(h.from, h.port) else {
                    return Vec::new();
                };
                out.push(PathHop {
                    from: h.from,
                    to: h.to,
                    port: Some(i),
                });
            }
            vec![out]
        }
    }
}

/// The number of virtual-channel classes dimension-order routing needs on a torus.
pub const DATELINE_CLASSES: u8 = 2;

/// One hop of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hop {
    /// Where the hop starts.
    pub from: NodeId,
    /// The output port it leaves by.
    pub port: Port,
    /// Where it arrives.
    pub to: NodeId,
    /// The virtual-channel class it must use.
    pub vc: VcClass,
}

/// A closed choice of routing algorithm for k-ary n-cubes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Routing {
    /// Minimal routing for any k-ary n-cube, twisted tori included: walk the minimal
    /// displacement ([`KAryNCube::displacement`]) one dimension at a time in ascending order,
    /// with dateline classes per dimension. On an untwisted cube this is dimension order with
    /// ties to `Plus`; on a twisted torus, where dimension order on the coordinates is not
    /// minimal, it is the dimension-ordered walk of the shortest lattice vector.
    ///
    /// Deadlock freedom: dimensions are still corrected in a fixed order, so waits between
    /// dimensions cannot close a cycle. Along one dimension a route walks at most k steps
    /// (tested), so it crosses that dimension's wrap-around links at most once; class 0 is
    /// used before the crossing and class 1 from it on, and neither class alone can go round
    /// a line of that dimension (on a twisted torus a line closes only after several wraps).
    /// Tests build the channel dependency graph of every route on the named twisted tori.
    Minimal,
    /// Dimension order with dateline classes on wrapped dimensions.
    DimensionOrder {
        /// The order dimensions are corrected in.
        order: DimensionOrder,
        /// The direction taken on a ring when both are minimal.
        tie: TieBreak,
    },
}

impl Routing {
    /// Dimension order, ascending, ties to `Plus`.
    pub fn dimension_order(ndims: usize) -> Self {
        Routing::DimensionOrder {
            order: DimensionOrder::ascending(ndims),
            tie: TieBreak::Plus,
        }
    }

    /// The hop a packet from `src` now at `cur` takes towards `dst`; `None` once it has arrived.
    pub fn next_hop(&self, t: &KAryNCube, src: NodeId, cur: NodeId, dst: NodeId) -> Option<Hop> {
        match self {
            Routing::DimensionOrder { order, tie } => dor_next_hop(t, order, *tie, src, cur, dst),
            Routing::Minimal => minimal_next_hop(t, src, cur, dst),
        }
    }

    /// The whole route from `src` to `dst`.
    pub fn route(&self, t: &KAryNCube, src: NodeId, dst: NodeId) -> Vec<Hop> {
        // The walks below hold where a step along a dimension leaves the others alone (no
        // twist).
        if !t.is_twisted() {
            return match self {
                Routing::Minimal => minimal_route(t, src, dst),
                Routing::DimensionOrder { order, tie } => dor_route(t, order, *tie, src, dst),
            };
        }
        let mut hops = Vec::new();
        let mut cur = src;
        // A minimal route is never longer than the diameter; the bound guards against bad input.
        let limit: u64 = t.dims().iter().map(|&k| u64::from(k)).sum();
        while let Some(h) = self.next_hop(t, src, cur, dst) {
            hops.push(h);
            cur = h.to;
            if hops.len() as u64 > limit {
                break;
            }
        }
        hops
    }
}

/// The direction dimension-order routing takes along `d` from coordinate `c` to `want`.
pub fn direction(t: &KAryNCube, d: usize, c: u32, want: u32, tie: TieBreak) -> Direction {
    let k = t.dims()[d];
    if !t.has_wrap_link(d) {
        return if want > c {
            Direction::Plus
        } else {
            Direction::Minus
        };
    }
    let fwd = if want >= c { want - c } else { want + k - c };
    let back = k - fwd;
    match fwd.cmp(&back) {
        std::cmp::Ordering::Less => Direction::Plus,
        std::cmp::Ordering::Greater => Direction::Minus,
        std::cmp::Ordering::Equal => match tie {
            TieBreak::Plus => Direction::Plus,
            TieBreak::Minus => Direction::Minus,
        },
    }
}

fn minimal_next_hop(t: &KAryNCube, src: NodeId, cur: NodeId, dst: NodeId) -> Option<Hop> {
    let rem = t.displacement(cur, dst);
    let d = rem.iter().position(|&x| x != 0)?;
    let dir = if rem[d] > 0 {
        Direction::Plus
    } else {
        Direction::Minus
    };
    let port = Port { dim: d, dir };
    let to = t.neighbor(cur, port)?;
    // Steps already taken along d: the whole route's displacement minus what remains (the
    // displacement is consistent along a route, see `KAryNCube::displacement`).
    let full = t.displacement(src, dst);
    let taken = (full[d] - rem[d]).unsigned_abs();
    Some(Hop {
        from: cur,
        port,
        to,
        vc: minimal_class(t, cur, port, taken),
    })
}

/// The dateline class of a minimal route's hop from `cur` through `port` after `taken` steps
/// along the port's dimension: the route entered the dimension `taken` steps back.
fn minimal_class(t: &KAryNCube, cur: NodeId, port: Port, taken: u64) -> VcClass {
    let (d, dir) = (port.dim, port.dir);
    let k = u64::from(t.dims()[d]);
    let c = u64::from(t.coord(cur, d));
    let entered = match dir {
        Direction::Plus => (c + k - taken % k) % k,
        Direction::Minus => (c + taken) % k,
    } as u32;
    VcClass(u8::from(past_dateline(
        t.has_wrap_link(d),
        dir,
        k as u32,
        entered,
        taken + 1,
    )))
}

/// [`Routing::route`] for minimal routing on a cube whose dimensions do not shift one another:
/// the hops [`minimal_next_hop`] takes one by one, with the displacement computed once and
/// walked rather than computed again at every hop (two vectors per hop): the displacement of
/// the rest of the way after a step is the same vector less that step (see
/// `KAryNCube::displacement`; tests compare the two over every pair of meshes and tori).
fn minimal_route(t: &KAryNCube, src: NodeId, dst: NodeId) -> Vec<Hop> {
    let full = t.displacement(src, dst);
    let mut rem = full.clone();
    let limit: u64 = t.dims().iter().map(|&k| u64::from(k)).sum();
    let mut hops = Vec::with_capacity(full.iter().map(|x| x.unsigned_abs() as usize).sum());
    let mut cur = src;
    while let Some(d) = rem.iter().position(|&x| x != 0) {
        let dir = if rem[d] > 0 {
            Direction::Plus
        } else {
            Direction::Minus
        };
        let port = Port { dim: d, dir };
        let Some(to) = t.neighbor(cur, port) else {
            break;
        };
        // As `minimal_next_hop`, with the steps already taken along d.
        let taken = (full[d] - rem[d]).unsigned_abs();
        hops.push(Hop {
            from: cur,
            port,
            to,
            vc: minimal_class(t, cur, port, taken),
        });
        rem[d] -= rem[d].signum();
        cur = to;
        if hops.len() as u64 > limit {
            break;
        }
    }
    hops
}

/// [`Routing::route`] for dimension-order routing: the hops [`dor_next_hop`] takes one by
/// one, each dimension walked straight from the source's coordinate in it to the
/// destination's, with its direction chosen once (a step the direction takes leaves that
/// direction the shorter, or the tie's, way; tests compare the two over every pair of random
/// cubes, orders and tie rules).
fn dor_route(
    t: &KAryNCube,
    order: &DimensionOrder,
    tie: TieBreak,
    src: NodeId,
    dst: NodeId,
) -> Vec<Hop> {
    let limit: u64 = t.dims().iter().map(|&k| u64::from(k)).sum();
    let mut hops = Vec::new();
    let mut cur = src;
    for &d in order.dims() {
        // Dimension order enters dimension d at the source's coordinate and walks straight.
        let (entered, want) = (t.coord(src, d), t.coord(dst, d));
        if entered == want {
            continue;
        }
        let dir = direction(t, d, entered, want, tie);
        let port = Port { dim: d, dir };
        let mut c = entered;
        while c != want {
            let Some(to) = t.neighbor(cur, port) else {
                return hops;
            };
            let next = t.coord(to, d);
            hops.push(Hop {
                from: cur,
                port,
                to,
                vc: dor_class(t, port, entered, next),
            });
            (cur, c) = (to, next);
            if hops.len() as u64 > limit {
                return hops;
            }
        }
    }
    hops
}

/// The dateline class of a dimension-order hop through `port` reaching coordinate `next` of
/// the port's dimension, which the route entered at coordinate `entered`.
fn dor_class(t: &KAryNCube, port: Port, entered: u32, next: u32) -> VcClass {
    let (d, dir) = (port.dim, port.dir);
    let k = t.dims()[d];
    let steps = match dir {
        Direction::Plus => (next + k - entered) % k,
        Direction::Minus => (entered + k - next) % k,
    };
    VcClass(u8::from(past_dateline(
        t.has_wrap_link(d),
        dir,
        k,
        entered,
        u64::from(steps),
    )))
}

fn dor_next_hop(
    t: &KAryNCube,
    order: &DimensionOrder,
    tie: TieBreak,
    src: NodeId,
    cur: NodeId,
    dst: NodeId,
) -> Option<Hop> {
    for &d in order.dims() {
        let c = t.coord(cur, d);
        let want = t.coord(dst, d);
        if c == want {
            continue;
        }
        let dir = direction(t, d, c, want, tie);
        let port = Port { dim: d, dir };
        let to = t.neighbor(cur, port)?;
        // Dimension order enters dimension d at the source's coordinate and walks straight.
        return Some(Hop {
            from: cur,
            port,
            to,
            vc: dor_class(t, port, t.coord(src, d), t.coord(to, d)),
        });
    }
    None
}

/// The physical path of a message on a Tofu network routed on its virtual 3-D torus: dimension
/// order (ascending, ties to `Plus`, dateline classes) on the virtual torus, each virtual hop
/// being one physical link. Returns the physical nodes visited after `src`, ending at `dst`, or
/// `None` when the shape has no virtual torus or a node does not exist.
pub fn tofu_virtual_route(t: &Tofu, src: NodeId, dst: NodeId) -> Option<Vec<(NodeId, VcClass)>> {
    let v = t.virtual_torus()?;
    let (vs, vd) = (t.virtual_of(src)?, t.virtual_of(dst)?);
    Routing::dimension_order(3)
        .route(v, vs, vd)
        .into_iter()
        .map(|h| t.physical_of(h.to).map(|p| (p, h.vc)))
        .collect()
}

#[cfg(test)]
mod tests;
