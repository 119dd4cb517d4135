//! Interconnect topologies as pure graphs with coordinates, and their exact metrics.
//!
//! This first slice has one type, [`KAryNCube`], which covers rings, meshes, tori and mixed
//! mesh/torus shapes, optionally grouped into blocks whose links differ (TPU v4's electrical
//! 4x4x4 blocks joined by optical links). [`metrics`] computes node and link counts, degree,
//! diameter, average distance and bisection, by closed forms where the structure gives them.
//!
//! Architecture invariant: topology knows nothing about time passing, packets or file formats;
//! a link's latency is a number it carries, not something it simulates.

mod dojo;
mod fattree;
mod graph;
mod hybrid;
mod kncube;
pub mod metrics;
mod tenstorrent;
mod tofu;

use std::fmt;

use podsim_units::{Bandwidth, SimDuration};

pub use dojo::{
    DIP_HBM, DIP_HBM_BYTES_PER_S, DIPS_PER_HOST, Dojo, DojoNode, DojoSpec, NODE_SRAM, TILE_DIES,
};
pub use fattree::{FatTree, FatTreeNode};
pub use graph::{Graph, GraphLink, GraphNode, GraphNodeKind, MAX_GRAPH_NODES, MAX_PATHS};
pub use hybrid::{GROUP, Hybrid};
pub use kncube::{Blocks, Direction, KAryNCube, Link, MAX_NODES, Port};
pub use metrics::{BisectionMethod, DistanceMethod, Metrics, metrics};
pub use tenstorrent::{Noc, TileKind, TtChip, TtGrid};
pub use tofu::{Tofu, TofuGeneration};

/// Any topology podsim can build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Network {
    /// A k-ary n-cube: ring, mesh, torus, mixed or twisted.
    Cube(KAryNCube),
    /// A Tofu 6-D mesh/torus with its virtual 3-D torus.
    Tofu(Tofu),
    /// A 3-level fat tree of k-port switches.
    FatTree(FatTree),
    /// A DOJO compute plane with its interface processors.
    Dojo(Dojo),
    /// A Tenstorrent chip's grid (its two NoCs as one torus).
    Tenstorrent(TtGrid),
    /// 8-chip ICI groups joined by an InfiniBand fat tree.
    Hybrid(Hybrid),
    /// Chips, NICs and switches given node by node (a machine file's network).
    Graph(Graph),
}

impl Network {
    /// Every node of the graph, switches included.
    pub fn node_count(&self) -> u64 {
        match self {
            Network::FatTree(f) => f.hosts() + f.switches(),
            Network::Dojo(d) => d.node_count(),
            Network::Hybrid(h) => h.node_count(),
            Network::Graph(g) => g.node_count(),
            Network::Cube(_) | Network::Tofu(_) | Network::Tenstorrent(_) => {
                self.cube().map_or(0, |c| c.node_count())
            }
        }
    }

    /// The nodes one link away from `n` (a node reached by parallel links appears once per link).
    pub fn neighbors(&self, n: NodeId) -> Vec<NodeId> {
        match self {
            Network::FatTree(f) => f.neighbors(n),
            Network::Dojo(d) => d.links_of(n).into_iter().map(|(v, _)| v).collect(),
            Network::Hybrid(h) => h.links_from(n).into_iter().map(|(v, _)| v).collect(),
            Network::Graph(g) => g.links_from(n).into_iter().map(|(v, _)| v).collect(),
            Network::Cube(_) | Network::Tofu(_) | Network::Tenstorrent(_) => {
                self.cube().map_or_else(Vec::new, |c| {
                    c.ports(n)
                        .into_iter()
                        .filter_map(|p| c.neighbor(n, p))
                        .collect()
                })
            }
        }
    }

    /// The links leaving `n`: the node each reaches and its spec, in a fixed order (for cubes,
    /// the order of [`KAryNCube::ports`], so parallel links stay distinct).
    pub fn links_from(&self, n: NodeId) -> Vec<(NodeId, LinkSpec)> {
        match self {
            Network::FatTree(f) => f.neighbors(n).into_iter().map(|v| (v, f.link())).collect(),
            Network::Dojo(d) => d.links_of(n),
            Network::Hybrid(h) => h.links_from(n),
            Network::Graph(g) => g.links_from(n),
            Network::Cube(_) | Network::Tofu(_) | Network::Tenstorrent(_) => {
                self.cube().map_or_else(Vec::new, |c| {
                    c.ports(n)
                        .into_iter()
                        .filter_map(|p| Some((c.neighbor(n, p)?, c.link_spec(n, p)?)))
                        .collect()
                })
            }
        }
    }

    /// The nodes that send and receive traffic: hosts of a fat tree, routers of a DOJO plane,
    /// every node otherwise.
    pub fn endpoints(&self) -> u64 {
        match self {
            Network::FatTree(f) => f.hosts(),
            Network::Dojo(d) => d.routers(),
            Network::Hybrid(h) => u64::from(h.chips()),
            Network::Graph(g) => g.chips(),
            Network::Cube(_) | Network::Tofu(_) | Network::Tenstorrent(_) => self.node_count(),
        }
    }

    /// Network interfaces per endpoint (each injecting at one link's bandwidth).
    pub fn interfaces(&self) -> u32 {
        match self {
            Network::FatTree(_) | Network::Dojo(_) | Network::Graph(_) => 1,
            // Six ICI links at ICI rate; the IB NIC is counted in the metrics.
            Network::Hybrid(_) => 6,
            Network::Cube(_) | Network::Tofu(_) | Network::Tenstorrent(_) => {
                self.cube().map_or(1, |c| c.interfaces())
            }
        }
    }

    /// The physical network as a k-ary n-cube, if it is one.
    pub fn cube(&self) -> Option<&KAryNCube> {
        match self {
            Network::Cube(c) => Some(c),
            Network::Tofu(t) => Some(t.cube()),
            Network::Tenstorrent(g) => Some(g.cube()),
            Network::FatTree(_) | Network::Dojo(_) | Network::Hybrid(_) | Network::Graph(_) => None,
        }
    }

    /// How the ranks fill the machine for the algorithms that work one dimension at a time,
    /// fastest first: a cube's dimensions, a machine file's grid (`[chips a node, nodes]`);
    /// empty for the other networks.
    pub fn rank_grid(&self) -> Vec<u32> {
        match self {
            Network::Graph(g) => g.grid().to_vec(),
            _ => self.cube().map(|c| c.dims().to_vec()).unwrap_or_default(),
        }
    }

    /// The spec of its links (inside blocks, where there are blocks; a machine file's fastest
    /// link, which no route's per-hop latency beats).
    pub fn link(&self) -> LinkSpec {
        match self {
            Network::Cube(c) => c.link(),
            Network::Tofu(t) => t.cube().link(),
            Network::Tenstorrent(g) => g.cube().link(),
            Network::FatTree(f) => f.link(),
            Network::Dojo(d) => d.on_die_link(),
            Network::Hybrid(h) => h.ici(),
            Network::Graph(g) => g.fastest_link(),
        }
    }

    /// Its physical shape as a shorthand (`kncube:...` for Tofu, `fattree:K`).
    pub fn shape(&self) -> String {
        match self {
            Network::FatTree(f) => format!("fattree:{}", f.k()),
            Network::Dojo(d) => d.mesh().shorthand(),
            Network::Hybrid(h) => format!("8-chip ICI groups + fattree:{}", h.fat_tree().k()),
            Network::Graph(g) => g.label().to_string(),
            Network::Cube(_) | Network::Tofu(_) | Network::Tenstorrent(_) => {
                self.cube().map(|c| c.shorthand()).unwrap_or_default()
            }
        }
    }

    /// Every metric (see [`metrics`]).
    pub fn metrics(&self) -> Metrics {
        match self {
            Network::Cube(c) => metrics(c),
            Network::Tofu(t) => metrics(t.cube()),
            Network::Tenstorrent(g) => metrics(g.cube()),
            Network::FatTree(f) => metrics::fat_tree_metrics(f),
            Network::Dojo(d) => metrics::dojo_metrics(d),
            Network::Hybrid(h) => metrics::hybrid_metrics(self, h),
            Network::Graph(g) => g.metrics(),
        }
    }

    /// The shorthand that names it.
    pub fn shorthand(&self) -> String {
        match self {
            Network::Cube(c) => c.shorthand(),
            Network::Tofu(t) => t.label().to_string(),
            Network::FatTree(f) => format!("fattree:{}", f.k()),
            Network::Dojo(d) => d.spec().label.clone(),
            Network::Tenstorrent(g) => g.label().to_string(),
            Network::Hybrid(h) => format!("hybrid:{}", h.chips()),
            Network::Graph(g) => g.label().to_string(),
        }
    }
}

/// A node's index in its topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u64);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// What a link is physically made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkKind {
    /// Wires on one die (a network-on-chip hop).
    OnChip,
    /// Copper between packages, boards or racks.
    Electrical,
    /// Fibre, possibly through an optical circuit switch.
    Optical,
}

impl LinkKind {
    /// Every kind, in display order.
    pub const ALL: [LinkKind; 3] = [LinkKind::OnChip, LinkKind::Electrical, LinkKind::Optical];

    /// The lower-case name used in files and reports.
    pub fn name(self) -> &'static str {
        match self {
            LinkKind::OnChip => "on-chip",
            LinkKind::Electrical => "electrical",
            LinkKind::Optical => "optical",
        }
    }
}

impl fmt::Display for LinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A link's kind, its bandwidth in each direction and its latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkSpec {
    /// What it is made of.
    pub kind: LinkKind,
    /// Bandwidth per direction (a link carries this much each way at once).
    pub bandwidth: Bandwidth,
    /// Time of flight from one end to the other.
    pub latency: SimDuration,
}

/// A topology that cannot be built; names the parameter and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}`: {why}")]
pub struct TopologyError {
    /// The parameter at fault (`dims`, `wrap`, `blocks.shape`, ...).
    pub key: &'static str,
    /// What was expected.
    pub why: String,
}

impl TopologyError {
    pub(crate) fn new(key: &'static str, why: impl Into<String>) -> Self {
        TopologyError {
            key,
            why: why.into(),
        }
    }
}

#[cfg(test)]
mod tests;
