//! Tesla DOJO (dojo-microarchitecture.txt): nodes on a 2-D mesh that runs seamlessly across D1
//! dies, 5 x 5 dies on a training tile, tiles on a 2-D compute plane, and DOJO interface
//! processors (DIPs) on the plane's edges with PCIe links to hosts and Ethernet links through a
//! switch (the "Z-dimension" shortcuts).
//!
//! # Geometry (choices where the seed is silent)
//! * A D1 die is a grid of `die_cols x die_rows` routers, default 18 x 20 = 360 positions of
//!   which `die_nodes` (default 354, the seed's count) hold working compute nodes; the other
//!   positions are spares whose routers still pass traffic (the seed: once a die passes its
//!   power-up tests "all its routers are expected to work").
//! * The compute plane is one mesh of routers, `tiles_x * 5 * die_cols` wide and
//!   `tiles_y * 5 * die_rows` high; router ids are row-major, x fastest.
//! * DIPs (system preset only): one on each die row at the west and east edges of the plane,
//!   attached along that die's edge: one link to each of the edge's routers (20 for a D1 die),
//!   where the die's tile-edge links would be; 5 DIPs per host; every DIP has an Ethernet link
//!   to one switch.
//!
//! # Links (per direction, per router-to-router link)
//! * Inside a die: "256-GB/s bidirectional", so 128 GB/s each way, one cycle at 2 GHz (500 ps).
//! * Die to die inside a tile: "a combined die-to-die bandwidth of 2 TB/s" across a die edge,
//!   read as 2 TB/s each way shared by the routers along that edge (20 or 18), ~100 ns.
//! * Die to die across a tile edge: 900 GB/s per die edge, shared the same way, ~100 ns
//!   ("similar serial links").
//! * DIP to the mesh: the tile-edge die rate, 900 GB/s across the die edge shared by its
//!   routers (45 GB/s each for 20), ~100 ns: the DIP takes the place of the die the tile edge
//!   would lead to (an assumption; the seed gives no DIP rate; Tesla's Hot Chips 34 DIP slide
//!   gives 900 GB/s of "TTP interface"); DIP to host: PCIe Gen4 x16, 32 GB/s (160 GB/s per
//!   host of 5); DIP to the Ethernet switch: 50 GB/s (400 Gb/s; an assumption, the seed gives
//!   no rate).

use podsim_units::{Bandwidth, Bytes, SimDuration};

use crate::{KAryNCube, LinkKind, LinkSpec, NodeId, TopologyError};

/// SRAM per DOJO node: 1.25 MB (seed, "Node Memory").
pub const NODE_SRAM: Bytes = Bytes(1_250_000);
/// HBM per DIP: 32 GB (seed, "DOJO System Topology").
pub const DIP_HBM: Bytes = Bytes(32_000_000_000);
/// HBM bandwidth per DIP: 800 GB/s (Tesla's DOJO system talk, Hot Chips 34, 2022, the DIP
/// slide: "32GB HBM, 800GB/s"; the seed gives the capacity only). Everything a DIP sends into
/// the plane comes out of its HBM, so its injection is capped at this rate.
pub const DIP_HBM_BYTES_PER_S: u64 = 800_000_000_000;
/// Dies along each side of a training tile.
pub const TILE_DIES: u32 = 5;
/// DIPs per host, at most (seed, "Communication Mechanisms").
pub const DIPS_PER_HOST: u32 = 5;

fn bw(bytes_per_s: u64) -> Bandwidth {
    Bandwidth::from_bytes_per_s(bytes_per_s).expect("DOJO link rates are positive")
}

/// What a DOJO system is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DojoSpec {
    /// Routers per die along x.
    pub die_cols: u32,
    /// Routers per die along y.
    pub die_rows: u32,
    /// Working compute nodes per die (at most `die_cols * die_rows`).
    pub die_nodes: u32,
    /// Dies along x and y: a whole number of tiles, or a single die.
    pub dies_x: u32,
    /// Dies along y.
    pub dies_y: u32,
    /// Whether DIPs, hosts and the Ethernet switch are attached.
    pub with_dips: bool,
    /// The name it was built from.
    pub label: String,
}

impl DojoSpec {
    /// One D1 die.
    pub fn die() -> Self {
        DojoSpec {
            die_cols: 18,
            die_rows: 20,
            die_nodes: 354,
            dies_x: 1,
            dies_y: 1,
            with_dips: false,
            label: "dojo:die".into(),
        }
    }
    /// One 5 x 5-die training tile.
    pub fn tile() -> Self {
        DojoSpec {
            dies_x: TILE_DIES,
            dies_y: TILE_DIES,
            label: "dojo:tile".into(),
            ..Self::die()
        }
    }
    /// A plane of `rows x cols` tiles with DIPs and hosts.
    pub fn system(rows: u32, cols: u32) -> Self {
        DojoSpec {
            dies_x: TILE_DIES * cols,
            dies_y: TILE_DIES * rows,
            with_dips: true,
            label: format!("dojo:system={rows}x{cols}"),
            ..Self::die()
        }
    }
}

/// What a DOJO node id refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DojoNode {
    /// A mesh router (and, unless a spare position, its compute node) at plane coordinates.
    Router {
        /// Column on the plane.
        x: u32,
        /// Row on the plane.
        y: u32,
    },
    /// An interface processor.
    Dip(u32),
    /// An x86 host.
    Host(u32),
    /// The Ethernet switch joining the DIPs.
    Switch,
}

/// A DOJO compute plane with its interface processors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dojo {
    spec: DojoSpec,
    width: u32,
    height: u32,
}

impl Dojo {
    /// Build a plane from `spec`.
    pub fn new(spec: DojoSpec) -> Result<Self, TopologyError> {
        if spec.die_cols == 0 || spec.die_rows == 0 || spec.dies_x == 0 || spec.dies_y == 0 {
            return Err(TopologyError::new(
                "dojo",
                "die grid and die counts must be at least 1",
            ));
        }
        if spec.die_nodes == 0 || spec.die_nodes > spec.die_cols * spec.die_rows {
            return Err(TopologyError::new(
                "dojo",
                format!(
                    "{} nodes do not fit a {}x{} die",
                    spec.die_nodes, spec.die_cols, spec.die_rows
                ),
            ));
        }
        let width = spec.dies_x.checked_mul(spec.die_cols);
        let height = spec.dies_y.checked_mul(spec.die_rows);
        let (Some(width), Some(height)) = (width, height) else {
            return Err(TopologyError::new("dojo", "the plane is too large"));
        };
        if u64::from(width) * u64::from(height) > 1 << 32 {
            return Err(TopologyError::new("dojo", "more than 2^32 routers"));
        }
        Ok(Dojo {
            spec,
            width,
            height,
        })
    }

    /// The spec.
    pub fn spec(&self) -> &DojoSpec {
        &self.spec
    }
    /// Routers along x.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Routers along y.
    pub fn height(&self) -> u32 {
        self.height
    }
    /// Mesh routers.
    pub fn routers(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
    /// Dies.
    pub fn dies(&self) -> u64 {
        u64::from(self.spec.dies_x) * u64::from(self.spec.dies_y)
    }
    /// Working compute nodes: dies x nodes per die.
    pub fn compute_nodes(&self) -> u64 {
        self.dies() * u64::from(self.spec.die_nodes)
    }
    /// Node SRAM in all: compute nodes x 1.25 MB.
    pub fn sram(&self) -> Bytes {
        Bytes(self.compute_nodes() * NODE_SRAM.0)
    }
    /// Interface processors: one per die row on the west and east edges (systems only).
    pub fn dips(&self) -> u32 {
        if self.spec.with_dips {
            2 * self.spec.dies_y
        } else {
            0
        }
    }
    /// Hosts: DIPs / 5, rounded up.
    pub fn hosts(&self) -> u32 {
        self.dips().div_ceil(DIPS_PER_HOST)
    }
    /// Every node id: routers, DIPs, hosts and (with DIPs) the switch.
    pub fn node_count(&self) -> u64 {
        self.routers()
            + u64::from(self.dips())
            + u64::from(self.hosts())
            + u64::from(self.spec.with_dips)
    }

    /// The router at plane coordinates.
    pub fn router(&self, x: u32, y: u32) -> NodeId {
        NodeId(u64::from(y) * u64::from(self.width) + u64::from(x))
    }

    /// What `n` is.
    pub fn node(&self, n: NodeId) -> Option<DojoNode> {
        let r = self.routers();
        let d = u64::from(self.dips());
        let h = u64::from(self.hosts());
        Some(if n.0 < r {
            DojoNode::Router {
                x: (n.0 % u64::from(self.width)) as u32,
                y: (n.0 / u64::from(self.width)) as u32,
            }
        } else if n.0 < r + d {
            DojoNode::Dip((n.0 - r) as u32)
        } else if n.0 < r + d + h {
            DojoNode::Host((n.0 - r - d) as u32)
        } else if self.spec.with_dips && n.0 == r + d + h {
            DojoNode::Switch
        } else {
            return None;
        })
    }

    /// The id of DIP `i`, host `i` or the switch.
    pub fn id(&self, n: DojoNode) -> NodeId {
        let r = self.routers();
        let d = u64::from(self.dips());
        NodeId(match n {
            DojoNode::Router { x, y } => self.router(x, y).0,
            DojoNode::Dip(i) => r + u64::from(i),
            DojoNode::Host(i) => r + d + u64::from(i),
            DojoNode::Switch => r + d + u64::from(self.hosts()),
        })
    }

    /// The router in the middle of DIP `i`'s die edge: DIPs 0.. on the west edge (die row
    /// i), then the east.
    pub fn dip_router(&self, i: u32) -> NodeId {
        let (x, y0, _) = self.dip_edge(i);
        self.router(x, y0 + self.spec.die_rows / 2)
    }

    /// DIP `i`'s edge: its column and the first and last rows it spans.
    fn dip_edge(&self, i: u32) -> (u32, u32, u32) {
        let rows = self.spec.dies_y;
        let (die_row, east) = (i % rows, i >= rows);
        let y0 = die_row * self.spec.die_rows;
        (
            if east { self.width - 1 } else { 0 },
            y0,
            y0 + self.spec.die_rows - 1,
        )
    }

    /// The routers DIP `i` has links to: every router on its die's edge.
    pub fn dip_routers(&self, i: u32) -> Vec<NodeId> {
        let (x, y0, y1) = self.dip_edge(i);
        (y0..=y1).map(|y| self.router(x, y)).collect()
    }

    /// The router where traffic between DIP `i` and node `toward` enters or leaves the mesh:
    /// the DIP's edge router on `toward`'s row, or the nearest row of the edge (the middle one
    /// when `toward` is not a router).
    pub fn dip_entry(&self, i: u32, toward: NodeId) -> NodeId {
        let (x, y0, y1) = self.dip_edge(i);
        match self.node(toward) {
            Some(DojoNode::Router { y, .. }) => self.router(x, y.clamp(y0, y1)),
            _ => self.dip_router(i),
        }
    }

    /// The DIP whose edge router `r` is, if any.
    fn dip_at(&self, r: NodeId) -> Option<u32> {
        let Some(DojoNode::Router { x, y }) = self.node(r) else {
            return None;
        };
        if self.dips() == 0 || (x != 0 && x != self.width - 1) {
            return None;
        }
        let die_row = y / self.spec.die_rows;
        // West DIPs first; on a one-column plane the west DIP wins the router.
        Some(if x == 0 {
            die_row
        } else {
            self.spec.dies_y + die_row
        })
    }

    /// The link inside a die.
    pub fn on_die_link(&self) -> LinkSpec {
        LinkSpec {
            kind: LinkKind::OnChip,
            bandwidth: bw(128_000_000_000),
            latency: SimDuration::from_ps(500),
        }
    }

    /// The link crossing a die boundary along `dim` (0: between columns of dies, shared by the
    /// die's rows of routers; 1: between rows of dies), inside a tile or at a tile edge.
    pub fn die_link(&self, dim: usize, tile_edge: bool) -> LinkSpec {
        let total: u64 = if tile_edge {
            900_000_000_000
        } else {
            2_000_000_000_000
        };
        let share = u64::from(if dim == 0 {
            self.spec.die_rows
        } else {
            self.spec.die_cols
        });
        LinkSpec {
            kind: LinkKind::Electrical,
            bandwidth: bw(total / share),
            latency: SimDuration::from_ns(100),
        }
    }

    /// The spec of the mesh link from router (x, y) to its neighbour one step up `dim`.
    pub fn mesh_link(&self, x: u32, y: u32, dim: usize) -> LinkSpec {
        let (c, per_die) = if dim == 0 {
            (x, self.spec.die_cols)
        } else {
            (y, self.spec.die_rows)
        };
        if (c + 1) % per_die != 0 {
            return self.on_die_link();
        }
        let die = (c + 1) / per_die;
        self.die_link(dim, die % TILE_DIES == 0)
    }

    /// DIP to one of its edge routers, DIP to host (PCIe), DIP to switch (Ethernet).
    pub fn dip_links(&self) -> [LinkSpec; 3] {
        [
            self.die_link(0, true),
            LinkSpec {
                kind: LinkKind::Electrical,
                bandwidth: bw(32_000_000_000),
                latency: SimDuration::ZERO,
            },
            LinkSpec {
                kind: LinkKind::Optical,
                bandwidth: bw(50_000_000_000),
                latency: SimDuration::ZERO,
            },
        ]
    }

    /// The neighbours of `n` with the spec of the link to each.
    pub fn links_of(&self, n: NodeId) -> Vec<(NodeId, LinkSpec)> {
        let Some(node) = self.node(n) else {
            return Vec::new();
        };
        let [to_mesh, pcie, ether] = self.dip_links();
        match node {
            DojoNode::Router { x, y } => {
                let mut out = Vec::with_capacity(5);
                if x + 1 < self.width {
                    out.push((self.router(x + 1, y), self.mesh_link(x, y, 0)));
                }
                if x > 0 {
                    out.push((self.router(x - 1, y), self.mesh_link(x - 1, y, 0)));
                }
                if y + 1 < self.height {
                    out.push((self.router(x, y + 1), self.mesh_link(x, y, 1)));
                }
                if y > 0 {
                    out.push((self.router(x, y - 1), self.mesh_link(x, y - 1, 1)));
                }
                if let Some(i) = self.dip_at(n) {
                    out.push((self.id(DojoNode::Dip(i)), to_mesh));
                }
                out
            }
            DojoNode::Dip(i) => {
                let mut out: Vec<(NodeId, LinkSpec)> = self
                    .dip_routers(i)
                    .into_iter()
                    .filter(|&r| self.dip_at(r) == Some(i))
                    .map(|r| (r, to_mesh))
                    .collect();
                out.push((self.id(DojoNode::Host(i / DIPS_PER_HOST)), pcie));
                out.push((self.id(DojoNode::Switch), ether));
                out
            }
            DojoNode::Host(h) => (h * DIPS_PER_HOST..((h + 1) * DIPS_PER_HOST).min(self.dips()))
                .map(|i| (self.id(DojoNode::Dip(i)), pcie))
                .collect(),
            DojoNode::Switch => (0..self.dips())
                .map(|i| (self.id(DojoNode::Dip(i)), ether))
                .collect(),
        }
    }

    /// The plane's mesh of routers as a k-ary n-cube (for its distance metrics).
    pub fn mesh(&self) -> KAryNCube {
        KAryNCube::new(
            vec![self.width, self.height],
            vec![false, false],
            self.on_die_link(),
        )
        .expect("a plane of at least one router is a valid mesh")
    }

    /// Mesh hops between two routers: |dx| + |dy|.
    pub fn mesh_distance(&self, a: NodeId, b: NodeId) -> u64 {
        match (self.node(a), self.node(b)) {
            (Some(DojoNode::Router { x: ax, y: ay }), Some(DojoNode::Router { x: bx, y: by })) => {
                u64::from(ax.abs_diff(bx)) + u64::from(ay.abs_diff(by))
            }
            _ => u64::MAX,
        }
    }

    /// The DIP nearest to a router by mesh hops to its edge (ties to the lower DIP), if there
    /// are DIPs.
    pub fn nearest_dip(&self, r: NodeId) -> Option<u32> {
        (0..self.dips()).min_by_key(|&i| self.mesh_distance(r, self.dip_entry(i, r)))
    }

    /// Counts of links by kind and in all, each bidirectional link once.
    pub fn link_counts(&self) -> Vec<(LinkKind, u64)> {
        let (w, h) = (u64::from(self.width), u64::from(self.height));
        let die_cols_boundaries = u64::from(self.spec.dies_x - 1);
        let die_rows_boundaries = u64::from(self.spec.dies_y - 1);
        let mesh = h * (w - 1) + w * (h - 1);
        let die_edges = die_cols_boundaries * h + die_rows_boundaries * w;
        let dips = u64::from(self.dips());
        // A DIP's links into the mesh: one per router of its die edge (on a one-router-wide
        // plane the west DIPs hold the edge).
        let dip_mesh: u64 = (0..self.dips())
            .map(|i| {
                self.dip_routers(i)
                    .into_iter()
                    .filter(|&r| self.dip_at(r) == Some(i))
                    .count() as u64
            })
            .sum();
        vec![
            (LinkKind::OnChip, mesh - die_edges),
            (LinkKind::Electrical, die_edges + dip_mesh + dips), // die edges, DIP-mesh, PCIe
            (LinkKind::Optical, dips),                           // Ethernet
        ]
    }
}
