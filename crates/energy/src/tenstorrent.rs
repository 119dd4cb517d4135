//! Tenstorrent Wormhole (n150) and Grayskull (e150) power figures, each with its source, for
//! `podsim dram --energy` and `podsim matmul --energy` (and any machine file whose chip is
//! named `wormhole` or `grayskull`).
//!
//! What is counted, as for TPU v4 ([`crate`]'s model): the chip's static power for the whole
//! run, its Tensix FPUs' power while they stream, energy per byte of DRAM traffic and per byte
//! per NoC hop. What each figure is:
//!
//! * Idle, Wormhole: 19 W, measured by Tenstorrent with `tt-smi` on an n150 in its default
//!   (high) power state, nothing running (tenstorrent/tt-kmd pull request 212: "Base power on
//!   n150 is now 15W (before: 19/20W)"; the 15 W is a low-power state a run leaves). `tt-smi`
//!   reads the chip's power, not the board's (tenstorrent/tt-metal issue 33659). Grayskull:
//!   the same 19 W, an **assumption** (no public idle figure; the two chips are Tensix grids
//!   of similar size).
//! * DRAM, Wormhole's GDDR6: 7.5 pJ/bit, Micron's "Average Device Power (pJ/bit)" for GDDR6
//!   (micron.com/products/ultra-bandwidth-solutions, memory comparison table), the DRAM
//!   devices' side; the ASIC's controllers and PHYs are not in it (they are in the fit below).
//!   Grayskull's LPDDR4 (docs.tenstorrent.com/aibs/grayskull/specifications.html: 8 GB LPDDR4)
//!   at the same 7.5 pJ/bit: an **assumption** (no public per-bit LPDDR4 figure was found;
//!   LPDDR4's is likely lower, so this errs high).
//! * NoC: 0.5 pJ per bit per hop (a router's buffer write and read and a link to the next
//!   tile), an **assumption**: Tenstorrent publishes no NoC energy; it is of the order of a
//!   small SRAM access per bit (Horowitz, ISSCC 2014: 10 pJ per 64-bit read of an 8 KB SRAM,
//!   0.16 pJ/bit).
//! * Tensix L1 traffic beyond the cores' own (no podsim Tenstorrent run counts any yet): the
//!   DRAM figure times Horowitz's ratio of a 1 MB SRAM access to a DRAM access, as TPU v4's
//!   CMEM ([`crate::CMEM_PJ_PER_BYTE`]): an assumption.
//! * The FPUs while they stream, Wormhole: **calibrated** on the n150's total board power,
//!   160 W (docs.tenstorrent.com/aibs/wormhole/specifications.html): the power at which the
//!   chip, every one of its 72 Tensix cores streaming at full rate while the DRAM delivers its
//!   288 GB/s spec and each byte crosses one NoC hop ([`full_load`]), draws exactly the TBP.
//!   The TBP is a board limit, not a measurement: the fit charges everything on the board
//!   beyond idle, DRAM devices and NoC (voltage regulators, PHYs, the FPUs) to the FPUs, so it
//!   is an upper bound on their power. Grayskull: Wormhole's energy per peak FP8 FLOP times
//!   the e150's peak (332 TFLOPS against the n150's 262, both from the specification pages),
//!   an assumption (the same FPU energy per FLOP on both chips); what the e150 then draws at
//!   full load is a prediction of its 200 W TBP (validation/tenstorrent-energy.toml).
//!
//! No average power above the board's TBP is ever printed: [`BoardPower::check`] refuses it.

use crate::{Activity, ChipPower, Energy};

/// GDDR6 energy per byte, picojoules: Micron's 7.5 pJ/bit "Average Device Power"
/// (micron.com/products/ultra-bandwidth-solutions).
pub const GDDR6_PJ_PER_BYTE: f64 = 7.5 * 8.0;

/// Grayskull's LPDDR4 energy per byte, picojoules: GDDR6's, an assumption (see the module
/// docs).
pub const LPDDR4_PJ_PER_BYTE: f64 = GDDR6_PJ_PER_BYTE;

/// Energy per byte per NoC hop, picojoules: 0.5 pJ/bit, an assumption (see the module docs).
pub const TT_NOC_PJ_PER_BYTE_HOP: f64 = 0.5 * 8.0;

/// Tensix L1 (SRAM) traffic per byte, picojoules: the DRAM figure times Horowitz's (ISSCC
/// 2014) 100 pJ to 1.3 nJ ratio of a 1 MB SRAM access to a DRAM access. An assumption.
pub const TT_L1_PJ_PER_BYTE: f64 = GDDR6_PJ_PER_BYTE * 100.0 / 1300.0;

/// Wormhole's static power, watts: `tt-smi` on an idle n150 in its default power state
/// (tenstorrent/tt-kmd pull request 212: "before: 19/20W").
pub const WORMHOLE_IDLE_W: f64 = 19.0;

/// Grayskull's static power, watts: Wormhole's, an assumption (no public figure).
pub const GRAYSKULL_IDLE_W: f64 = WORMHOLE_IDLE_W;

/// The n150's total board power, watts (docs.tenstorrent.com/aibs/wormhole/specifications.html).
pub const N150_TBP_W: f64 = 160.0;

/// The e150's total board power, watts (docs.tenstorrent.com/aibs/grayskull/specifications.html).
pub const E150_TBP_W: f64 = 200.0;

/// The n150's DRAM spec bandwidth, bytes/s: 12 GDDR6 banks at 12 GT/s, 288 GB/s (the
/// specification page; tenstorrent-dram-bandwidth.txt's "DRAM spec speed").
pub const N150_DRAM_BYTES_PER_S: f64 = 288e9;

/// The e150's DRAM spec bandwidth, bytes/s: 118.4 GB/s (256-bit LPDDR4 at 3.7 GT/s; the
/// specification page prints 118 GB/s).
pub const E150_DRAM_BYTES_PER_S: f64 = 118.4e9;

/// The n150's peak FP8 FLOP/s (the specification page: 262 TFLOPS, 72 Tensix cores at 1 GHz).
pub const N150_FP8_FLOPS: f64 = 262e12;

/// The e150's peak FP8 FLOP/s (the specification page: 332 TFLOPS, 120 Tensix cores at
/// 1.2 GHz).
pub const E150_FP8_FLOPS: f64 = 332e12;

/// Wormhole's Tensix FPUs' power while every core streams, watts: **calibrated**. Fitted once
/// (closed form) so that [`full_load`] on an n150 draws its 160 W TBP: 160 W - 19 W idle -
/// 288 GB/s x (60 pJ DRAM + 4 pJ NoC) per byte = 160 - 19 - 18.432 = 122.568 W.
/// validation/tenstorrent-energy.toml holds the case it was fitted to (calibrated) and the one
/// it predicts (the e150's TBP).
pub const WORMHOLE_MATRIX_BUSY_W: f64 = N150_TBP_W
    - WORMHOLE_IDLE_W
    - N150_DRAM_BYTES_PER_S * (GDDR6_PJ_PER_BYTE + TT_NOC_PJ_PER_BYTE_HOP) * 1e-12;

/// Grayskull's Tensix FPUs' power while every core streams, watts: Wormhole's energy per peak
/// FP8 FLOP (122.568 W / 262 TFLOPS = 0.468 pJ) times the e150's 332 TFLOPS, 155.3 W. An
/// assumption on top of the Wormhole fit (the same energy per FLOP on both chips).
pub const GRAYSKULL_MATRIX_BUSY_W: f64 = WORMHOLE_MATRIX_BUSY_W / N150_FP8_FLOPS * E150_FP8_FLOPS;

/// Wormhole's and Grayskull's power figures (sources in the module docs).
pub const TENSTORRENT_POWER: [ChipPower; 2] = [
    ChipPower {
        chip: "wormhole",
        idle_w: WORMHOLE_IDLE_W,
        matrix_busy_w: WORMHOLE_MATRIX_BUSY_W,
        hbm_pj_per_byte: GDDR6_PJ_PER_BYTE,
        onchip_pj_per_byte: TT_L1_PJ_PER_BYTE,
        link_pj_per_byte: TT_NOC_PJ_PER_BYTE_HOP,
        source: "idle 19 W: tt-smi on an idle n150 (tenstorrent/tt-kmd pull request 212); GDDR6 7.5 pJ/bit: Micron, micron.com/products/ultra-bandwidth-solutions; NoC 0.5 pJ/bit per hop (assumption); L1: GDDR6's x Horowitz ISSCC 2014's 1 MB SRAM / DRAM ratio (assumption)",
        calibrated: "matrix_busy_w: fitted so that every Tensix core streaming with the DRAM at its 288 GB/s spec, one NoC hop a byte, draws the n150's 160 W TBP (docs.tenstorrent.com/aibs/wormhole/specifications.html; a board limit, not a measurement)",
        limit_w: Some(N150_TBP_W),
    },
    ChipPower {
        chip: "grayskull",
        idle_w: GRAYSKULL_IDLE_W,
        matrix_busy_w: GRAYSKULL_MATRIX_BUSY_W,
        hbm_pj_per_byte: LPDDR4_PJ_PER_BYTE,
        onchip_pj_per_byte: TT_L1_PJ_PER_BYTE,
        link_pj_per_byte: TT_NOC_PJ_PER_BYTE_HOP,
        source: "idle 19 W: Wormhole's (assumption); LPDDR4 at GDDR6's 7.5 pJ/bit (assumption; Micron's GDDR6 figure); NoC 0.5 pJ/bit per hop (assumption); matrix_busy_w: Wormhole's fitted energy per peak FP8 FLOP x the e150's 332 TFLOPS (assumption)",
        calibrated: "none on Grayskull: matrix_busy_w carries Wormhole's fit (to the n150's TBP) per FLOP; the e150's full-load power is then a prediction of its 200 W TBP",
        limit_w: Some(E150_TBP_W),
    },
];

/// A board's power limit, with the figures that define its full load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoardPower {
    /// The chip preset (`wormhole`, `grayskull`).
    pub chip: &'static str,
    /// The card podsim's chip is (`n150`, `e150`).
    pub card: &'static str,
    /// Total board power, watts: a limit the card is designed to, not a measurement.
    pub tbp_w: f64,
    /// The DRAM's spec bandwidth, bytes/s.
    pub dram_bytes_per_s: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

/// The n150's and e150's board limits.
pub const TENSTORRENT_BOARDS: [BoardPower; 2] = [
    BoardPower {
        chip: "wormhole",
        card: "n150",
        tbp_w: N150_TBP_W,
        dram_bytes_per_s: N150_DRAM_BYTES_PER_S,
        source: "docs.tenstorrent.com/aibs/wormhole/specifications.html: n150 TBP 160 W, 288 GB/s",
    },
    BoardPower {
        chip: "grayskull",
        card: "e150",
        tbp_w: E150_TBP_W,
        dram_bytes_per_s: E150_DRAM_BYTES_PER_S,
        source: "docs.tenstorrent.com/aibs/grayskull/specifications.html: e150 TBP 200 W, 118 GB/s",
    },
];

impl BoardPower {
    /// The board limit of chip preset `chip`, if podsim has one.
    pub fn preset(chip: &str) -> Option<BoardPower> {
        TENSTORRENT_BOARDS.iter().copied().find(|b| b.chip == chip)
    }

    /// `e`, or why it cannot be printed: a figure that is not finite or is negative, or a mean
    /// power per chip above the board's TBP (which the fit makes the most a chip can draw).
    pub fn check(&self, e: &Energy) -> Result<(), String> {
        crate::check_figures(e)?;
        if e.average_power_w > self.tbp_w * (1.0 + 1e-9) {
            return Err(format!(
                "a mean {:.1} W per chip is above the {}'s {} W TBP: the run's activity is outside what the power figures were fitted to",
                e.average_power_w, self.card, self.tbp_w
            ));
        }
        Ok(())
    }
}

/// One second of a chip at full load, the calibration's point: every Tensix core streaming
/// (`matrix_busy_s` = 1), the DRAM at `dram_bytes_per_s` and each of those bytes crossing one
/// NoC hop (readers next to their banks, as the document places them).
pub fn full_load(dram_bytes_per_s: f64) -> Activity {
    Activity {
        chips: 1,
        seconds: 1.0,
        matrix_busy_s: 1.0,
        hbm_bytes: dram_bytes_per_s,
        link_bytes: dram_bytes_per_s,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset(chip: &str) -> (ChipPower, BoardPower) {
        (
            ChipPower::preset(chip).expect("power figures"),
            BoardPower::preset(chip).expect("a board"),
        )
    }

    #[test]
    fn the_presets_are_found_by_chip_name() {
        for chip in ["wormhole", "grayskull"] {
            assert_eq!(ChipPower::preset(chip).map(|p| p.chip), Some(chip));
        }
        assert!(ChipPower::preset("blackhole").is_none());
        assert!(BoardPower::preset("tpuv4").is_none());
    }

    /// The calibration by hand: 160 W - 19 W - 288e9 B/s x 64 pJ/B (18.432 W) = 122.568 W;
    /// at that point the n150 draws its 160 W TBP, exactly, and passes the check.
    #[test]
    fn the_n150_at_full_load_draws_its_tbp() {
        let (p, b) = preset("wormhole");
        assert!((p.matrix_busy_w - 122.568).abs() < 1e-9);
        let e = p.energy(&full_load(b.dram_bytes_per_s));
        assert!((e.average_power_w - 160.0).abs() < 1e-9);
        assert!(b.check(&e).is_ok());
    }

    /// Grayskull by hand: 122.568 W x 332 / 262 = 155.31 W of FPUs; at full load 19 W +
    /// 155.31 W + 118.4e9 x 64 pJ (7.578 W) = 181.89 W, under the e150's 200 W.
    #[test]
    fn the_e150_at_full_load_is_predicted_under_its_tbp() {
        let (p, b) = preset("grayskull");
        assert!((p.matrix_busy_w - 155.31).abs() < 0.01);
        let e = p.energy(&full_load(b.dram_bytes_per_s));
        assert!((e.average_power_w - 181.89).abs() < 0.01, "{e:?}");
        assert!(b.check(&e).is_ok());
    }

    #[test]
    fn the_breakdown_sums_to_the_total_and_idle_scales_with_time() {
        let (p, _) = preset("wormhole");
        let a = Activity {
            chips: 1,
            seconds: 50e-6,
            matrix_busy_s: 5e-6,
            hbm_bytes: 13_369_344.0,
            link_bytes: 20e6,
            ..Default::default()
        };
        let e = p.energy(&a);
        let b = e.energy_breakdown_j;
        assert!((b.total() - e.energy_j).abs() <= 1e-12 * e.energy_j);
        // By hand: idle 19 W x 50 us = 0.95 mJ; compute 5 us x 122.568 W = 0.61284 mJ; memory
        // 13,369,344 B x 60 pJ = 0.80216 mJ; network 20e6 x 4 pJ = 0.08 mJ.
        assert!((b.idle - 0.95e-3).abs() < 1e-12);
        assert!((b.compute - 0.61284e-3).abs() < 1e-12);
        assert!((b.memory - 0.802_160_64e-3).abs() < 1e-12);
        assert!((b.network - 0.08e-3).abs() < 1e-12);
        // Twice as long at the same activity: twice the idle energy, the rest unchanged.
        let long = p.energy(&Activity {
            seconds: 100e-6,
            ..a
        });
        assert!((long.energy_breakdown_j.idle - 2.0 * b.idle).abs() < 1e-15);
        assert_eq!(long.energy_breakdown_j.compute, b.compute);
        assert_eq!(long.energy_breakdown_j.memory, b.memory);
        assert_eq!(long.energy_breakdown_j.network, b.network);
    }

    #[test]
    fn the_check_refuses_power_above_the_tbp_and_figures_that_are_not_finite() {
        let (p, b) = preset("wormhole");
        // A second of full load plus a second's worth of DRAM traffic more: above 160 W.
        let over = p.energy(&Activity {
            hbm_bytes: 3.0 * N150_DRAM_BYTES_PER_S,
            ..full_load(N150_DRAM_BYTES_PER_S)
        });
        let why = b.check(&over).unwrap_err();
        assert!(why.contains("n150") && why.contains("160 W TBP"), "{why}");
        let nan = p.energy(&Activity {
            seconds: f64::NAN,
            ..full_load(N150_DRAM_BYTES_PER_S)
        });
        assert!(b.check(&nan).unwrap_err().contains("not a finite"));
    }
}
