//! The k-port, 3-level fat tree (Al-Fares, Loukissas and Vahdat, 2008): the InfiniBand-style
//! baseline of the TPU v4 paper (section 7.3).
//!
//! With switches of k ports (k even): k pods, each of k/2 edge and k/2 aggregation switches;
//! (k/2)² core switches; each edge switch serves k/2 hosts, so there are k³/4 hosts. Edge
//! switch e of pod p links to every aggregation switch of pod p; aggregation switch a of every
//! pod links to core switches a·k/2 .. a·k/2 + k/2 - 1. Every link is full duplex at one
//! bandwidth.
//!
//! Node ids: hosts `0 .. k³/4` (pod-major, then edge switch, then port), then edge switches,
//! aggregation switches and core switches.
//!
//! Routing is up-down: a packet climbs only as high as the lowest common ancestor level and
//! comes straight down; every choice of aggregation (and core) switch on the way up gives an
//! equal-cost path, and [`FatTree::paths`] lists them all (ECMP).

use crate::{LinkSpec, NodeId, TopologyError};

/// A 3-level fat tree of k-port switches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatTree {
    k: u32,
    link: LinkSpec,
}

/// What a node of the fat tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FatTreeNode {
    /// An endpoint: pod, edge switch in the pod, port on the edge switch.
    Host {
        /// Pod.
        pod: u32,
        /// Edge switch within the pod.
        edge: u32,
        /// Port on that edge switch.
        port: u32,
    },
    /// An edge (top-of-rack) switch.
    Edge {
        /// Pod.
        pod: u32,
        /// Index within the pod.
        index: u32,
    },
    /// An aggregation switch.
    Aggregation {
        /// Pod.
        pod: u32,
        /// Index within the pod.
        index: u32,
    },
    /// A core switch.
    Core {
        /// Index, 0 .. (k/2)².
        index: u32,
    },
}

impl FatTree {
    /// A fat tree of `k`-port switches (k even, at least 2) with every link as `link`.
    pub fn new(k: u32, link: LinkSpec) -> Result<Self, TopologyError> {
        if k < 2 || k % 2 == 1 {
            return Err(TopologyError::new(
                "k",
                format!("a fat tree needs an even number of ports per switch, at least 2; got {k}"),
            ));
        }
        if k > 1024 {
            return Err(TopologyError::new(
                "k",
                format!("{k} ports per switch is more than the 1024 supported"),
            ));
        }
        Ok(FatTree { k, link })
    }

    /// Ports per switch.
    pub fn k(&self) -> u32 {
        self.k
    }
    /// The link spec.
    pub fn link(&self) -> LinkSpec {
        self.link
    }
    /// Hosts: k³/4.
    pub fn hosts(&self) -> u64 {
        u64::from(self.k).pow(3) / 4
    }
    /// Switches: k² edge and aggregation plus k²/4 core = 5k²/4.
    pub fn switches(&self) -> u64 {
        5 * u64::from(self.k).pow(2) / 4
    }
    /// Bidirectional links: k³/4 at each of the three levels.
    pub fn links(&self) -> u64 {
        3 * self.hosts()
    }
    fn half(&self) -> u64 {
        u64::from(self.k / 2)
    }

    /// What node `n` is, or `None` past the last core switch.
    pub fn node(&self, n: NodeId) -> Option<FatTreeNode> {
        let (h, k, half) = (self.hosts(), u64::from(self.k), self.half());
        let per_pod = half; // edge (and aggregation) switches per pod
        let n = n.0;
        let edges = h;
        let aggs = edges + k * per_pod;
        let cores = aggs + k * per_pod;
        let end = cores + half * half;
        let r = if n < edges {
            FatTreeNode::Host {
                pod: (n / (half * half)) as u32,
                edge: ((n / half) % half) as u32,
                port: (n % half) as u32,
            }
        } else if n < aggs {
            FatTreeNode::Edge {
                pod: ((n - edges) / per_pod) as u32,
                index: ((n - edges) % per_pod) as u32,
            }
        } else if n < cores {
            FatTreeNode::Aggregation {
                pod: ((n - aggs) / per_pod) as u32,
                index: ((n - aggs) % per_pod) as u32,
            }
        } else if n < end {
            FatTreeNode::Core {
                index: (n - cores) as u32,
            }
        } else {
            return None;
        };
        Some(r)
    }

    /// The id of a node.
    pub fn id(&self, node: FatTreeNode) -> NodeId {
        let (h, k, half) = (self.hosts(), u64::from(self.k), self.half());
        NodeId(match node {
            FatTreeNode::Host { pod, edge, port } => {
                (u64::from(pod) * half + u64::from(edge)) * half + u64::from(port)
            }
            FatTreeNode::Edge { pod, index } => h + u64::from(pod) * half + u64::from(index),
            FatTreeNode::Aggregation { pod, index } => {
                h + k * half + u64::from(pod) * half + u64::from(index)
            }
            FatTreeNode::Core { index } => h + 2 * k * half + u64::from(index),
        })
    }

    /// The neighbours of `n`.
    pub fn neighbors(&self, n: NodeId) -> Vec<NodeId> {
        let half = self.k / 2;
        let Some(node) = self.node(n) else {
            return Vec::new();
        };
        match node {
            FatTreeNode::Host { pod, edge, .. } => {
                vec![self.id(FatTreeNode::Edge { pod, index: edge })]
            }
            FatTreeNode::Edge { pod, index } => (0..half)
                .map(|port| {
                    self.id(FatTreeNode::Host {
                        pod,
                        edge: index,
                        port,
                    })
                })
                .chain((0..half).map(|a| self.id(FatTreeNode::Aggregation { pod, index: a })))
                .collect(),
            FatTreeNode::Aggregation { pod, index } => (0..half)
                .map(|e| self.id(FatTreeNode::Edge { pod, index: e }))
                .chain((0..half).map(|c| {
                    self.id(FatTreeNode::Core {
                        index: index * half + c,
                    })
                }))
                .collect(),
            FatTreeNode::Core { index } => (0..self.k)
                .map(|pod| {
                    self.id(FatTreeNode::Aggregation {
                        pod,
                        index: index / half,
                    })
                })
                .collect(),
        }
    }

    /// Hops between two hosts: 0, 2 (same edge switch), 4 (same pod) or 6.
    pub fn host_distance(&self, a: u64, b: u64) -> u64 {
        let half = self.half();
        if a == b {
            0
        } else if a / half == b / half {
            2
        } else if a / (half * half) == b / (half * half) {
            4
        } else {
            6
        }
    }

    /// Every equal-cost up-down path between two hosts, each as the nodes after `a`.
    pub fn paths(&self, a: u64, b: u64) -> Vec<Vec<NodeId>> {
        let (
            Some(FatTreeNode::Host {
                pod: pa, edge: ea, ..
            }),
            Some(FatTreeNode::Host {
                pod: pb, edge: eb, ..
            }),
        ) = (self.node(NodeId(a)), self.node(NodeId(b)))
        else {
            return Vec::new();
        };
        let half = self.k / 2;
        let (up, down) = (
            FatTreeNode::Edge { pod: pa, index: ea },
            FatTreeNode::Edge { pod: pb, index: eb },
        );
        let dst = NodeId(b);
        if a == b {
            return vec![Vec::new()];
        }
        if (pa, ea) == (pb, eb) {
            return vec![vec![self.id(up), dst]];
        }
        let mut out = Vec::new();
        for agg in 0..half {
            if pa == pb {
                out.push(vec![
                    self.id(up),
                    self.id(FatTreeNode::Aggregation {
                        pod: pa,
                        index: agg,
                    }),
                    self.id(down),
                    dst,
                ]);
                continue;
            }
            for c in 0..half {
                out.push(vec![
                    self.id(up),
                    self.id(FatTreeNode::Aggregation {
                        pod: pa,
                        index: agg,
                    }),
                    self.id(FatTreeNode::Core {
                        index: agg * half + c,
                    }),
                    self.id(FatTreeNode::Aggregation {
                        pod: pb,
                        index: agg,
                    }),
                    self.id(down),
                    dst,
                ]);
            }
        }
        out
    }

    /// Mean host-to-host hops over ordered pairs of distinct hosts (closed form):
    /// [2(h-1) + 4h(k/2-1) + 6(k-1)k²/4] / (N-1), with h = k/2 hosts per edge switch.
    pub fn average_host_distance(&self) -> f64 {
        let (k, h, n) = (
            f64::from(self.k),
            f64::from(self.k / 2),
            self.hosts() as f64,
        );
        if n < 2.0 {
            return 0.0;
        }
        (2.0 * (h - 1.0) + 4.0 * h * (k / 2.0 - 1.0) + 6.0 * (k - 1.0) * k * k / 4.0) / (n - 1.0)
    }

    /// Host-to-host diameter: 6 when there are two pods or more (always, for k >= 2).
    pub fn diameter(&self) -> u64 {
        6
    }

    /// Links cut by a bisection of the hosts: k³/8, a full-bisection network (half the hosts
    /// can talk to the other half at full rate). Cutting the core links of half the pods'
    /// aggregation switches achieves it: each pod sends k²/4 links up, k/2 pods = k³/8.
    pub fn bisection_links(&self) -> u64 {
        self.hosts() / 2
    }
}
