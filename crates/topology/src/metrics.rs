//! Exact metrics of a k-ary n-cube, by closed form (any size) or exhaustive search (small).
//!
//! Conventions:
//! * `links` counts bidirectional links (cables); each carries its bandwidth in both directions.
//! * Distances are hop counts of minimal routes; the average is over ordered pairs of distinct
//!   nodes.
//! * The bisection splits the nodes into halves of `floor(N/2)` and `ceil(N/2)`. Its width is the
//!   number of links cut; its bandwidth counts **both directions** of every cut link, as the Tofu
//!   paper does (tofu-interconnect-d.txt, section II.A: 46.1 TB/s for the K computer).
//!
//! Closed forms used (per dimension d of size k, with N nodes in all):
//! * links: `N/k × (k-1)` on a mesh dimension, `N/k × k` on a wrapped one;
//! * diameter: sum of `k-1` (mesh) or `floor(k/2)` (torus);
//! * sum of distances over all ordered pairs: `Σ_d (N/k)² × T(k)` with `T = (k³-k)/3` on a mesh
//!   line and `T = k × floor(k²/4)` on a ring (hop distance is the sum of per-dimension
//!   distances, each independent of the others);
//! * bisection: the cheapest cut straight across one dimension. Cutting dimension d at its middle
//!   cuts one link per line (two on a torus, the middle and the wrap-around); when k is odd the
//!   middle slab is itself split in half, recursively, so that the two sides balance. This is the
//!   exact bisection width of tori and meshes whose cut dimension is even (the classical results
//!   for k-ary n-cubes); tests check it against exhaustive search on every shape up to 24 nodes.
//!   For graphs of at most [`EXHAUSTIVE_MAX_NODES`] nodes the exhaustive search itself is used.

use std::collections::HashMap;
use std::fmt;

use crate::{Dojo, FatTree, Hybrid, KAryNCube, LinkKind, LinkSpec, Network, NodeId};

/// Graphs up to this many nodes get their bisection by exhaustive search.
pub const EXHAUSTIVE_MAX_NODES: u64 = 24;

/// How the bisection was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BisectionMethod {
    /// Every balanced partition was tried.
    Exhaustive,
    /// The straight-cut closed form (see the module docs).
    StraightCut,
    /// The cheapest of the cuts that split one coordinate's range into two halves, at every
    /// rotation (twisted tori): an upper bound on the bisection width.
    HalfSpaceCut,
    /// A fat tree's full bisection: half the hosts' links (see [`FatTree::bisection_links`]).
    FullBisectionFatTree,
    /// The maximum flow between the first and the second half of the chips in rank order (a
    /// machine file's graph): that split's bandwidth, an upper bound on the bisection width.
    MaxFlowHalves,
}

impl BisectionMethod {
    /// A short, stable token for JSON.
    pub fn token(self) -> &'static str {
        match self {
            BisectionMethod::Exhaustive => "exhaustive-search",
            BisectionMethod::StraightCut => "closed-form-straight-cut",
            BisectionMethod::HalfSpaceCut => "half-space-cut-upper-bound",
            BisectionMethod::FullBisectionFatTree => "closed-form-full-bisection-fat-tree",
            BisectionMethod::MaxFlowHalves => "max-flow-rank-halves",
        }
    }

    /// A phrase for reports.
    pub fn describe(self) -> &'static str {
        match self {
            BisectionMethod::Exhaustive => "exhaustive search over all balanced partitions",
            BisectionMethod::StraightCut => {
                "closed form: cheapest straight cut across one dimension"
            }
            BisectionMethod::FullBisectionFatTree => {
                "closed form: a fat tree has full bisection (k³/8 links)"
            }
            BisectionMethod::HalfSpaceCut => "cheapest coordinate half-space cut (an upper bound)",
            BisectionMethod::MaxFlowHalves => {
                "maximum flow between the two halves of the ranks (an upper bound)"
            }
        }
    }
}

impl fmt::Display for BisectionMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// How distances were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistanceMethod {
    /// Per-dimension closed forms (see the module docs).
    ClosedForm,
    /// Minimal displacements from one node to every other: exact because a twisted torus is a
    /// lattice (Cayley) graph, so every node sees the same distances.
    VertexTransitive,
    /// Breadth-first search from every endpoint.
    BfsAllSources,
}

impl DistanceMethod {
    /// A short, stable token for reports and JSON.
    pub fn token(self) -> &'static str {
        match self {
            DistanceMethod::ClosedForm => "closed-form",
            DistanceMethod::VertexTransitive => "vertex-transitive-one-source",
            DistanceMethod::BfsAllSources => "bfs-all-sources",
        }
    }
}

/// The metrics of one topology.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// Number of nodes.
    pub nodes: u64,
    /// Number of bidirectional links.
    pub links: u64,
    /// Links per kind, kinds with none left out.
    pub links_by_kind: Vec<(LinkKind, u64)>,
    /// Ports of the best-connected node.
    pub degree_max: u32,
    /// Ports of the least-connected node.
    pub degree_min: u32,
    /// Longest minimal route, in hops.
    pub diameter: u64,
    /// Mean minimal hop count over ordered pairs of distinct nodes.
    pub average_distance: f64,
    /// How diameter and average distance were found.
    pub distance_method: DistanceMethod,
    /// Links cut by the bisection.
    pub bisection_links: u64,
    /// Bandwidth across the bisection, both directions of every cut link, in bytes/s (128
    /// bits: a large enough network's exceeds 64).
    pub bisection_bandwidth_bytes_per_s: u128,
    /// How the bisection was found.
    pub bisection_method: BisectionMethod,
    /// Switches that are not endpoints (0 for direct networks such as tori).
    pub switches: u64,
    /// Network interfaces per node.
    pub interfaces: u32,
    /// What one node can inject at once: interfaces × the link bandwidth, in bytes/s.
    pub injection_bandwidth_bytes_per_s: u64,
    /// Sum of every node's injection bandwidth, in bytes/s (128 bits: torus:65536x65536's is
    /// 8.6 x 10^20, beyond 64).
    pub total_injection_bandwidth_bytes_per_s: u128,
    /// The most each node can send in a uniform all-to-all, in bytes/s (see [`all_to_all_bound`]).
    pub all_to_all_bytes_per_s_per_node: f64,
    /// Which limit sets that bound: `"bisection"` or `"injection"`.
    pub all_to_all_limited_by: &'static str,
}

/// The ideal uniform all-to-all rate per node.
///
/// Every node sends at rate r spread evenly over the other N-1 nodes. Across a bisection with
/// sides of a and b nodes, a × b × r / (N-1) must cross in each direction, at most half the
/// (two-way) bisection bandwidth B; so r <= (B/2) × (N-1) / (a × b). A node also cannot send
/// faster than it can inject. Returns the rate and which limit binds.
pub fn all_to_all_bound(
    nodes: u64,
    bisection_bytes_per_s: u128,
    injection: u64,
) -> (f64, &'static str) {
    if nodes < 2 {
        return (0.0, "injection");
    }
    let a = (nodes / 2) as f64;
    let b = (nodes - nodes / 2) as f64;
    let by_bisection = bisection_bytes_per_s as f64 / 2.0 * (nodes - 1) as f64 / (a * b);
    if by_bisection < injection as f64 {
        (by_bisection, "bisection")
    } else {
        (injection as f64, "injection")
    }
}

/// Every metric of `t`; cheap (closed forms) except for the exhaustive bisection of small graphs.
pub fn metrics(t: &KAryNCube) -> Metrics {
    let dims = t.dims();
    let n = t.node_count();
    let mut by_kind: HashMap<LinkKind, u64> = HashMap::new();
    let mut links = 0;
    let mut diameter = 0u64;
    let mut pair_sum: u128 = 0;
    for (d, &size) in dims.iter().enumerate() {
        let k = u64::from(size);
        let per_line = t.links_per_line(d);
        let lines = t.lines(d);
        links += lines * per_line;
        // Links of the `between` kind per line: block boundaries plus the wrap link.
        let between = match t.blocks() {
            Some(b) => {
                let crossings = k / u64::from(b.shape[d]) - 1;
                crossings + u64::from(t.has_wrap_link(d))
            }
            None => 0,
        };
        *by_kind.entry(t.link().kind).or_default() += lines * (per_line - between);
        if let Some(b) = t.blocks() {
            *by_kind.entry(b.between.kind).or_default() += lines * between;
        }
        let ring = t.has_wrap_link(d);
        diameter += if ring { k / 2 } else { k - 1 };
        let k128 = u128::from(k);
        let line_sum = if ring {
            k128 * (k128 * k128 / 4)
        } else {
            (k128 * k128 * k128 - k128) / 3
        };
        let l = u128::from(lines);
        pair_sum += l * l * line_sum;
    }
    let mut average_distance = if n > 1 {
        pair_sum as f64 / (n as f64 * (n - 1) as f64)
    } else {
        0.0
    };
    let mut distance_method = DistanceMethod::ClosedForm;
    if t.is_twisted() {
        // Vertex-transitive: the distances from node 0 are those from every node.
        let (mut sum, mut far) = (0u64, 0u64);
        for v in 1..n {
            let d = t.distance(NodeId(0), NodeId(v));
            sum += d;
            far = far.max(d);
        }
        diameter = far;
        average_distance = if n > 1 {
            sum as f64 / (n - 1) as f64
        } else {
            0.0
        };
        distance_method = DistanceMethod::VertexTransitive;
    }
    let (bisection_links, bisection_bw, method) = if n <= EXHAUSTIVE_MAX_NODES {
        let (l, b) = exhaustive_bisection(t);
        (l, b, BisectionMethod::Exhaustive)
    } else if t.is_twisted() {
        let (l, b) = half_space_bisection(t);
        (l, b, BisectionMethod::HalfSpaceCut)
    } else {
        let (l, b) = straight_cut_bisection(t);
        (l, b, BisectionMethod::StraightCut)
    };
    let interfaces = t.interfaces();
    let injection = u64::from(interfaces).saturating_mul(t.link().bandwidth.bytes_per_s());
    let (a2a, limited_by) = all_to_all_bound(n, bisection_bw, injection);
    let links_by_kind = LinkKind::ALL
        .iter()
        .filter_map(|k| by_kind.get(k).filter(|&&c| c > 0).map(|&c| (*k, c)))
        .collect();
    Metrics {
        nodes: n,
        links,
        links_by_kind,
        degree_max: t.degree_max(),
        degree_min: t.degree_min(),
        diameter,
        average_distance,
        distance_method,
        bisection_links,
        bisection_bandwidth_bytes_per_s: bisection_bw,
        bisection_method: method,
        switches: 0,
        interfaces,
        injection_bandwidth_bytes_per_s: injection,
        total_injection_bandwidth_bytes_per_s: u128::from(injection) * u128::from(n),
        all_to_all_bytes_per_s_per_node: a2a,
        all_to_all_limited_by: limited_by,
    }
}

/// The cheapest cut of the form "coordinate d, rotated by a, below k_d / 2", over every
/// dimension of even size and every rotation: (links cut, two-way bandwidth in bytes/s).
/// Counts by walking every link, so it costs O(N × n × k).
pub fn half_space_bisection(t: &KAryNCube) -> (u64, u128) {
    let links: Vec<_> = t.links().collect();
    let mut best: Option<(u128, u64)> = None;
    for (d, &k) in t.dims().iter().enumerate() {
        if k < 2 || k % 2 == 1 {
            continue;
        }
        for a in 0..k {
            let side = |node: NodeId| (t.coord(node, d) + k - a) % k < k / 2;
            let (mut bw, mut cut) = (0u128, 0u64);
            for l in &links {
                if side(l.from) != side(l.to) {
                    cut += 1;
                    bw += two_way(l.spec, 1);
                }
            }
            if best.is_none_or(|b| (bw, cut) < b) {
                best = Some((bw, cut));
            }
        }
    }
    let (bw, cut) = best.unwrap_or((0, 0));
    (cut, bw)
}

fn two_way(spec: LinkSpec, links: u64) -> u128 {
    2 * u128::from(links) * u128::from(spec.bandwidth.bytes_per_s())
}

/// The straight-cut closed form: (links cut, two-way bandwidth in bytes/s).
pub fn straight_cut_bisection(t: &KAryNCube) -> (u64, u128) {
    let dims: Vec<usize> = (0..t.dims().len()).filter(|&d| t.dims()[d] > 1).collect();
    let mut memo = HashMap::new();
    let full: u64 = dims.iter().fold(0, |m, &d| m | (1 << d));
    let (bw, links) = cut_subcube(t, full, &mut memo);
    (links, bw)
}

/// The cheapest balanced cut of the sub-cube spanned by the dimensions in `mask`
/// (each of size > 1): (two-way bandwidth, links).
fn cut_subcube(t: &KAryNCube, mask: u64, memo: &mut HashMap<u64, (u128, u64)>) -> (u128, u64) {
    if mask == 0 {
        return (0, 0);
    }
    if let Some(&r) = memo.get(&mask) {
        return r;
    }
    let size: u64 = (0..64)
        .filter(|d| mask & (1 << d) != 0)
        .map(|d| u64::from(t.dims()[d]))
        .product();
    let mut best: Option<(u128, u64)> = None;
    for d in (0..64).filter(|d| mask & (1 << d) != 0) {
        let k = t.dims()[d];
        let lines = size / u64::from(k);
        let mut bw = two_way(t.spec_mid_cut(d), lines);
        let mut links = lines;
        if t.has_wrap_link(d) {
            bw += two_way(t.spec_wrap(d), lines);
            links += lines;
        }
        if k % 2 == 1 {
            let (b2, l2) = cut_subcube(t, mask & !(1 << d), memo);
            bw += b2;
            links += l2;
        }
        if best.is_none_or(|b| (bw, links) < b) {
            best = Some((bw, links));
        }
    }
    let r = best.unwrap_or((0, 0));
    memo.insert(mask, r);
    r
}

/// Exhaustive search over every subset of `floor(N/2)` nodes (N <= 24):
/// (links cut, two-way bandwidth in bytes/s) of the cheapest by bandwidth, then links.
pub fn exhaustive_bisection(t: &KAryNCube) -> (u64, u128) {
    let n = t.node_count() as usize;
    if n < 2 || n as u64 > EXHAUSTIVE_MAX_NODES {
        return (0, 0);
    }
    // Adjacency masks in layers: each layer holds links of one spec and at most one link per
    // pair of nodes, so parallel links (a wrapped dimension of size 2) land in separate layers.
    let mut specs: Vec<LinkSpec> = Vec::new();
    let mut adj: Vec<Vec<u32>> = Vec::new();
    for l in t.links() {
        let (a, b) = (l.from.0 as usize, l.to.0 as usize);
        let layer = (0..specs.len()).find(|&i| specs[i] == l.spec && adj[i][a] & (1 << b) == 0);
        let s = layer.unwrap_or_else(|| {
            specs.push(l.spec);
            adj.push(vec![0; n]);
            specs.len() - 1
        });
        adj[s][a] |= 1 << b;
        adj[s][b] |= 1 << a;
    }
    let half = n / 2;
    let all: u32 = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
    let mut set: u32 = (1u32 << half) - 1;
    let mut best: Option<(u128, u64)> = None;
    loop {
        let outside = all & !set;
        let mut bw = 0u128;
        let mut links = 0u64;
        for (s, a) in adj.iter().enumerate() {
            let mut cut = 0u64;
            let mut rest = set;
            while rest != 0 {
                let v = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                cut += u64::from((a[v] & outside).count_ones());
            }
            links += cut;
            bw += two_way(specs[s], cut);
        }
        if best.is_none_or(|b| (bw, links) < b) {
            best = Some((bw, links));
        }
        // Gosper's hack: the next larger set with the same number of members.
        let c = set & set.wrapping_neg();
        let r = set + c;
        if r > all || r == 0 {
            break;
        }
        set = (((r ^ set) >> 2) / c) | r;
        if set > all {
            break;
        }
    }
    let (bw, links) = best.unwrap_or((0, 0));
    (links, bw)
}

/// Breadth-first distances from `src` to every node, for checking the closed forms.
pub fn bfs_distances(t: &KAryNCube, src: NodeId) -> Vec<u64> {
    let n = t.node_count() as usize;
    let mut dist = vec![u64::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    dist[src.0 as usize] = 0;
    queue.push_back(src);
    while let Some(u) = queue.pop_front() {
        for p in t.ports(u) {
            if let Some(v) = t.neighbor(u, p)
                && dist[v.0 as usize] == u64::MAX
            {
                dist[v.0 as usize] = dist[u.0 as usize] + 1;
                queue.push_back(v);
            }
        }
    }
    dist
}

/// The metrics of a fat tree, all by closed form over its hosts (see [`FatTree`]). Degrees are
/// those of the switches (k) and hosts (1).
pub fn fat_tree_metrics(f: &FatTree) -> Metrics {
    let hosts = f.hosts();
    let bw = f.link().bandwidth.bytes_per_s();
    let bisection_links = f.bisection_links();
    let bisection_bw = two_way(f.link(), bisection_links);
    let (a2a, limited_by) = all_to_all_bound(hosts, bisection_bw, bw);
    Metrics {
        nodes: hosts,
        links: f.links(),
        links_by_kind: vec![(f.link().kind, f.links())],
        degree_max: f.k(),
        degree_min: 1,
        diameter: f.diameter(),
        average_distance: f.average_host_distance(),
        distance_method: DistanceMethod::ClosedForm,
        bisection_links,
        bisection_bandwidth_bytes_per_s: bisection_bw,
        bisection_method: BisectionMethod::FullBisectionFatTree,
        switches: f.switches(),
        interfaces: 1,
        injection_bandwidth_bytes_per_s: bw,
        total_injection_bandwidth_bytes_per_s: u128::from(bw) * u128::from(hosts),
        all_to_all_bytes_per_s_per_node: a2a,
        all_to_all_limited_by: limited_by,
    }
}

/// The metrics of a DOJO plane. Nodes are the working compute nodes; distances are mesh hops
/// between router positions (closed form for a `width x height` mesh; the DIP shortcuts are not
/// counted). The bisection is the cheaper straight cut through the middle of the plane across
/// x or y; it cuts the mesh links of that line plus the Ethernet links of the DIPs on the far
/// side of the switch. Injection: one 64-B packet per cycle at 2 GHz each way (128 GB/s).
pub fn dojo_metrics(d: &Dojo) -> Metrics {
    let mesh = metrics(&d.mesh());
    let links_by_kind: Vec<(LinkKind, u64)> =
        d.link_counts().into_iter().filter(|k| k.1 > 0).collect();
    let links = links_by_kind.iter().map(|k| k.1).sum();
    let ether = d.dip_links()[2];
    let dies_y = u64::from(if d.spec().with_dips {
        d.spec().dies_y
    } else {
        0
    });
    let cut = |dim: usize| -> Option<(u128, u64)> {
        let (len, across) = if dim == 0 {
            (d.width(), d.height())
        } else {
            (d.height(), d.width())
        };
        if len < 2 {
            return None;
        }
        let (x, y) = if dim == 0 {
            (len / 2 - 1, 0)
        } else {
            (0, len / 2 - 1)
        };
        let spec = d.mesh_link(x, y, dim);
        let n = u64::from(across);
        Some((two_way(spec, n) + two_way(ether, dies_y), n + dies_y))
    };
    let (bw, cut_links) = [cut(0), cut(1)]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or((0, 0));
    let bisection = bw;
    let injection = 128_000_000_000u64;
    let nodes = d.compute_nodes();
    let (a2a, limited_by) = all_to_all_bound(nodes, bisection, injection);
    Metrics {
        nodes,
        links,
        links_by_kind,
        degree_max: if d.dips() > 0 { 5 } else { mesh.degree_max },
        degree_min: mesh.degree_min,
        diameter: mesh.diameter,
        average_distance: mesh.average_distance,
        distance_method: DistanceMethod::ClosedForm,
        bisection_links: cut_links,
        bisection_bandwidth_bytes_per_s: bisection,
        bisection_method: BisectionMethod::StraightCut,
        switches: u64::from(d.dips() > 0),
        interfaces: 1,
        injection_bandwidth_bytes_per_s: injection,
        total_injection_bandwidth_bytes_per_s: u128::from(injection) * u128::from(nodes),
        all_to_all_bytes_per_s_per_node: a2a,
        all_to_all_limited_by: limited_by,
    }
}

/// The metrics of a hybrid ICI/InfiniBand network: distances by breadth-first search from every
/// chip (at most 4096), the bisection of its fat tree (groups kept whole), injection = 6 ICI links
/// plus the InfiniBand NIC.
pub fn hybrid_metrics(net: &Network, h: &Hybrid) -> Metrics {
    let chips = u64::from(h.chips());
    let total = net.node_count() as usize;
    let (mut sum, mut far) = (0u64, 0u64);
    let mut dist = vec![u64::MAX; total];
    let mut queue = std::collections::VecDeque::new();
    for s in 0..chips {
        dist.iter_mut().for_each(|d| *d = u64::MAX);
        dist[s as usize] = 0;
        queue.push_back(NodeId(s));
        while let Some(u) = queue.pop_front() {
            for v in net.neighbors(u) {
                if dist[v.0 as usize] == u64::MAX {
                    dist[v.0 as usize] = dist[u.0 as usize] + 1;
                    queue.push_back(v);
                }
            }
        }
        for d in &dist[..chips as usize] {
            sum += d;
            far = far.max(*d);
        }
    }
    let (ici, ib) = h.links();
    let (bis_links, bis_bw) = h.bisection();
    let injection = 6 * h.ici().bandwidth.bytes_per_s() + h.ib().bandwidth.bytes_per_s();
    let (a2a, limited_by) = all_to_all_bound(chips, u128::from(bis_bw), injection);
    Metrics {
        nodes: chips,
        links: ici + ib,
        links_by_kind: vec![(LinkKind::Electrical, ici), (LinkKind::Optical, ib)],
        degree_max: h.fat_tree().k().max(7),
        degree_min: 7,
        diameter: far,
        average_distance: sum as f64 / (chips * (chips - 1)) as f64,
        distance_method: DistanceMethod::BfsAllSources,
        bisection_links: bis_links,
        bisection_bandwidth_bytes_per_s: u128::from(bis_bw),
        bisection_method: BisectionMethod::FullBisectionFatTree,
        switches: h.fat_tree().switches(),
        interfaces: 7,
        injection_bandwidth_bytes_per_s: injection,
        total_injection_bandwidth_bytes_per_s: u128::from(injection) * u128::from(chips),
        all_to_all_bytes_per_s_per_node: a2a,
        all_to_all_limited_by: limited_by,
    }
}
