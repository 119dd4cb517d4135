//! Typed machine and scenario specifications: what a topology shorthand or a scenario file
//! names, once validated (`podsim-config` turns text into these), and building the network of
//! a system. No parsing here and no serde: the specs are plain values.

use podsim_topology::{
    Blocks, Dojo, DojoSpec, FatTree, Hybrid, KAryNCube, LinkSpec, Network, Tofu, TofuGeneration,
    TopologyError, TtGrid,
};

use podsim_units::SimDuration;

use crate::tpu_v4::TpuPod;

/// The shape a shorthand names: sizes, wrap flags and twist per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Size of each dimension (each at least 1).
    pub dims: Vec<u32>,
    /// Whether each dimension wraps around.
    pub wrap: Vec<bool>,
    /// Twist shifts (see `KAryNCube::with_twist`), if twisted.
    pub twist: Option<Vec<Vec<u32>>>,
}

/// A Tofu network as a shorthand names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TofuSpec {
    /// Which generation (sets lanes, rate, coding and TNIs).
    pub generation: TofuGeneration,
    /// X, Y, Z sizes.
    pub xyz: [u32; 3],
    /// X, Y, Z wrap flags.
    pub xyz_wrap: [bool; 3],
    /// A, B, C sizes (2, 3, 2 except for the FX100 chassis).
    pub abc: [u32; 3],
    /// The shorthand as given.
    pub label: String,
}

/// Any topology a shorthand can name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopoSpec {
    /// A k-ary n-cube.
    Cube(Shape),
    /// A Tofu 6-D mesh/torus.
    Tofu(TofuSpec),
    /// A DOJO die, tile or multi-tile system.
    Dojo(DojoSpec),
    /// A Tenstorrent Grayskull grid.
    Grayskull,
    /// A Tenstorrent Wormhole grid with some worker rows harvested.
    Wormhole {
        /// Harvested worker rows.
        harvest: u32,
    },
    /// 8-chip ICI groups joined by an InfiniBand fat tree (TPU v4 paper, section 7.3).
    Hybrid {
        /// Chips.
        chips: u32,
    },
    /// A 3-level fat tree of k-port switches.
    FatTree {
        /// Ports per switch.
        k: u32,
    },
    /// A machine file's machine: chips, NICs and switches in tiers ([`crate::cluster`]).
    Machine(Box<crate::cluster::MachineSpec>),
    /// A TPU v4 slice built from blocks and OCS circuits in an otherwise empty pod.
    TpuV4 {
        /// Chips along x, y, z (x <= y <= z).
        shape: [u32; 3],
        /// Whether the wraparound is twisted.
        twisted: bool,
        /// The shorthand as given.
        label: String,
    },
}

impl TopoSpec {
    /// The link bandwidth a preset sets itself (`None` for a mesh, torus, ring or fat tree
    /// given by shape, whose bandwidth the user states): Tofu from lanes x rate x coding, TPU v4
    /// and the hybrid's ICI at 50 GB/s (tpu-v4-isca2023.txt Table 4), DOJO's on-die links and
    /// the Tenstorrent NoCs at their clocks.
    pub fn preset_bandwidth(&self) -> Result<Option<podsim_units::Bandwidth>, TopologyError> {
        Ok(Some(match self {
            TopoSpec::Tofu(t) => t.generation.link_bandwidth(),
            TopoSpec::TpuV4 { .. } | TopoSpec::Hybrid { .. } => {
                crate::tpu_v4::ici_link(podsim_topology::LinkKind::Electrical).bandwidth
            }
            TopoSpec::Grayskull => TtGrid::grayskull().cube().link().bandwidth,
            TopoSpec::Wormhole { .. } => TtGrid::wormhole_base_link().bandwidth,
            TopoSpec::Dojo(d) => Dojo::new(d.clone())?.on_die_link().bandwidth,
            TopoSpec::Cube(_) | TopoSpec::FatTree { .. } | TopoSpec::Machine(_) => {
                return Ok(None);
            }
        }))
    }

    /// The per-hop link latency of the preset, where the topology takes one from its spec
    /// (Tofu, whose generation sets it: [`crate::presets::tofu_hop_latency`]); zero for a mesh,
    /// torus, ring or fat tree given by shape. The other presets set their own links when
    /// built (TPU v4 ICI and the hybrid from [`crate::presets`], DOJO and Tenstorrent from
    /// their clocks in `podsim-topology`).
    pub fn preset_latency(&self) -> SimDuration {
        match self {
            TopoSpec::Tofu(t) => crate::presets::tofu_hop_latency(t.generation),
            TopoSpec::Cube(_)
            | TopoSpec::FatTree { .. }
            | TopoSpec::Dojo(_)
            | TopoSpec::Grayskull
            | TopoSpec::Wormhole { .. }
            | TopoSpec::Hybrid { .. }
            | TopoSpec::Machine(_)
            | TopoSpec::TpuV4 { .. } => SimDuration::ZERO,
        }
    }

    /// What the user should know about the shape they asked for that its name hides: a TPU v4
    /// slice that lies inside one 4x4x4 block (every side at most 4, not all 4) is a mesh on
    /// the block's electrical links, with no wraparound and no OCS circuit
    /// (tpu-v4-isca2023.txt section 2; see [`crate::tpu_v4`]).
    pub fn note(&self) -> Option<String> {
        match self {
            TopoSpec::TpuV4 { shape, label, .. }
                if shape.iter().all(|&s| s <= crate::tpu_v4::BLOCK_SIDE)
                    && shape.iter().any(|&s| s < crate::tpu_v4::BLOCK_SIDE) =>
            {
                Some(format!(
                    "{label} lies inside one 4x4x4 block: it is a mesh ({}x{}x{}) on the block's \
                     electrical links, with no wraparound (only whole blocks close a torus \
                     through the OCS)",
                    shape[0], shape[1], shape[2]
                ))
            }
            _ => None,
        }
    }
}

/// A validated system: everything needed to build its topology.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemSpec {
    /// Its name in reports.
    pub name: String,
    /// What the topology is.
    pub topology: TopoSpec,
    /// Links (inside blocks, when there are blocks). For Tofu, derived from the generation.
    pub link: LinkSpec,
    /// Optional block grouping.
    pub blocks: Option<Blocks>,
    /// Network interfaces per node, if set.
    pub interfaces: Option<u32>,
}

impl SystemSpec {
    /// Build the topology. Validation already built it once, so this only fails for specs
    /// constructed by hand.
    pub fn build(&self) -> Result<Network, podsim_topology::TopologyError> {
        let shape = match &self.topology {
            TopoSpec::Cube(s) => s,
            TopoSpec::Tofu(s) => {
                return Tofu::new(
                    s.generation,
                    s.xyz,
                    s.xyz_wrap,
                    s.abc,
                    self.link.latency,
                    &s.label,
                )
                .map(Network::Tofu);
            }
            TopoSpec::FatTree { k } => return FatTree::new(*k, self.link).map(Network::FatTree),
            TopoSpec::Machine(m) => return m.build(),
            TopoSpec::Dojo(spec) => return Dojo::new(spec.clone()).map(Network::Dojo),
            TopoSpec::Grayskull => return Ok(Network::Tenstorrent(TtGrid::grayskull())),
            TopoSpec::Hybrid { chips } => {
                return Hybrid::with_links(
                    *chips,
                    crate::presets::ICI_HOP_LATENCY,
                    crate::presets::IB_HOP_LATENCY,
                )
                .map(Network::Hybrid);
            }
            TopoSpec::Wormhole { harvest } => {
                return TtGrid::wormhole(*harvest).map(Network::Tenstorrent);
            }
            TopoSpec::TpuV4 { shape, twisted, .. } => {
                let mut pod = TpuPod::new();
                let id = pod.allocate(*shape, *twisted).map_err(|e| TopologyError {
                    key: "topology",
                    why: e.to_string(),
                })?;
                let slice = pod
                    .slices()
                    .find(|s| s.id == id)
                    .map(|s| s.topology.clone());
                return slice.map(Network::Cube).ok_or(TopologyError {
                    key: "topology",
                    why: "the pod lost the slice it just made".into(),
                });
            }
        };
        let mut t = KAryNCube::new(shape.dims.clone(), shape.wrap.clone(), self.link)?;
        if let Some(tw) = &shape.twist {
            t = t.with_twist(tw.clone())?;
        }
        if let Some(b) = &self.blocks {
            t = t.with_blocks(b.clone())?;
        }
        if let Some(i) = self.interfaces {
            t = t.with_interfaces(i)?;
        }
        Ok(Network::Cube(t))
    }
}

impl SystemSpec {
    /// The chip on every endpoint, where the system names one: `tpuv4` on a TPU v4 slice, a
    /// machine file's chip; `None` for a bare topology.
    pub fn chip_name(&self) -> Option<&str> {
        match &self.topology {
            TopoSpec::TpuV4 { .. } => Some("tpuv4"),
            TopoSpec::Machine(m) => Some(&m.chip.name),
            _ => None,
        }
    }

    /// The OCSes a TPU v4 system programs (distinct switches with circuits), by building its
    /// slice in an empty pod; `None` for other systems.
    pub fn ocs_switches(&self) -> Option<u64> {
        let TopoSpec::TpuV4 { shape, twisted, .. } = &self.topology else {
            return None;
        };
        let mut pod = TpuPod::new();
        pod.allocate(*shape, *twisted).ok()?;
        let ocses: std::collections::BTreeSet<u32> =
            pod.circuits().map(|(a, _, _)| a.ocs).collect();
        Some(ocses.len() as u64)
    }
}
