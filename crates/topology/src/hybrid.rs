//! The hybrid ICI/InfiniBand alternative of the TPU v4 paper (tpu-v4-isca2023.txt, section 7.3):
//! "Just as NVLink connects 8 GPUs in a DGX, 8 TPUs would use ICI", and a full 3-level fat tree
//! of InfiniBand joins the groups, one NIC per chip; "ICI link bandwidth is 2x IB — 400 vs 200
//! Gbit/s".
//!
//! Model (choices where the seed is silent): each group of 8 chips is a 2x2x2 torus of ICI links,
//! which gives every chip its 6 ICI links (a wrapped dimension of size 2 has two parallel links);
//! chip i is host i of the smallest k-port fat tree with at least as many hosts as chips (k even),
//! reached through one 200 Gb/s link; every fat-tree link is 200 Gb/s. Node ids are the fat
//! tree's: chips first (as its first hosts), unused host slots, then switches.

use podsim_units::{Bandwidth, SimDuration};

use crate::{Direction, FatTree, KAryNCube, LinkKind, LinkSpec, NodeId, Port, TopologyError};

/// Chips per ICI group.
pub const GROUP: u32 = 8;

/// 8-chip ICI groups joined by an InfiniBand fat tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hybrid {
    chips: u32,
    group: KAryNCube,
    fat: FatTree,
}

impl Hybrid {
    /// `chips` chips (a multiple of 8, at least 16) with 400 Gb/s ICI and 200 Gb/s InfiniBand
    /// links, each with zero latency (a bare graph; `podsim-system` builds its preset with
    /// [`Hybrid::with_links`]).
    pub fn new(chips: u32) -> Result<Self, TopologyError> {
        Self::with_links(chips, SimDuration::ZERO, SimDuration::ZERO)
    }

    /// As [`Hybrid::new`], with the ICI and InfiniBand links' latencies.
    pub fn with_links(
        chips: u32,
        ici_latency: SimDuration,
        ib_latency: SimDuration,
    ) -> Result<Self, TopologyError> {
        if chips < 2 * GROUP || !chips.is_multiple_of(GROUP) {
            return Err(TopologyError::new(
                "chips",
                format!("a hybrid needs a multiple of 8 chips, at least 16; got {chips}"),
            ));
        }
        if chips > 4096 {
            return Err(TopologyError::new(
                "chips",
                format!("at most 4096 chips (a TPU v4 pod); got {chips}"),
            ));
        }
        let ici = LinkSpec {
            kind: LinkKind::Electrical,
            bandwidth: Bandwidth::from_gbps(50).expect("positive"),
            latency: ici_latency,
        };
        let ib = LinkSpec {
            kind: LinkKind::Optical,
            bandwidth: Bandwidth::from_bytes_per_s(25_000_000_000).expect("positive"),
            latency: ib_latency,
        };
        let group = KAryNCube::new(vec![2, 2, 2], vec![true; 3], ici)?;
        let mut k = 2;
        while u64::from(k).pow(3) / 4 < u64::from(chips) {
            k += 2;
        }
        Ok(Hybrid {
            chips,
            group,
            fat: FatTree::new(k, ib)?,
        })
    }

    /// Chips.
    pub fn chips(&self) -> u32 {
        self.chips
    }
    /// The fat tree between groups.
    pub fn fat_tree(&self) -> &FatTree {
        &self.fat
    }
    /// The ICI link.
    pub fn ici(&self) -> LinkSpec {
        self.group.link()
    }
    /// The InfiniBand link.
    pub fn ib(&self) -> LinkSpec {
        self.fat.link()
    }
    /// Every node id: the fat tree's hosts (chips first) and switches.
    pub fn node_count(&self) -> u64 {
        self.fat.hosts() + self.fat.switches()
    }

    /// The links leaving `n`: ICI links inside its group (chips only), then its fat-tree links.
    pub fn links_from(&self, n: NodeId) -> Vec<(NodeId, LinkSpec)> {
        let mut out = Vec::new();
        if n.0 < u64::from(self.chips) {
            let base = n.0 / u64::from(GROUP) * u64::from(GROUP);
            let local = NodeId(n.0 - base);
            for p in self.group.ports(local) {
                if let Some(v) = self.group.neighbor(local, p) {
                    out.push((NodeId(base + v.0), self.ici()));
                }
            }
        }
        out.extend(self.fat.neighbors(n).into_iter().map(|v| (v, self.ib())));
        out
    }

    /// Whether two chips share an ICI group.
    pub fn same_group(&self, a: NodeId, b: NodeId) -> bool {
        a.0 / u64::from(GROUP) == b.0 / u64::from(GROUP)
    }

    /// The ICI route inside a group (dimension order, ties Plus): the chips after `a`.
    pub fn ici_path(&self, a: NodeId, b: NodeId) -> Vec<NodeId> {
        let base = a.0 / u64::from(GROUP) * u64::from(GROUP);
        let (mut at, to) = (NodeId(a.0 - base), NodeId(b.0 - base));
        let mut out = Vec::new();
        for d in 0..3 {
            if self.group.coord(at, d) != self.group.coord(to, d)
                && let Some(v) = self.group.neighbor(
                    at,
                    Port {
                        dim: d,
                        dir: Direction::Plus,
                    },
                )
            {
                at = v;
                out.push(NodeId(base + v.0));
            }
        }
        out
    }

    /// Links counted once: 24 ICI links per group (3 dimensions x 4 lines x 2 links) plus the
    /// fat tree's links less those of its unused host slots.
    pub fn links(&self) -> (u64, u64) {
        let ici = u64::from(self.chips / GROUP) * 24;
        let ib = self.fat.links() - (self.fat.hosts() - u64::from(self.chips));
        (ici, ib)
    }

    /// The cheapest cut that splits the chips in half without splitting a group: half the
    /// chips' InfiniBand links (the fat tree has full bisection). Links and two-way bytes/s.
    pub fn bisection(&self) -> (u64, u64) {
        let links = u64::from(self.chips / 2);
        (links, 2 * links * self.ib().bandwidth.bytes_per_s())
    }
}
