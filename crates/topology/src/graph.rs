//! A network given as an explicit graph: chips, NICs and switches joined by links, as a machine
//! file describes it (a GPU cluster's NVSwitch and rail-optimised fat tree, a TPU host, any
//! fabric that is not one of the shaped presets).
//!
//! Node ids: the chips first (`0 .. chips`, in rank order), then every NIC and switch. Links are
//! full duplex, at most one between two nodes (a bundle of parallel cables is one link of their
//! summed bandwidth). A switch's traversal time is charged on the links that leave it, so a
//! route through a switch pays it once. Chips forward traffic only when the graph says so (a
//! torus of chips does, a GPU does not: its traffic enters the fabric through its own links).
//!
//! Routing is minimal in hops through nodes that forward: every equal-cost path, in link order,
//! up to [`MAX_PATHS`] (ECMP).

use std::collections::VecDeque;

use podsim_units::SimDuration;

use crate::metrics::{BisectionMethod, DistanceMethod, Metrics, all_to_all_bound};
use crate::{LinkKind, LinkSpec, NodeId, TopologyError};

/// The most equal-cost paths [`Graph::paths`] lists for one pair.
pub const MAX_PATHS: usize = 64;

/// The most nodes a graph may have (chips, NICs and switches).
pub const MAX_GRAPH_NODES: u64 = 1 << 22;

/// What a node of a graph is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphNodeKind {
    /// A chip: it sends and receives traffic (an endpoint).
    Chip,
    /// A network interface between a chip and a fabric.
    Nic,
    /// A switch.
    Switch,
}

impl GraphNodeKind {
    /// The lower-case name used in files and reports.
    pub fn name(self) -> &'static str {
        match self {
            GraphNodeKind::Chip => "chip",
            GraphNodeKind::Nic => "nic",
            GraphNodeKind::Switch => "switch",
        }
    }
}

/// A node that is not a chip: a NIC or a switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphNode {
    /// What it is (not [`GraphNodeKind::Chip`]: chips are numbered, not listed).
    pub kind: GraphNodeKind,
    /// Its name in reports (`nvswitch.3`, `leaf.rail2.0`).
    pub name: String,
    /// The time a transfer spends crossing it, charged on the links that leave it.
    pub latency: SimDuration,
}

/// A link of a graph as given: its two ends and its spec (the same both ways).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphLink {
    /// One end.
    pub a: NodeId,
    /// The other end.
    pub b: NodeId,
    /// Kind, bandwidth per direction and time of flight.
    pub spec: LinkSpec,
}

/// A network given node by node and link by link (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    label: String,
    chips: u64,
    others: Vec<GraphNode>,
    links: Vec<GraphLink>,
    /// Per node, the directed links leaving it: (target, spec with the node's latency added).
    adjacency: Vec<Vec<(NodeId, LinkSpec)>>,
    chips_forward: bool,
    grid: Vec<u32>,
    endpoint_overhead: SimDuration,
}

impl Graph {
    /// A graph of `chips` chips (ids `0 .. chips`) and the NICs and switches `others` (ids
    /// from `chips` on), joined by `links`. `chips_forward`: whether a route may pass through a
    /// chip. `grid`: how the ranks fill the machine for algorithms that work one dimension at a
    /// time, fastest first (`[8, nodes]`: eight chips a node), its product the chip count
    /// (empty: one dimension of every chip).
    ///
    /// Errors: no chips, too many nodes, a link to a node that does not exist, to itself or
    /// twice between the same nodes, a chip with no link, a chip that cannot reach the others,
    /// a NIC or switch given as a chip, a grid whose product is not the chip count.
    pub fn new(
        label: &str,
        chips: u64,
        others: Vec<GraphNode>,
        links: Vec<GraphLink>,
        chips_forward: bool,
        grid: Vec<u32>,
    ) -> Result<Graph, TopologyError> {
        if chips == 0 {
            return Err(TopologyError::new(
                "chips",
                "a machine needs at least one chip",
            ));
        }
        let total = chips + others.len() as u64;
        if total > MAX_GRAPH_NODES {
            return Err(TopologyError::new(
                "nodes",
                format!(
                    "{total} chips, NICs and switches is more than the {MAX_GRAPH_NODES} supported"
                ),
            ));
        }
        if let Some(o) = others.iter().find(|o| o.kind == GraphNodeKind::Chip) {
            return Err(TopologyError::new(
                "nodes",
                format!(
                    "`{}` is listed as a chip among the NICs and switches",
                    o.name
                ),
            ));
        }
        let grid = if grid.is_empty() {
            vec![u32::try_from(chips).map_err(|_| {
                TopologyError::new("chips", format!("{chips} chips is more than 2^32"))
            })?]
        } else {
            grid
        };
        let product: u64 = grid.iter().map(|&g| u64::from(g)).product();
        if product != chips || grid.contains(&0) {
            return Err(TopologyError::new(
                "grid",
                format!("the rank grid {grid:?} does not hold the {chips} chips exactly"),
            ));
        }
        let mut adjacency: Vec<Vec<(NodeId, LinkSpec)>> = vec![Vec::new(); total as usize];
        let latency_of = |n: NodeId| -> SimDuration {
            if n.0 < chips {
                SimDuration::ZERO
            } else {
                others[(n.0 - chips) as usize].latency
            }
        };
        let mut seen = std::collections::HashSet::new();
        for l in &links {
            for end in [l.a, l.b] {
                if end.0 >= total {
                    return Err(TopologyError::new(
                        "links",
                        format!("a link names node {end}, past the last of {total}"),
                    ));
                }
            }
            if l.a == l.b {
                return Err(TopologyError::new(
                    "links",
                    format!("a link joins node {} to itself", l.a),
                ));
            }
            if !seen.insert((l.a.min(l.b), l.a.max(l.b))) {
                return Err(TopologyError::new(
                    "links",
                    format!(
                        "two links join {} and {}: give one link of their summed bandwidth",
                        l.a, l.b
                    ),
                ));
            }
            if l.spec.bandwidth.bytes_per_s() == 0 {
                return Err(TopologyError::new(
                    "links",
                    format!("the link between {} and {} has no bandwidth", l.a, l.b),
                ));
            }
            for (from, to) in [(l.a, l.b), (l.b, l.a)] {
                let mut spec = l.spec;
                spec.latency = SimDuration::from_ps(
                    spec.latency
                        .as_ps()
                        .saturating_add(latency_of(from).as_ps()),
                );
                adjacency[from.0 as usize].push((to, spec));
            }
        }
        let g = Graph {
            label: label.to_string(),
            chips,
            others,
            links,
            adjacency,
            chips_forward,
            grid,
            endpoint_overhead: SimDuration::ZERO,
        };
        if let Some(c) = (0..chips).find(|&c| g.adjacency[c as usize].is_empty()) {
            return Err(TopologyError::new("links", format!("chip {c} has no link")));
        }
        let dist = g.distances_from(NodeId(0));
        if let Some(c) = (0..chips).find(|&c| dist[c as usize] == u32::MAX) {
            return Err(TopologyError::new(
                "links",
                format!("chip {c} cannot be reached from chip 0"),
            ));
        }
        Ok(g)
    }

    /// The same graph with a one-way transfer paying `overhead` outside the network (a
    /// software and NIC cost per message, sender plus receiver).
    pub fn with_endpoint_overhead(mut self, overhead: SimDuration) -> Graph {
        self.endpoint_overhead = overhead;
        self
    }

    /// What a one-way transfer pays outside the network.
    pub fn endpoint_overhead(&self) -> SimDuration {
        self.endpoint_overhead
    }

    /// The machine's name.
    pub fn label(&self) -> &str {
        &self.label
    }
    /// Chips (the endpoints).
    pub fn chips(&self) -> u64 {
        self.chips
    }
    /// Every node: chips, NICs and switches.
    pub fn node_count(&self) -> u64 {
        self.chips + self.others.len() as u64
    }
    /// The NICs and switches, in id order from [`Graph::chips`].
    pub fn others(&self) -> &[GraphNode] {
        &self.others
    }
    /// Switches.
    pub fn switches(&self) -> u64 {
        self.others
            .iter()
            .filter(|o| o.kind == GraphNodeKind::Switch)
            .count() as u64
    }
    /// The links as given.
    pub fn links(&self) -> &[GraphLink] {
        &self.links
    }
    /// How the ranks fill the machine, fastest dimension first.
    pub fn grid(&self) -> &[u32] {
        &self.grid
    }
    /// Whether routes may pass through chips.
    pub fn chips_forward(&self) -> bool {
        self.chips_forward
    }
    /// What node `n` is.
    pub fn kind(&self, n: NodeId) -> Option<GraphNodeKind> {
        if n.0 < self.chips {
            Some(GraphNodeKind::Chip)
        } else {
            self.others.get((n.0 - self.chips) as usize).map(|o| o.kind)
        }
    }

    /// The directed links leaving `n`, in the order the links were given.
    pub fn links_from(&self, n: NodeId) -> Vec<(NodeId, LinkSpec)> {
        self.adjacency
            .get(n.0 as usize)
            .cloned()
            .unwrap_or_default()
    }

    /// What one chip can send at once: the sum of its links' bandwidths, bytes/s.
    pub fn injection(&self, chip: NodeId) -> u64 {
        self.adjacency.get(chip.0 as usize).map_or(0, |a| {
            a.iter().map(|(_, s)| s.bandwidth.bytes_per_s()).sum()
        })
    }

    /// The link of least latency (a per-hop latency no route beats).
    pub fn fastest_link(&self) -> LinkSpec {
        self.links
            .iter()
            .map(|l| l.spec)
            .min_by_key(|s| (s.latency, std::cmp::Reverse(s.bandwidth)))
            .unwrap_or_else(|| self.adjacency[0][0].1)
    }

    fn forwards(&self, n: usize) -> bool {
        n as u64 >= self.chips || self.chips_forward
    }

    /// Hops from every node to `dst` through nodes that forward (`u32::MAX`: no route).
    fn distances_from(&self, dst: NodeId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.adjacency.len()];
        let mut queue = VecDeque::new();
        dist[dst.0 as usize] = 0;
        queue.push_back(dst.0 as usize);
        while let Some(u) = queue.pop_front() {
            // Only the destination itself and forwarding nodes pass a route on.
            if u != dst.0 as usize && !self.forwards(u) {
                continue;
            }
            for &(v, _) in &self.adjacency[u] {
                let v = v.0 as usize;
                if dist[v] == u32::MAX {
                    dist[v] = dist[u] + 1;
                    queue.push_back(v);
                }
            }
        }
        dist
    }

    /// The minimal routes from `src` to `dst` through forwarding nodes, as the nodes after
    /// `src`, every equal-cost one in link order up to [`MAX_PATHS`]; empty when there is none
    /// (or `src == dst`).
    pub fn paths(&self, src: NodeId, dst: NodeId) -> Vec<Vec<NodeId>> {
        let n = self.adjacency.len() as u64;
        if src == dst || src.0 >= n || dst.0 >= n {
            return Vec::new();
        }
        let dist = self.distances_from(dst);
        if dist[src.0 as usize] == u32::MAX {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.walk(src.0 as usize, dst.0 as usize, &dist, &mut path, &mut out);
        out
    }

    fn walk(
        &self,
        at: usize,
        dst: usize,
        dist: &[u32],
        path: &mut Vec<NodeId>,
        out: &mut Vec<Vec<NodeId>>,
    ) {
        if out.len() >= MAX_PATHS {
            return;
        }
        if at == dst {
            out.push(path.clone());
            return;
        }
        for &(v, _) in &self.adjacency[at] {
            let vi = v.0 as usize;
            if dist[vi] != u32::MAX && dist[vi] + 1 == dist[at] && (vi == dst || self.forwards(vi))
            {
                path.push(v);
                self.walk(vi, dst, dist, path, out);
                path.pop();
            }
        }
    }

    /// The metrics: distances by breadth-first search from every chip; the bisection as the
    /// maximum flow between the first and the second half of the chips in rank order (the
    /// bandwidth of that split, which bounds the bisection from above and is exact for the
    /// symmetric fabrics machine files describe).
    pub fn metrics(&self) -> Metrics {
        let chips = self.chips as usize;
        let (mut sum, mut far) = (0u64, 0u64);
        for c in 0..chips {
            let dist = self.distances_from(NodeId(c as u64));
            for (i, &d) in dist[..chips].iter().enumerate() {
                if i != c && d != u32::MAX {
                    sum += u64::from(d);
                    far = far.max(u64::from(d));
                }
            }
        }
        let pairs = (chips * chips.saturating_sub(1)) as f64;
        let (cut_links, one_way) = self.half_cut();
        let bisection = 2 * one_way;
        let injection = (0..self.chips)
            .map(|c| self.injection(NodeId(c)))
            .max()
            .unwrap_or(0);
        let total_injection = (0..self.chips)
            .map(|c| u128::from(self.injection(NodeId(c))))
            .sum();
        let (a2a, limited_by) = all_to_all_bound(self.chips, bisection, injection);
        let mut by_kind: Vec<(LinkKind, u64)> = LinkKind::ALL
            .iter()
            .map(|&k| {
                (
                    k,
                    self.links.iter().filter(|l| l.spec.kind == k).count() as u64,
                )
            })
            .filter(|k| k.1 > 0)
            .collect();
        by_kind.sort_by_key(|k| k.0);
        let degrees = self.adjacency.iter().map(|a| a.len() as u32);
        Metrics {
            nodes: self.chips,
            links: self.links.len() as u64,
            links_by_kind: by_kind,
            degree_max: degrees.clone().max().unwrap_or(0),
            degree_min: degrees.min().unwrap_or(0),
            diameter: far,
            average_distance: if pairs > 0.0 { sum as f64 / pairs } else { 0.0 },
            distance_method: DistanceMethod::BfsAllSources,
            bisection_links: cut_links,
            bisection_bandwidth_bytes_per_s: bisection,
            bisection_method: BisectionMethod::MaxFlowHalves,
            switches: self.switches(),
            interfaces: 1,
            injection_bandwidth_bytes_per_s: injection,
            total_injection_bandwidth_bytes_per_s: total_injection,
            all_to_all_bytes_per_s_per_node: a2a,
            all_to_all_limited_by: limited_by,
        }
    }

    /// The maximum flow, one way, from the first half of the chips to the second (Dinic's
    /// algorithm on the links' bandwidths, routes through forwarding nodes only), and the links
    /// of a minimum cut.
    fn half_cut(&self) -> (u64, u128) {
        let chips = self.chips as usize;
        if chips < 2 {
            return (0, 0);
        }
        let n = self.adjacency.len();
        let (source, sink) = (n, n + 1);
        let mut flow = MaxFlow::new(n + 2);
        // A chip that does not forward only sends (first half) or receives (second half).
        for (u, adj) in self.adjacency.iter().enumerate() {
            for &(v, spec) in adj {
                let v = v.0 as usize;
                let from_ok = self.forwards(u) || u < chips / 2;
                let to_ok = self.forwards(v) || v >= chips / 2;
                if from_ok && to_ok {
                    flow.add(u, v, u128::from(spec.bandwidth.bytes_per_s()));
                }
            }
        }
        for c in 0..chips {
            if c < chips / 2 {
                flow.add(source, c, u128::MAX / 4);
            } else {
                flow.add(c, sink, u128::MAX / 4);
            }
        }
        let total = flow.run(source, sink);
        let side = flow.reachable(source);
        let cut = self
            .links
            .iter()
            .filter(|l| side[l.a.0 as usize] != side[l.b.0 as usize])
            .count() as u64;
        (cut, total)
    }
}

/// Dinic's maximum flow on a small directed graph.
struct MaxFlow {
    head: Vec<Vec<usize>>,
    to: Vec<usize>,
    cap: Vec<u128>,
}

impl MaxFlow {
    fn new(n: usize) -> Self {
        MaxFlow {
            head: vec![Vec::new(); n],
            to: Vec::new(),
            cap: Vec::new(),
        }
    }

    fn add(&mut self, u: usize, v: usize, c: u128) {
        self.head[u].push(self.to.len());
        self.to.push(v);
        self.cap.push(c);
        self.head[v].push(self.to.len());
        self.to.push(u);
        self.cap.push(0);
    }

    fn levels(&self, s: usize) -> Vec<u32> {
        let mut level = vec![u32::MAX; self.head.len()];
        let mut queue = VecDeque::from([s]);
        level[s] = 0;
        while let Some(u) = queue.pop_front() {
            for &e in &self.head[u] {
                let v = self.to[e];
                if self.cap[e] > 0 && level[v] == u32::MAX {
                    level[v] = level[u] + 1;
                    queue.push_back(v);
                }
            }
        }
        level
    }

    fn run(&mut self, s: usize, t: usize) -> u128 {
        let mut total = 0u128;
        loop {
            let level = self.levels(s);
            if level[t] == u32::MAX {
                return total;
            }
            let mut next = vec![0usize; self.head.len()];
            loop {
                let pushed = self.push(s, t, u128::MAX, &level, &mut next);
                if pushed == 0 {
                    break;
                }
                total += pushed;
            }
        }
    }

    /// One augmenting path in the level graph, iteratively (no recursion depth limit).
    fn push(&mut self, s: usize, t: usize, limit: u128, level: &[u32], next: &mut [usize]) -> u128 {
        let mut stack: Vec<usize> = Vec::new(); // edges on the current path
        let mut u = s;
        loop {
            if u == t {
                let f = stack.iter().map(|&e| self.cap[e]).fold(limit, u128::min);
                for &e in &stack {
                    self.cap[e] -= f;
                    self.cap[e ^ 1] += f;
                }
                return f;
            }
            let mut advanced = false;
            while next[u] < self.head[u].len() {
                let e = self.head[u][next[u]];
                let v = self.to[e];
                if self.cap[e] > 0 && level[v] == level[u] + 1 {
                    stack.push(e);
                    u = v;
                    advanced = true;
                    break;
                }
                next[u] += 1;
            }
            if !advanced {
                // Dead end: retreat one edge and skip it from its tail.
                let Some(e) = stack.pop() else {
                    return 0;
                };
                u = self.to[e ^ 1];
                next[u] += 1;
            }
        }
    }

    fn reachable(&self, s: usize) -> Vec<bool> {
        let level = self.levels(s);
        level.iter().map(|&l| l != u32::MAX).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(gbps: u64, ns: u64) -> LinkSpec {
        LinkSpec {
            kind: LinkKind::Electrical,
            bandwidth: podsim_units::Bandwidth::from_gbps(gbps).unwrap(),
            latency: SimDuration::from_ps(ns * 1000),
        }
    }

    fn switch(name: &str, ns: u64) -> GraphNode {
        GraphNode {
            kind: GraphNodeKind::Switch,
            name: name.into(),
            latency: SimDuration::from_ps(ns * 1000),
        }
    }

    fn l(a: u64, b: u64, spec: LinkSpec) -> GraphLink {
        GraphLink {
            a: NodeId(a),
            b: NodeId(b),
            spec,
        }
    }

    /// Four chips on one switch (node 4), links of 10 GB/s and 5 ns, a switch of 100 ns.
    fn star() -> Graph {
        let links = (0..4).map(|c| l(c, 4, link(10, 5))).collect();
        Graph::new("star", 4, vec![switch("sw", 100)], links, false, Vec::new()).unwrap()
    }

    #[test]
    fn a_route_through_a_switch_pays_its_latency_once() {
        let g = star();
        assert_eq!(
            g.paths(NodeId(0), NodeId(3)),
            vec![vec![NodeId(4), NodeId(3)]]
        );
        // Leaving chip 0: 5 ns of flight; leaving the switch: 5 ns + its 100 ns.
        let out0 = g.links_from(NodeId(0));
        let out_sw = g.links_from(NodeId(4));
        let total = out0[0].1.latency.as_ps() + out_sw[3].1.latency.as_ps();
        assert_eq!(total, 110_000);
    }

    #[test]
    fn chips_that_do_not_forward_are_never_crossed() {
        // A line 0 - 1 - 2 of chips: reachable only if chips forward.
        let line = || vec![l(0, 1, link(10, 0)), l(1, 2, link(10, 0))];
        let e = Graph::new("line", 3, Vec::new(), line(), false, Vec::new()).unwrap_err();
        assert!(e.why.contains("cannot be reached"), "{e}");
        let g = Graph::new("line", 3, Vec::new(), line(), true, Vec::new()).unwrap();
        assert_eq!(
            g.paths(NodeId(0), NodeId(2)),
            vec![vec![NodeId(1), NodeId(2)]]
        );
    }

    #[test]
    fn equal_cost_paths_are_all_listed_in_link_order() {
        // Chips 0 and 1 each linked to switches 2 and 3: two paths of two hops.
        let links = vec![
            l(0, 2, link(10, 0)),
            l(0, 3, link(10, 0)),
            l(1, 2, link(10, 0)),
            l(1, 3, link(10, 0)),
        ];
        let g = Graph::new(
            "two",
            2,
            vec![switch("a", 0), switch("b", 0)],
            links,
            false,
            Vec::new(),
        )
        .unwrap();
        assert_eq!(
            g.paths(NodeId(0), NodeId(1)),
            vec![vec![NodeId(2), NodeId(1)], vec![NodeId(3), NodeId(1)]]
        );
    }

    #[test]
    fn the_bisection_is_the_flow_between_the_halves() {
        // Star of four chips at 10 GB/s: chips 0 and 1 can send 20 GB/s to chips 2 and 3 (their
        // own links bind), 40 GB/s both ways, and the cut is their two links.
        let m = star().metrics();
        assert_eq!(m.bisection_bandwidth_bytes_per_s, 40_000_000_000);
        assert_eq!(m.bisection_links, 2);
        // Every pair two hops apart (through the switch).
        assert_eq!((m.diameter, m.average_distance), (2, 2.0));
        assert_eq!((m.switches, m.nodes, m.links), (1, 4, 4));
        assert_eq!(m.injection_bandwidth_bytes_per_s, 10_000_000_000);
    }

    #[test]
    fn bad_graphs_are_refused_with_the_reason() {
        let dup = vec![l(0, 1, link(10, 0)), l(1, 0, link(10, 0))];
        let e = Graph::new("dup", 2, Vec::new(), dup, true, Vec::new()).unwrap_err();
        assert!(e.why.contains("summed bandwidth"), "{e}");
        let past = vec![l(0, 7, link(10, 0))];
        let e = Graph::new("past", 2, Vec::new(), past, true, Vec::new()).unwrap_err();
        assert!(e.why.contains("past the last"), "{e}");
        let lonely = vec![l(0, 1, link(10, 0))];
        let e = Graph::new("lonely", 3, Vec::new(), lonely, true, Vec::new()).unwrap_err();
        assert!(e.why.contains("chip 2 has no link"), "{e}");
        let links = (0..4).map(|c| l(c, 4, link(10, 0))).collect();
        let e = Graph::new("grid", 4, vec![switch("s", 0)], links, false, vec![3, 2]).unwrap_err();
        assert_eq!(e.key, "grid");
    }
}
