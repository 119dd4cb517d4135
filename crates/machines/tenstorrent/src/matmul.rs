//! The DRAM-bound 1-D sharded matmul of tenstorrent-dram-bandwidth.txt: `in0` (M x K, small
//! M) width-sharded in the top rows and sent to every compute core; `in1` (K x N) width-sharded
//! over the DRAM banks in tiles 32 rows by 32, 16 or 8 columns; one reader and compute kernel
//! next to each bank, reading its shard block by block (K in blocks) at the packet level with
//! two transaction IDs, the compute kernel consuming block after block; in0 and in1 single or
//! double buffered; the output shards written back to the top rows.
//!
//! # Model (choices where the document is silent)
//! * in1 at the packet level ([`crate::dram::run_gated`]): a reader may fetch block `j`
//!   only once its compute kernel has freed the slot of block `j - buffers` (the circular
//!   buffer), and at most two blocks are in flight (the document's transaction IDs).
//! * A block is `kb` rows of K: the largest multiple of 32 dividing K whose in1 block is at
//!   most 64 KiB on the widest core (an assumption: the document gives no block size), at
//!   least 32.
//! * Compute: `2 M K n_i` FLOP on core i at a Tensix's share of the chip's peak (Wormhole
//!   n150: 262 TFLOPS at FP8 and 74 TFLOPS at FP16 over 72 cores at 1 GHz, Tenstorrent's
//!   product page; block-float weights at the FP8 rate, BF16 at the FP16 rate: an assumption
//!   about the math fidelity).
//! * in0 (BF16) travels on the other NoC, not at the packet level: block `j` leaves the top-row
//!   core holding that slice of K once every core has freed its slot, and takes its bytes at
//!   32 B a cycle to send once (multicast) or once per compute core, one after another
//!   (unicast: the core served last waits for all the others).
//! * The output (M x n_i in BF16) goes back to the top rows at 32 B a cycle after the last
//!   block's compute.

use crate::TtError;
use podsim_topology::Noc;

use crate::dram::{self as tt_dram, DramConfig, Gate, Layout, Reader, shard_tiles};
use crate::placement::{self as tt_placement, Relocation};
use crate::study::{self as tt_study, READ_LATENCY_CYCLES, Vcs};

/// How in1's elements are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// 2 bytes an element.
    Bf16,
    /// Block float, 8-bit mantissas and an exponent byte per 16 elements: 1088 bytes per
    /// 1024 elements (tt-metal `bfloat8_b`).
    Bfp8,
    /// Block float, 4-bit mantissas: 576 bytes per 1024 elements (tt-metal `bfloat4_b`).
    Bfp4,
}

impl Dtype {
    /// Every format, by name.
    pub const ALL: [(&'static str, Dtype); 3] = [
        ("bf16", Dtype::Bf16),
        ("bfp8", Dtype::Bfp8),
        ("bfp4", Dtype::Bfp4),
    ];
    /// Bytes per 1024 elements.
    pub fn bytes_per_1024(self) -> u64 {
        match self {
            Dtype::Bf16 => 2048,
            Dtype::Bfp8 => 1088,
            Dtype::Bfp4 => 576,
        }
    }
    /// FLOP a Tensix core does per cycle on this format (see the module docs).
    pub fn flop_per_cycle(self) -> f64 {
        match self {
            Dtype::Bf16 => 74e12 / 72.0 / 1e9,
            Dtype::Bfp8 | Dtype::Bfp4 => 262e12 / 72.0 / 1e9,
        }
    }
}

/// How in0 reaches the compute cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In0 {
    /// One send a block, to every core at once.
    Multicast,
    /// One send a block per core.
    Unicast,
}

/// A matmul on a Wormhole.
#[derive(Debug, Clone, PartialEq)]
pub struct Matmul {
    /// Rows of in0 (padded to 32).
    pub m: u64,
    /// in0's columns, in1's rows.
    pub k: u64,
    /// in1's columns.
    pub n: u64,
    /// Tile width along N: 32, 16 or 8.
    pub tile_width: u64,
    /// in1's format.
    pub dtype: Dtype,
    /// Multicast or unicast in0.
    pub in0: In0,
    /// Circular-buffer slots per input: 1 (single) or 2 (double buffering).
    pub buffers: u64,
    /// DRAM transfers per second.
    pub data_rate: f64,
    /// The banks' efficiency.
    pub efficiency: f64,
}

impl Matmul {
    /// A matmul with the document's setup: 32x32 tiles, BFP8 weights, in0 multicast, double
    /// buffering, the calibrated DRAM at `data_rate`.
    pub fn new(m: u64, k: u64, n: u64, data_rate: f64) -> Matmul {
        Matmul {
            m,
            k,
            n,
            tile_width: 32,
            dtype: Dtype::Bfp8,
            in0: In0::Multicast,
            buffers: 2,
            data_rate,
            efficiency: tt_study::CALIBRATED_EFFICIENCY,
        }
    }
}

/// What a matmul measured.
#[derive(Debug, Clone, PartialEq)]
pub struct MatmulRun {
    /// From the first request to the last output shard home.
    pub time_s: f64,
    /// in1's bytes (padding included) over the time.
    pub dram_bandwidth_bytes_per_s: f64,
    /// That over the spec bandwidth.
    pub utilization: f64,
    /// The busiest core's compute alone.
    pub compute_time_s: f64,
    /// The busiest core's share of in1 (its tiles, so its reading and its compute) over the
    /// mean core's: 1 when N splits evenly over the banks.
    pub imbalance: f64,
    /// in1's tiles per bank.
    pub tiles_per_bank: Vec<u64>,
    /// Rows of K per block.
    pub block_rows: u64,
    /// in1 bytes read.
    pub in1_bytes: u64,
    /// Seconds of compute summed over the compute cores (core-seconds, for `--energy`).
    pub core_compute_s: f64,
    /// Bytes times NoC links crossed: in1's requests and data as the packet-level NoC carried
    /// them (header flits included), in0's blocks over the union of their routes from the top
    /// row to the cores (multicast; every route, unicast) and the output shards to the top row,
    /// each rounded up to whole flits (for `--energy`).
    pub noc_link_bytes: f64,
}

/// A matmul as `podsim matmul --json` prints it: the settings by name and what the run
/// measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MatmulOutput {
    /// `wormhole`.
    pub chip: &'static str,
    /// Rows of in0.
    pub m: u64,
    /// in0's columns and in1's rows.
    pub k: u64,
    /// in1's columns.
    pub n: u64,
    /// in1's tile, `32xW`.
    pub tile: String,
    /// in1's format.
    pub dtype: &'static str,
    /// `multicast` or `unicast`.
    pub in0: &'static str,
    /// `single` or `double`.
    pub buffering: &'static str,
    /// Transfers per second of every bank.
    pub data_rate_transfers_per_s: f64,
    /// From the first request to the last output shard home.
    pub time_s: f64,
    /// in1's bytes over the time.
    pub dram_bandwidth_bytes_per_s: f64,
    /// That over the spec bandwidth.
    pub utilization: f64,
    /// The busiest core's compute alone.
    pub compute_time_s: f64,
    /// The busiest core's share of in1 over the mean core's.
    pub imbalance: f64,
    /// in1's tiles per bank.
    pub tiles_per_bank: Vec<u64>,
    /// Rows of K per block.
    pub block_rows: u64,
    /// in1 bytes read.
    pub in1_bytes: u64,
    /// The tile's width (text only).
    #[serde(skip)]
    pub tile_width: u64,
    /// Compute core-seconds (`--energy` only).
    #[serde(skip)]
    pub core_compute_s: f64,
    /// Bytes times NoC links crossed (`--energy` only).
    #[serde(skip)]
    pub noc_link_bytes: f64,
}

impl MatmulOutput {
    /// `r`, what the matmul `mm` measured.
    pub fn new(mm: &Matmul, r: MatmulRun) -> MatmulOutput {
        MatmulOutput {
            chip: "wormhole",
            m: mm.m,
            k: mm.k,
            n: mm.n,
            tile: format!("32x{}", mm.tile_width),
            dtype: Dtype::ALL
                .iter()
                .find(|(_, d)| *d == mm.dtype)
                .map_or("", |(n, _)| n),
            in0: match mm.in0 {
                In0::Multicast => "multicast",
                In0::Unicast => "unicast",
            },
            buffering: if mm.buffers == 1 { "single" } else { "double" },
            data_rate_transfers_per_s: mm.data_rate,
            time_s: r.time_s,
            dram_bandwidth_bytes_per_s: r.dram_bandwidth_bytes_per_s,
            utilization: r.utilization,
            compute_time_s: r.compute_time_s,
            imbalance: r.imbalance,
            tiles_per_bank: r.tiles_per_bank,
            block_rows: r.block_rows,
            in1_bytes: r.in1_bytes,
            tile_width: mm.tile_width,
            core_compute_s: r.core_compute_s,
            noc_link_bytes: r.noc_link_bytes,
        }
    }

    /// The text `podsim matmul` prints.
    pub fn text(&self) -> String {
        let row = |k: &str, v: String| (k.to_string(), vec![v]);
        let mut out = podsim_report::render(&[
            row("time", format!("{:.2} us", self.time_s * 1e6)),
            row(
                "DRAM bandwidth",
                format!(
                    "{:.1} GB/s ({:.1}% of spec)",
                    self.dram_bandwidth_bytes_per_s / 1e9,
                    self.utilization * 100.0
                ),
            ),
            row(
                "compute (busiest core)",
                format!("{:.2} us", self.compute_time_s * 1e6),
            ),
            row(
                "imbalance",
                format!(
                    "{:.3} (tiles per bank {:?})",
                    self.imbalance, self.tiles_per_bank
                ),
            ),
            row(
                "in1 read",
                format!(
                    "{} bytes, blocks of {} rows",
                    self.in1_bytes, self.block_rows
                ),
            ),
        ]);
        out.push_str(&format!(
            "{}x{} x {}x{} on a Wormhole: in1 ({}) sharded over 12 banks in 32x{} tiles, in0 {}, {} buffering\n",
            self.m,
            self.k,
            self.k,
            self.n,
            self.dtype,
            self.tile_width,
            self.in0,
            self.buffering
        ));
        out
    }
}

/// The compute side of the matmul, as a gate on the readers.
struct Compute {
    buffers: u64,
    blocks: u64,
    /// Per core, per block: compute cycles.
    work: Vec<u64>,
    /// Per core: when each in1 block came in.
    in1: Vec<Vec<Option<u64>>>,
    /// Per core: when each block's compute ended (as far as known).
    end: Vec<Vec<u64>>,
    /// Per block: when its in0 left its sender (as far as known).
    in0_sent: Vec<u64>,
    /// Per sender: when it is next free.
    sender_free: Vec<u64>,
    /// Cycles to send one in0 block once.
    in0_cycles: u64,
    in0: In0,
    senders: u64,
}

impl Compute {
    fn in0_arrival(&self, block: usize, core: usize) -> u64 {
        let sent = self.in0_sent[block];
        match self.in0 {
            In0::Multicast => sent + self.in0_cycles,
            In0::Unicast => sent + (core as u64 + 1) * self.in0_cycles,
        }
    }

    fn in0_busy(&self) -> u64 {
        match self.in0 {
            In0::Multicast => self.in0_cycles,
            In0::Unicast => self.in0_cycles * self.work.len() as u64,
        }
    }

    /// Work out every compute end and in0 send that is now determined.
    fn advance(&mut self) {
        loop {
            let mut progress = false;
            // in0 block j leaves once every core has freed slot j - buffers.
            let j = self.in0_sent.len() as u64;
            if j < self.blocks {
                let freed = if j < self.buffers {
                    Some(0)
                } else {
                    let k = (j - self.buffers) as usize;
                    self.end
                        .iter()
                        .map(|e| e.get(k).copied())
                        .try_fold(0u64, |m, e| e.map(|e| m.max(e)))
                };
                if let Some(t) = freed {
                    let s = ((j * self.senders) / self.blocks) as usize;
                    let start = t.max(self.sender_free[s]);
                    self.sender_free[s] = start + self.in0_busy();
                    self.in0_sent.push(start);
                    progress = true;
                }
            }
            for c in 0..self.work.len() {
                let b = self.end[c].len();
                if b >= self.blocks as usize || b >= self.in0_sent.len() {
                    continue;
                }
                if let Some(t) = self.in1[c][b] {
                    let prev = self.end[c].last().copied().unwrap_or(0);
                    let start = t.max(prev).max(self.in0_arrival(b, c));
                    self.end[c].push(start + self.work[c]);
                    progress = true;
                }
            }
            if !progress {
                return;
            }
        }
    }
}

impl Gate for Compute {
    fn allow(&mut self, reader: usize, block: u64, now: u64) -> bool {
        block < self.buffers
            || self.end[reader]
                .get((block - self.buffers) as usize)
                .is_some_and(|&e| e <= now)
    }
    fn done(&mut self, reader: usize, block: u64, at: u64) {
        self.in1[reader][block as usize] = Some(at);
        self.advance();
    }
    fn next_change(&self, now: u64) -> Option<u64> {
        self.end
            .iter()
            .flatten()
            .copied()
            .filter(|&e| e > now)
            .min()
    }
}

/// The request size for a block of `tiles` tiles of `tile_bytes`: the most whole tiles up to
/// 8 KiB that divide the block evenly (tt-metal's `get_max_page_size_and_num_pages`).
pub fn page(tile_bytes: u64, tiles: u64) -> u64 {
    let mut per = (tt_dram::MAX_BURST_BYTES / tile_bytes).max(1);
    while per > 1 && !tiles.is_multiple_of(per) {
        per -= 1;
    }
    per * tile_bytes
}

/// Run a matmul on a full Wormhole.
pub fn run(mm: &Matmul) -> Result<MatmulRun, TtError> {
    if ![32, 16, 8].contains(&mm.tile_width) {
        return Err(TtError::TileWidth(mm.tile_width));
    }
    if mm.m == 0 || mm.k == 0 || mm.n == 0 {
        return Err(TtError::Dimensions);
    }
    if !mm.k.is_multiple_of(32) {
        return Err(TtError::TileHeight(mm.k));
    }
    if !(1..=2).contains(&mm.buffers) {
        return Err(TtError::Buffers);
    }
    let study = tt_study::Study {
        data_rate: mm.data_rate,
        efficiency: mm.efficiency,
        ..tt_study::Study::u_benchmark(mm.data_rate)
    };
    let g = study.grid()?;
    let banks = g.dram_banks();
    let tiles = shard_tiles(mm.n, mm.tile_width, banks as u64);
    let m = mm.m.div_ceil(32) * 32;
    let bpe = |elems: u64| (elems * mm.dtype.bytes_per_1024()).div_ceil(1024);
    let widest = tiles.iter().copied().max().unwrap_or(0) * mm.tile_width;
    // Rows of K per block: the largest multiple of 32 dividing K with the widest block at
    // most 64 KiB.
    let kb = (1..=mm.k / 32)
        .rev()
        .map(|t| t * 32)
        .find(|&r| mm.k.is_multiple_of(r) && bpe(r * widest) <= 64 << 10)
        .unwrap_or(32);
    let blocks = mm.k / kb;
    if blocks >= 1 << 24 {
        return Err(TtError::KBlocks(mm.k));
    }
    let placed = tt_placement::next_to_bank(&g, Noc::Noc0, Relocation::Document)?;
    let rc = tt_study::tt_router();
    let lanes = tt_study::lanes(&g, Noc::Noc0, &placed, Vcs::PerReader, &rc);
    let cores: Vec<usize> = (0..banks).filter(|&b| tiles[b] > 0).collect();
    let readers: Vec<Reader> = cores
        .iter()
        .map(|&b| Reader {
            tile: placed[b],
            bank: b,
            block_bytes: bpe(kb * tiles[b] * mm.tile_width),
            page_bytes: page(bpe(32 * mm.tile_width), kb / 32 * tiles[b]),
            blocks,
            outstanding: 2,
            lane: Some(lanes[b]),
            layout: Layout::Sharded,
        })
        .collect();
    let work: Vec<u64> = cores
        .iter()
        .map(|&b| {
            let flop = 2.0 * (m * kb * tiles[b] * mm.tile_width) as f64;
            (flop / mm.dtype.flop_per_cycle()).ceil() as u64
        })
        .collect();
    let n = cores.len();
    let mut gate = Compute {
        buffers: mm.buffers,
        blocks,
        work: work.clone(),
        in1: vec![vec![None; blocks as usize]; n],
        end: vec![Vec::new(); n],
        in0_sent: Vec::new(),
        sender_free: vec![0; n],
        in0_cycles: (m * kb * 2).div_ceil(tt_dram::FLIT_BYTES),
        in0: mm.in0,
        senders: n as u64,
    };
    let dram = DramConfig {
        data_rate: mm.data_rate,
        efficiency: mm.efficiency,
        latency_cycles: READ_LATENCY_CYCLES,
        queue_requests: tt_study::QUEUE_REQUESTS,
    };
    let run = tt_dram::run_gated(
        &g,
        podsim_noc::NocRouting::Noc0,
        &readers,
        &dram,
        &rc,
        &mut gate,
    )?;
    gate.advance();
    let clock = g.clock().as_hz() as f64;
    let finish: Vec<u64> = cores
        .iter()
        .enumerate()
        .map(|(c, &b)| {
            let out = (m * tiles[b] * mm.tile_width * 2).div_ceil(tt_dram::FLIT_BYTES);
            gate.end[c].last().copied().unwrap_or(0) + out
        })
        .collect();
    if gate.end.iter().any(|e| e.len() as u64 != blocks) {
        return Err(TtError::ComputeUnfinished);
    }
    let noc_link_bytes = run
        .links
        .iter()
        .map(|l| (l.2 * tt_dram::FLIT_BYTES) as f64)
        .sum::<f64>()
        + in0_and_output_link_bytes(&g, mm, m, kb, blocks, &tiles, &cores, &placed)?;
    let slowest = finish.iter().copied().max().unwrap_or(1).max(1);
    let time_s = slowest as f64 / clock;
    let in1_bytes = run.bytes;
    let bw = in1_bytes as f64 / time_s;
    Ok(MatmulRun {
        time_s,
        dram_bandwidth_bytes_per_s: bw,
        utilization: bw / study.spec_bytes_per_s(banks),
        compute_time_s: work.iter().max().copied().unwrap_or(0) as f64 * blocks as f64 / clock,
        imbalance: tt_dram::imbalance(&tiles),
        tiles_per_bank: tiles,
        block_rows: kb,
        in1_bytes,
        core_compute_s: work.iter().sum::<u64>() as f64 * blocks as f64 / clock,
        noc_link_bytes,
    })
}

/// Bytes times NoC links of in0 and the output, which the model moves without packets: in0's
/// slice of K block `j` held on top-row tile `j x cores / blocks` (the top rows' worker tiles in
/// order, as `--placement top-rows` takes them), sent on NoC 1 (the other NoC) to every core,
/// multicast over the union of the routes or unicast over each; core `c`'s output shard to
/// top-row tile `c` on NoC 1. Sizes are rounded up to whole 32-byte flits.
#[allow(clippy::too_many_arguments)]
fn in0_and_output_link_bytes(
    g: &podsim_topology::TtGrid,
    mm: &Matmul,
    m: u64,
    kb: u64,
    blocks: u64,
    tiles: &[u64],
    cores: &[usize],
    placed: &[(u32, u32)],
) -> Result<f64, TtError> {
    let top = tt_placement::place(g, tt_placement::Placement::TopRows, Noc::Noc1)?;
    let flits = |bytes: u64| (bytes.div_ceil(tt_dram::FLIT_BYTES) * tt_dram::FLIT_BYTES) as f64;
    let n = cores.len() as u64;
    // Links from each top-row tile to the cores: their union (multicast) or their sum.
    let links_from = |s: usize| -> u64 {
        let routes = cores
            .iter()
            .map(|&b| tt_placement::data_links(g, Noc::Noc1, top[s], placed[b]));
        match mm.in0 {
            In0::Multicast => routes
                .flatten()
                .collect::<std::collections::HashSet<_>>()
                .len() as u64,
            In0::Unicast => routes.map(|r| r.len() as u64).sum(),
        }
    };
    let per_sender: Vec<u64> = (0..n as usize).map(links_from).collect();
    let in0: f64 = (0..blocks)
        .map(|j| per_sender[((j * n) / blocks) as usize] as f64 * flits(m * kb * 2))
        .sum();
    let out: f64 = cores
        .iter()
        .enumerate()
        .map(|(c, &b)| {
            let hops = tt_placement::data_links(g, Noc::Noc1, placed[b], top[c]).len() as f64;
            hops * flits(m * tiles[b] * mm.tile_width * 2)
        })
        .sum();
    Ok(in0 + out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bw(mm: &Matmul) -> f64 {
        run(mm).unwrap().dram_bandwidth_bytes_per_s
    }

    /// Llama3-70B's FF1 shard (32 x 8192 x 3584, BFP8) with single against double buffering.
    /// By hand, a block is 128 rows x 320 columns x 1.0625 B = 43,520 bytes: 1939 cycles at a
    /// bank's 22.45 B/cycle; its compute is 2 x 32 x 128 x 320 / 3639 = 720 cycles. Double
    /// buffered the compute hides under the next read; single buffered the read waits for it:
    /// at most 1939 / 2659 = 73% of the double-buffered rate.
    #[test]
    fn double_buffering_hides_the_compute() {
        let double = Matmul::new(32, 8192, 3584, 12e9);
        let single = Matmul {
            buffers: 1,
            ..double.clone()
        };
        assert_eq!(run(&double).unwrap().block_rows, 128);
        assert!(bw(&single) < 0.73 * bw(&double));
    }

    /// in0 unicast against multicast: unicast sends each in0 block (32 x 128 x 2 B = 8 KiB,
    /// 256 cycles at 32 B a cycle) to the 12 cores one after another, 3072 cycles a block
    /// against 1939 for the in1 read. Consecutive blocks of K come from the same top-row core
    /// (each holds a slice of K: 64 blocks over 12 cores), so most leave one after another and
    /// the in0 path binds: the matmul takes at least a fifth longer than with multicast.
    #[test]
    fn in0_must_be_multicast() {
        let multi = Matmul::new(32, 8192, 3584, 12e9);
        let uni = Matmul {
            in0: In0::Unicast,
            ..multi.clone()
        };
        let (u, m) = (run(&uni).unwrap(), run(&multi).unwrap());
        assert!(u.time_s > 1.2 * m.time_s, "{u:?} {m:?}");
        // Never slower than sending every block's in0 serially, 64 x 3072 cycles, plus the
        // multicast run's own time.
        assert!(u.time_s < m.time_s + 64.0 * 3072.0 / 1e9);
    }

    /// 3584 columns on 12 banks: 32-wide tiles give 10 tiles a bank and 2 on the last (1.071,
    /// by hand in dram's test); 16- and 8-wide tiles 19/15 and 38/30 (1.018). The busiest
    /// core reads less, so the matmul ends sooner.
    #[test]
    fn narrower_tiles_finish_sooner() {
        let t32 = Matmul::new(32, 8192, 3584, 12e9);
        let t16 = Matmul {
            tile_width: 16,
            ..t32.clone()
        };
        let t8 = Matmul {
            tile_width: 8,
            ..t32.clone()
        };
        let (a, b, c) = (run(&t32).unwrap(), run(&t16).unwrap(), run(&t8).unwrap());
        assert!((a.imbalance - 10.0 / (112.0 / 12.0)).abs() < 1e-9);
        assert!((b.imbalance - 19.0 / (224.0 / 12.0)).abs() < 1e-9);
        assert!((c.imbalance - b.imbalance).abs() < 1e-9);
        assert!(b.time_s < a.time_s && c.time_s < a.time_s);
        // The same bytes (3584 is a whole number of tiles of every width).
        assert_eq!(a.in1_bytes, b.in1_bytes);
    }

    /// The page of a block: 128 BFP8 tiles of 1088 bytes take 4-tile pages (7 fit in 8 KiB
    /// but do not divide 128; neither do 6 or 5), as tt-metal's test_dram_read pages them.
    #[test]
    fn pages_are_whole_tiles_dividing_the_block() {
        assert_eq!(page(1088, 128), 4 * 1088);
        assert_eq!(page(2048, 12), 4 * 2048);
        assert_eq!(page(272, 7), 7 * 272);
    }

    #[test]
    fn refusals_name_the_value() {
        let mm = Matmul {
            tile_width: 12,
            ..Matmul::new(32, 64, 64, 12e9)
        };
        let e = run(&mm).unwrap_err();
        assert!(matches!(e, TtError::TileWidth(12)));
        assert_eq!(e.to_string(), "tile width 12: expected 32, 16 or 8");
    }
}
