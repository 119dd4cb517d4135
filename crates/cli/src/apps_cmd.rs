//! `podsim apps`: the eight production applications of the TPU v4 paper on TPU v4 and TPU v3
//! slices of the same size (Figs. 12 and 13), predicted from the chips' mechanisms.

use std::process::ExitCode;

use clap::Args;
use podsim_report::render;
use podsim_tpu::apps::{self, App};
use podsim_units::Bytes;
use serde_json::json;

use crate::Failure;
use crate::args::flag_err;

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
    let cmem = match a.cmem.as_str() {
        "on" => true,
        "off" => false,
        other => return Err(flag_err("--cmem", format!("`{other}` is not on or off"))),
    };
    let list = match &a.app {
        None => App::all(),
        Some(n) => vec![App::named(n).ok_or_else(|| {
            flag_err(
                "--app",
                format!(
                    "`{n}` is not an application ({})",
                    apps::APP_NAMES.join(", ")
                ),
            )
        })?],
    };
    apps::slices(a.chips).map_err(|e| flag_err("--chips", e))?;
    let need = apps::memory_estimate(a.chips).map_err(|e| flag_err("--chips", e))?;
    let limit = crate::memory_limit();
    if need > u128::from(limit) {
        return Err(Failure::runtime(format!(
            "<command line>: the flow model of {} chips needs about {}, more than the memory limit of {} (--memory-limit)",
            a.chips,
            Bytes(u64::try_from(need).unwrap_or(u64::MAX)),
            Bytes(limit)
        )));
    }
    let r = apps::compare(a.chips, cmem, &list).map_err(Failure::runtime)?;
    let sources: Vec<&str> = list.iter().map(|x| x.source).collect();
    if a.json {
        let rows: Vec<serde_json::Value> = r
            .apps
            .iter()
            .zip(&sources)
            .map(|(x, src)| {
                json!({
                    "name": x.name,
                    "model": x.model,
                    "batch_per_chip": x.batch_per_chip,
                    "weights": x.weights,
                    "v4_step_time_s": x.v4.step_time_s,
                    "v4_cmem_on_step_time_s": x.v4_cmem_on.step_time_s,
                    "v4_cmem_off_step_time_s": x.v4_cmem_off.step_time_s,
                    "v3_step_time_s": x.v3.step_time_s,
                    "speedup": x.speedup(),
                    "cmem_gain": x.cmem_gain(),
                    "v4_exposed_communication_s": x.v4.exposed_communication_s,
                    "v3_exposed_communication_s": x.v3.exposed_communication_s,
                    "source": src,
                })
            })
            .collect();
        outln!(
            "{}",
            json!({
                "chips": r.chips,
                "v4_system": r.v4_system,
                "v3_system": r.v3_system,
                "cmem": a.cmem,
                "apps": rows,
                "geomean_speedup": r.geomean_speedup(),
                "geomean_cmem_gain": r.geomean_cmem_gain(),
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "TPU v4 ({}, CMEM {}) vs TPU v3 ({}), {} chips each, data-parallel training steps",
        r.v4_system,
        a.cmem,
        r.v3_system,
        r.chips
    );
    let ms = |s: f64| format!("{:.3} ms", s * 1e3);
    let mut rows = vec![(
        "app".to_string(),
        vec![
            "stand-in".to_string(),
            "batch/chip".into(),
            "weights".into(),
            "v4 step".into(),
            "v3 step".into(),
            "v4/v3".into(),
            "CMEM on/off".into(),
        ],
    )];
    for x in &r.apps {
        rows.push((
            x.name.to_string(),
            vec![
                x.model.to_string(),
                x.batch_per_chip.to_string(),
                format!("{:.1}M", x.weights / 1e6),
                ms(x.v4.step_time_s),
                ms(x.v3.step_time_s),
                format!("{:.2}x", x.speedup()),
                format!("{:.2}x", x.cmem_gain()),
            ],
        ));
    }
    if r.apps.len() > 1 {
        rows.push((
            "geomean".into(),
            vec![
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                format!("{:.2}x", r.geomean_speedup()),
                format!("{:.2}x", r.geomean_cmem_gain()),
            ],
        ));
    }
    out!("{}", render(&rows));
    outln!("sources (public models standing in for the paper's internal ones):");
    for (x, src) in r.apps.iter().zip(&sources) {
        outln!("  {}: {}", x.name, src);
    }
    Ok(ExitCode::SUCCESS)
}
