//! `podsim apps`: the eight production applications of the TPU v4 paper on TPU v4 and TPU v3
//! slices of the same size (Figs. 12 and 13), predicted from the chips' mechanisms
//! (`podsim_tpu::outputs::compare`).

use std::process::ExitCode;

use clap::Args;
use podsim_tpu::outputs::AppsOutput;

use crate::Failure;
use crate::args::print;

/// The arguments of `podsim apps`.
#[derive(Args)]
pub struct AppsArgs {
    /// Chips per slice, the same on both generations: 64 (4x4x4 vs 8x8), 128 (4x4x8 twisted
    /// vs 8x16), 256 (4x8x8 twisted vs 16x16), 512 (8x8x8 vs 16x32) or 1024 (8x8x16 twisted vs
    /// 32x32) [count].
    #[arg(long, value_name = "N", default_value_t = 128)]
    chips: u64,
    /// CMEM (TPU v4's 128 MiB on-chip memory) for the v4 column: on or off, as Fig. 13 turns
    /// it off. The CMEM column is always on over off.
    #[arg(long, value_name = "ON|OFF", default_value = "on")]
    cmem: String,
    /// Only this application: CNN0, CNN1, RNN0, RNN1, BERT0, BERT1, DLRM0 or DLRM1 (any case)
    /// [default: all eight and their geometric mean].
    #[arg(long, value_name = "NAME")]
    app: Option<String>,
    /// Print one JSON object: chips, v4_system, v3_system, cmem, apps (each with name, model,
    /// batch_per_chip, weights, v4_step_time_s, v4_cmem_on_step_time_s,
    /// v4_cmem_off_step_time_s, v3_step_time_s,
    /// speedup, cmem_gain, v4_exposed_communication_s, v3_exposed_communication_s, source),
    /// geomean_speedup, geomean_cmem_gain.
    #[arg(long)]
    json: bool,
}

/// Run `podsim apps`.
pub fn apps_cmd(a: &AppsArgs) -> Result<ExitCode, Failure> {
    let out =
        podsim_tpu::outputs::compare(a.chips, &a.cmem, a.app.as_deref(), crate::memory_limit())?;
    print(a.json, &out, AppsOutput::text)
}
