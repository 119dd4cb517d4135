//! Tenstorrent Grayskull and Wormhole grids (tenstorrent-dram-bandwidth.txt).
//!
//! A chip is a grid of tiles, each with a router on two networks-on-chip. Both NoCs are tori
//! running in opposite directions (Tenstorrent's PyBuda hardware overview: "two torus-shaped
//! NOC, going in opposite directions"): NoC0 links go east (+x) and south (+y), NoC1 links go
//! west (-x) and north (-y), each wrapping round the grid edge. NoC0 routes east first, then
//! south; NoC1 routes north first, then west (the seed: "first, send to the right NoC, then
//! send to the downward NoC"; routes as in Tenstorrent's tt-npe model). Together they make one
//! bidirectional torus of the grid's size, each direction a different NoC; that torus is
//! [`TtGrid::cube`].
//!
//! Tile placement follows Tenstorrent's tt-metal SoC descriptors (`grayskull_120_arch.yaml`,
//! `wormhole_b0_80_arch.yaml`), in NoC coordinates (x, y):
//! * Grayskull: 13 x 12; DRAM banks 0-7 at (1,0) (1,6) (4,0) (4,6) (7,0) (7,6) (10,0) (10,6);
//!   ARC (0,2); PCIe (0,4); 120 Tensix workers at x = 1..12, y = 1..5 and 7..11.
//! * Wormhole: 10 x 12; 12 DRAM banks on 6 channels in columns x = 0 and x = 5, each channel
//!   reachable at three tiles; the tile a worker should use for bank i is the descriptor's
//!   preferred worker endpoint; Ethernet at y = 0 and y = 6; ARC (0,10); PCIe (0,3); 80 workers
//!   at x = 1..4, 6..9 and y = 1..5, 7..11.
//!
//! Harvesting (Wormhole N150: one row, N300: two) disables whole worker rows; which rows is a
//! per-chip accident, so it is a parameter. Harvested tiles still route (the rings stay closed)
//! but take no work.
//!
//! Each tile injects into both NoCs (two interfaces). Link rate: 32 bytes per cycle per link at
//! the chip's clock (Grayskull e150 1.2 GHz,
//! Wormhole n150 1.0 GHz, Tenstorrent product specifications).

use podsim_units::{Bandwidth, ClockDomain, Cycles, Frequency, SimDuration};

use crate::{KAryNCube, LinkKind, LinkSpec, NodeId, TopologyError};

/// Which chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TtChip {
    /// First generation: 8 DRAM banks.
    Grayskull,
    /// Second generation (B0): 12 DRAM banks.
    Wormhole,
}

/// What sits on a grid tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TileKind {
    /// A Tensix worker core.
    Worker,
    /// A worker in a harvested row: routes, takes no work.
    Harvested,
    /// A DRAM controller endpoint (Wormhole: of channel `n`, which serves banks 2n and 2n+1;
    /// Grayskull: of bank `n`).
    Dram(u32),
    /// The ARC management core.
    Arc,
    /// The PCIe endpoint.
    Pcie,
    /// An Ethernet core (Wormhole).
    Ethernet,
    /// A router with nothing attached.
    RouterOnly,
}

/// Which network-on-chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Noc {
    /// East then south.
    Noc0,
    /// North then west.
    Noc1,
}

/// A Tenstorrent chip's grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TtGrid {
    chip: TtChip,
    kinds: Vec<TileKind>,
    banks: Vec<(u32, u32)>,
    harvested: Vec<u32>,
    clock: Frequency,
    cube: KAryNCube,
    label: String,
}

const GS_DRAM: [(u32, u32); 8] = [
    (1, 0),
    (1, 6),
    (4, 0),
    (4, 6),
    (7, 0),
    (7, 6),
    (10, 0),
    (10, 6),
];
/// Wormhole DRAM channels: the three tiles of each (tt-metal descriptor, banks 2n and 2n+1).
const WH_DRAM: [[(u32, u32); 3]; 6] = [
    [(0, 0), (0, 1), (0, 11)],
    [(0, 5), (0, 6), (0, 7)],
    [(5, 0), (5, 1), (5, 11)],
    [(5, 2), (5, 9), (5, 10)],
    [(5, 3), (5, 4), (5, 8)],
    [(5, 5), (5, 6), (5, 7)],
];
/// Wormhole: the tile a worker uses for bank i (descriptor's preferred worker endpoint).
const WH_BANK_ENDPOINT: [(u32, u32); 12] = [
    (0, 11),
    (0, 1),
    (0, 5),
    (0, 7),
    (5, 1),
    (5, 11),
    (5, 2),
    (5, 9),
    (5, 8),
    (5, 3),
    (5, 5),
    (5, 7),
];

impl TtGrid {
    /// A Grayskull (e150) grid.
    pub fn grayskull() -> Self {
        let (w, h) = (13u32, 12u32);
        let mut kinds = vec![TileKind::RouterOnly; (w * h) as usize];
        let at = |x: u32, y: u32| (y * w + x) as usize;
        for x in 1..13 {
            for y in (1..6).chain(7..12) {
                kinds[at(x, y)] = TileKind::Worker;
            }
        }
        for (i, &(x, y)) in GS_DRAM.iter().enumerate() {
            kinds[at(x, y)] = TileKind::Dram(i as u32);
        }
        kinds[at(0, 2)] = TileKind::Arc;
        kinds[at(0, 4)] = TileKind::Pcie;
        let clock = Frequency::from_mhz(1200).expect("1.2 GHz is positive");
        Self::assemble(
            TtChip::Grayskull,
            w,
            h,
            kinds,
            GS_DRAM.to_vec(),
            clock,
            "grayskull",
        )
    }

    /// A Wormhole (B0, n150 clock) grid with `harvest` worker rows harvested: the last ones,
    /// y = 11, 10, ... (which rows a real chip loses varies; see [`TtGrid::with_harvested_rows`]).
    pub fn wormhole(harvest: u32) -> Result<Self, TopologyError> {
        let rows: Vec<u32> = [11u32, 10, 9, 8, 7, 5, 4, 3, 2, 1]
            .into_iter()
            .take(harvest as usize)
            .collect();
        if rows.len() < harvest as usize {
            return Err(TopologyError::new(
                "harvest",
                format!("a Wormhole has 10 worker rows; cannot harvest {harvest}"),
            ));
        }
        let label = if harvest == 0 {
            "wormhole".to_string()
        } else {
            format!("wormhole:harvest={harvest}")
        };
        Self::wormhole_base(&label).with_harvested_rows(&rows)
    }

    fn wormhole_base(label: &str) -> Self {
        let (w, h) = (10u32, 12u32);
        let mut kinds = vec![TileKind::RouterOnly; (w * h) as usize];
        let at = |x: u32, y: u32| (y * w + x) as usize;
        for x in (1..5).chain(6..10) {
            for y in (1..6).chain(7..12) {
                kinds[at(x, y)] = TileKind::Worker;
            }
            kinds[at(x, 0)] = TileKind::Ethernet;
            kinds[at(x, 6)] = TileKind::Ethernet;
        }
        for (c, tiles) in WH_DRAM.iter().enumerate() {
            for &(x, y) in tiles {
                kinds[at(x, y)] = TileKind::Dram(c as u32);
            }
        }
        kinds[at(0, 10)] = TileKind::Arc;
        kinds[at(0, 3)] = TileKind::Pcie;
        let clock = Frequency::from_mhz(1000).expect("1 GHz is positive");
        Self::assemble(
            TtChip::Wormhole,
            w,
            h,
            kinds,
            WH_BANK_ENDPOINT.to_vec(),
            clock,
            label,
        )
    }

    fn assemble(
        chip: TtChip,
        w: u32,
        h: u32,
        kinds: Vec<TileKind>,
        banks: Vec<(u32, u32)>,
        clock: Frequency,
        label: &str,
    ) -> Self {
        let cycle = ClockDomain::new(clock).span_of(Cycles(1));
        let link = LinkSpec {
            kind: LinkKind::OnChip,
            bandwidth: Bandwidth::from_bytes_per_s(32 * clock.as_hz())
                .expect("a positive clock gives a positive rate"),
            latency: SimDuration::from_ps(cycle.as_ps()),
        };
        let cube = KAryNCube::new(vec![w, h], vec![true, true], link)
            .and_then(|c| c.with_interfaces(2))
            .expect("the chip grids are valid tori");
        TtGrid {
            chip,
            kinds,
            banks,
            harvested: Vec::new(),
            clock,
            cube,
            label: label.to_string(),
        }
    }

    /// The NoC link of a Wormhole (32 B/cycle at 1 GHz).
    pub fn wormhole_base_link() -> LinkSpec {
        Self::wormhole_base("wormhole").cube.link()
    }

    /// Harvest these worker rows (NoC y coordinates): their workers take no work.
    pub fn with_harvested_rows(mut self, rows: &[u32]) -> Result<Self, TopologyError> {
        let w = self.cube.dims()[0];
        for &y in rows {
            let row: Vec<usize> = (0..w).map(|x| (y * w + x) as usize).collect();
            if !row
                .iter()
                .any(|&i| matches!(self.kinds.get(i), Some(TileKind::Worker)))
            {
                return Err(TopologyError::new(
                    "harvest",
                    format!("row y = {y} has no workers to harvest"),
                ));
            }
            for i in row {
                if self.kinds[i] == TileKind::Worker {
                    self.kinds[i] = TileKind::Harvested;
                }
            }
            self.harvested.push(y);
        }
        Ok(self)
    }

    /// The grid as one of its two NoCs sees it: one network interface per tile (that NoC's
    /// NIU), for packet-level runs on a single NoC.
    pub fn one_noc(&self) -> Result<TtGrid, TopologyError> {
        let mut g = self.clone();
        g.cube = g.cube.clone().with_interfaces(1)?;
        Ok(g)
    }

    /// The same chip with every harvested row working again.
    pub fn unharvested(&self) -> TtGrid {
        let mut g = self.clone();
        for k in &mut g.kinds {
            if *k == TileKind::Harvested {
                *k = TileKind::Worker;
            }
        }
        g.harvested.clear();
        g
    }

    /// Which chip.
    pub fn chip(&self) -> TtChip {
        self.chip
    }
    /// The two NoCs as one bidirectional torus of the grid.
    pub fn cube(&self) -> &KAryNCube {
        &self.cube
    }
    /// The NoC clock.
    pub fn clock(&self) -> Frequency {
        self.clock
    }
    /// The shorthand it was built from.
    pub fn label(&self) -> &str {
        &self.label
    }
    /// Grid width (x).
    pub fn width(&self) -> u32 {
        self.cube.dims()[0]
    }
    /// What is on tile (x, y).
    pub fn kind(&self, x: u32, y: u32) -> Option<TileKind> {
        self.kinds.get((y * self.width() + x) as usize).copied()
    }
    /// The tile (node) at (x, y).
    pub fn tile(&self, x: u32, y: u32) -> NodeId {
        NodeId(u64::from(y) * u64::from(self.width()) + u64::from(x))
    }
    /// Usable Tensix workers.
    pub fn workers(&self) -> usize {
        self.kinds
            .iter()
            .filter(|&&k| k == TileKind::Worker)
            .count()
    }
    /// DRAM banks.
    pub fn dram_banks(&self) -> usize {
        self.banks.len()
    }
    /// The tile a worker addresses to reach bank `i`.
    pub fn bank_tile(&self, i: usize) -> Option<(u32, u32)> {
        self.banks.get(i).copied()
    }
    /// The harvested rows.
    pub fn harvested_rows(&self) -> &[u32] {
        &self.harvested
    }

    /// The tiles a packet visits on `noc` from (x0, y0) to (x1, y1), after the source.
    pub fn noc_path(&self, noc: Noc, from: (u32, u32), to: (u32, u32)) -> Vec<(u32, u32)> {
        let (w, h) = (self.width(), self.cube.dims()[1]);
        let (mut x, mut y) = from;
        let mut out = Vec::new();
        match noc {
            Noc::Noc0 => {
                while x != to.0 {
                    x = (x + 1) % w;
                    out.push((x, y));
                }
                while y != to.1 {
                    y = (y + 1) % h;
                    out.push((x, y));
                }
            }
            Noc::Noc1 => {
                while y != to.1 {
                    y = (y + h - 1) % h;
                    out.push((x, y));
                }
                while x != to.0 {
                    x = (x + w - 1) % w;
                    out.push((x, y));
                }
            }
        }
        out
    }
}
