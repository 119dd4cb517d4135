//! Tenstorrent DRAM reader kernels on the packet-level NoC (tenstorrent-dram-bandwidth.txt):
//! readers on worker tiles send read requests to DRAM bank tiles, each block of a reader
//! tagged with a transaction ID; a bank serves its requests first come first served at its
//! channel's rate and sends the data back as packets; a reader waits on the barrier of its
//! oldest block when `outstanding` blocks are in flight ("there will always be one read
//! request on the fly" with two).
//!
//! # Model (choices where the document is silent)
//! * A bank reads at `data rate x 2 bytes` (a x16 GDDR6 channel per bank: 12 GT/s gives
//!   24 GB/s, 12 banks 288 GB/s, the document's spec) times `efficiency` (row hits, bank
//!   turnarounds, refresh; the one calibrated parameter, [`crate::study`]), after a fixed
//!   read latency, first come first served.
//! * A bank takes at most `queue_requests` requests at a time; the rest stay in the NoC in the
//!   VCs they came by ([`podsim_noc::Noc::hold_credits`]) and block what queues behind them.
//! * A request is one header flit asking for a page of at most [`MAX_BURST_BYTES`]; its data
//!   comes back as one packet of 32-byte flits plus a header flit (Tenstorrent's NoC: a header
//!   and up to 256 data flits of 32 bytes).
//! * Requests and data take one NoC (`noc0` or `noc1` routing of the packet level), one NIU
//!   per tile; a reader's requests may be held to one VC lane, data takes any free VC.

use crate::TtError;
use podsim_noc::{Noc, NocError, NocRouting, RouterConfig};
use podsim_topology::{Network, TtGrid};

/// The largest read one request asks for, bytes (tt-metal `NOC_MAX_BURST_SIZE`, Wormhole).
pub const MAX_BURST_BYTES: u64 = 8192;
/// Bytes per NoC flit (32 bytes a cycle per link).
pub const FLIT_BYTES: u64 = 32;

/// The DRAM's timing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DramConfig {
    /// Transfers per second of each bank's x16 channel (12e9 or 14e9).
    pub data_rate: f64,
    /// The fraction of the raw rate a bank sustains (0 < e <= 1).
    pub efficiency: f64,
    /// Cycles from a request's arrival at an idle bank to its data starting back.
    pub latency_cycles: u64,
    /// Read requests a bank takes in at once (in service and waiting); later ones stay in
    /// the NoC, in the VC they came by, and block what queues behind them there.
    pub queue_requests: usize,
}

/// One reader kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    /// Its worker tile (NoC coordinates).
    pub tile: (u32, u32),
    /// The bank it reads.
    pub bank: usize,
    /// Bytes per block.
    pub block_bytes: u64,
    /// Bytes one read request asks for (a page; at most [`MAX_BURST_BYTES`]).
    pub page_bytes: u64,
    /// Blocks to read.
    pub blocks: u64,
    /// Blocks in flight before it waits on the oldest one's barrier (1: barrier on every
    /// block; 2: the document's two transaction IDs).
    pub outstanding: u64,
    /// The NoC virtual-channel lane its requests are held to (`None`: any free VC).
    pub lane: Option<u16>,
    /// Where its data lives.
    pub layout: Layout,
}

/// How a tensor's pages sit in the banks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Each reader's shard in its own bank.
    Sharded,
    /// Pages round-robin over every bank: a reader's page k is in bank (its bank + k) mod
    /// banks, so every reader touches every bank.
    Interleaved,
}

/// A NoC link's ends (tile coordinates) and the flits it carried.
pub type LinkFlits = ((u32, u32), (u32, u32), u64);

/// What a run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct DramRun {
    /// Bytes read in all.
    pub bytes: u64,
    /// NoC cycles until the last block arrived.
    pub cycles: u64,
    /// Bytes over time.
    pub bandwidth_bytes_per_s: f64,
    /// Each reader's bytes over its own finishing time.
    pub per_reader_bytes_per_s: Vec<f64>,
    /// Each bank's bytes served over the time until it finished reading them (its own pace;
    /// a bank that serves several readers counts them all).
    pub per_bank_bytes_per_s: Vec<f64>,
    /// Every NoC link that carried flits: its ends (tile coordinates) and flits.
    pub links: Vec<LinkFlits>,
    /// The busiest link's flits over the run's cycles (1 = a flit every cycle).
    pub max_link_utilization: f64,
    /// Every block: (reader, block, cycle its first request left, cycle its last byte came).
    pub blocks: Vec<(usize, u64, u64, u64)>,
}

/// What may hold a reader back besides its transaction IDs: a consumer of its blocks (the
/// matmul's compute kernel freeing circular-buffer slots). [`run`] asks before each block and
/// tells it when each block is in.
pub trait Gate {
    /// Whether `reader` may issue `block` at cycle `now`.
    fn allow(&mut self, reader: usize, block: u64, now: u64) -> bool;
    /// `reader`'s `block` has every byte in at cycle `at`.
    fn done(&mut self, reader: usize, block: u64, at: u64);
    /// The next cycle after `now` at which [`Gate::allow`] may change its answer on its own
    /// (None: only a [`Gate::done`] changes it).
    fn next_change(&self, now: u64) -> Option<u64>;
}

/// No gate: the transaction IDs alone bound the reader.
pub struct Free;

impl Gate for Free {
    fn allow(&mut self, _: usize, _: u64, _: u64) -> bool {
        true
    }
    fn done(&mut self, _: usize, _: u64, _: u64) {}
    fn next_change(&self, _: u64) -> Option<u64> {
        None
    }
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    tag: u64,
    reader: usize,
    bytes: u64,
    ready: f64,
}

/// A packet's tag: the reader (16 bits), its block (24 bits), data or request (1 bit) and the
/// bytes (23 bits).
fn tag(reader: usize, block: u64, data: bool, bytes: u64) -> u64 {
    ((reader as u64) << 48) | (block << 24) | (u64::from(data) << 23) | bytes
}

fn untag(t: u64) -> (usize, u64, bool, u64) {
    (
        (t >> 48) as usize,
        (t >> 24) & 0xff_ffff,
        (t >> 23) & 1 == 1,
        t & 0x7f_ffff,
    )
}

/// Run `readers` on `grid` over one NoC.
pub fn run(
    grid: &TtGrid,
    routing: NocRouting,
    readers: &[Reader],
    dram: &DramConfig,
    rc: &RouterConfig,
) -> Result<DramRun, TtError> {
    run_gated(grid, routing, readers, dram, rc, &mut Free)
}

/// [`run`] with a [`Gate`] on every block's issue.
pub fn run_gated(
    grid: &TtGrid,
    routing: NocRouting,
    readers: &[Reader],
    dram: &DramConfig,
    rc: &RouterConfig,
    gate: &mut dyn Gate,
) -> Result<DramRun, TtError> {
    if !(dram.efficiency > 0.0 && dram.efficiency <= 1.0) {
        return Err(TtError::Efficiency(dram.efficiency));
    }
    if !(dram.data_rate > 0.0 && dram.data_rate.is_finite()) {
        return Err(TtError::DataRate);
    }
    let clock = grid.clock().as_hz() as f64;
    // Bytes a bank delivers per NoC cycle.
    let rate = dram.data_rate * 2.0 * dram.efficiency / clock;
    // One NIU per tile: the NoC in use.
    let net = Network::Tenstorrent(grid.one_noc()?);
    let mut noc = Noc::new(&net, routing, rc)?;
    let banks = grid.dram_banks();
    let mut bank_tiles = Vec::with_capacity(banks);
    let mut bank_at = std::collections::HashMap::new();
    for b in 0..banks {
        let (x, y) = grid.bank_tile(b).ok_or(TtError::BankTile)?;
        bank_tiles.push(grid.tile(x, y).0 as usize);
        bank_at.insert(grid.tile(x, y).0 as usize, b);
    }
    if dram.queue_requests == 0 {
        return Err(TtError::Queue);
    }
    for &t in &bank_tiles {
        noc.hold_credits(t);
    }
    // Per bank: requests in, not yet taken (tag, reader, bytes), and the ends of the reads of
    // those taken.
    let mut waiting: Vec<std::collections::VecDeque<(u64, usize, u64)>> =
        vec![Default::default(); banks];
    let mut taken: Vec<std::collections::VecDeque<f64>> = vec![Default::default(); banks];
    if readers.len() >= 1 << 16 {
        return Err(TtError::Readers);
    }
    for r in readers {
        if r.bank >= banks {
            return Err(TtError::Bank {
                bank: r.bank,
                last: banks - 1,
            });
        }
        if grid.kind(r.tile.0, r.tile.1) != Some(podsim_topology::TileKind::Worker) {
            return Err(TtError::ReaderTile {
                x: r.tile.0,
                y: r.tile.1,
                grid: grid.label().to_string(),
            });
        }
        if !(1..=MAX_BURST_BYTES).contains(&r.page_bytes) {
            return Err(TtError::Page {
                bytes: r.page_bytes,
                max: MAX_BURST_BYTES,
            });
        }
        if r.outstanding == 0 || r.block_bytes == 0 || r.blocks == 0 {
            return Err(TtError::EmptyReader);
        }
        if r.blocks >= 1 << 24 {
            return Err(TtError::Blocks(r.blocks));
        }
    }
    let n = readers.len();
    // Per reader: next block to issue, blocks completed (the barrier's count: the oldest
    // blocks whose every byte is in), bytes still to come per block from the oldest on, and
    // pages requested so far (for interleaving).
    let mut pages = vec![0u64; n];
    let mut issued = vec![0u64; n];
    let mut done = vec![0u64; n];
    let mut left: Vec<std::collections::VecDeque<u64>> = vec![Default::default(); n];
    let mut finish = vec![0u64; n];
    // Per bank: when it is next free, and responses waiting to start.
    let mut free_at = vec![0f64; banks];
    let mut pending: Vec<std::collections::VecDeque<Pending>> = vec![Default::default(); banks];
    let mut delivered = Vec::new();
    let mut bank_bytes = vec![0u64; banks];
    let mut bank_end = vec![0f64; banks];
    // Per reader, per block: the cycle it was issued and the cycle it completed.
    let mut timeline: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
    let tile_of = |r: &Reader| grid.tile(r.tile.0, r.tile.1).0 as usize;
    let total_blocks: u64 = readers.iter().map(|r| r.blocks).sum();
    let mut completed = 0u64;
    let limit = 1u64 << 40;
    while completed < total_blocks {
        let now = noc.now();
        if now > limit {
            return Err(TtError::Unfinished);
        }
        // Readers issue while they may.
        let mut issued_now = false;
        for (i, r) in readers.iter().enumerate() {
            while issued[i] < r.blocks
                && issued[i] - done[i] < r.outstanding
                && gate.allow(i, issued[i], now)
            {
                issued_now = true;
                timeline[i].push((now, 0));
                let mut b = r.block_bytes;
                while b > 0 {
                    let chunk = b.min(r.page_bytes);
                    let bank = match r.layout {
                        Layout::Sharded => r.bank,
                        Layout::Interleaved => (r.bank + pages[i] as usize) % banks,
                    };
                    pages[i] += 1;
                    let (src, dst, t) = (
                        tile_of(r),
                        bank_tiles[bank],
                        tag(i, issued[i], false, chunk),
                    );
                    match r.lane {
                        Some(l) => noc.inject_lane(src, dst, 1, t, l),
                        None => noc.inject(src, dst, 1, t),
                    }?;
                    b -= chunk;
                }
                left[i].push_back(r.block_bytes);
                issued[i] += 1;
            }
        }
        // Banks take the requests their queues have room for.
        for b in 0..banks {
            while taken[b].front().is_some_and(|&e| e <= now as f64) {
                taken[b].pop_front();
            }
            while taken[b].len() < dram.queue_requests {
                let Some((tag, reader, bytes)) = waiting[b].pop_front() else {
                    break;
                };
                noc.accept(bank_tiles[b]);
                bank_bytes[b] += bytes;
                let start = free_at[b].max(now as f64);
                let end = start + bytes as f64 / rate;
                free_at[b] = end;
                bank_end[b] = end;
                taken[b].push_back(end);
                pending[b].push_back(Pending {
                    tag,
                    reader,
                    bytes,
                    ready: end + dram.latency_cycles as f64,
                });
            }
        }
        // Banks start the responses whose data is read.
        for (b, q) in pending.iter_mut().enumerate() {
            while q.front().is_some_and(|p| p.ready <= now as f64) {
                let p = q.pop_front().expect("checked");
                let flits = 1 + p.bytes.div_ceil(FLIT_BYTES) as u32;
                noc.inject(
                    bank_tiles[b],
                    tile_of(&readers[p.reader]),
                    flits,
                    p.tag | (1 << 23),
                )?;
            }
        }
        // Nothing moving and nothing to start: jump to the next bank read or gate change.
        if !issued_now && noc.is_idle() {
            let next = pending
                .iter()
                .filter_map(|q| q.front())
                .map(|p| p.ready.ceil() as u64)
                .chain(
                    taken
                        .iter()
                        .zip(&waiting)
                        .filter(|(_, w)| !w.is_empty())
                        .filter_map(|(t, _)| t.front())
                        .map(|&e| e.ceil() as u64),
                )
                .chain(gate.next_change(now))
                .min();
            match next {
                Some(t) if t > now + 1 => {
                    noc.skip_to(t);
                    continue;
                }
                None => {
                    return Err(TtError::Stalled);
                }
                Some(_) => {}
            }
        }
        noc.step().map_err(NocError::Sim)?;
        noc.take_delivered(&mut delivered);
        for d in delivered.drain(..) {
            let (reader, block, data, bytes) = untag(d.tag);
            if data {
                // Blocks may complete out of order (interleaved pages); the barrier counts
                // the oldest ones whose every byte is in.
                let Some(slot) = block
                    .checked_sub(done[reader])
                    .and_then(|k| left[reader].get_mut(k as usize))
                else {
                    return Err(TtError::NoBlock);
                };
                *slot -= bytes.min(*slot);
                while left[reader].front() == Some(&0) {
                    left[reader].pop_front();
                    timeline[reader][done[reader] as usize].1 = d.delivered;
                    gate.done(reader, done[reader], d.delivered);
                    done[reader] += 1;
                    completed += 1;
                    finish[reader] = d.delivered;
                }
            } else {
                let Some(&bank) = bank_at.get(&(d.dst.0 as usize)) else {
                    return Err(TtError::NoBank);
                };
                waiting[bank].push_back((d.tag, reader, bytes));
            }
        }
    }
    let cycles = finish.iter().copied().max().unwrap_or(0).max(1);
    let w = u64::from(grid.width());
    let at = |n: podsim_topology::NodeId| ((n.0 % w) as u32, (n.0 / w) as u32);
    let links: Vec<LinkFlits> = noc
        .link_stats()
        .into_iter()
        .filter(|l| l.kind == podsim_noc::ChannelKind::Link && l.flits > 0)
        .map(|l| (at(l.from), at(l.to), l.flits))
        .collect();
    let secs = |c: u64| c as f64 / clock;
    let bytes: u64 = readers.iter().map(|r| r.block_bytes * r.blocks).sum();
    Ok(DramRun {
        bytes,
        cycles,
        bandwidth_bytes_per_s: bytes as f64 / secs(cycles),
        per_reader_bytes_per_s: readers
            .iter()
            .zip(&finish)
            .map(|(r, &f)| (r.block_bytes * r.blocks) as f64 / secs(f.max(1)))
            .collect(),
        per_bank_bytes_per_s: bank_bytes
            .iter()
            .zip(&bank_end)
            .map(|(&b, &e)| {
                if b == 0 {
                    0.0
                } else {
                    b as f64 * clock / e.max(1.0)
                }
            })
            .collect(),
        max_link_utilization: links.iter().map(|l| l.2).max().unwrap_or(0) as f64 / cycles as f64,
        links,
        blocks: timeline
            .iter()
            .enumerate()
            .flat_map(|(i, v)| {
                v.iter()
                    .enumerate()
                    .map(move |(k, &(a, b))| (i, k as u64, a, b))
            })
            .collect(),
    })
}

/// A tensor's width sharded over `banks` banks in tiles `tile_width` wide, as tt-metal width
/// sharding does: the width padded up to whole tiles, each bank taking the same whole number
/// of tiles (the tiles over the banks, rounded up) until the tiles run out, so the last bank
/// holding data takes what is left (tenstorrent-dram-bandwidth.txt: "the last bank could
/// have uneven sharding width"). Tiles per bank, in bank order.
pub fn shard_tiles(width: u64, tile_width: u64, banks: u64) -> Vec<u64> {
    if tile_width == 0 || banks == 0 {
        return Vec::new();
    }
    let tiles = width.div_ceil(tile_width);
    let per = tiles.div_ceil(banks);
    let mut left = tiles;
    (0..banks)
        .map(|_| {
            let t = per.min(left);
            left -= t;
            t
        })
        .collect()
}

/// The slowest bank's share over the mean share: how much longer the most loaded reader and
/// its compute run than an even split would (1 = balanced).
pub fn imbalance(shards: &[u64]) -> f64 {
    let total: u64 = shards.iter().sum();
    if total == 0 {
        return 1.0;
    }
    let max = shards.iter().copied().max().unwrap_or(0) as f64;
    max / (total as f64 / shards.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 12 GT/s, no efficiency loss, 100 cycles of read latency.
    fn dram() -> DramConfig {
        DramConfig {
            data_rate: 12e9,
            efficiency: 1.0,
            latency_cycles: 100,
            queue_requests: 64,
        }
    }

    fn cfg() -> RouterConfig {
        RouterConfig {
            flit_bytes: FLIT_BYTES,
            packet_flits: 1,
            ..RouterConfig::default()
        }
    }

    /// One reader at (1,1) on bank 0 of a Wormhole: with one block outstanding the bank idles
    /// between blocks (the request's trip, the read latency and the data's trip), with two it
    /// never does, and the bank's rate bounds both.
    #[test]
    fn a_second_transaction_id_keeps_the_bank_busy() {
        let g = TtGrid::wormhole(0).unwrap();
        let dram = dram();
        let reader = |outstanding| Reader {
            tile: (1, 1),
            bank: 0,
            block_bytes: 32768,
            page_bytes: MAX_BURST_BYTES,
            blocks: 16,
            outstanding,
            lane: None,
            layout: Layout::Sharded,
        };
        let one = run(&g, NocRouting::Noc0, &[reader(1)], &dram, &cfg()).unwrap();
        let two = run(&g, NocRouting::Noc0, &[reader(2)], &dram, &cfg()).unwrap();
        let peak = 24e9;
        assert!(two.bandwidth_bytes_per_s <= peak * 1.0001, "{two:?}");
        assert!(two.bandwidth_bytes_per_s > 0.95 * peak, "{two:?}");
        // By hand: a block's read takes 32768 / 24 = 1365.3 cycles; with one outstanding the
        // bank then idles at least the latency (100 cycles) and the last packet's 257 flits
        // before the next request can arrive: at most 1365.3 / 1722.3 of the peak.
        assert!(
            one.bandwidth_bytes_per_s < peak * 1365.4 / 1722.3,
            "{one:?}"
        );
        assert!(one.bandwidth_bytes_per_s < 0.85 * two.bandwidth_bytes_per_s);
    }

    /// Twelve readers on Wormhole's top two worker rows against twelve next to their banks
    /// (NoC 0, two blocks outstanding): on the top rows the data routes of several banks share
    /// links (east, then south) and those readers fall to about two thirds of a bank's rate;
    /// next to their banks each route is a hop and every bank runs at its rate.
    #[test]
    fn readers_next_to_their_banks_beat_the_top_rows() {
        let g = TtGrid::wormhole(0).unwrap();
        let dram = dram();
        let reader = |bank: usize, tile: (u32, u32)| Reader {
            tile,
            bank,
            block_bytes: 32768,
            page_bytes: MAX_BURST_BYTES,
            blocks: 16,
            outstanding: 2,
            lane: None,
            layout: Layout::Sharded,
        };
        let top: Vec<Reader> = [1u32, 2]
            .iter()
            .flat_map(|&y| [1u32, 2, 3, 4, 6, 7, 8, 9].map(|x| (x, y)))
            .take(12)
            .enumerate()
            .map(|(b, t)| reader(b, t))
            .collect();
        let next: Vec<Reader> = (0..12)
            .map(|b| {
                let (x, y) = g.bank_tile(b).unwrap();
                reader(b, (x + 1, y))
            })
            .collect();
        let top = run(&g, NocRouting::Noc0, &top, &dram, &cfg()).unwrap();
        let next = run(&g, NocRouting::Noc0, &next, &dram, &cfg()).unwrap();
        let peak = 12.0 * 24e9;
        assert!(next.bandwidth_bytes_per_s > 0.95 * peak, "{next:?}");
        assert!(
            top.bandwidth_bytes_per_s < 0.8 * next.bandwidth_bytes_per_s,
            "{top:?}"
        );
        let slowest = top
            .per_reader_bytes_per_s
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        assert!(slowest < 0.75 * 24e9, "{top:?}");
    }

    /// Interleaved against sharded, twelve readers next to their banks on a Wormhole (NoC 0,
    /// two blocks outstanding): interleaved, every reader's pages come from every bank, the
    /// data crosses the grid and the routes congest; sharded, each reader reads its own bank
    /// one hop away.
    #[test]
    fn interleaved_tensors_congest_where_sharded_do_not() {
        let g = TtGrid::wormhole(0).unwrap();
        let dram = dram();
        let tiles = crate::placement::place(
            &g,
            crate::placement::Placement::NextToBank,
            podsim_topology::Noc::Noc0,
        )
        .unwrap();
        let readers = |layout| -> Vec<Reader> {
            tiles
                .iter()
                .enumerate()
                .map(|(b, &t)| Reader {
                    tile: t,
                    bank: b,
                    block_bytes: 32768,
                    page_bytes: MAX_BURST_BYTES,
                    blocks: 16,
                    outstanding: 2,
                    lane: None,
                    layout,
                })
                .collect()
        };
        let sharded = run(
            &g,
            NocRouting::Noc0,
            &readers(Layout::Sharded),
            &dram,
            &cfg(),
        )
        .unwrap();
        let inter = run(
            &g,
            NocRouting::Noc0,
            &readers(Layout::Interleaved),
            &dram,
            &cfg(),
        )
        .unwrap();
        assert_eq!(sharded.bytes, inter.bytes);
        assert!(sharded.bandwidth_bytes_per_s > 0.95 * 288e9, "{sharded:?}");
        assert!(
            inter.bandwidth_bytes_per_s < 0.9 * sharded.bandwidth_bytes_per_s,
            "{inter:?}"
        );
    }

    /// in1 of 8192 and of 3584 columns on Wormhole's 12 banks, by hand. 8192 in 32-wide
    /// tiles: 256 tiles, 22 a bank, 11 x 22 = 242, the last bank 14: 22 / 21.33 = 1.031;
    /// 16-wide: 512 tiles, 43 a bank, the last 39: 43 / 42.67 = 1.008. 3584 (112 tiles of 32):
    /// 10 a bank, the last 2: 10 / 9.33 = 1.071; 16-wide: 224 tiles, 19 a bank, the last 15:
    /// 19 / 18.67 = 1.018; 8-wide: 448, 38, the last 30: 1.018. Narrower tiles balance better.
    /// A width that is not a whole number of tiles is padded: 100 columns in 32-wide tiles
    /// are 4 tiles.
    #[test]
    fn narrower_tiles_balance_the_banks() {
        let s = shard_tiles(8192, 32, 12);
        assert_eq!((s[0], s[11], s.iter().sum::<u64>()), (22, 14, 256));
        assert!((imbalance(&s) - 22.0 / (256.0 / 12.0)).abs() < 1e-12);
        let s = shard_tiles(8192, 16, 12);
        assert_eq!((s[0], s[11]), (43, 39));
        let i32 = imbalance(&shard_tiles(3584, 32, 12));
        let i16 = imbalance(&shard_tiles(3584, 16, 12));
        let i8 = imbalance(&shard_tiles(3584, 8, 12));
        assert!((i32 - 10.0 / (112.0 / 12.0)).abs() < 1e-12);
        assert!((i16 - 19.0 / (224.0 / 12.0)).abs() < 1e-12);
        assert!((i8 - 38.0 / (448.0 / 12.0)).abs() < 1e-12);
        assert!(i16 < i32 && i8 <= i16);
        assert_eq!(shard_tiles(100, 32, 12).iter().sum::<u64>(), 4);
        // Fewer tiles than a full share for every bank: the last banks hold nothing.
        assert_eq!(shard_tiles(13 * 32, 32, 12)[6..], [1, 0, 0, 0, 0, 0]);
    }
}
