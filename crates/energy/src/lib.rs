//! Energy from activity: a chip's static power over the run's time plus the dynamic energy of
//! what it did (time its matrix units streamed, bytes through each memory level, bytes over
//! links).
//!
//! The model is the usual activity-based one (as in Horowitz, "Computing's energy problem",
//! ISSCC 2014, which tpu-v4-isca2023.txt cites as [Hor14]): every chip draws its static power
//! (`idle_w`) for the whole run, busy or waiting, so exposed communication shows in the bill;
//! each byte and link crossing adds its own energy, and the matrix units draw their power for
//! every second they stream. Nothing else is counted: a chip package's power (ASIC and HBM, as
//! Table 4 measures it), not hosts, switches or cooling.
//!
//! The matrix units are charged by the time they stream, not by the useful FLOPs: a systolic
//! array's processing elements register their inputs and multiply-accumulate on every clock
//! edge of a pass, whether or not the tile fills the array (the lecture's `pe` module,
//! ece327-tensor-core-systolic-lecture.txt: `a_reg <= ain; b_reg <= bin; d_reg <= d_reg +
//! a_reg * b_reg` with no enable), so a GEMM that fills a quarter of the array, or spends its
//! time filling and draining it, costs its time's energy, not a quarter of it. Between passes
//! the units draw nothing beyond the package's static power (clock gating, which the TPU v4
//! paper names among its design improvements, section 5).
//!
//! Each figure of a [`ChipPower`] names its source. Where the seeds give only a total (Table
//! 4's mean power under production load) one parameter, the matrix units' power while they
//! stream, is fitted
//! to it and declared calibrated; the other figures of the seeds (the min/max range, Fig. 13's
//! performance per watt, CMEM's gain) are then predictions (validation/tpu-v4-energy.toml).

use serde::Serialize;

pub mod gpu;
pub mod optics;
pub mod tenstorrent;

/// What a run did, summed over every chip of the machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Activity {
    /// Chips powered for the run.
    pub chips: u64,
    /// Wall-clock time of the run, seconds (every chip is powered for all of it).
    pub seconds: f64,
    /// FLOPs on the matrix units (bf16), over all chips.
    pub matrix_flops: f64,
    /// Seconds the matrix units streamed (each GEMM's time on its arrays), summed over chips.
    pub matrix_busy_s: f64,
    /// Bytes read or written in HBM (or DRAM), over all chips.
    pub hbm_bytes: f64,
    /// Bytes read or written in on-chip memory beyond the cores' own (TPU v4's CMEM).
    pub onchip_bytes: f64,
    /// Bytes times links crossed, over all transfers (a byte sent two hops counts twice).
    pub link_bytes: f64,
}

impl Activity {
    /// `self` with every total added to `other`'s (chips and seconds kept from `self`).
    pub fn plus(self, o: Activity) -> Activity {
        Activity {
            matrix_flops: self.matrix_flops + o.matrix_flops,
            matrix_busy_s: self.matrix_busy_s + o.matrix_busy_s,
            hbm_bytes: self.hbm_bytes + o.hbm_bytes,
            onchip_bytes: self.onchip_bytes + o.onchip_bytes,
            link_bytes: self.link_bytes + o.link_bytes,
            ..self
        }
    }
    /// `self` with every total (not chips or seconds) times `k`.
    pub fn times(self, k: f64) -> Activity {
        Activity {
            matrix_flops: self.matrix_flops * k,
            matrix_busy_s: self.matrix_busy_s * k,
            hbm_bytes: self.hbm_bytes * k,
            onchip_bytes: self.onchip_bytes * k,
            link_bytes: self.link_bytes * k,
            ..self
        }
    }
}

/// A chip's power figures, each with its source.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChipPower {
    /// The chip preset these are for.
    pub chip: &'static str,
    /// Static power of the package (ASIC and HBM) while powered, watts.
    pub idle_w: f64,
    /// Power of a chip's matrix units while they stream, watts (beyond `idle_w`).
    pub matrix_busy_w: f64,
    /// Energy per byte of HBM traffic, picojoules.
    pub hbm_pj_per_byte: f64,
    /// Energy per byte of on-chip memory traffic (CMEM), picojoules.
    pub onchip_pj_per_byte: f64,
    /// Energy per byte per link crossed, picojoules.
    pub link_pj_per_byte: f64,
    /// Where each figure comes from.
    pub source: &'static str,
    /// The parameter fitted, and to what.
    pub calibrated: &'static str,
    /// The most a chip can draw, watts, where its maker states a limit (the A100's TDP, a
    /// Tenstorrent board's TBP): a run whose mean power per chip comes out above it is outside
    /// what the figures describe and is refused ([`ChipPower::check`]), not printed.
    pub limit_w: Option<f64>,
}

/// HBM2 access energy, 3.9 pJ per bit (O'Connor et al., "Fine-Grained DRAM: Energy-Efficient
/// DRAM for Extreme Bandwidth Systems", MICRO 2017: HBM2 about 3.9 pJ/bit), per byte. TPU v3
/// and v4 both use HBM2 (Table 4).
pub const HBM2_PJ_PER_BYTE: f64 = 3.9 * 8.0;

/// A large on-chip SRAM (CMEM) access per byte: HBM2's times Horowitz's (ISSCC 2014) ratio of a
/// 1 MB SRAM access to a DRAM access, 100 pJ to 1.3 nJ per 64 bits. An assumption.
pub const CMEM_PJ_PER_BYTE: f64 = HBM2_PJ_PER_BYTE * 100.0 / 1300.0;

/// An ICI link's dynamic energy per byte: 5 pJ per bit, a 50 Gb/s-class electrical SerDes'
/// energy. An assumption; the links' static power is part of the package's idle power
/// (Table 4 measures the ASIC, whose SerDes are on it).
pub const ICI_PJ_PER_BYTE: f64 = 5.0 * 8.0;

/// TPU v4's and v3's power figures (tpu-v4-isca2023.txt Table 4: idle 90 W and 123 W).
pub const TPU_POWER: [ChipPower; 2] = [
    ChipPower {
        chip: "tpuv4",
        idle_w: 90.0,
        matrix_busy_w: TPUV4_MATRIX_BUSY_W,
        hbm_pj_per_byte: HBM2_PJ_PER_BYTE,
        onchip_pj_per_byte: CMEM_PJ_PER_BYTE,
        link_pj_per_byte: ICI_PJ_PER_BYTE,
        source: "idle 90 W: tpu-v4-isca2023.txt Table 4; HBM2 3.9 pJ/bit: O'Connor et al. MICRO 2017; CMEM: HBM2's x Horowitz ISSCC 2014's 1 MB SRAM / DRAM ratio (assumption); ICI 5 pJ/bit (assumption)",
        calibrated: "matrix_busy_w: fitted so that the eight production-shaped applications' mean power on 128 chips (podsim apps) is Table 4's mean, 170 W",
        limit_w: None,
    },
    ChipPower {
        chip: "tpuv3",
        idle_w: 123.0,
        matrix_busy_w: TPUV3_MATRIX_BUSY_W,
        hbm_pj_per_byte: HBM2_PJ_PER_BYTE,
        onchip_pj_per_byte: CMEM_PJ_PER_BYTE,
        link_pj_per_byte: ICI_PJ_PER_BYTE,
        source: "idle 123 W: tpu-v4-isca2023.txt Table 4; HBM2 3.9 pJ/bit: O'Connor et al. MICRO 2017; ICI 5 pJ/bit (assumption)",
        calibrated: "matrix_busy_w: fitted so that the eight production-shaped applications' mean power on 128 chips (podsim apps) is Table 4's mean, 220 W",
        limit_w: None,
    },
];

/// TPU v4's matrix units' power while they stream, watts: calibrated. Fitted once (2026-12-01)
/// so that the mean over the eight production-shaped applications of `podsim apps` on 128 chips
/// (4x4x8 twisted, CMEM on) of each one's mean chip power is Table 4's 170 W: with the other
/// figures fixed, power is linear in this one, 90 W + P x (mean share of the step the matrix
/// units stream, 0.4309) + (mean of the other dynamic power, 23.07 W) = 170 W gives P =
/// 132.1 W. (It replaces an energy per useful matrix FLOP, fitted the same way: 0.765 pJ/FLOP;
/// see the module docs for why time, not FLOPs.)
/// validation/tpu-v4-energy.toml holds the case it was fitted to (calibrated) and the figures
/// it predicts.
pub const TPUV4_MATRIX_BUSY_W: f64 = 132.1;
/// TPU v3's matrix units' power while they stream, watts: calibrated as TPU v4's, on the same
/// applications on 128 chips of TPU v3 (8x16) against Table 4's 220 W: 123 W + P x 0.5192 +
/// 17.78 W = 220 W gives P = 152.6 W.
pub const TPUV3_MATRIX_BUSY_W: f64 = 152.6;

impl ChipPower {
    /// The power figures of chip preset `name`, if podsim has them.
    pub fn preset(name: &str) -> Option<ChipPower> {
        TPU_POWER
            .iter()
            .chain(gpu::GPU_POWER.iter())
            .chain(&tenstorrent::TENSTORRENT_POWER)
            .copied()
            .find(|p| p.chip == name)
    }

    /// The power figures of the chip a system names (`None`: it names none), or why there
    /// are none.
    pub fn of_chip(chip: Option<&str>) -> Result<ChipPower, String> {
        let Some(chip) = chip else {
            return Err(
                "the topology names no chip; give a system of TPU v4 chips (tpuv4:slice=...)"
                    .into(),
            );
        };
        ChipPower::preset(chip).ok_or_else(|| {
            format!(
                "the chip `{chip}` has no power figures in podsim (TPU v4 and v3 have, from Table 4; the A100, from Table 6; Wormhole and Grayskull, from their boards' specifications)"
            )
        })
    }

    /// `e` (an energy on chips of this kind), or why it cannot be printed: a figure that is not
    /// finite or is negative, or a mean power per chip above the chip's stated limit.
    pub fn check(&self, e: &Energy) -> Result<(), String> {
        check_figures(e)?;
        match self.limit_w {
            Some(limit) if e.average_power_w > limit * (1.0 + 1e-9) => Err(format!(
                "the run's mean power, {:.1} W per chip, is above the {}'s {limit} W limit: a chip that busy would lower its clock to stay under it, which podsim's power figures do not model",
                e.average_power_w, self.chip
            )),
            _ => Ok(()),
        }
    }

    /// The energy of `a` on chips of this kind.
    pub fn energy(&self, a: &Activity) -> Energy {
        let pj = 1e-12;
        let breakdown = Breakdown {
            compute: a.matrix_busy_s * self.matrix_busy_w,
            memory: (a.hbm_bytes * self.hbm_pj_per_byte + a.onchip_bytes * self.onchip_pj_per_byte)
                * pj,
            network: a.link_bytes * self.link_pj_per_byte * pj,
            idle: self.idle_w * a.seconds * a.chips as f64,
        };
        let total = breakdown.total();
        let chip_seconds = a.seconds * a.chips as f64;
        Energy {
            energy_j: total,
            average_power_w: if chip_seconds > 0.0 {
                total / chip_seconds
            } else {
                0.0
            },
            energy_breakdown_j: breakdown,
        }
    }
}

/// Every figure of `e` finite and non-negative, or the first that is not.
pub(crate) fn check_figures(e: &Energy) -> Result<(), String> {
    let b = e.energy_breakdown_j;
    let figures = [
        ("energy_j", e.energy_j),
        ("average_power_w", e.average_power_w),
        ("compute", b.compute),
        ("memory", b.memory),
        ("network", b.network),
        ("idle", b.idle),
    ];
    match figures.iter().find(|(_, v)| !v.is_finite() || *v < 0.0) {
        Some((name, v)) => Err(format!("{name} = {v}: not a finite, non-negative figure")),
        None => Ok(()),
    }
}

/// Joules by component.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Breakdown {
    /// The matrix units' dynamic energy.
    pub compute: f64,
    /// HBM and on-chip memory traffic.
    pub memory: f64,
    /// Bytes over links.
    pub network: f64,
    /// Static power over the run, busy or waiting.
    pub idle: f64,
}

impl Breakdown {
    /// The sum of the components.
    pub fn total(&self) -> f64 {
        self.compute + self.memory + self.network + self.idle
    }
    /// The components by name, in print order.
    pub fn parts(&self) -> [(&'static str, f64); 4] {
        [
            ("compute", self.compute),
            ("memory", self.memory),
            ("network", self.network),
            ("idle", self.idle),
        ]
    }
}

/// A run's energy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Energy {
    /// Joules over every chip for the whole run.
    pub energy_j: f64,
    /// Mean power of one chip over the run, watts.
    pub average_power_w: f64,
    /// Joules by component; they sum to `energy_j`.
    pub energy_breakdown_j: Breakdown,
}

/// A run's energy as commands print it (`--energy`): the keys `energy_j`, `average_power_w`,
/// `energy_breakdown_j` and, where the run has a throughput, `perf_per_watt`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnergyOutput {
    /// Joules over every chip for the whole run.
    pub energy_j: f64,
    /// Mean power of one chip over the run, watts.
    pub average_power_w: f64,
    /// Joules by component (compute, memory, network, idle); they sum to `energy_j`.
    pub energy_breakdown_j: Breakdown,
    /// Throughput per watt of the whole machine, in the unit `perf_unit` names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub perf_per_watt: Option<f64>,
    /// The unit of `perf_per_watt` (text only).
    #[serde(skip)]
    pub perf_unit: &'static str,
    /// Chips powered (text only).
    #[serde(skip)]
    pub chips: u64,
}

impl EnergyOutput {
    /// The energy of `a` on chips of `power`; `work_per_s` (the run's throughput, in the unit
    /// `unit` names per second) gives the performance per watt.
    pub fn new(
        power: &ChipPower,
        a: &Activity,
        work_per_s: Option<(f64, &'static str)>,
    ) -> Result<EnergyOutput, String> {
        let e = power.energy(a);
        power.check(&e)?;
        let system_w = e.average_power_w * a.chips as f64;
        let (perf_per_watt, perf_unit) = match work_per_s {
            Some((w, unit)) if system_w > 0.0 => (Some(w / system_w), unit),
            _ => (None, ""),
        };
        Ok(EnergyOutput {
            energy_j: e.energy_j,
            average_power_w: e.average_power_w,
            energy_breakdown_j: e.energy_breakdown_j,
            perf_per_watt,
            perf_unit,
            chips: a.chips,
        })
    }

    /// The rows a command's table adds: energy with its breakdown, power, performance per watt.
    pub fn rows(&self) -> Vec<(String, Vec<String>)> {
        let parts = self
            .energy_breakdown_j
            .parts()
            .iter()
            .map(|(name, j)| {
                let share = if self.energy_j > 0.0 {
                    j / self.energy_j * 100.0
                } else {
                    0.0
                };
                format!("{name} {} ({share:.0}%)", joules(*j))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let mut rows = vec![
            (
                "energy".to_string(),
                vec![format!("{}: {parts}", joules(self.energy_j))],
            ),
            (
                "power".to_string(),
                vec![match self.chips {
                    1 => format!("{:.1} W, one chip", self.average_power_w),
                    n => format!(
                        "{:.1} W per chip, {} for {n} chips",
                        self.average_power_w,
                        watts(self.average_power_w * n as f64),
                    ),
                }],
            ),
        ];
        if let Some(p) = self.perf_per_watt {
            rows.push((
                "performance per watt".to_string(),
                vec![format!("{p:.4e} {}", self.perf_unit)],
            ));
        }
        rows
    }
}

/// Joules with an SI prefix, e.g. `12.3 kJ`.
fn joules(j: f64) -> String {
    si(j, "J")
}

/// Watts with an SI prefix, e.g. `88.1 kW`.
fn watts(w: f64) -> String {
    si(w, "W")
}

fn si(v: f64, unit: &str) -> String {
    let a = v.abs();
    let (scale, prefix) = if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else if a >= 1.0 || a == 0.0 {
        (1.0, "")
    } else if a >= 1e-3 {
        (1e-3, "m")
    } else {
        (1e-6, "u")
    };
    format!("{:.3} {prefix}{unit}", v / scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4() -> ChipPower {
        ChipPower::preset("tpuv4").expect("a preset")
    }

    #[test]
    fn the_breakdown_sums_to_the_total_and_idle_scales_with_time() {
        let a = Activity {
            chips: 4,
            seconds: 2.0,
            matrix_flops: 1e15,
            matrix_busy_s: 3.0,
            hbm_bytes: 1e12,
            onchip_bytes: 1e11,
            link_bytes: 1e10,
        };
        let e = v4().energy(&a);
        let b = e.energy_breakdown_j;
        assert!((b.total() - e.energy_j).abs() <= 1e-9 * e.energy_j);
        // By hand: idle 90 W x 2 s x 4 chips = 720 J; compute: 3 chip-seconds of streaming at
        // the matrix units' power; memory 1e12 x 31.2 pJ + 1e11 x 2.4 pJ = 31.2 + 0.24 J;
        // network 1e10 x 40 pJ = 0.4 J.
        assert!((b.idle - 720.0).abs() < 1e-9);
        assert!((b.compute - 3.0 * TPUV4_MATRIX_BUSY_W).abs() < 1e-9);
        // The matrix units cost their streaming time, not their useful FLOPs: the same time
        // with half the FLOPs (a tile half the array's width) costs the same.
        let half = v4().energy(&Activity {
            matrix_flops: 0.5e15,
            ..a
        });
        assert_eq!(half.energy_breakdown_j.compute, b.compute);
        assert!((b.memory - (31.2 + 1e11 * CMEM_PJ_PER_BYTE * 1e-12)).abs() < 1e-9);
        assert!((b.network - 0.4).abs() < 1e-12);
        // Average power: the total over 4 chips x 2 s.
        assert!((e.average_power_w - e.energy_j / 8.0).abs() < 1e-9);
        // Twice as long at the same activity: twice the idle energy, the rest unchanged.
        let long = v4().energy(&Activity { seconds: 4.0, ..a });
        assert!((long.energy_breakdown_j.idle - 2.0 * b.idle).abs() < 1e-9);
        assert_eq!(long.energy_breakdown_j.compute, b.compute);
        assert_eq!(long.energy_breakdown_j.memory, b.memory);
    }

    #[test]
    fn an_idle_machine_draws_table_4s_idle_power() {
        // Nothing done for 10 s on 64 chips: each chip draws Table 4's idle power, 90 W on v4 and
        // 123 W on v3.
        let a = Activity {
            chips: 64,
            seconds: 10.0,
            ..Default::default()
        };
        assert_eq!(v4().energy(&a).average_power_w, 90.0);
        let v3 = ChipPower::preset("tpuv3").expect("a preset");
        assert_eq!(v3.energy(&a).average_power_w, 123.0);
        assert_eq!(v3.energy(&a).energy_j, 123.0 * 64.0 * 10.0);
    }

    #[test]
    fn performance_per_watt_is_the_work_rate_over_the_machines_power() {
        // 100 units/s on 2 idle chips of 90 W: 100 / 180 per watt.
        let a = Activity {
            chips: 2,
            seconds: 1.0,
            ..Default::default()
        };
        let o = EnergyOutput::new(&v4(), &a, Some((100.0, "units/s per W"))).unwrap();
        assert!((o.perf_per_watt.unwrap() - 100.0 / 180.0).abs() < 1e-12);
        assert_eq!(si(88_100.0, "W"), "88.100 kW");
        assert_eq!(si(0.0, "J"), "0.000 J");
    }
}
