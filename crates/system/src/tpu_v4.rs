//! The TPU v4 supercomputer (tpu-v4-isca2023.txt, section 2): 64 blocks of 4x4x4 chips, each a
//! rack cabled electrically as a 3-D mesh, and 48 optical circuit switches (OCSes) that join
//! blocks into slices.
//!
//! * Each block face has 16 optical links, 96 per block. The `+` and `-` links of the same
//!   dimension and index go to the same OCS, so there are 3 dimensions x 16 indices = 48 OCSes
//!   (section 2.2: 6 x 16 / 2). OCS `d * 16 + i` serves dimension `d`, face index `i`, where `i`
//!   numbers the 4x4 face by the other two coordinates (lower dimension fastest).
//! * OCS ports: block `b`'s `+` link is port `2b`, its `-` link port `2b + 1`: 64 blocks use 128
//!   ports of the Palomar OCS's 136 (8 spares).
//! * A slice `a x b x c` (a <= b <= c, as the scheduler requires) of multiples of 4 takes
//!   (a/4)(b/4)(c/4) free, healthy blocks anywhere in the pod and programs one circuit per block
//!   per face index in each dimension, joining the `+` face of each block to the `-` face of the
//!   next block along that dimension, the last wrapping round to the first: a torus. Twisted
//!   slices (k x k x 2k, k x 2k x 2k) wire the wrap-around circuits to the shifted block
//!   instead; twists are multiples of 4 chips, so a circuit still joins the same face index.
//! * A slice that fits inside one block (each side at most 4, not a whole block) is a mesh on
//!   that block's electrical links, with no wraparound and no OCS circuits. This model gives
//!   such a slice a block of its own.
//! * A host drives 4 chips, 16 hosts per block. A failed host makes its block unusable; the OCS
//!   acts as a plugboard and slices are built from the other blocks.
//! * Links: 6 ICI links per chip at 50 GB/s each way (Table 4).

use std::collections::BTreeMap;

use podsim_topology::{Blocks, Direction, KAryNCube, LinkKind, LinkSpec, NodeId, Port};
use podsim_units::Bandwidth;

/// Chips along each side of a block.
pub const BLOCK_SIDE: u32 = 4;
/// Blocks in a pod.
pub const BLOCKS: usize = 64;
/// Hosts per block (4 chips each).
pub const HOSTS_PER_BLOCK: u32 = 16;
/// Ports of a Palomar OCS (128 used + 8 spares).
pub const OCS_PORTS: u32 = 136;
/// ICI links per chip.
pub const ICI_LINKS_PER_CHIP: u32 = 6;

/// Faces per dimension index: 4 x 4.
const FACE: u32 = BLOCK_SIDE * BLOCK_SIDE;

/// One ICI link each way: 50 GB/s (Table 4, from the `tpuv4` chip preset), with the per-hop latency of
/// [`crate::presets::ICI_HOP_LATENCY`] (a stated assumption: the seed gives none).
pub fn ici_link(kind: LinkKind) -> LinkSpec {
    LinkSpec {
        kind,
        bandwidth: podsim_compute::chips::Chip::preset("tpuv4")
            .and_then(|c| c.tpu)
            .and_then(|t| Bandwidth::from_bytes_per_s(t.ici_link_bytes_per_s))
            .expect("the tpuv4 preset states its ICI link bandwidth"),
        latency: crate::presets::ICI_HOP_LATENCY,
    }
}

/// The number of OCSes a pod of blocks with `side`-long sides needs: one per dimension and face
/// index, the `+` and `-` faces sharing it (section 2.2).
pub fn ocs_needed(side: u32) -> u32 {
    3 * side * side
}

/// Why a slice could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SliceError {
    /// The shape breaks a rule.
    #[error("slice {shape}: {why}")]
    BadShape {
        /// The shape as `AxBxC`.
        shape: String,
        /// Which rule.
        why: String,
    },
    /// Not enough free, healthy blocks.
    #[error("slice {shape} needs {needed} blocks but only {free} are free and healthy")]
    NoCapacity {
        /// The shape as `AxBxC`.
        shape: String,
        /// Blocks it needs.
        needed: usize,
        /// Blocks available.
        free: usize,
    },
    /// No such slice.
    #[error("no slice {0}")]
    Unknown(u32),
}

/// A slice's handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SliceId(pub u32);

/// An allocated slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    /// Its handle.
    pub id: SliceId,
    /// Chips along x, y, z.
    pub shape: [u32; 3],
    /// Whether its wraparound is twisted.
    pub twisted: bool,
    /// The blocks it uses, in block-grid order (x fastest).
    pub blocks: Vec<usize>,
    /// Its network: chips numbered by slice coordinates.
    pub topology: KAryNCube,
}

/// One OCS port: which switch, which port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OcsPort {
    /// The switch, `dimension * 16 + face index`.
    pub ocs: u32,
    /// The port on it: `2 * block` for `+`, `2 * block + 1` for `-`.
    pub port: u32,
}

/// A TPU v4 pod: its blocks, their health, and the OCS circuits.
#[derive(Debug, Clone, Default)]
pub struct TpuPod {
    owner: Vec<Option<SliceId>>,
    failed_hosts: BTreeMap<usize, Vec<u32>>,
    /// Programmed circuits, both directions: port -> (other port, owning slice).
    circuits: BTreeMap<OcsPort, (OcsPort, SliceId)>,
    slices: BTreeMap<SliceId, Slice>,
    next: u32,
}

fn shape_name(s: [u32; 3]) -> String {
    format!("{}x{}x{}", s[0], s[1], s[2])
}

impl TpuPod {
    /// A pod with every block healthy and free and no circuits.
    pub fn new() -> Self {
        TpuPod {
            owner: vec![None; BLOCKS],
            ..Default::default()
        }
    }

    /// Total chips.
    pub fn chips(&self) -> u64 {
        BLOCKS as u64 * u64::from(BLOCK_SIDE.pow(3))
    }

    /// Mark host `host` (0..16) of `block` failed: the block takes no new slice.
    pub fn fail_host(&mut self, block: usize, host: u32) {
        if block < BLOCKS && host < HOSTS_PER_BLOCK {
            let hosts = self.failed_hosts.entry(block).or_default();
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
    }

    /// Whether `block` has a failed host.
    pub fn is_failed(&self, block: usize) -> bool {
        self.failed_hosts.contains_key(&block)
    }

    /// Blocks that are healthy and free.
    pub fn free_blocks(&self) -> Vec<usize> {
        (0..BLOCKS)
            .filter(|&b| self.owner[b].is_none() && !self.is_failed(b))
            .collect()
    }

    /// The slices allocated now.
    pub fn slices(&self) -> impl Iterator<Item = &Slice> {
        self.slices.values()
    }

    /// The circuit at `port`, if one is programmed: the other end and the owning slice.
    pub fn circuit(&self, port: OcsPort) -> Option<(OcsPort, SliceId)> {
        self.circuits.get(&port).copied()
    }

    /// All programmed circuits, each once (from its lower port).
    pub fn circuits(&self) -> impl Iterator<Item = (OcsPort, OcsPort, SliceId)> + '_ {
        self.circuits
            .iter()
            .filter(|(a, (b, _))| a < &b)
            .map(|(a, (b, s))| (*a, *b, *s))
    }

    /// Allocate a slice of `shape` chips (x <= y <= z), twisted if asked and the shape allows.
    pub fn allocate(&mut self, shape: [u32; 3], twisted: bool) -> Result<SliceId, SliceError> {
        let name = shape_name(shape);
        let bad = |why: &str| SliceError::BadShape {
            shape: name.clone(),
            why: why.to_string(),
        };
        if shape.contains(&0) {
            return Err(bad("every side must be at least 1"));
        }
        if !(shape[0] <= shape[1] && shape[1] <= shape[2]) {
            return Err(bad("the scheduler requires x <= y <= z"));
        }
        let whole_blocks = shape.iter().all(|&s| s % BLOCK_SIDE == 0);
        let inside_block = shape.iter().all(|&s| s <= BLOCK_SIDE) && !whole_blocks;
        if !whole_blocks && !inside_block {
            return Err(bad(
                "sides must be multiples of 4 (whole blocks), or all at most 4 (part of one block)",
            ));
        }
        if inside_block && twisted {
            return Err(bad("a slice inside one block is a mesh and cannot twist"));
        }
        let grid: [u32; 3] = if whole_blocks {
            shape.map(|s| s / BLOCK_SIDE)
        } else {
            [1, 1, 1]
        };
        let needed = grid.iter().product::<u32>() as usize;
        let free = self.free_blocks();
        if free.len() < needed {
            return Err(SliceError::NoCapacity {
                shape: name,
                needed,
                free: free.len(),
            });
        }
        let dims = shape.to_vec();
        let electrical = ici_link(LinkKind::Electrical);
        let topology = if inside_block {
            KAryNCube::new(dims, vec![false; 3], electrical)
        } else {
            let mut t = KAryNCube::new(dims, vec![true; 3], electrical).and_then(|t| {
                t.with_blocks(Blocks {
                    shape: vec![BLOCK_SIDE; 3],
                    between: ici_link(LinkKind::Optical),
                })
            });
            if twisted {
                let twist = KAryNCube::named_twist(&shape)
                    .ok_or_else(|| bad("only k x k x 2k and k x 2k x 2k slices can twist"))?;
                t = t.and_then(|t| t.with_twist(twist));
            }
            t
        }
        .and_then(|t| t.with_interfaces(ICI_LINKS_PER_CHIP))
        .map_err(|e| bad(&e.why))?;
        let id = SliceId(self.next);
        self.next += 1;
        let blocks: Vec<usize> = free[..needed].to_vec();
        if whole_blocks {
            self.program(id, &topology, grid, &blocks)?;
        }
        for &b in &blocks {
            self.owner[b] = Some(id);
        }
        self.slices.insert(
            id,
            Slice {
                id,
                shape,
                twisted,
                blocks,
                topology,
            },
        );
        Ok(id)
    }

    /// Program the circuits of a whole-block slice: for every chip on a block's `+` face, the
    /// slice topology names the chip its `+` link reaches; join the two faces on their OCS.
    fn program(
        &mut self,
        id: SliceId,
        t: &KAryNCube,
        grid: [u32; 3],
        blocks: &[usize],
    ) -> Result<(), SliceError> {
        let mut new = Vec::new();
        for n in 0..t.node_count() {
            let node = NodeId(n);
            for d in 0..3 {
                if t.coord(node, d) % BLOCK_SIDE != BLOCK_SIDE - 1 {
                    continue; // not on a + face
                }
                let Some(to) = t.neighbor(
                    node,
                    Port {
                        dim: d,
                        dir: Direction::Plus,
                    },
                ) else {
                    continue;
                };
                let (from_port, to_port) = (
                    face_port(t, node, d, grid, blocks, 0),
                    face_port(t, to, d, grid, blocks, 1),
                );
                if from_port.ocs != to_port.ocs {
                    return Err(SliceError::BadShape {
                        shape: shape_name([t.dims()[0], t.dims()[1], t.dims()[2]]),
                        why: "a wrap-around link would join different face indices".into(),
                    });
                }
                new.push((from_port, to_port));
            }
        }
        for (a, b) in new {
            self.circuits.insert(a, (b, id));
            self.circuits.insert(b, (a, id));
        }
        Ok(())
    }

    /// Release a slice: its blocks become free and its circuits are cleared.
    pub fn release(&mut self, id: SliceId) -> Result<(), SliceError> {
        let s = self.slices.remove(&id).ok_or(SliceError::Unknown(id.0))?;
        for b in s.blocks {
            self.owner[b] = None;
        }
        self.circuits.retain(|_, (_, owner)| *owner != id);
        Ok(())
    }
}

/// The OCS port of the face link of `node` in dimension `d` (`side` 0 = `+`, 1 = `-`).
fn face_port(
    t: &KAryNCube,
    node: NodeId,
    d: usize,
    grid: [u32; 3],
    blocks: &[usize],
    side: u32,
) -> OcsPort {
    let c: Vec<u32> = (0..3).map(|j| t.coord(node, j)).collect();
    let g: Vec<u32> = c.iter().map(|x| x / BLOCK_SIDE).collect();
    let block = blocks[(g[0] + grid[0] * (g[1] + grid[1] * g[2])) as usize];
    let others: Vec<u32> = (0..3)
        .filter(|&j| j != d)
        .map(|j| c[j] % BLOCK_SIDE)
        .collect();
    let index = others[0] + BLOCK_SIDE * others[1];
    OcsPort {
        ocs: d as u32 * FACE + index,
        port: 2 * block as u32 + side,
    }
}
