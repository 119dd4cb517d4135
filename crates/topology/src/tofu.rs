//! The Tofu interconnect family (tofu-interconnect-d.txt): a 6-D mesh/torus X, Y, Z, A, B, C
//! with A = 2 (mesh), B = 3 (torus) and C = 2 (mesh), and the virtual 3-D torus that Fujitsu's
//! rank mapping lays over it.
//!
//! Link bandwidth follows from the lanes per link, the lane signalling rate and the line coding
//! (seed Table I: 80, 40 and 20 lanes per node over 10 ports):
//!
//! | generation | lanes x rate           | coding  | link bandwidth               | TNIs | injection  |
//! |------------|------------------------|---------|------------------------------|------|------------|
//! | Tofu       | 8 x 6.25 Gb/s = 50     | 8b/10b  | 50 x 8/10 / 8 = 5.0 GB/s     | 4    | 20 GB/s    |
//! | Tofu2      | 4 x 25.78125 = 103.125 | 64b/66b | 103.125 x 64/66 / 8 = 12.5   | 4    | 50 GB/s    |
//! | TofuD      | 2 x 28.05 = 56.1       | 64b/66b | 56.1 x 64/66 / 8 = 6.8 GB/s  | 6    | 40.8 GB/s  |
//!
//! The seed gives lanes, rates and link bandwidths; the codings are the ones that make them agree
//! (8b/10b for the 6.25 Gb/s generation, 64b/66b for the 25-28 Gb/s ones).
//!
//! # The virtual 3-D torus
//! Each virtual axis pairs one of X, Y, Z with one of A, C, B and walks a Hamiltonian ring of
//! their product, so every virtual hop is one physical link (K computer: 24x18x16x2x3x2 becomes
//! 48x36x48):
//! * X with A (and Y with C), a line of L nodes times 2: out along a = 0, back along a = 1;
//! * Z with B (3, a torus): rows b = 0, 1, 2 over z = 1..L-1 in a snake, then through the Z
//!   wrap-around link to z = 0 and down column z = 0 back to the start. This needs Z to be a
//!   torus.

use std::fmt;

use podsim_units::{Bandwidth, SimDuration};

use crate::{KAryNCube, LinkKind, LinkSpec, NodeId, TopologyError};

/// A member of the Tofu family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TofuGeneration {
    /// Tofu (K computer, FX10).
    Tofu,
    /// Tofu interconnect 2 (PRIMEHPC FX100).
    Tofu2,
    /// Tofu interconnect D (Fugaku).
    TofuD,
}

impl TofuGeneration {
    /// Signal lanes per link (Table I: lanes per node / 10 ports).
    pub fn lanes(self) -> u64 {
        match self {
            TofuGeneration::Tofu => 8,
            TofuGeneration::Tofu2 => 4,
            TofuGeneration::TofuD => 2,
        }
    }
    /// Lane signalling rate in bits per second, as a fraction `(numerator, denominator)`.
    pub fn lane_rate_bps(self) -> (u64, u64) {
        match self {
            TofuGeneration::Tofu => (6_250_000_000, 1),
            TofuGeneration::Tofu2 => (25_781_250_000, 1),
            TofuGeneration::TofuD => (28_050_000_000, 1),
        }
    }
    /// Line coding as (payload bits, line bits).
    pub fn coding(self) -> (u64, u64) {
        match self {
            TofuGeneration::Tofu => (8, 10),
            TofuGeneration::Tofu2 | TofuGeneration::TofuD => (64, 66),
        }
    }
    /// Network interfaces (TNIs) per node.
    pub fn tnis(self) -> u32 {
        match self {
            TofuGeneration::Tofu | TofuGeneration::Tofu2 => 4,
            TofuGeneration::TofuD => 6,
        }
    }
    /// Link bandwidth per direction: lanes x rate x coding / 8 bits.
    pub fn link_bandwidth(self) -> Bandwidth {
        let (num, den) = self.lane_rate_bps();
        let (p, l) = self.coding();
        let bps = u128::from(self.lanes()) * u128::from(num) * u128::from(p)
            / (u128::from(den) * u128::from(l) * 8);
        Bandwidth::from_bytes_per_s(u64::try_from(bps).unwrap_or(u64::MAX))
            .expect("every generation's link bandwidth is positive")
    }
    /// The arithmetic of [`TofuGeneration::link_bandwidth`], for reports.
    pub fn link_arithmetic(self) -> String {
        let (num, _) = self.lane_rate_bps();
        let (p, l) = self.coding();
        let rate = Bandwidth::from_bytes_per_s(num)
            .map(|b| b.to_string())
            .unwrap_or_default();
        format!(
            "{} lanes x {} x {p}/{l} coding / 8 bits = {}",
            self.lanes(),
            rate.replace("GB/s", "Gb/s"),
            self.link_bandwidth()
        )
    }
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            TofuGeneration::Tofu => "Tofu",
            TofuGeneration::Tofu2 => "Tofu2",
            TofuGeneration::TofuD => "TofuD",
        }
    }
}

impl fmt::Display for TofuGeneration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Tofu network: the physical 6-D cube plus, where the shape allows, the virtual 3-D torus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tofu {
    generation: TofuGeneration,
    cube: KAryNCube,
    virtual_torus: Option<KAryNCube>,
    label: String,
}

impl Tofu {
    /// A Tofu network of the given generation: X, Y, Z sizes and wrap flags, then A, B, C sizes
    /// (A and C meshes, B a torus). Links are electrical at the generation's bandwidth with
    /// `latency`; each node has the generation's TNIs.
    pub fn new(
        generation: TofuGeneration,
        xyz: [u32; 3],
        xyz_wrap: [bool; 3],
        abc: [u32; 3],
        latency: SimDuration,
        label: &str,
    ) -> Result<Self, TopologyError> {
        let link = LinkSpec {
            kind: LinkKind::Electrical,
            bandwidth: generation.link_bandwidth(),
            latency,
        };
        let dims = vec![xyz[0], xyz[1], xyz[2], abc[0], abc[1], abc[2]];
        let wrap = vec![xyz_wrap[0], xyz_wrap[1], xyz_wrap[2], false, true, false];
        let cube = KAryNCube::new(dims, wrap, link)?.with_interfaces(generation.tnis())?;
        let virtual_torus = if abc == [2, 3, 2] && xyz_wrap[2] {
            let vdims = vec![2 * xyz[0], 2 * xyz[1], 3 * xyz[2]];
            Some(KAryNCube::new(vdims, vec![true; 3], link)?)
        } else {
            None
        };
        Ok(Tofu {
            generation,
            cube,
            virtual_torus,
            label: label.to_string(),
        })
    }

    /// The K computer: Tofu, X = 24 (torus), Y = 18 (mesh), Z = 16 (torus); 82,944 nodes
    /// (seed section II.A).
    pub fn k_computer() -> Self {
        Self::new(
            TofuGeneration::Tofu,
            [24, 18, 16],
            [true, false, true],
            [2, 3, 2],
            SimDuration::ZERO,
            "tofu:k",
        )
        .expect("the K computer's shape is valid")
    }

    /// Fugaku: TofuD, 24 x 23 x 24 (all tori) x 2 x 3 x 2 = 158,976 nodes.
    pub fn fugaku() -> Self {
        Self::new(
            TofuGeneration::TofuD,
            [24, 23, 24],
            [true; 3],
            [2, 3, 2],
            SimDuration::ZERO,
            "tofu:fugaku",
        )
        .expect("Fugaku's shape is valid")
    }

    /// One PRIMEHPC FX100 2U chassis, Tofu2: (X, Y, Z, A, B, C) = (1, 1, 3, 2, 1, 2), the
    /// geometry the seed gives (section IV.B). A whole FX100 system is `tofu2:XxYxZ`.
    pub fn fx100_chassis() -> Self {
        Self::new(
            TofuGeneration::Tofu2,
            [1, 1, 3],
            [false, false, true],
            [2, 1, 2],
            SimDuration::ZERO,
            "tofu:fx100",
        )
        .expect("the FX100 chassis shape is valid")
    }

    /// The generation.
    pub fn generation(&self) -> TofuGeneration {
        self.generation
    }
    /// The physical 6-D network.
    pub fn cube(&self) -> &KAryNCube {
        &self.cube
    }
    /// The virtual 3-D torus (its nodes are virtual ranks), if the shape has one.
    pub fn virtual_torus(&self) -> Option<&KAryNCube> {
        self.virtual_torus.as_ref()
    }
    /// The shorthand it was built from.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The physical node of virtual rank `v`.
    pub fn physical_of(&self, v: NodeId) -> Option<NodeId> {
        let vt = self.virtual_torus.as_ref()?;
        let c = vt.coords(v)?;
        let d = self.cube.dims();
        let (x, a) = pair_of_two(c[0], d[0]);
        let (y, cc) = pair_of_two(c[1], d[1]);
        let (z, b) = pair_of_three(c[2], d[2]);
        self.cube.node_at(&[x, y, z, a, b, cc])
    }

    /// The virtual rank of physical node `p`.
    pub fn virtual_of(&self, p: NodeId) -> Option<NodeId> {
        let vt = self.virtual_torus.as_ref()?;
        let c = self.cube.coords(p)?;
        let d = self.cube.dims();
        let vx = index_of_two(c[0], c[3], d[0]);
        let vy = index_of_two(c[1], c[5], d[1]);
        let vz = index_of_three(c[2], c[4], d[2]);
        vt.node_at(&[vx, vy, vz])
    }
}

/// Position `v` (0..2L) of the ring over a line of L times 2: out on 0, back on 1.
fn pair_of_two(v: u32, l: u32) -> (u32, u32) {
    if v < l { (v, 0) } else { (2 * l - 1 - v, 1) }
}

fn index_of_two(x: u32, a: u32, l: u32) -> u32 {
    if a == 0 { x } else { 2 * l - 1 - x }
}

/// Position `v` (0..3L) of the ring over a ring of L times a ring of 3 (see the module docs).
fn pair_of_three(v: u32, l: u32) -> (u32, u32) {
    let m = l - 1; // nodes per row segment (z = 1..L-1)
    if v < m {
        (v + 1, 0)
    } else if v < 2 * m {
        (l - 1 - (v - m), 1)
    } else if v < 3 * m {
        (v - 2 * m + 1, 2)
    } else {
        (0, 2 - (v - 3 * m)) // column z = 0: b = 2, 1, 0
    }
}

fn index_of_three(z: u32, b: u32, l: u32) -> u32 {
    let m = l - 1;
    if z == 0 {
        3 * m + (2 - b)
    } else {
        match b {
            0 => z - 1,
            1 => m + (l - 1 - z),
            _ => 2 * m + z - 1,
        }
    }
}
