//! `podsim apps`: the eight production applications of the TPU v4 paper on TPU v4 and TPU v3
//! slices of the same size (Figs. 12 and 13), predicted from the chips' mechanisms
//! (`podsim_tpu::outputs::compare`); `podsim dlrm` (a DLRM step on a TPU slice) and `podsim
//! schedule` (Table 2's slice mix on a pod).

use std::process::ExitCode;

use clap::Args;
use podsim_report::render;
use podsim_tpu::outputs::AppsOutput;
use serde_json::json;

use crate::Failure;
use crate::args::{flag_err, print};

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

/// The arguments of `podsim dlrm`.
#[derive(Args)]
pub struct DlrmArgs {
    /// The slice: tpuv4:slice=AxBxC[:twisted] or tpuv3:AxB (a 2-D slice of TPU v3 chips, 4
    /// links at 70 GB/s, a mesh along sides shorter than 32).
    #[arg(long, value_name = "SPEC")]
    system: String,
    /// Where the embedding tables live: sparsecore (sharded over the chips' HBM, served by the
    /// SparseCores) or host (CPU host memory, 4 TPU v4 or 8 TPU v3 chips per host).
    #[arg(long, value_name = "WHERE", default_value = "sparsecore")]
    embeddings: String,
    /// Print one JSON object (keys: step_time_s, embedding_time_s, all_to_all_time_s,
    /// dense_time_s, and more).
    #[arg(long)]
    json: bool,
}

/// Run `podsim dlrm`.
pub fn dlrm_cmd(a: &DlrmArgs) -> Result<ExitCode, Failure> {
    use podsim_tpu::dlrm;
    let placement = dlrm::Placement::parse(&a.embeddings).ok_or_else(|| {
        flag_err(
            "--embeddings",
            format!("`{}` is not sparsecore or host", a.embeddings),
        )
    })?;
    let (net, generation) = dlrm::system(&a.system).map_err(|e| flag_err("--system", e))?;
    let model = dlrm::Dlrm::fig8();
    let r = dlrm::step(&model, &net, generation, placement).map_err(Failure::runtime)?;
    if a.json {
        outln!(
            "{}",
            json!({
                "model": model.name,
                "system": a.system,
                "chip": generation.chip.name,
                "chips": r.chips,
                "embeddings": a.embeddings,
                "step_time_s": r.step_time_s,
                "embedding_time_s": r.embedding_time_s,
                "all_to_all_time_s": r.all_to_all_time_s,
                "lookup_time_s": r.lookup_time_s,
                "dense_time_s": r.dense_time_s,
                "throughput_examples_per_s": r.throughput_examples_per_s,
                "bisection_bandwidth_bytes_per_s": r.bisection_bytes_per_s,
                "bound": if r.embedding_time_s >= r.dense_time_s { "embeddings" } else { "dense" },
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let ms = |s: f64| format!("{:.3} ms", s * 1e3);
    outln!(
        "{} on {} ({} chips of {}), embeddings on {}",
        model.name,
        a.system,
        r.chips,
        generation.chip.name,
        a.embeddings
    );
    let rows = vec![
        (
            "model".to_string(),
            vec![format!(
                "{:.0}M dense weights, {} features into {} tables of width {}, valency {}, {} examples per chip",
                model.dense_params / 1e6,
                model.features,
                model.tables,
                model.dim,
                model.valency,
                model.batch_per_chip
            )],
        ),
        ("step time".into(), vec![ms(r.step_time_s)]),
        (
            "  embeddings".into(),
            vec![format!(
                "{} (lookups and updates {}, all-to-all {})",
                ms(r.embedding_time_s),
                ms(r.lookup_time_s),
                ms(r.all_to_all_time_s)
            )],
        ),
        ("  dense".into(), vec![ms(r.dense_time_s)]),
        (
            "throughput".into(),
            vec![format!("{:.0} examples/s", r.throughput_examples_per_s)],
        ),
        (
            "bisection".into(),
            vec![format!("{:.1} TB/s", r.bisection_bytes_per_s / 1e12)],
        ),
    ];
    out!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `podsim schedule`.
#[derive(Args)]
pub struct ScheduleArgs {
    /// The slice mix: table2 (Table 2 of tpu-v4-isca2023.txt, each listed slice in proportion
    /// to its share).
    #[arg(long, value_name = "MIX")]
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
    use podsim_tpu::schedule::{Mix, Schedule, run};
    let mix = Mix::named(&a.mix)
        .ok_or_else(|| flag_err("--mix", format!("`{}` is not a mix (mixes: table2)", a.mix)))?;
    let s = Schedule {
        hours: a.hours,
        host_availability: a.host_availability,
        load: a.load,
        seed: a.seed,
    };
    let r = run(&mix, &s).map_err(|e| Failure::usage(format!("<command line>: {e}")))?;
    let sh = mix.shares();
    if a.json {
        outln!(
            "{}",
            json!({
                "mix": mix.name,
                "hours": a.hours,
                "host_availability": a.host_availability,
                "load": a.load,
                "seed": a.seed,
                "utilization": r.utilization,
                "usable_fraction": r.usable_fraction,
                "mean_wait_hours": r.mean_wait_hours,
                "mean_wait_large_hours": r.mean_wait_large_hours,
                "arrived": r.arrived,
                "started": r.started,
                "completed": r.completed,
                "interrupted": r.interrupted,
                "waiting_at_end": r.waiting_at_end,
                "shares": {
                    "below_block": sh.below_block,
                    "twistable": sh.twistable,
                    "twisted": sh.twisted,
                    "twisted_of_block_or_more": sh.twisted_of_block_or_more,
                },
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "slice mix {} on a TPU v4 pod (64 blocks of 4x4x4, OCS), {} hours, host availability {}, offered load {}, seed {}",
        mix.name,
        a.hours,
        a.host_availability,
        a.load,
        a.seed
    );
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let rows = vec![
        (
            "shares (section 2.9)".to_string(),
            vec![format!(
                "{} below a 4^3 block, {} twistable, {} twisted, {} of block-or-larger slices twisted",
                pct(sh.below_block),
                pct(sh.twistable),
                pct(sh.twisted),
                pct(sh.twisted_of_block_or_more)
            )],
        ),
        ("utilization".into(), vec![pct(r.utilization)]),
        (
            "usable blocks".into(),
            vec![format!("{} of block-hours", pct(r.usable_fraction))],
        ),
        (
            "mean wait".into(),
            vec![match (r.mean_wait_hours, r.mean_wait_large_hours) {
                (Some(all), Some(large)) => {
                    format!("{all:.3} h ({large:.3} h for slices of a block or more)")
                }
                (Some(all), None) => {
                    format!("{all:.3} h (no slice of a block or more started)")
                }
                (None, _) => format!(
                    "- (no job started; {} waiting at the end)",
                    r.waiting_at_end
                ),
            }],
        ),
        (
            "jobs".into(),
            vec![format!(
                "{} arrived, {} started, {} completed, {} stopped by host failures, {} waiting at the end",
                r.arrived, r.started, r.completed, r.interrupted, r.waiting_at_end
            )],
        ),
    ];
    out!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}
