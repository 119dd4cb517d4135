//! `--energy` for the DRAM study and the DRAM-bound matmul: what a run did as an
//! [`Activity`] (its seconds, the bytes through DRAM, bytes times NoC links crossed, the Tensix
//! cores' compute) and its energy on the chip's figures
//! ([`podsim_system::energy::tenstorrent`], each with its source), refused where the chip has
//! no figures or a figure would break an invariant (not finite, negative, a mean power above
//! the board's TBP).
//!
//! Compute is charged by the time the cores stream, as TPU v4's matrix units are: the chip's
//! FPU power is that of all its Tensix cores (72 on an n150), so a core's second of compute is
//! 1/72 of a chip-second at that power. The matmul's twelve compute kernels (one a bank) can
//! keep at most a sixth of the chip's FPUs busy.

use podsim_system::energy::tenstorrent::BoardPower;
use podsim_system::energy::{Activity, ChipPower, EnergyOutput};
use podsim_topology::TtChip;

use crate::TtError;
use crate::dram::FLIT_BYTES;
use crate::matmul::MatmulOutput;
use crate::study::{Study, StudyRun};

/// Tensix cores of an n150's Wormhole, whose FPUs together draw the chip's FPU power
/// (docs.tenstorrent.com/aibs/wormhole/specifications.html: 72 cores; the matmul's
/// per-core rate is the chip's peak over them).
pub const N150_TENSIX_CORES: f64 = 72.0;

/// The chip preset name of `chip` (`wormhole`, `grayskull`).
pub fn chip_name(chip: TtChip) -> &'static str {
    match chip {
        TtChip::Wormhole => "wormhole",
        TtChip::Grayskull => "grayskull",
    }
}

/// The power figures and board limit of chip preset `chip`, or why there are none.
pub fn power(chip: &str) -> Result<(ChipPower, BoardPower), TtError> {
    match (ChipPower::preset(chip), BoardPower::preset(chip)) {
        (Some(p), Some(b)) => Ok((p, b)),
        _ => Err(TtError::NoPowerFigures(chip.to_string())),
    }
}

/// The energy of `a` on chip preset `chip`, with `work_per_s` (a throughput and its unit per
/// watt) for the performance per watt; refused if any figure breaks an invariant.
pub fn energy(
    chip: &str,
    a: &Activity,
    work_per_s: Option<(f64, &'static str)>,
) -> Result<EnergyOutput, TtError> {
    let (p, board) = power(chip)?;
    board
        .check(&p.energy(a))
        .map_err(|why| TtError::Energy(format!("{chip}: {why}")))?;
    let out = EnergyOutput::new(&p, a, work_per_s)
        .map_err(|why| TtError::Energy(format!("{chip}: {why}")))?;
    match out.perf_per_watt {
        Some(v) if !v.is_finite() || v < 0.0 => Err(TtError::Energy(format!(
            "{chip}: perf_per_watt = {v}: not a finite, non-negative figure"
        ))),
        _ => Ok(out),
    }
}

/// A chip's mean power at full load, watts: every Tensix core streaming, the DRAM delivering
/// its spec (banks x `data_rate` x 2 bytes) and each byte crossing one NoC hop
/// ([`podsim_system::energy::tenstorrent::full_load`], the point Wormhole's FPU power is
/// fitted to).
pub fn full_load_power_w(chip: TtChip, data_rate: f64) -> Result<f64, TtError> {
    let s = Study {
        chip,
        ..Study::u_benchmark(data_rate)
    };
    let spec = s.spec_bytes_per_s(s.grid()?.dram_banks());
    let (p, _) = power(chip_name(chip))?;
    Ok(
        p.energy(&podsim_system::energy::tenstorrent::full_load(spec))
            .average_power_w,
    )
}

/// What a DRAM study run did: its seconds (NoC cycles at the chip's clock), the bytes read from
/// DRAM and every link's flits (requests and data, headers included); no compute.
pub fn dram_activity(s: &Study, r: &StudyRun) -> Result<Activity, TtError> {
    let clock = s.grid()?.clock().as_hz() as f64;
    Ok(Activity {
        chips: 1,
        seconds: r.run.cycles as f64 / clock,
        hbm_bytes: r.run.bytes as f64,
        link_bytes: r.run.links.iter().map(|l| (l.2 * FLIT_BYTES) as f64).sum(),
        ..Default::default()
    })
}

/// The energy of a DRAM study run; performance per watt is its bandwidth per watt (bytes per
/// joule).
pub fn dram_energy(s: &Study, r: &StudyRun) -> Result<EnergyOutput, TtError> {
    let a = dram_activity(s, r)?;
    energy(
        chip_name(s.chip),
        &a,
        Some((r.run.bandwidth_bytes_per_s, "B/s per W (bytes per joule)")),
    )
}

/// What a matmul did: its time, in1's bytes from DRAM, its NoC link bytes and its cores'
/// compute as chip-seconds of the FPUs (core-seconds over the n150's 72 cores); the useful
/// FLOPs are 2 M K N.
pub fn matmul_activity(out: &MatmulOutput) -> Activity {
    Activity {
        chips: 1,
        seconds: out.time_s,
        matrix_flops: useful_flops(out),
        matrix_busy_s: out.core_compute_s / N150_TENSIX_CORES,
        hbm_bytes: out.in1_bytes as f64,
        link_bytes: out.noc_link_bytes,
        ..Default::default()
    }
}

/// 2 M K N, the matmul's useful FLOPs (padding not counted).
fn useful_flops(out: &MatmulOutput) -> f64 {
    2.0 * out.m as f64 * out.k as f64 * out.n as f64
}

/// The energy of a matmul; performance per watt is its useful FLOP/s per watt.
pub fn matmul_energy(out: &MatmulOutput) -> Result<EnergyOutput, TtError> {
    let a = matmul_activity(out);
    let flops_per_s = if out.time_s > 0.0 {
        useful_flops(out) / out.time_s
    } else {
        0.0
    };
    energy(
        out.chip,
        &a,
        Some((flops_per_s, "FLOP/s per W (FLOP per joule)")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study;

    /// The default `podsim dram` run (the u-benchmark at 12 GT/s: 12 readers x 8 blocks of
    /// 139,264 bytes = 13,369,344 bytes) by hand: its DRAM energy is 13,369,344 B x 7.5 pJ/bit
    /// x 8 = 0.80216064 mJ (Micron's GDDR6 figure), whatever the run's timing; idle is 19 W
    /// over its cycles at 1 GHz; no compute.
    #[test]
    fn the_default_dram_run_costs_its_bytes_at_gddr6s_energy() {
        let s = Study::u_benchmark(12e9);
        let r = study::run(&s).unwrap();
        let e = dram_energy(&s, &r).unwrap();
        let b = e.energy_breakdown_j;
        assert!((b.memory - 0.802_160_64e-3).abs() < 1e-12, "{b:?}");
        assert!((b.idle - 19.0 * r.run.cycles as f64 / 1e9).abs() < 1e-12);
        assert_eq!(b.compute, 0.0);
        // Every reader sits one hop from its bank (no overlapping routes): its data crosses at
        // least one link, so the NoC carried at least the bytes read, at 4 pJ a byte.
        assert!(b.network >= 13_369_344.0 * 4e-12);
        assert!((b.total() - e.energy_j).abs() <= 1e-12 * e.energy_j);
        // Bytes per joule: the bandwidth over the mean power.
        let ppw = e.perf_per_watt.unwrap();
        assert!((ppw - r.run.bandwidth_bytes_per_s / e.average_power_w).abs() < 1e-3 * ppw);
        assert!(e.average_power_w > 19.0 && e.average_power_w < 160.0);
    }

    /// The same study with twice the bytes per reader runs about twice as long: idle energy
    /// doubles (within the pipeline's fill), memory energy exactly doubles.
    #[test]
    fn a_run_twice_as_long_draws_twice_the_idle_energy() {
        let s = Study::u_benchmark(12e9);
        let long = Study {
            bytes_per_reader: 2 * s.bytes_per_reader,
            ..s.clone()
        };
        let e1 = dram_energy(&s, &study::run(&s).unwrap()).unwrap();
        let e2 = dram_energy(&long, &study::run(&long).unwrap()).unwrap();
        let (b1, b2) = (e1.energy_breakdown_j, e2.energy_breakdown_j);
        assert!((b2.memory - 2.0 * b1.memory).abs() < 1e-15);
        assert!((b2.idle / b1.idle - 2.0).abs() < 0.02, "{b1:?} {b2:?}");
    }

    #[test]
    fn a_chip_without_figures_is_named() {
        let e = power("blackhole").unwrap_err();
        assert!(e.to_string().contains("`blackhole`"), "{e}");
    }

    /// A matmul's compute: its cores' core-seconds over 72. Llama3-70B's FF1 shard (32 x 8192
    /// x 3584, BFP8) in blocks of 128 rows of K (64 blocks): 3584 columns make 112 tiles, 10 on
    /// each of 11 banks and 2 on the last; a 10-tile block is 2 x 32 x 128 x 320 = 2,621,440
    /// FLOPs at 262e12 / 72 = 3638.9 FLOP a cycle, 721 cycles (rounded up), a 2-tile block 145:
    /// (11 x 721 + 145) x 64 = 516,864 cycles, 516.864 core-us at 1 GHz; over 72 cores, 7.1787
    /// us of the whole chip's FPUs at 122.568 W: 0.87988 mJ.
    #[test]
    fn a_matmuls_compute_is_its_core_seconds_over_the_chip() {
        let mm = crate::matmul::Matmul::new(32, 8192, 3584, 12e9);
        let out = MatmulOutput::new(&mm, crate::matmul::run(&mm).unwrap());
        let a = matmul_activity(&out);
        assert!(
            (out.core_compute_s - 516.864e-6).abs() < 1e-12,
            "{}",
            out.core_compute_s
        );
        let e = matmul_energy(&out).unwrap();
        assert!(
            (e.energy_breakdown_j.compute - 0.87988e-3).abs() < 0.00001e-3,
            "{e:?}"
        );
        assert!(a.link_bytes >= out.in1_bytes as f64);
        assert!(e.average_power_w < 160.0);
    }
}
