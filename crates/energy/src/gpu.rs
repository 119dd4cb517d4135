//! The A100's power figures (tpu-v4-isca2023.txt Table 6 compares it with TPU v4 on MLPerf).

use crate::{ChipPower, HBM2_PJ_PER_BYTE, ICI_PJ_PER_BYTE};

/// The A100's static power while powered, watts: an assumption. Neither the seeds nor NVIDIA's
/// datasheet give an idle figure; TPU v4's measured 90 W (Table 4), a chip of the same 7 nm
/// generation with HBM of the same kind, is taken for it.
pub const A100_IDLE_W: f64 = 90.0;

/// The A100's tensor cores' power while they stream, watts: calibrated. Fitted once so that
/// MLPerf BERT on 64 A100s (`podsim_tpu::mlperf::run_a100`, eight nodes of
/// examples/machines/dgx-a100.toml) draws Table 6's 380 W a chip: with the other figures
/// fixed the power is linear in this one, 107.74 W (idle and the memory and links' energy) +
/// P x 0.6071 (the share of the step the tensor cores stream, at the machine file's fitted
/// kernel efficiencies) = 380 W gives P = 448.5 W. Fully busy, 90 + 448.5 W would exceed the
/// A100's 400 W limit, which GPU software enforces by
/// lowering the clock (section 7.2's 1280 MHz on BERT): podsim models that cap only as the
/// clock a run states (`podsim_tpu::mlperf::A100_BERT_CLOCK_HZ`), and refuses a run whose
/// mean power comes out above [`A100_TDP_W`] ([`crate::ChipPower::check`]).
pub const A100_MATRIX_BUSY_W: f64 = 448.5;

/// GPU power figures, each with its source.
pub const GPU_POWER: [ChipPower; 1] = [ChipPower {
    chip: "a100",
    idle_w: A100_IDLE_W,
    matrix_busy_w: A100_MATRIX_BUSY_W,
    hbm_pj_per_byte: HBM2_PJ_PER_BYTE,
    onchip_pj_per_byte: 0.0,
    link_pj_per_byte: ICI_PJ_PER_BYTE,
    source: "idle 90 W: an assumption (TPU v4's Table 4 idle, no A100 figure published); HBM2e at HBM2's 3.9 pJ/bit (O'Connor et al. MICRO 2017; an assumption for HBM2e); NVLink and InfiniBand at 5 pJ/bit (an assumption, as ICI)",
    calibrated: "matrix_busy_w: fitted so that MLPerf BERT on 64 A100s draws Table 6's 380 W a chip",
    limit_w: Some(A100_TDP_W),
}];

/// The A100 SXM's maximum thermal design power, watts (NVIDIA A100 datasheet: 400 W).
pub const A100_TDP_W: f64 = 400.0;

#[cfg(test)]
mod tests {
    use crate::{Activity, ChipPower};

    #[test]
    fn a100_runs_above_its_tdp_are_refused() {
        let p = ChipPower::preset("a100").unwrap();
        // One chip for a second, tensor cores streaming 60% of it: 90 W + 0.6 x 448.5 W =
        // 359.1 W, under 400 W; streaming all of it: 538.5 W, over.
        let at = |busy: f64| {
            p.energy(&Activity {
                chips: 1,
                seconds: 1.0,
                matrix_busy_s: busy,
                ..Default::default()
            })
        };
        let under = at(0.6);
        assert!((under.average_power_w - 359.1).abs() < 1e-9);
        assert!(p.check(&under).is_ok());
        let why = p.check(&at(1.0)).unwrap_err();
        assert!(why.contains("538.5 W") && why.contains("400 W"), "{why}");
    }
}
