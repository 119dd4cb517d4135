//! The translations of a vertex-transitive torus, for models that treat flows that are
//! translates of one another as one class (the flow model's exchanges).
//!
//! A torus that wraps in every dimension, twisted or not, is the Cayley graph of the group
//! Z^D / L (L the lattice of the wrap-arounds: k_d e_d, less the shift a twisted dimension's
//! wrap-around link gives the others) with generators ±e_d: node u's `Plus` port in dimension
//! d leads to u + e_d, its `Minus` port to u - e_d. Adding a group element s to every node
//! (a translation) therefore maps each node's port p to the translated node's port p, and when
//! every link has the same bandwidth and latency, links to links that move bytes alike. Minimal
//! routing walks the displacement of the destination from the source, a function of their
//! difference in the group, so the route from s to s + δ is the route from 0 to δ translated
//! by s, port for port (tested over every pair of random tori, twisted tori included; the
//! flow model checks a sample of sources again at run time).

use podsim_topology::{Network, NodeId};

use crate::{LinkId, LinkTable};

/// Whether two links move bytes alike: the same bandwidth and latency (what they are made of,
/// electrical or optical as on a TPU v4 slice's block boundaries, does not matter to a model).
fn same_timing(a: podsim_topology::LinkSpec, b: podsim_topology::LinkSpec) -> bool {
    a.bandwidth == b.bandwidth && a.latency == b.latency
}

/// The translations of a torus that wraps in every dimension and whose links all have one
/// bandwidth and latency: node ids as group elements, added and subtracted, and each link's class (the port it
/// leaves its node by, the same at every node).
#[derive(Debug, Clone)]
pub struct Translations {
    dims: Vec<u32>,
    strides: Vec<u64>,
    // Per twisting dimension t: (t, shift of every dimension when t wraps).
    twists: Vec<(usize, Vec<u32>)>,
    // Every node's coordinates, D per node.
    coords: Vec<u32>,
    ports: usize,
}

impl Translations {
    /// The translations of `net` (numbered by `links`), or `None` when it is not a torus in
    /// every dimension with one bandwidth and latency throughout (a mesh, blocks whose links
    /// differ in either, a network of another kind).
    pub fn of(net: &Network, links: &LinkTable) -> Option<Translations> {
        if !Self::applies(net) {
            return None;
        }
        let Network::Cube(c) = net else {
            return None;
        };
        let dims = c.dims().to_vec();
        let n = c.node_count();
        let mut strides = Vec::with_capacity(dims.len());
        let mut s = 1u64;
        for &k in &dims {
            strides.push(s);
            s = s.checked_mul(u64::from(k))?;
        }
        if s != n || links.is_empty() {
            return None;
        }
        let d = dims.len();
        let mut coords = Vec::with_capacity(n as usize * d);
        for u in 0..n {
            let id = NodeId(u);
            let mut back = 0u64;
            for (j, &st) in strides.iter().enumerate() {
                let x = c.coord(id, j);
                back += u64::from(x) * st;
                coords.push(x);
            }
            // Node ids must be the coordinates' mixed-radix number.
            if back != u {
                return None;
            }
        }
        let spec = links.spec(0);
        if (0..links.len()).any(|l| !same_timing(links.spec(l), spec)) {
            return None;
        }
        let ports = c.ports(NodeId(0)).len();
        let first = |u: u64| links.out_link(NodeId(u), 0);
        for u in 0..n {
            let (Some(a), b) = (first(u), first(u + 1).unwrap_or(links.len())) else {
                return None;
            };
            if b - a != ports {
                return None;
            }
        }
        let twists = c
            .twist()
            .iter()
            .enumerate()
            .filter(|(_, sh)| sh.iter().any(|&v| v != 0))
            .map(|(t, sh)| (t, sh.clone()))
            .collect();
        Some(Translations {
            dims,
            strides,
            twists,
            coords,
            ports,
        })
    }

    /// Whether `net` has translations [`Translations::of`] can use, checked on its description
    /// alone (a cube wrapping in every dimension, every link of one bandwidth and latency),
    /// without numbering its links.
    pub fn applies(net: &Network) -> bool {
        let Network::Cube(c) = net else {
            return false;
        };
        if c.node_count() < 2 || !c.wrap().iter().all(|&w| w) {
            return false;
        }
        let spec = c.link();
        c.links().all(|l| same_timing(l.spec, spec))
    }

    /// Nodes (group elements).
    pub fn nodes(&self) -> u64 {
        self.coords.len() as u64 / self.dims.len().max(1) as u64
    }

    /// Ports of every node: a link's class is the port it leaves by, below this.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// The class of link `l` of `links` (the port it leaves its node by), given the node.
    pub fn class(&self, links: &LinkTable, from: NodeId, l: LinkId) -> Option<usize> {
        let first = links.out_link(from, 0)?;
        (l >= first && l - first < self.ports).then_some(l - first)
    }

    /// `a + b` in the group: the node `b` is moved to by the translation taking node 0 to `a`.
    pub fn add(&self, a: NodeId, b: NodeId) -> NodeId {
        let d = self.dims.len();
        let (a, b) = (a.0 as usize * d, b.0 as usize * d);
        let mut x = [0u64; 8];
        let mut big = Vec::new();
        let sum: &mut [u64] = if d <= 8 {
            &mut x[..d]
        } else {
            big.resize(d, 0);
            &mut big
        };
        for (j, v) in sum.iter_mut().enumerate() {
            *v = u64::from(self.coords[a + j]) + u64::from(self.coords[b + j]);
        }
        self.reduce(sum)
    }

    /// The node at coordinates `x` (each below twice its dimension's size, so that one
    /// wrap-around at most is taken in each), reduced into the torus.
    fn reduce(&self, x: &mut [u64]) -> NodeId {
        // A twisting dimension is never shifted itself: wrap it first, shifting the others.
        for (t, shift) in &self.twists {
            let k = u64::from(self.dims[*t]);
            if x[*t] >= k {
                x[*t] -= k;
                for (j, &s) in shift.iter().enumerate() {
                    x[j] += u64::from(s);
                }
            }
        }
        let mut id = 0;
        for (j, v) in x.iter().enumerate() {
            id += (v % u64::from(self.dims[j])) * self.strides[j];
        }
        NodeId(id)
    }

    /// `a - b` in the group: the node the translation taking `b` to node 0 moves `a` to.
    pub fn sub(&self, a: NodeId, b: NodeId) -> NodeId {
        let d = self.dims.len();
        let (ai, bi) = (a.0 as usize * d, b.0 as usize * d);
        // a - b + Σ k_j e_j, every coordinate non-negative. In the group k_j e_j is zero but
        // for a twisting dimension t, where it is the shift s_t of the others: that shift is
        // taken back off by adding k_j - s_tj to each coordinate j it moves (k_j e_j being
        // zero there, as a twisting dimension is never shifted itself).
        let mut x: Vec<u64> = (0..d)
            .map(|j| {
                let k = u64::from(self.dims[j]);
                u64::from(self.coords[ai + j]) + k - u64::from(self.coords[bi + j])
            })
            .collect();
        for (_, shift) in &self.twists {
            for (j, &s) in shift.iter().enumerate() {
                let k = u64::from(self.dims[j]);
                let s = u64::from(s) % k;
                if s != 0 {
                    x[j] += k - s;
                }
            }
        }
        self.reduce(&mut x)
    }
}
