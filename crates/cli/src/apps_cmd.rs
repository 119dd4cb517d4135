//! `podsim apps`: the eight production applications of the TPU v4 paper on TPU v4 and TPU v3
//! slices of the same size (Figs. 12 and 13), predicted from the chips' mechanisms
//! (`podsim_tpu::outputs::compare`); `podsim dlrm` (a DLRM step on a TPU slice) and `podsim
//! schedule` (Table 2's slice mix on a pod).

use std::process::ExitCode;

use clap::Args;
use podsim_tpu::outputs::{AppsOutput, DlrmOutput, ScheduleOutput};

use crate::Failure;
use crate::args::{listed, print};

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
    #[arg(long, value_name = "ON|OFF", default_value = "on", value_parser = listed(["on", "off"]))]
    cmem: String,
    /// Only this application: CNN0, CNN1, RNN0, RNN1, BERT0, BERT1, DLRM0 or DLRM1 (any case)
    /// [default: all eight and their geometric mean].
    #[arg(
        long,
        value_name = "NAME",
        value_parser = listed([
            "CNN0", "CNN1", "RNN0", "RNN1", "BERT0", "BERT1", "DLRM0", "DLRM1",
        ]),
    )]
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

/// The arguments of `podsim dlrm`.
#[derive(Args)]
pub struct DlrmArgs {
    /// The slice: tpuv4:slice=AxBxC[:twisted] or tpuv3:AxB (a 2-D slice of TPU v3 chips, 4
    /// links at 70 GB/s, a mesh along sides shorter than 32).
    #[arg(long, value_name = "SPEC")]
    system: String,
    /// Where the embedding tables live: sparsecore (sharded over the chips' HBM, served by the
    /// SparseCores) or host (CPU host memory, 4 TPU v4 or 8 TPU v3 chips per host).
    #[arg(
        long,
        value_name = "WHERE",
        default_value = "sparsecore",
        value_parser = listed(["sparsecore", "host"]),
    )]
    embeddings: String,
    /// Print one JSON object (keys: step_time_s, embedding_time_s, all_to_all_time_s,
    /// dense_time_s, and more).
    #[arg(long)]
    json: bool,
}

/// Run `podsim dlrm`.
pub fn dlrm_cmd(a: &DlrmArgs) -> Result<ExitCode, Failure> {
    let out = podsim_tpu::outputs::dlrm(&a.system, &a.embeddings)?;
    print(a.json, &out, DlrmOutput::text)
}

/// The arguments of `podsim schedule`.
#[derive(Args)]
pub struct ScheduleArgs {
    /// The slice mix: table2 (Table 2 of tpu-v4-isca2023.txt, each listed slice in proportion
    /// to its share).
    #[arg(long, value_name = "MIX", value_parser = listed(["table2"]))]
    mix: String,
    /// Simulated hours (at most 100,000).
    #[arg(long, value_name = "H")]
    hours: f64,
    /// Fraction of time each CPU host is up (mean repair 2 h, an assumption).
    #[arg(long, value_name = "A", default_value_t = 0.995)]
    host_availability: f64,
    /// Offered load: arriving chip-hours over the pod's chip-hours (jobs of mean 4 h, an
    /// assumption).
    #[arg(long, value_name = "L", default_value_t = 0.8)]
    load: f64,
    /// Seed of the arrival, size, length and host-failure streams.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Print one JSON object (keys: utilization, usable_fraction, mean_wait_hours and
    /// mean_wait_large_hours (null when no such job started), arrived, started, completed, interrupted, waiting_at_end, shares).
    #[arg(long)]
    json: bool,
}

/// Run `podsim schedule`.
pub fn schedule_cmd(a: &ScheduleArgs) -> Result<ExitCode, Failure> {
    let asked = podsim_tpu::schedule::Schedule {
        hours: a.hours,
        host_availability: a.host_availability,
        load: a.load,
        seed: a.seed,
    };
    let out = podsim_tpu::outputs::schedule(&a.mix, asked)?;
    print(a.json, &out, ScheduleOutput::text)
}
