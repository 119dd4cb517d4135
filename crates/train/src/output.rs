//! What `podsim train` runs and prints: a step of one configuration and the search, as typed
//! results (`--json` serializes them through `podsim_report::to_json`) with their text.

use podsim_collective::ModelKind;
use podsim_report::render;
use podsim_system::workload::ChipSpec;
use podsim_topology::Network;
use serde::Serialize;

use crate::{
    Config, FlowMemo, FlowRunner, Machine, Mapping, Sharding, StepReport, TrainError, Transformer,
    analytic, best_microbatches, measured, search_by,
};

/// Memory per chip in [`StepFigures`], bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryOutput {
    /// bf16 weights.
    pub weights_bytes: f64,
    /// bf16 gradient accumulators.
    pub gradients_bytes: f64,
    /// fp32 master weights and Adam's two moments (12 bytes a weight, split over every replica
    /// of the weight): `optimizer_parts` splits it.
    pub optimizer_bytes: f64,
    /// Activations kept for the backward pass.
    pub activations_bytes: f64,
    /// The working set of one layer.
    pub workspace_bytes: f64,
    /// `optimizer_bytes` by part (not added to the total again).
    pub optimizer_parts: OptimizerParts,
}

/// The optimizer state of mixed-precision Adam by part (Rajbhandari et al. 2020, ZeRO,
/// section 3.1: 2 bytes of fp16/bf16 weights, 2 of gradients and K = 12 of optimizer state a
/// weight: 4 of fp32 master weights, 4 of momentum, 4 of variance), bytes per chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptimizerParts {
    /// fp32 master weights: 4 of the 12 bytes.
    pub master_weights_bytes: f64,
    /// Adam's fp32 momentum and variance: 8 of the 12 bytes.
    pub adam_moments_bytes: f64,
}

/// A step's configuration and figures, as a step and each result of a search print them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepFigures {
    /// The partition spec, `[P,D,M1,M2]`, or for an MoE model `[P,D,M1,M2,E]` with its
    /// expert axis E (carved out of the data axis; 1: every chip holds every expert).
    pub parallel: String,
    /// 1D/2D activation/weight.
    pub partition: String,
    /// Axes onto chips, fastest first.
    pub mapping: String,
    /// Global batch, sequences.
    pub batch: u64,
    /// Microbatches per step.
    pub microbatches: u64,
    /// Sequences per microbatch per data/model1 shard.
    pub microbatch_seqs: u64,
    /// Rematerialisation: `full`, `selective` or `none`.
    pub remat: &'static str,
    /// Megatron-LM's sequence parallelism over model2 ([`Config::sequence_parallel`]).
    pub sequence_parallel: bool,
    /// Chunks of layers per pipeline stage (1: 1F1B; more: the interleaved schedule).
    pub virtual_stages: u64,
    /// How far the weights' state is sharded over the data axis: `none`, `optimizer`,
    /// `gradients` or `weights` ([`crate::Sharding`]).
    pub shard: &'static str,
    /// Which fidelity timed the collectives: `analytic` or `flow`.
    pub fidelity: &'static str,
    /// Seconds per step.
    pub step_time_s: f64,
    /// Sequences per second.
    pub throughput_seqs_per_s: f64,
    /// Model FLOPs utilization.
    pub mfu: f64,
    /// Hardware FLOPs utilization.
    pub hfu: f64,
    /// Memory per chip, bytes.
    pub memory_bytes_per_chip: f64,
    /// Memory per chip by use.
    pub memory: MemoryOutput,
    /// Whether it fits in HBM.
    pub fits_in_memory: bool,
    /// Chip work on the critical path, seconds.
    pub compute_time_s: f64,
    /// Communication no overlap hid, seconds.
    pub exposed_communication_s: f64,
    /// The pipeline bubble, seconds.
    pub bubble_time_s: f64,
    /// The optimizer step, seconds.
    pub optimizer_time_s: f64,
    /// Gradient sum before overlap, seconds.
    pub gradient_sync_s: f64,
    /// The MoE layers' all-to-alls over the expert axis on the step's critical path, seconds
    /// ([`StepReport::expert_all_to_all_s`]; 0 for a dense model).
    pub expert_all_to_all_s: f64,
    /// Forward time of one microbatch on one stage, seconds.
    pub stage_forward_s: f64,
    /// Backward time of one microbatch on one stage, seconds.
    pub stage_backward_s: f64,
    /// What bounds the step ([`StepReport::bound`]).
    pub bound: &'static str,
    /// The data axis's size (text only: whether sharding over it can help a step that does
    /// not fit).
    #[serde(skip)]
    pub data: u64,
    /// The expert axis's size (text only), where the model is an MoE model.
    #[serde(skip)]
    pub expert: Option<u64>,
}

impl StepFigures {
    /// The figures of `r`.
    pub fn new(r: &StepReport) -> StepFigures {
        let c = &r.config;
        StepFigures {
            parallel: if r.moe {
                let [p, d, m1, m2] = c.parallel.0;
                format!("[{p},{d},{m1},{m2},{}]", c.expert.max(1))
            } else {
                c.parallel.to_string()
            },
            partition: c.partition.to_string(),
            mapping: c.mapping.to_string(),
            batch: c.batch,
            microbatches: c.microbatches,
            microbatch_seqs: r.microbatch_seqs,
            remat: c.remat.name(),
            sequence_parallel: c.sequence_parallel,
            virtual_stages: c.virtual_stages,
            shard: c.shard.name(),
            fidelity: r.fidelity,
            step_time_s: r.step_time_s,
            throughput_seqs_per_s: r.throughput_seqs_per_s,
            mfu: r.mfu,
            hfu: r.hfu,
            memory_bytes_per_chip: r.memory.total(),
            memory: MemoryOutput {
                weights_bytes: r.memory.weights,
                gradients_bytes: r.memory.gradients,
                optimizer_bytes: r.memory.optimizer,
                activations_bytes: r.memory.activations,
                workspace_bytes: r.memory.workspace,
                optimizer_parts: OptimizerParts {
                    master_weights_bytes: r.memory.optimizer / 3.0,
                    adam_moments_bytes: r.memory.optimizer * 2.0 / 3.0,
                },
            },
            fits_in_memory: r.fits_in_memory,
            compute_time_s: r.compute_time_s,
            exposed_communication_s: r.exposed_communication_s,
            bubble_time_s: r.bubble_time_s,
            optimizer_time_s: r.optimizer_time_s,
            gradient_sync_s: r.gradient_sync_s,
            expert_all_to_all_s: r.expert_all_to_all_s,
            stage_forward_s: r.stage_times_s.0,
            stage_backward_s: r.stage_times_s.1,
            bound: r.bound(),
            data: c.parallel.of(crate::Axis::Data),
            expert: expert_of(r),
        }
    }

    /// The rows of the step's table, the memory against `hbm` bytes of HBM.
    fn rows(&self, hbm: u64) -> Vec<(String, Vec<String>)> {
        let s = |x: f64| format!("{x:.3} s");
        let m = &self.memory;
        let total = self.memory_bytes_per_chip;
        let mut rows = vec![
            (
                "partition".into(),
                vec![format!(
                    "{} {}{}, mapping {}",
                    self.parallel,
                    self.partition,
                    self.shard_note(),
                    self.mapping
                )],
            ),
            (
                "batch".into(),
                vec![format!(
                    "{} sequences, {} microbatches of {} per data/model1 shard, remat {}",
                    self.batch, self.microbatches, self.microbatch_seqs, self.remat
                )],
            ),
            ("step time".into(), vec![s(self.step_time_s)]),
            (
                "throughput".into(),
                vec![format!("{:.2} seqs/s", self.throughput_seqs_per_s)],
            ),
            (
                "MFU / HFU".into(),
                vec![format!(
                    "{:.1}% / {:.1}%",
                    self.mfu * 100.0,
                    self.hfu * 100.0
                )],
            ),
            (
                "compute".into(),
                vec![format!(
                    "{} (optimizer {})",
                    s(self.compute_time_s),
                    s(self.optimizer_time_s)
                )],
            ),
            (
                "exposed communication".into(),
                vec![format!(
                    "{} (gradient sum {} before overlap)",
                    s(self.exposed_communication_s),
                    s(self.gradient_sync_s)
                )],
            ),
            ("pipeline bubble".into(), vec![s(self.bubble_time_s)]),
        ];
        if let Some(e) = self.expert {
            rows.insert(
                rows.len() - 1,
                (
                    "expert all-to-all".into(),
                    vec![format!(
                        "{:.4} s ({:.1}% of the step: {})",
                        self.expert_all_to_all_s,
                        100.0 * self.expert_all_to_all_s / self.step_time_s.max(f64::MIN_POSITIVE),
                        if e == 1 {
                            "no expert axis, every chip holds every expert".to_string()
                        } else {
                            format!("dispatch and combine over the {e} chips of the expert axis")
                        },
                    )],
                ),
            );
        }
        rows.extend([
            ("bound by".into(), vec![self.bound.into()]),
            (
                "memory per chip".into(),
                vec![format!(
                    "{} of {} ({}): weights {}, gradients {}, optimizer {}, activations {}, workspace {}",
                    gib(total),
                    gib(hbm as f64),
                    if self.fits_in_memory {
                        "fits"
                    } else {
                        "DOES NOT FIT"
                    },
                    gib(m.weights_bytes),
                    gib(m.gradients_bytes),
                    gib(m.optimizer_bytes),
                    gib(m.activations_bytes),
                    gib(m.workspace_bytes)
                )],
            ),
        ]);
        if !self.fits_in_memory {
            rows.push((
                "over HBM by".into(),
                vec![format!(
                    "{}{}",
                    gib(total - hbm as f64),
                    if self.shard == Sharding::Weights.name()
                        || self.data == 1
                        || self.expert.is_some()
                    {
                        ""
                    } else {
                        "; --shard weights splits the bf16 weights and gradients over data too"
                    }
                )],
            ));
        }
        rows
    }

    /// `, shard S` where the weights' state is sharded over data beyond the optimizer state's
    /// default, `, sequence parallel` and `, V virtual stages` where set, else nothing (so the
    /// text of a step without them is as it always was).
    fn shard_note(&self) -> String {
        let mut note = String::new();
        if self.shard != Sharding::None.name() {
            note.push_str(&format!(", shard {}", self.shard));
        }
        if self.sequence_parallel {
            note.push_str(", sequence parallel");
        }
        if self.virtual_stages > 1 {
            note.push_str(&format!(", {} virtual stages", self.virtual_stages));
        }
        note
    }
}

/// The expert axis of `r`'s step where its model is an MoE model.
fn expert_of(r: &StepReport) -> Option<u64> {
    r.moe.then_some(r.config.expert.max(1))
}

fn gib(b: f64) -> String {
    format!("{:.2} GiB", b / (1u64 << 30) as f64)
}

/// One step as `podsim train --json` prints it: the step's figures, the model, the system and
/// the CMEM setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepOutput {
    /// The configuration and what the step costs.
    #[serde(flatten)]
    pub step: StepFigures,
    /// The model's name.
    pub model: String,
    /// The system's name.
    pub system: String,
    /// Chips of the system.
    pub chips: u64,
    /// The model's weights.
    pub parameters: f64,
    /// CMEM: `on`, `off` or `none` ([`Machine::cmem_name`]).
    pub cmem: &'static str,
    /// Whether podsim chose the mapping (the fastest of all axis orders, closed form) rather
    /// than the command line.
    pub mapping_chosen: bool,
    /// The chip's name (text only).
    #[serde(skip)]
    pub chip: String,
    /// HBM per chip, bytes (text only).
    #[serde(skip)]
    pub hbm_bytes: u64,
    /// The step's energy (`--energy`): `energy_j`, `average_power_w`, `energy_breakdown_j`
    /// and `perf_per_watt` (model FLOP/s per watt of the whole slice).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub energy: Option<podsim_system::energy::EnergyOutput>,
}

impl StepOutput {
    /// The step `r` of `t` on `m`, the system named `system` of `chips` chips.
    pub fn new(
        t: &Transformer,
        system: &str,
        chips: u64,
        m: &Machine,
        r: &StepReport,
        mapping_chosen: bool,
    ) -> StepOutput {
        StepOutput {
            mapping_chosen,
            step: StepFigures::new(r),
            model: t.name.clone(),
            system: system.into(),
            chips,
            parameters: t.params(),
            cmem: m.cmem_name(),
            chip: m.chip.name.clone(),
            hbm_bytes: m.hbm_bytes,
            energy: None,
        }
    }

    /// `self` with the step's energy on chips of `power` (`--energy`); its performance per
    /// watt is model FLOP/s per watt (model FLOPs per joule).
    pub fn with_energy(
        mut self,
        t: &Transformer,
        r: &StepReport,
        power: &podsim_system::energy::ChipPower,
    ) -> Result<StepOutput, String> {
        let model_flops_per_s = 3.0 * t.forward_flops_per_seq() * r.throughput_seqs_per_s;
        self.energy = Some(podsim_system::energy::EnergyOutput::new(
            power,
            &r.activity,
            Some((model_flops_per_s, "model FLOP/s per W")),
        )?);
        Ok(self)
    }

    /// The text `podsim train` prints: a line naming the model and system, then the table.
    pub fn text(&self) -> String {
        let mut rows = self.step.rows(self.hbm_bytes);
        if self.mapping_chosen {
            rows[0].1[0].push_str(" (the fastest of the 24 axis orders, closed form)");
        }
        if let Some(e) = &self.energy {
            rows.extend(e.rows());
        }
        format!(
            "{} ({:.1} B parameters) on {} ({} chips of {}), collectives: {}, CMEM {}\n{}",
            self.model,
            self.parameters / 1e9,
            self.system,
            self.chips,
            self.chip,
            self.step.fidelity,
            self.cmem,
            render(&rows)
        )
    }
}

/// What a step's configuration leaves to podsim, each chosen in closed form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Choose {
    /// The axis order: the fastest of all 24 (section 2.7 of the TPU v4 paper gives none).
    pub mapping: bool,
    /// The microbatch count: the fastest that fits in HBM.
    pub microbatches: bool,
}

/// `base` with what `pick` leaves open chosen in closed form: each axis order in turn (or
/// `base`'s alone) with its fastest microbatch count that fits (or `base`'s), the fastest
/// of them by the analytic step; among equally fast orders, `base`'s, else the first.
pub fn choose(
    t: &Transformer,
    m: &Machine,
    base: &Config,
    pick: Choose,
) -> Result<Config, TrainError> {
    if !pick.mapping {
        return if pick.microbatches {
            best_microbatches(t, m, base)
        } else {
            Ok(*base)
        };
    }
    let mut best: Option<Config> = None;
    let mut best_tp = 0.0;
    let mut last_err = None;
    let others = Mapping::all().into_iter().filter(|o| *o != base.mapping);
    for mapping in std::iter::once(base.mapping).chain(others) {
        let mut c = Config { mapping, ..*base };
        if pick.microbatches {
            match best_microbatches(t, m, &c) {
                Ok(x) => c = x,
                Err(e) => {
                    last_err = Some(e);
                    continue;
                }
            }
        }
        match analytic(t, m, &c) {
            Ok(r) if r.throughput_seqs_per_s > best_tp => {
                best_tp = r.throughput_seqs_per_s;
                best = Some(c);
            }
            Ok(_) => {}
            Err(e) => last_err = Some(e),
        }
    }
    best.ok_or_else(|| last_err.unwrap_or(TrainError::NoMappingFits))
}

/// The step of `base` for `t` on `m` (the network `net`), with what `pick` leaves open chosen
/// in closed form ([`choose`]), its collectives timed on the flow model or in closed form.
pub fn run_step(
    t: &Transformer,
    m: &Machine,
    net: &Network,
    base: &Config,
    pick: Choose,
    fidelity: ModelKind,
) -> Result<StepReport, TrainError> {
    let c = choose(t, m, base, pick)?;
    match fidelity {
        ModelKind::Flow => {
            let mut mk = || podsim_system::flow_model(net);
            measured(t, m, net, &c, &mut mk)
        }
        _ => analytic(t, m, &c),
    }
}

/// One configuration a search found, as `podsim train --search --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchEntry {
    /// The configuration and what its step costs.
    #[serde(flatten)]
    pub step: StepFigures,
    /// The slice's shorthand.
    pub system: String,
}

/// A search as `podsim train --search --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchOutput {
    /// The model's name.
    pub model: String,
    /// Chips searched over.
    pub chips: u64,
    /// Global batch, sequences.
    pub batch: u64,
    /// The best configurations, best first.
    pub results: Vec<SearchEntry>,
    /// Configurations evaluated in closed form.
    pub configurations_evaluated: u64,
    /// Configurations a second in the closed-form pass.
    pub configurations_per_s: f64,
    /// Configurations skipped by the compute-only bound.
    pub pruned_by_bound: u64,
    /// Configurations that do not fit in HBM.
    pub over_memory: u64,
    /// Survivors timed on the flow model.
    pub flow_evaluated: u64,
    /// Seconds the search took.
    pub wall_time_s: f64,
    /// Whether the model is a mixture of experts (text only: the table's spec then names the
    /// expert axis).
    #[serde(skip)]
    pub moe: bool,
}

impl SearchOutput {
    /// The text `podsim train --search` prints: [`SearchOutput::summary`], then
    /// [`SearchOutput::table`].
    pub fn text(&self) -> String {
        format!("{}\n{}", self.summary(), self.table())
    }

    /// A line of what was searched (without its newline).
    pub fn summary(&self) -> String {
        format!(
            "{} on {} TPU v4 chips, batch {}: {} configurations in closed form, {} skipped by the compute-only bound, {} over HBM; {} survivors on the flow model",
            self.model,
            self.chips,
            self.batch,
            self.configurations_evaluated,
            self.pruned_by_bound,
            self.over_memory,
            self.flow_evaluated,
        )
    }

    /// The table of the best configurations.
    pub fn table(&self) -> String {
        let mut rows = vec![(
            "#".to_string(),
            vec![
                "slice".into(),
                if self.moe {
                    "[P,D,M1,M2,E]".into()
                } else {
                    "[P,D,M1,M2]".into()
                },
                "act/weight".into(),
                "mapping".into(),
                "microbatches".into(),
                "remat".into(),
                "seqs/s".into(),
                "MFU".into(),
                "why (compute / exposed comm / bubble, s)".into(),
            ],
        )];
        for (i, e) in self.results.iter().enumerate() {
            let x = &e.step;
            rows.push((
                format!("{}", i + 1),
                vec![
                    e.system.clone(),
                    x.parallel.clone(),
                    format!("{}{}", x.partition, x.shard_note()),
                    x.mapping.clone(),
                    x.microbatches.to_string(),
                    x.remat.into(),
                    format!("{:.2}", x.throughput_seqs_per_s),
                    format!("{:.1}%", x.mfu * 100.0),
                    format!(
                        "{:.2} / {:.2} / {:.2}: {}",
                        x.compute_time_s, x.exposed_communication_s, x.bubble_time_s, x.bound
                    ),
                ],
            ));
        }
        render(&rows)
    }

    /// The closed-form pass's rate, a note for stderr (it is the machine's, not the model's,
    /// so stdout stays the same on every run).
    pub fn rate_note(&self) -> String {
        format!(
            "note: {:.0} configurations a second in closed form on this machine",
            self.configurations_per_s
        )
    }
}

/// [`search_with`] on the flow model, as `podsim train --search` runs it: the `top` best
/// configurations of `t` on `chips` chips of `chip` at global batch `batch`, up to
/// `flow_limit` survivors timed on the flow model by `runner` (the same result with any), their
/// layer times kept in `memo`, each configuration sharded over data as little as fits, up to
/// `shard`.
#[allow(clippy::too_many_arguments)]
pub fn run_search(
    t: &Transformer,
    chip: &ChipSpec,
    chips: u64,
    batch: u64,
    top: usize,
    flow_limit: usize,
    shard: Sharding,
    memo: &mut dyn FlowMemo,
    runner: &mut dyn FlowRunner,
) -> Result<SearchOutput, TrainError> {
    let start = std::time::Instant::now();
    let mk = podsim_system::flow_model;
    let r = search_by(
        t, chip, chips, batch, top, flow_limit, shard, &mk, memo, runner,
    )?;
    let results = r
        .results
        .iter()
        .map(|(s, x)| SearchEntry {
            step: StepFigures::new(x),
            system: s.shorthand(),
        })
        .collect();
    Ok(SearchOutput {
        model: t.name.clone(),
        chips,
        batch,
        results,
        configurations_evaluated: r.configurations_evaluated,
        configurations_per_s: r.configurations_evaluated as f64 / r.closed_form_s.max(1e-9),
        pruned_by_bound: r.pruned,
        over_memory: r.over_memory,
        flow_evaluated: r.flow_evaluated,
        wall_time_s: start.elapsed().as_secs_f64(),
        moe: t.moe.is_some(),
    })
}
