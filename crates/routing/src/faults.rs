//! Routing around failed links and nodes, on any [`Network`].
//!
//! The preferred route is the network's own (minimal dimension-ordered routing on cubes and
//! Tofu, the first equal-cost path on a fat tree). When a failed link or node lies on it, the
//! packet takes instead a shortest path through what survives (breadth-first, neighbours tried
//! in the order the topology lists them, so the choice is deterministic). Either way the path
//! is loop-free; when nothing survives between the two ends the answer is
//! [`RouteError::Unreachable`].

use std::collections::{HashSet, VecDeque};

use podsim_topology::{Network, NodeId};

/// Failed links (either direction) and failed nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    links: HashSet<(u64, u64)>,
    nodes: HashSet<u64>,
}

/// Why no route exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteError {
    /// The source or destination itself has failed.
    FailedEndpoint(NodeId),
    /// Every path between them crosses a failure.
    Unreachable {
        /// Where the packet starts.
        src: NodeId,
        /// Where it should go.
        dst: NodeId,
    },
}

impl std::fmt::Display for RouteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RouteError::FailedEndpoint(n) => write!(f, "node {n} has failed"),
            RouteError::Unreachable { src, dst } => {
                write!(f, "no surviving path from {src} to {dst}")
            }
        }
    }
}

impl std::error::Error for RouteError {}

impl Faults {
    /// No failures.
    pub fn new() -> Self {
        Self::default()
    }
    /// Fail every link between `a` and `b`.
    pub fn fail_link(&mut self, a: NodeId, b: NodeId) {
        self.links.insert((a.0.min(b.0), a.0.max(b.0)));
    }
    /// Fail node `n` (and so every link that touches it).
    pub fn fail_node(&mut self, n: NodeId) {
        self.nodes.insert(n.0);
    }
    /// Whether a hop from `a` to `b` is still possible.
    pub fn hop_ok(&self, a: NodeId, b: NodeId) -> bool {
        !self.nodes.contains(&a.0)
            && !self.nodes.contains(&b.0)
            && !self.links.contains(&(a.0.min(b.0), a.0.max(b.0)))
    }
    /// Whether nothing has failed.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty() && self.nodes.is_empty()
    }
}

/// The network's own route from `src` to `dst`, as the nodes after `src` (the first of
/// [`crate::paths`]).
pub fn preferred_route(net: &Network, src: NodeId, dst: NodeId) -> Vec<NodeId> {
    crate::paths(net, src, dst)
        .into_iter()
        .next()
        .map(|p| p.into_iter().map(|h| h.to).collect())
        .unwrap_or_default()
}

/// A loop-free route from `src` to `dst` that avoids every fault (see the module docs).
pub fn route_around(
    net: &Network,
    faults: &Faults,
    src: NodeId,
    dst: NodeId,
) -> Result<Vec<NodeId>, RouteError> {
    for n in [src, dst] {
        if faults.nodes.contains(&n.0) {
            return Err(RouteError::FailedEndpoint(n));
        }
    }
    let preferred = preferred_route(net, src, dst);
    let mut at = src;
    let clean = preferred.iter().all(|&n| {
        let ok = faults.hop_ok(at, n);
        at = n;
        ok
    });
    if clean && (src == dst || !preferred.is_empty()) {
        return Ok(preferred);
    }
    // Breadth-first search through the survivors.
    let n = usize::try_from(net.node_count()).unwrap_or(usize::MAX);
    let mut prev = vec![u64::MAX; n];
    prev[src.0 as usize] = src.0;
    let mut queue = VecDeque::from([src]);
    while let Some(u) = queue.pop_front() {
        if u == dst {
            break;
        }
        for v in net.neighbors(u) {
            if prev[v.0 as usize] == u64::MAX && faults.hop_ok(u, v) {
                prev[v.0 as usize] = u.0;
                queue.push_back(v);
            }
        }
    }
    if prev[dst.0 as usize] == u64::MAX {
        return Err(RouteError::Unreachable { src, dst });
    }
    let mut path = Vec::new();
    let mut v = dst.0;
    while v != src.0 {
        path.push(NodeId(v));
        v = prev[v as usize];
    }
    path.reverse();
    Ok(path)
}
