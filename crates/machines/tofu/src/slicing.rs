//! Dynamic packet slicing for dual-rail transfer (tofu-interconnect-d.txt section IV.E): one
//! TofuD link, two lanes with independent PCSs, frames split over both lanes or duplicated on
//! both, chosen per frame from the receiver's transmission-quality status (STAT); bit errors
//! and lane faults; CRC (FCS) errors answered by link-level retransmission. Every frame is a
//! real one: built, sliced, corrupted bit by bit, checked and merged by [`crate::frame`],
//! and the receiver verifies each delivered TLP against what was sent.
//!
//! # The link
//! * Lanes: 2 x 28.05 Gb/s, 64b/66b (seed Table I, [`podsim_topology::TofuGeneration`]): 3.4 GB/s
//!   of frame bytes per lane. A slice occupies its lane for its wire bytes (preamble, header,
//!   data, link block, FCS, inter-frame gap: [`crate::frame::Slice::wire_bytes`]).
//! * Latency: a slice arrives its serialization plus the preset's packet transfer (one link
//!   and two switches, 0.1 us, [`podsim_system::presets::tofu_hop_latency`]) after it starts;
//!   an acknowledgement, a NACK or a STAT change rides the reverse slices and takes the same
//!   0.1 us back (an assumption: the reverse lanes always carry traffic).
//! * Errors: each lane has a bit error rate; a slice of `b` bits is hit with probability
//!   `1 - (1 - BER)^b`, and a hit flips one random bit, which its FCS catches. A failed lane
//!   delivers nothing from `--lane-fault-at` until it recovers.
//! * Retransmission: go-back-N from a retry buffer of [`RETRY_BUFFER`] frames; the receiver
//!   NACKs the first frame it cannot accept and drops what follows until the retransmission
//!   arrives; it delivers in sequence and discards anything it already has. A frame refused
//!   [`RETRY_LIMIT`] times is given up (counted lost): that only happens when the mode cannot
//!   reach the receiver at all (split over a dead lane).
//!
//! # Modes
//! * `split`: always two half slices (lower latency: half the serialization).
//! * `duplicate`: always a whole slice on each lane (a frame survives while one lane does).
//! * `auto` (TofuD): the receiver keeps each lane's last [`STAT_WINDOW`] slices; STAT is 2 when
//!   a lane's last slice was lost (the PCS lost the lane), 1 when a lane saw two or more FCS
//!   errors in its window, else 0; the sender splits while the STAT it last heard is 0 and
//!   duplicates otherwise, so it returns to split once the lane has been clean for a window.
//! * `degrade` (Tofu2's link degradation, section IV.E): split until the first non-zero STAT,
//!   then the whole frame on the better lane alone, for ever: no packet is lost, but the lane
//!   never comes back.
//!
//! The window (64 slices) and the threshold (two errors) are podsim's choices; the paper says
//! only that the data link layer monitors the detection frequencies of CRC and other errors.

use std::collections::VecDeque;

use podsim_topology::TofuGeneration;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::frame::{self, Frame, RoutingHeader, Slice};

/// Frames the sender may have unacknowledged (an assumption; a few round trips of 2 KiB frames).
pub const RETRY_BUFFER: u64 = 32;
/// Refusals after which a frame is given up.
pub const RETRY_LIMIT: u32 = 16;
/// Transmissions a run of `r` makes, expected: each frame's, and its retransmissions while
/// a slice is hit by a bit error (up to [`RETRY_LIMIT`] refusals); for the up-front time
/// estimate (a run makes about 3 x 10^4 a second on one core).
pub fn expected_transmissions(r: &SlicingRun) -> f64 {
    // A slice: half a frame's TLP bytes and its framing, in bits.
    let bits = (r.bytes as f64 / 2.0 + 64.0) * 8.0;
    let hit = 1.0 - (1.0 - r.ber.clamp(0.0, 1.0)).powf(bits);
    let per_frame = if hit >= 1.0 {
        f64::from(RETRY_LIMIT + 1)
    } else {
        (1.0 / (1.0 - hit)).min(f64::from(RETRY_LIMIT + 1))
    };
    r.packets as f64 * per_frame
}

/// The most slice transmissions one run may make, expected ([`expected_transmissions`]):
/// about ten minutes at the ~3 x 10^4 a second measured on one core (10^5 frames at a bit
/// error rate of 10^-2, 17 transmissions each, in 62 s).
pub const MAX_TRANSMISSIONS: f64 = 2e7;

/// Frames one run may send (about four minutes on one core at 10^-6; [`FRAME_BYTES`] each).
pub const MAX_PACKETS: u64 = 10_000_000;
/// State a run keeps per frame, bytes: its acknowledgement and first transmission times, its
/// refusals and whether it was sent (8 + 8 + 4 + 1, rounded up). Measured: 10^6 frames peak
/// at 27 MB, 21 MB above the empty process.
pub const FRAME_BYTES: u64 = 24;
/// Slices per lane the receiver's quality monitor remembers.
pub const STAT_WINDOW: usize = 64;

/// How frames use the two lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceMode {
    /// Chosen per frame from STAT (TofuD).
    Auto,
    /// Always split.
    Split,
    /// Always duplicated.
    Duplicate,
    /// Tofu2's degradation: split until the first error, then one lane for ever.
    Degrade,
}

impl SliceMode {
    /// From its command-line name.
    pub fn parse(s: &str) -> Option<SliceMode> {
        match s {
            "auto" => Some(SliceMode::Auto),
            "split" => Some(SliceMode::Split),
            "duplicate" => Some(SliceMode::Duplicate),
            "degrade" => Some(SliceMode::Degrade),
            _ => None,
        }
    }
    /// Its command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SliceMode::Auto => "auto",
            SliceMode::Split => "split",
            SliceMode::Duplicate => "duplicate",
            SliceMode::Degrade => "degrade",
        }
    }
}

/// One run's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlicingRun {
    /// Frames to send.
    pub packets: u64,
    /// TLP bytes per frame (32 to 2048, a multiple of 32).
    pub bytes: usize,
    /// Bit error rate of both lanes.
    pub ber: f64,
    /// When lane 1 fails, ns.
    pub fault_at_ns: Option<u64>,
    /// When it recovers, ns (never, if `None`).
    pub recover_at_ns: Option<u64>,
    /// The mode.
    pub mode: SliceMode,
    /// The random stream's seed.
    pub seed: u64,
}

/// Why a run cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlicingError {
    /// A setting out of range.
    #[error("{key}: {why}")]
    Setting {
        /// The setting.
        key: &'static str,
        /// What was expected.
        why: String,
    },
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SlicingResult {
    /// Mean time from a frame's first transmission to its delivery, s (`None` when no frame
    /// was delivered: there is no latency to average).
    pub latency_s: Option<f64>,
    /// The latency of a lone frame with no errors in the mode it started in, s.
    pub unloaded_latency_s: f64,
    /// Delivered TLP bytes over the run's time ([`Self::time_s`]), bytes per second.
    pub throughput_bytes_per_s: f64,
    /// Frames offered.
    pub packets_sent: u64,
    /// Frames delivered, each once and intact.
    pub packets_delivered: u64,
    /// Frames given up.
    pub packets_lost: u64,
    /// Transmissions beyond each frame's first.
    pub retransmissions: u64,
    /// Slices that failed their FCS.
    pub fcs_errors: u64,
    /// Slices lost with a failed lane.
    pub slices_lost: u64,
    /// Frames the receiver threw away because it already had them.
    pub duplicates_discarded: u64,
    /// Delivered frames whose bytes differed from what was sent (must be zero).
    pub corrupted_deliveries: u64,
    /// Transmissions split over both lanes.
    pub split_transmissions: u64,
    /// Transmissions duplicated on both lanes.
    pub duplicate_transmissions: u64,
    /// Transmissions on one lane (degraded).
    pub single_lane_transmissions: u64,
    /// When the last frame was delivered or given up, s.
    pub time_s: f64,
}

/// Frame bytes per second on one lane.
fn lane_bytes_per_s() -> f64 {
    let g = TofuGeneration::TofuD;
    let (n, d) = g.lane_rate_bps();
    let (p, l) = g.coding();
    n as f64 / d as f64 * p as f64 / l as f64 / 8.0
}

/// The frame of packet `k`: its TLP bytes are a function of `k`, so the receiver can check
/// them.
fn frame_of(k: u64, bytes: usize) -> Frame {
    let header = RoutingHeader {
        len: (bytes / 32 - 1) as u8,
        dx: 1,
        seq: (k % 4096) as u16,
        ..RoutingHeader::default()
    };
    let tlp = (0..bytes)
        .map(|i| {
            (k.wrapping_mul(2_654_435_761)
                .wrapping_add(i as u64 * 40_503)
                >> 7) as u8
        })
        .collect();
    Frame {
        header,
        tlp,
        dllp: [k as u8; 16],
        control: [(k >> 8) as u8; 8],
    }
}

/// The receiver's per-lane quality monitor.
struct Monitor {
    window: [VecDeque<bool>; 2],
    lost_last: [bool; 2],
}

impl Monitor {
    fn observe(&mut self, lane: usize, bad: bool, lost: bool) {
        let w = &mut self.window[lane];
        w.push_back(bad);
        if w.len() > STAT_WINDOW {
            w.pop_front();
        }
        self.lost_last[lane] = lost;
    }
    fn stat(&self) -> u8 {
        if self.lost_last.iter().any(|&l| l) {
            2
        } else if self
            .window
            .iter()
            .any(|w| w.iter().filter(|&&b| b).count() >= 2)
        {
            1
        } else {
            0
        }
    }
    /// The lane with fewer bad slices in its window.
    fn better(&self) -> usize {
        let bad = |l: usize| self.window[l].iter().filter(|&&b| b).count();
        usize::from(bad(1) < bad(0))
    }
}

/// Run one link.
pub fn run(r: &SlicingRun) -> Result<SlicingResult, SlicingError> {
    if r.bytes == 0 || r.bytes > 2048 || !r.bytes.is_multiple_of(32) {
        return Err(SlicingError::Setting {
            key: "--bytes",
            why: format!(
                "{} is not a TLP size: 32 to 2048 bytes in steps of 32 (LEN, Fig. 4)",
                r.bytes
            ),
        });
    }
    if !(0.0..=1e-2).contains(&r.ber) || r.ber.is_nan() {
        return Err(SlicingError::Setting {
            key: "--ber",
            why: format!("{} is not a bit error rate between 0 and 1e-2", r.ber),
        });
    }
    if r.packets > MAX_PACKETS {
        return Err(SlicingError::Setting {
            key: "--packets",
            why: format!(
                "{} frames: at most {MAX_PACKETS} in one run (each keeps its retry state)",
                r.packets
            ),
        });
    }
    if r.packets == 0 {
        return Err(SlicingError::Setting {
            key: "--packets",
            why: "at least one packet".into(),
        });
    }
    let tx = expected_transmissions(r);
    if tx > MAX_TRANSMISSIONS {
        return Err(SlicingError::Setting {
            key: "--packets",
            why: format!(
                "{} frames at a bit error rate of {} make about {tx:.1e} slice transmissions, more than the {MAX_TRANSMISSIONS:.0e} a run may make (about ten minutes on one core); give fewer frames",
                r.packets, r.ber
            ),
        });
    }
    let estimate = r.packets * FRAME_BYTES;
    let limit = podsim_system::machine::memory_limit();
    if estimate > limit {
        return Err(SlicingError::Setting {
            key: "--packets",
            why: format!(
                "{} frames keep about {} of state, more than the memory limit of {} (--memory-limit)",
                r.packets,
                podsim_units::Bytes(estimate),
                podsim_units::Bytes(limit)
            ),
        });
    }
    if let (Some(f), Some(c)) = (r.fault_at_ns, r.recover_at_ns)
        && c <= f
    {
        return Err(SlicingError::Setting {
            key: "--lane-recover-at",
            why: "the lane recovers after it fails".into(),
        });
    }
    if r.recover_at_ns.is_some() && r.fault_at_ns.is_none() {
        return Err(SlicingError::Setting {
            key: "--lane-recover-at",
            why: "needs --lane-fault-at (a lane recovers only from a fault)".into(),
        });
    }
    podsim_engine::watch::estimate(&format!("about {tx:.1e} slice transmissions"), tx / 3e4);
    let rate = lane_bytes_per_s();
    let hop = podsim_system::presets::tofu_hop_latency(TofuGeneration::TofuD).as_ps() as f64 * 1e-3;
    let ser = |wire: u64| wire as f64 / rate * 1e9; // ns
    let down = |lane: usize, t0: f64, t1: f64| -> bool {
        lane == 1
            && r.fault_at_ns.is_some_and(|f| t1 > f as f64)
            && r.recover_at_ns.is_none_or(|c| t0 < c as f64)
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(r.seed);
    let n = r.packets;
    let mut lane_free = [0f64; 2];
    let mut next = 0u64;
    let mut expected = 0u64;
    let mut nack: Option<(u64, f64)> = None;
    let mut stat_updates: VecDeque<(f64, u8, usize)> = VecDeque::new();
    let mut stat_seen = (0u8, 0usize);
    let mut last_stat_sent = 0u8;
    let mut degraded: Option<usize> = None;
    let mut ack_at: Vec<f64> = vec![f64::INFINITY; n as usize];
    let mut first_tx: Vec<f64> = vec![f64::NAN; n as usize];
    let mut refusals: Vec<u32> = vec![0; n as usize];
    let mut sent = vec![false; n as usize];
    let mut mon = Monitor {
        window: [VecDeque::new(), VecDeque::new()],
        lost_last: [false; 2],
    };
    let mut res = SlicingResult {
        latency_s: None,
        unloaded_latency_s: 0.0,
        throughput_bytes_per_s: 0.0,
        packets_sent: n,
        packets_delivered: 0,
        packets_lost: 0,
        retransmissions: 0,
        fcs_errors: 0,
        slices_lost: 0,
        duplicates_discarded: 0,
        corrupted_deliveries: 0,
        split_transmissions: 0,
        duplicate_transmissions: 0,
        single_lane_transmissions: 0,
        time_s: 0.0,
    };
    let mut latency_sum = 0f64;
    let mut last_delivery = 0f64;
    let mut last_given_up = 0f64;
    let mut delivered_bytes = 0u64;
    let p_hit = |bits: u64| 1.0 - (1.0 - r.ber).powf(bits as f64);
    podsim_engine::watch::begin("frames delivered or given up", n);
    while expected < n {
        podsim_engine::watch::done(expected);
        let mut t = match degraded {
            Some(l) => lane_free[l],
            None => lane_free[0].max(lane_free[1]),
        };
        if next >= n {
            // Everything is out; only a NACK can be outstanding.
            let (seq, at) = nack
                .take()
                .expect("an undelivered frame has a NACK on its way");
            next = seq;
            lane_free = [lane_free[0].max(at), lane_free[1].max(at)];
            continue;
        }
        // The retry buffer: wait for the acknowledgement of frame next - RETRY_BUFFER.
        if next >= RETRY_BUFFER {
            let a = ack_at[(next - RETRY_BUFFER) as usize];
            if a.is_finite() {
                t = t.max(a);
            } else if let Some((_, at)) = nack {
                t = t.max(at);
            }
        }
        if let Some((seq, at)) = nack
            && at <= t
        {
            nack = None;
            next = seq;
            continue;
        }
        // What the sender knows of STAT at t.
        while let Some(&(at, s, better)) = stat_updates.front() {
            if at > t {
                break;
            }
            stat_seen = (s, better);
            stat_updates.pop_front();
        }
        if r.mode == SliceMode::Degrade && degraded.is_none() && stat_seen.0 != 0 {
            degraded = Some(stat_seen.1);
            let l = stat_seen.1;
            t = t.max(lane_free[l]);
        }
        let split = match r.mode {
            SliceMode::Split => true,
            SliceMode::Duplicate => false,
            SliceMode::Auto => stat_seen.0 == 0,
            SliceMode::Degrade => degraded.is_none(),
        };
        let k = next;
        let frame = frame_of(k, r.bytes);
        let mut slices: [Slice; 2] =
            frame::slice(&frame, split).expect("a frame of a valid size slices");
        if sent[k as usize] {
            res.retransmissions += 1;
        } else {
            sent[k as usize] = true;
            first_tx[k as usize] = t;
        }
        // Lanes used and their arrivals.
        let lanes: Vec<usize> = match degraded {
            Some(l) => vec![l],
            None => vec![0, 1],
        };
        match (degraded, split) {
            (Some(_), _) => res.single_lane_transmissions += 1,
            (None, true) => res.split_transmissions += 1,
            (None, false) => res.duplicate_transmissions += 1,
        }
        let mut arrival = t;
        let mut got: [Option<bool>; 2] = [None, None]; // Some(ok) when the slice arrived
        for &l in &lanes {
            let s = &mut slices[l];
            let dur = ser(s.wire_bytes());
            lane_free[l] = t + dur;
            arrival = arrival.max(t + dur + hop);
            if down(l, t, t + dur) {
                res.slices_lost += 1;
                mon.observe(l, true, true);
                continue;
            }
            if rng.random::<f64>() < p_hit(s.wire_bytes() * 8) {
                // One bit of the header or the data flips.
                let bit = rng.random_range(0..64 + 8 * s.tlp.len().max(1));
                if bit < 64 || s.tlp.is_empty() {
                    s.header ^= 1 << (bit % 64);
                } else {
                    let b = bit - 64;
                    s.tlp[b / 8] ^= 1 << (b % 8);
                }
            }
            let ok = frame::check(l, s).is_ok();
            if !ok {
                res.fcs_errors += 1;
            }
            mon.observe(l, !ok, false);
            got[l] = Some(ok);
        }
        let stat = mon.stat();
        if stat != last_stat_sent {
            last_stat_sent = stat;
            stat_updates.push_back((arrival + hop, stat, mon.better()));
        }
        next += 1;
        // The receiver, in arrival order (which is transmission order).
        if k < expected {
            res.duplicates_discarded += 1;
            continue;
        }
        if k > expected {
            continue; // go-back-N: dropped until the NACKed frame comes again
        }
        let intact = [
            got[0].unwrap_or(false).then_some(&slices[0]),
            got[1].unwrap_or(false).then_some(&slices[1]),
        ];
        match frame::merge(intact) {
            Ok(f) if f.tlp == frame.tlp && f.header.seq == frame.header.seq => {
                expected += 1;
                res.packets_delivered += 1;
                delivered_bytes += r.bytes as u64;
                latency_sum += arrival - first_tx[k as usize];
                last_delivery = arrival;
                ack_at[k as usize] = arrival + hop;
            }
            Ok(_) => {
                res.corrupted_deliveries += 1;
                expected += 1;
            }
            Err(_) => {
                refusals[k as usize] += 1;
                if refusals[k as usize] >= RETRY_LIMIT {
                    // Given up: the receiver moves on, and so does the sender.
                    res.packets_lost += 1;
                    last_given_up = last_given_up.max(arrival);
                    expected += 1;
                    ack_at[k as usize] = arrival + hop;
                    if next > k + 1 {
                        nack = Some((k + 1, arrival + hop));
                    }
                } else if nack.is_none() {
                    nack = Some((k, arrival + hop));
                }
            }
        }
    }
    let bytes = |split: bool| {
        let s = frame::slice(&frame_of(0, r.bytes), split).expect("valid");
        s[0].wire_bytes()
    };
    let start_split = !matches!(r.mode, SliceMode::Duplicate);
    res.unloaded_latency_s = (ser(bytes(start_split)) + hop) * 1e-9;
    res.latency_s =
        (res.packets_delivered > 0).then(|| latency_sum / res.packets_delivered as f64 * 1e-9);
    let end = last_delivery.max(last_given_up);
    res.time_s = end * 1e-9;
    res.throughput_bytes_per_s = if end > 0.0 {
        delivered_bytes as f64 / (end * 1e-9)
    } else {
        0.0
    };
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(mode: SliceMode) -> SlicingRun {
        SlicingRun {
            packets: 2000,
            bytes: 2048,
            ber: 0.0,
            fault_at_ns: None,
            recover_at_ns: None,
            mode,
            seed: 1,
        }
    }

    /// No errors: split puts 8 + 8 + 1024 + 24 + 12 = 1076 bytes on each lane per 2048-byte
    /// TLP, duplicate 8 + 8 + 2048 + 32 + 12 = 2108. At 28.05 Gb/s x 64/66 / 8 = 3.4 GB/s a
    /// lane, split carries 2048 / (1076 / 3.4e9) = 6.47 GB/s and duplicate 3.30 GB/s; a lone
    /// frame takes 1076 / 3.4 = 316.5 ns (split) or 620.0 ns (duplicate) plus the 100 ns hop.
    #[test]
    fn clean_split_and_duplicate_by_hand() {
        let s = run(&base(SliceMode::Split)).unwrap();
        let d = run(&base(SliceMode::Duplicate)).unwrap();
        let rate = 28.05e9 * 64.0 / 66.0 / 8.0;
        let close = |a: f64, b: f64| (a - b).abs() / b < 1e-3;
        assert!(
            close(s.throughput_bytes_per_s, 2048.0 / (1076.0 / rate)),
            "{s:?}"
        );
        assert!(
            close(d.throughput_bytes_per_s, 2048.0 / (2108.0 / rate)),
            "{d:?}"
        );
        assert!(close(s.unloaded_latency_s, 1076.0 / rate + 100e-9));
        assert!(close(d.latency_s.unwrap(), 2108.0 / rate + 100e-9));
        for x in [&s, &d] {
            assert_eq!(x.packets_delivered, 2000);
            assert_eq!((x.packets_lost, x.retransmissions, x.fcs_errors), (0, 0, 0));
        }
    }

    /// A lane fails mid-run and comes back: auto mode loses nothing, delivers every frame
    /// exactly once and intact, duplicates while the lane is down and splits again after.
    #[test]
    fn lane_fault_mid_run_loses_nothing() {
        for mode in [SliceMode::Auto, SliceMode::Duplicate, SliceMode::Degrade] {
            let r = run(&SlicingRun {
                fault_at_ns: Some(100_000),
                recover_at_ns: Some(200_000),
                ber: 1e-7,
                ..base(mode)
            })
            .unwrap();
            assert_eq!(r.packets_delivered, 2000, "{mode:?}: {r:?}");
            assert_eq!(r.packets_lost, 0, "{mode:?}");
            assert_eq!(r.corrupted_deliveries, 0, "{mode:?}");
            assert_eq!(r.duplicates_discarded, 0, "{mode:?}");
            assert!(r.slices_lost > 0, "{mode:?}: the fault hit");
            if mode == SliceMode::Auto {
                assert!(r.duplicate_transmissions > 0 && r.split_transmissions > 1000);
            }
        }
        // Split alone cannot cross a dead lane: frames are given up.
        let r = run(&SlicingRun {
            fault_at_ns: Some(100_000),
            ..base(SliceMode::Split)
        })
        .unwrap();
        assert!(r.packets_lost > 0);
        assert_eq!(r.packets_delivered + r.packets_lost, 2000);
    }

    /// Tofu2's degradation never comes back: after the same fault and recovery, it carries
    /// less than auto, which returns to split.
    #[test]
    fn degradation_never_recovers() {
        let run_mode = |mode| {
            run(&SlicingRun {
                fault_at_ns: Some(50_000),
                recover_at_ns: Some(100_000),
                ..base(mode)
            })
            .unwrap()
        };
        let auto = run_mode(SliceMode::Auto);
        let deg = run_mode(SliceMode::Degrade);
        assert!(deg.single_lane_transmissions > 1500, "{deg:?}");
        assert!(auto.throughput_bytes_per_s > 1.5 * deg.throughput_bytes_per_s);
    }

    #[test]
    fn same_seed_same_result_and_bad_settings_refused() {
        let r = SlicingRun {
            ber: 1e-5,
            ..base(SliceMode::Auto)
        };
        assert_eq!(run(&r).unwrap(), run(&r).unwrap());
        assert!(run(&SlicingRun { bytes: 100, ..r }).is_err());
        assert!(
            run(&SlicingRun {
                packets: u64::MAX,
                ..r
            })
            .is_err()
        );
        assert!(run(&SlicingRun { ber: 0.5, ..r }).is_err());
        assert!(
            run(&SlicingRun {
                recover_at_ns: Some(5),
                ..r
            })
            .is_err()
        );
    }
}
