//! What `podsim availability`, `podsim apps`, `podsim dlrm` and `podsim schedule` report: requests in a user's terms checked
//! (each refusal naming its flag) and run, results as JSON (serde) and text, and Fig. 4's
//! goodput curves as an SVG.

use std::path::Path;

use podsim_report::render;
use podsim_units::Bytes;

use crate::apps::{self, App};
use crate::availability::{Availability, AvailabilityError};

pub use podsim_units::RequestError;

fn input(flag: &'static str, why: impl std::fmt::Display) -> RequestError {
    RequestError::input(flag, why)
}

/// The most Monte Carlo trials [`availability`] runs: 10^7 pods of 1,024 hosts is about 20 s;
/// more would only narrow an error the closed form does not have.
pub const MAX_TRIALS: u64 = 10_000_000;

/// A pod's goodput as `podsim availability --json` prints it: the question, the Monte Carlo
/// answer and the closed form's.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct AvailabilityOutput {
    /// Chips per slice.
    pub slice_chips: u64,
    /// Probability that a host is up.
    pub host_availability: f64,
    /// Static wiring instead of OCS.
    #[serde(rename = "static")]
    pub static_wiring: bool,
    /// Monte Carlo trials.
    pub trials: u64,
    /// Seed of the host-failure stream.
    pub seed: u64,
    /// Monte Carlo goodput.
    pub goodput: f64,
    /// Monte Carlo slices running.
    pub slices: f64,
    /// Monte Carlo probability that a slice can be scheduled.
    pub p_schedulable: f64,
    /// Closed-form goodput.
    pub exact_goodput: f64,
    /// Closed-form slices running.
    pub exact_slices: f64,
    /// Closed-form probability that a slice can be scheduled.
    pub exact_p_schedulable: f64,
}

/// `q`'s goodput, exact and by `trials` Monte Carlo pods from `seed`.
pub fn availability(
    q: Availability,
    trials: u64,
    seed: u64,
) -> Result<AvailabilityOutput, RequestError> {
    let bad = |e: AvailabilityError| {
        let flag = match e {
            AvailabilityError::Probability(_) => "--host-availability",
            AvailabilityError::Size { .. } => "--slice-chips",
        };
        input(flag, e)
    };
    if trials == 0 || trials > MAX_TRIALS {
        return Err(input(
            "--trials",
            format!(
                "{trials}: expected 1 to {MAX_TRIALS} trials (each draws 1,024 hosts; the closed form is exact)"
            ),
        ));
    }
    let exact = q.exact().map_err(bad)?;
    let m = q.monte_carlo(trials, seed).map_err(bad)?;
    Ok(AvailabilityOutput {
        slice_chips: q.slice_chips,
        host_availability: q.host_availability,
        static_wiring: q.static_wiring,
        trials,
        seed,
        goodput: m.goodput,
        slices: m.slices,
        p_schedulable: m.p_schedulable,
        exact_goodput: exact.goodput,
        exact_slices: exact.slices,
        exact_p_schedulable: exact.p_schedulable,
    })
}

impl AvailabilityOutput {
    /// The text `podsim availability` prints.
    pub fn text(&self) -> String {
        let row = |k: &str, v: String| (k.to_string(), vec![v]);
        render(&[
            row(
                "pod",
                format!(
                    "4096 chips, {} hosts each up with probability {}, {}",
                    1024,
                    self.host_availability,
                    if self.static_wiring {
                        "static wiring"
                    } else {
                        "OCS"
                    }
                ),
            ),
            row("slice", format!("{} chips", self.slice_chips)),
            row(
                "goodput",
                format!(
                    "{:.2}% (Monte Carlo, {} trials, seed {}); exact {:.2}%",
                    100.0 * self.goodput,
                    self.trials,
                    self.seed,
                    100.0 * self.exact_goodput
                ),
            ),
            row(
                "slices running",
                format!("{:.3} (exact {:.3})", self.slices, self.exact_slices),
            ),
            row(
                "p(schedulable)",
                format!(
                    "{:.4} (exact {:.4})",
                    self.p_schedulable, self.exact_p_schedulable
                ),
            ),
        ])
    }
}

/// Draw goodput against slice size for 99.0%, 99.5% and 99.9% host availability, with and
/// without OCS (tpu-v4-isca2023.txt Fig. 4), as an SVG at `path`.
pub fn goodput_svg(path: &Path) -> Result<(), podsim_report::ReportError> {
    let mut series = Vec::new();
    for static_wiring in [false, true] {
        for avail in [0.99, 0.995, 0.999] {
            let sizes: &[u64] = if static_wiring {
                &[64, 128, 256, 512, 1024, 2048, 4096]
            } else {
                &[64, 128, 256, 512, 1024, 2048, 3072, 4096]
            };
            let points = sizes
                .iter()
                .filter_map(|&n| {
                    let g = Availability {
                        slice_chips: n,
                        host_availability: avail,
                        static_wiring,
                    }
                    .exact()
                    .ok()?;
                    Some((n as f64, 100.0 * g.goodput))
                })
                .collect();
            series.push(podsim_report::Series {
                name: format!(
                    "{:.1}% hosts up, {}",
                    avail * 100.0,
                    if static_wiring { "static" } else { "OCS" }
                ),
                points,
                second: static_wiring,
            });
        }
    }
    podsim_report::lines_svg(
        path,
        "TPU v4 pod goodput vs slice size (Fig. 4)",
        "chips per slice",
        "goodput (% of the pod's chips)",
        &series,
        100.0,
    )
}

/// The comparison as `podsim apps --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AppsOutput {
    /// Chips per slice.
    pub chips: u64,
    /// The TPU v4 slice.
    pub v4_system: String,
    /// The TPU v3 slice.
    pub v3_system: String,
    /// CMEM of the v4 column: `on` or `off`.
    pub cmem: &'static str,
    /// Each application.
    pub apps: Vec<AppOutput>,
    /// Geometric mean of v4 over v3.
    pub geomean_speedup: f64,
    /// Geometric mean of CMEM on over off.
    pub geomean_cmem_gain: f64,
}

/// One application on both slices, in [`AppsOutput`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AppOutput {
    /// The paper's name.
    pub name: &'static str,
    /// The public model standing in for it.
    pub model: &'static str,
    /// Examples per chip.
    pub batch_per_chip: u64,
    /// Trained (dense) weights.
    pub weights: f64,
    /// Seconds per step on TPU v4, CMEM as asked.
    pub v4_step_time_s: f64,
    /// Seconds per step on TPU v4, CMEM on.
    pub v4_cmem_on_step_time_s: f64,
    /// Seconds per step on TPU v4, CMEM off.
    pub v4_cmem_off_step_time_s: f64,
    /// Seconds per step on TPU v3.
    pub v3_step_time_s: f64,
    /// v4 over v3.
    pub speedup: f64,
    /// CMEM on over off.
    pub cmem_gain: f64,
    /// Communication no overlap hid on v4, seconds.
    pub v4_exposed_communication_s: Option<f64>,
    /// Communication no overlap hid on v3, seconds.
    pub v3_exposed_communication_s: Option<f64>,
    /// The public model's source.
    pub source: &'static str,
}

/// The applications (`app`, any case; all eight if `None`) on `chips`-chip slices of TPU v4,
/// CMEM `on` or `off`, and TPU v3, refused if the flow model would need more than
/// `memory_limit` bytes.
pub fn compare(
    chips: u64,
    cmem: &str,
    app: Option<&str>,
    memory_limit: u64,
) -> Result<AppsOutput, RequestError> {
    let (cmem, on) = match cmem {
        "on" => ("on", true),
        "off" => ("off", false),
        other => return Err(input("--cmem", format!("`{other}` is not on or off"))),
    };
    let list = match app {
        None => App::all(),
        Some(n) => vec![App::named(n).ok_or_else(|| {
            input(
                "--app",
                format!(
                    "`{n}` is not an application ({})",
                    apps::APP_NAMES.join(", ")
                ),
            )
        })?],
    };
    apps::slices(chips).map_err(|e| input("--chips", e))?;
    let need = apps::memory_estimate(chips).map_err(|e| input("--chips", e))?;
    if need > u128::from(memory_limit) {
        return Err(RequestError::Memory(format!(
            "the flow model of {chips} chips needs about {}, more than the memory limit of {} (--memory-limit)",
            Bytes(u64::try_from(need).unwrap_or(u64::MAX)),
            Bytes(memory_limit)
        )));
    }
    let r = apps::compare(chips, on, &list).map_err(RequestError::Run)?;
    let apps = r
        .apps
        .iter()
        .zip(&list)
        .map(|(x, a)| AppOutput {
            name: x.name,
            model: x.model,
            batch_per_chip: x.batch_per_chip,
            weights: x.weights,
            v4_step_time_s: x.v4.step_time_s,
            v4_cmem_on_step_time_s: x.v4_cmem_on.step_time_s,
            v4_cmem_off_step_time_s: x.v4_cmem_off.step_time_s,
            v3_step_time_s: x.v3.step_time_s,
            speedup: x.speedup(),
            cmem_gain: x.cmem_gain(),
            v4_exposed_communication_s: x.v4.exposed_communication_s,
            v3_exposed_communication_s: x.v3.exposed_communication_s,
            source: a.source,
        })
        .collect();
    Ok(AppsOutput {
        chips: r.chips,
        geomean_speedup: r.geomean_speedup(),
        geomean_cmem_gain: r.geomean_cmem_gain(),
        v4_system: r.v4_system,
        v3_system: r.v3_system,
        cmem,
        apps,
    })
}

impl AppsOutput {
    /// The text `podsim apps` prints: the slices, a row an application (and their geometric
    /// mean), the models' sources.
    pub fn text(&self) -> String {
        let mut out = format!(
            "TPU v4 ({}, CMEM {}) vs TPU v3 ({}), {} chips each, data-parallel training steps\n",
            self.v4_system, self.cmem, self.v3_system, self.chips
        );
        let ms = |s: f64| format!("{:.3} ms", s * 1e3);
        let mut rows = vec![(
            "app".to_string(),
            [
                "stand-in",
                "batch/chip",
                "weights",
                "v4 step",
                "v3 step",
                "v4/v3",
                "CMEM on/off",
            ]
            .map(String::from)
            .to_vec(),
        )];
        for x in &self.apps {
            rows.push((
                x.name.to_string(),
                vec![
                    x.model.to_string(),
                    x.batch_per_chip.to_string(),
                    format!("{:.1}M", x.weights / 1e6),
                    ms(x.v4_step_time_s),
                    ms(x.v3_step_time_s),
                    format!("{:.2}x", x.speedup),
                    format!("{:.2}x", x.cmem_gain),
                ],
            ));
        }
        if self.apps.len() > 1 {
            let mut cells = vec![String::new(); 5];
            cells.push(format!("{:.2}x", self.geomean_speedup));
            cells.push(format!("{:.2}x", self.geomean_cmem_gain));
            rows.push(("geomean".into(), cells));
        }
        out.push_str(&render(&rows));
        out.push_str("sources (public models standing in for the paper's internal ones):\n");
        for x in &self.apps {
            out.push_str(&format!("  {}: {}\n", x.name, x.source));
        }
        out
    }
}

/// What `podsim dlrm` prints: a DLRM step of Fig. 8's model on a slice.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DlrmOutput {
    /// The model's name.
    pub model: &'static str,
    /// The slice as given.
    pub system: String,
    /// The chip preset.
    pub chip: &'static str,
    /// Where the embedding tables live, as given.
    pub embeddings: String,
    /// The step.
    #[serde(flatten)]
    pub step: crate::dlrm::DlrmReport,
    /// Which part binds the step: `embeddings` or `dense`.
    pub bound: &'static str,
    /// The model, for the text.
    #[serde(skip)]
    pub dlrm: crate::dlrm::Dlrm,
}

/// A DLRM step of Fig. 8's model on `system` (`tpuv4:slice=...` or `tpuv3:AxB`), its
/// embeddings on `embeddings` (`sparsecore` or `host`).
pub fn dlrm(system: &str, embeddings: &str) -> Result<DlrmOutput, RequestError> {
    use crate::dlrm;
    let placement = dlrm::Placement::parse(embeddings).ok_or_else(|| {
        input(
            "--embeddings",
            format!("`{embeddings}` is not sparsecore or host"),
        )
    })?;
    let (net, generation) = dlrm::system(system).map_err(|e| input("--system", e))?;
    let model = dlrm::Dlrm::fig8();
    let step = dlrm::step(&model, &net, generation, placement)
        .map_err(|e| RequestError::Run(e.to_string()))?;
    Ok(DlrmOutput {
        model: model.name,
        system: system.to_string(),
        chip: generation.chip.name,
        embeddings: embeddings.to_string(),
        bound: if step.embedding_time_s >= step.dense_time_s {
            "embeddings"
        } else {
            "dense"
        },
        step,
        dlrm: model,
    })
}

impl DlrmOutput {
    /// The text `podsim dlrm` prints.
    pub fn text(&self) -> String {
        let (m, r) = (&self.dlrm, &self.step);
        let ms = |s: f64| format!("{:.3} ms", s * 1e3);
        let head = format!(
            "{} on {} ({} chips of {}), embeddings on {}\n",
            m.name, self.system, r.chips, self.chip, self.embeddings
        );
        let rows = vec![
            (
                "model".to_string(),
                vec![format!(
                    "{:.0}M dense weights, {} features into {} tables of width {}, valency {}, {} examples per chip",
                    m.dense_params / 1e6,
                    m.features,
                    m.tables,
                    m.dim,
                    m.valency,
                    m.batch_per_chip
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
        head + &render(&rows)
    }
}

/// What `podsim schedule` prints: a slice mix scheduled on a TPU v4 pod.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScheduleOutput {
    /// The mix's name.
    pub mix: &'static str,
    /// What was asked.
    #[serde(flatten)]
    pub asked: crate::schedule::Schedule,
    /// What was measured.
    #[serde(flatten)]
    pub report: crate::schedule::ScheduleReport,
    /// The mix's shares (section 2.9).
    pub shares: crate::schedule::Shares,
}

/// The mix called `mix` (`table2`) scheduled as `asked` says.
pub fn schedule(
    mix: &str,
    asked: crate::schedule::Schedule,
) -> Result<ScheduleOutput, RequestError> {
    use crate::schedule::{Mix, run};
    let m = Mix::named(mix)
        .ok_or_else(|| input("--mix", format!("`{mix}` is not a mix (mixes: table2)")))?;
    let report = run(&m, &asked).map_err(|e| RequestError::Invalid(e.to_string()))?;
    Ok(ScheduleOutput {
        mix: m.name,
        asked,
        report,
        shares: m.shares(),
    })
}

impl ScheduleOutput {
    /// The text `podsim schedule` prints.
    pub fn text(&self) -> String {
        let (a, r, sh) = (&self.asked, &self.report, &self.shares);
        let head = format!(
            "slice mix {} on a TPU v4 pod (64 blocks of 4x4x4, OCS), {} hours, host availability {}, offered load {}, seed {}\n",
            self.mix, a.hours, a.host_availability, a.load, a.seed
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
        head + &render(&rows)
    }
}
