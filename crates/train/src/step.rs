//! The step of a configuration: its chip work, exposed communication, bubble and memory.

use podsim_collective::Kind;
use podsim_net::NetworkModel;
use podsim_topology::Network;

use crate::layer::{LayerOps, Op, Span, layer_ops, moe_layer_ops, spans};
use crate::memory::{MemoryUse, Shard, shard};
use crate::timer::{Timer, cmem_holds};
use crate::{
    Axis, Config, ELEM, Machine, Mapping, Remat, Sharding, Split, TrainError, Transformer,
    flow_layers,
};

/// One layer's exposed communication per microbatch as the flow model measured it
/// ([`flow_layers`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerTimes {
    /// A dense layer's: forward, backward, seconds.
    pub dense: (f64, f64),
    /// An MoE layer's: forward, backward and the time its all-to-alls took, seconds (`None`
    /// for a dense model).
    pub moe: Option<(f64, f64, f64)>,
}

/// What a step costs and why.
#[derive(Debug, Clone, PartialEq)]
pub struct StepReport {
    /// The configuration.
    pub config: Config,
    /// Seconds per step.
    pub step_time_s: f64,
    /// Sequences per second.
    pub throughput_seqs_per_s: f64,
    /// Model FLOPs (3 x forward, no recomputation) per second over the slice's peak.
    pub mfu: f64,
    /// Hardware FLOPs (with recomputation) per second over the slice's peak.
    pub hfu: f64,
    /// Memory per chip, bytes.
    pub memory: MemoryUse,
    /// Whether it fits in HBM.
    pub fits_in_memory: bool,
    /// Chip work on the step's critical path: microbatches x (forward + backward) of the
    /// slowest stage and the optimizer step, seconds.
    pub compute_time_s: f64,
    /// Communication no overlap hid: model-axis collectives, pipeline sends and the exposed
    /// part of the gradient sum, seconds.
    pub exposed_communication_s: f64,
    /// The pipeline bubble, seconds.
    pub bubble_time_s: f64,
    /// The optimizer step (part of the compute time), seconds.
    pub optimizer_time_s: f64,
    /// Gradient sum over data (and model1 for 1D weights), seconds, before overlap.
    pub gradient_sync_s: f64,
    /// The MoE layers' all-to-alls over the expert axis (dispatch and combine, forward, in a
    /// full recomputation and backward) on the step's critical path: microbatches x the
    /// largest stage's MoE layers x their time in a layer, seconds (part of the exposed
    /// communication; 0 for a dense model).
    pub expert_all_to_all_s: f64,
    /// Whether the model is a mixture of experts.
    pub moe: bool,
    /// Per microbatch and stage: forward, backward, seconds.
    pub stage_times_s: (f64, f64),
    /// Sequences per microbatch per data/model1 shard.
    pub microbatch_seqs: u64,
    /// Which fidelity timed the collectives.
    pub fidelity: &'static str,
    /// What the slice's chips did in the step, for the energy model
    /// ([`podsim_system::energy`]): see [`Prepared::finish`].
    pub activity: podsim_system::energy::Activity,
}

impl StepReport {
    /// What bounds the step: the largest of compute, exposed communication and bubble.
    pub fn bound(&self) -> &'static str {
        let v = [
            (self.compute_time_s, "compute"),
            (self.exposed_communication_s, "exposed communication"),
            (self.bubble_time_s, "pipeline bubble"),
        ];
        v.iter().fold(v[0], |a, &b| if b.0 > a.0 { b } else { a }).1
    }
}

/// Model FLOPs and hardware FLOPs per sequence.
fn flops_per_seq(t: &Transformer, remat: Remat) -> (f64, f64) {
    let f = t.forward_flops_per_seq();
    let model = 3.0 * f;
    let layers_fwd = f - 2.0 * (t.sequence * t.d_model * t.vocabulary) as f64;
    // Selective: the attention's QK^T and weighted sum of the values again, 2 x 2 x s^2 x
    // the attention's width FLOPs a layer, as the forward counts them (Korthikanti et al.
    // 2022, section 4.3).
    let attention = 4.0 * (t.sequence * t.sequence) as f64 * t.attention_width();
    let hw = match remat {
        Remat::Full => model + layers_fwd,
        Remat::None => model,
        Remat::Selective => model + t.layers as f64 * attention,
    };
    (model, hw)
}

/// The part of a step that the slice shape and the mapping do not change: the shard, the
/// layer's ops and the chip work they take.
#[derive(Debug, Clone)]
pub struct Prepared {
    config: Config,
    sh: Shard,
    ops: LayerOps,
    /// An MoE layer's ops (`None` for a dense model).
    moe_ops: Option<LayerOps>,
    /// Chip work per layer: forward, backward.
    work: (f64, f64),
    /// Chip work per MoE layer: forward, backward.
    moe_work: (f64, f64),
    /// The last stage's logits and loss: forward, backward.
    head: (f64, f64),
    flops: (f64, f64),
}

impl Prepared {
    /// Chip work, shard and ops of `c` on `chip` (the mapping in `c` is not used).
    pub fn new(t: &Transformer, chip: &Machine, c: &Config) -> Result<Prepared, TrainError> {
        let sh = shard(t, c)?;
        let ops = layer_ops(t, c, &sh);
        let moe_ops = moe_layer_ops(t, c, &sh);
        let timer = Timer {
            t,
            m: chip,
            cmem_weights: cmem_holds(t, chip, c),
            spans: [Span {
                stride: 1,
                size: 1,
                parts: [(1, 1); 3],
            }; 6],
        };
        let (fw, _) = timer.pass(&ops.forward)?;
        let (bw, _) = timer.pass(&ops.backward)?;
        let moe_work = match &moe_ops {
            Some(o) => (timer.pass(&o.forward)?.0, timer.pass(&o.backward)?.0),
            None => (0.0, 0.0),
        };
        let y = c.parallel.of(Axis::Model2);
        // The last stage's logits: tokens x d_model by d_model x vocabulary/model2, forward and
        // the two backward GEMMs; the loss as four memory passes over the logits.
        let v_chip = t.vocabulary.div_ceil(y);
        let logits_f = timer.gemm(sh.tokens, v_chip, t.d_model, true)?;
        let logits_b = timer.gemm(sh.tokens, t.d_model, v_chip, true)?
            + timer.gemm(t.d_model, v_chip, sh.tokens, false)?;
        let loss = timer.memory(4.0 * (sh.tokens * v_chip) as f64 * ELEM);
        Ok(Prepared {
            config: *c,
            sh,
            ops,
            moe_ops,
            work: (fw, bw),
            moe_work,
            head: (logits_f + loss, logits_b + loss),
            flops: flops_per_seq(t, c.remat),
        })
    }

    /// Whether its memory fits the chip's HBM.
    pub fn fits(&self, m: &Machine) -> bool {
        self.sh.memory.total() <= m.hbm_bytes as f64
    }

    /// A lower bound on the step time whatever the slice and mapping: its chip work and the
    /// bubble that work alone makes, seconds.
    pub fn bound_s(&self) -> f64 {
        let (l, lm) = self.stage_layers();
        let stage = l * (self.work.0 + self.work.1)
            + lm * (self.moe_work.0 + self.moe_work.1)
            + self.head.0
            + self.head.1;
        let p = self.config.parallel.of(Axis::Pipeline) as f64;
        let v = self.config.virtual_stages as f64;
        (self.config.microbatches as f64 + (p - 1.0) / v) * stage
    }

    /// The largest stage's dense layers and MoE layers.
    fn stage_layers(&self) -> (f64, f64) {
        let moe = self.sh.moe_layers_per_stage;
        ((self.sh.layers_per_stage - moe) as f64, moe as f64)
    }

    /// The step on machine `m` with mapping `mapping`, the collectives in closed form, or as
    /// measured per layer (seconds of exposed communication per layer and microbatch, from
    /// [`flow_layers`]).
    pub fn finish(
        &self,
        t: &Transformer,
        m: &Machine,
        mapping: Mapping,
        measured: Option<LayerTimes>,
    ) -> Result<StepReport, TrainError> {
        let c = Config {
            mapping,
            ..self.config
        };
        let spans = spans(m, &c)?;
        let timer = Timer {
            t,
            m,
            spans,
            cmem_weights: cmem_holds(t, m, &c),
        };
        let (fc, bc) = match measured {
            Some(v) => v.dense,
            None => timer.layer(&self.ops.forward, &self.ops.backward)?,
        };
        // An MoE layer's exposed communication and its all-to-alls' time.
        let (mfc, mbc, ma2a) = match (&self.moe_ops, measured.and_then(|v| v.moe)) {
            (None, _) => (0.0, 0.0, 0.0),
            (Some(_), Some(v)) => v,
            (Some(o), None) => {
                let (f, b) = timer.layer(&o.forward, &o.backward)?;
                let mut a2a = 0.0;
                for op in o.forward.iter().chain(&o.backward) {
                    if let Op::Coll {
                        kind: Kind::AllToAll,
                        ..
                    } = op
                    {
                        a2a += timer.op(op)?.0;
                    }
                }
                (f, b, a2a)
            }
        };
        let sh = &self.sh;
        let [p, d, x, _] = c.parallel.0;
        let (l, lm) = self.stage_layers();
        // The pipeline send of the stage's output (and of its gradient back), over one link;
        // one per chunk with the interleaved schedule.
        let send_bytes = send_bytes_of(t, sh, &c);
        let v = c.virtual_stages as f64;
        let send = if p > 1 {
            v * (send_bytes / m.link_bytes_per_s + m.step_latency_s)
        } else {
            0.0
        };
        let (work_f, work_b, comm_f, comm_b) = if self.moe_ops.is_none() {
            (
                l * self.work.0 + self.head.0,
                l * self.work.1 + self.head.1,
                l * fc + send,
                l * bc + send,
            )
        } else {
            (
                l * self.work.0 + lm * self.moe_work.0 + self.head.0,
                l * self.work.1 + lm * self.moe_work.1 + self.head.1,
                l * fc + lm * mfc + send,
                l * bc + lm * mbc + send,
            )
        };
        // The layers of a pass (dense and MoE), for the overlap of the gradient sum.
        let l = l + lm;
        let (tf, tb) = (work_f + comm_f, work_b + comm_b);
        let mb = c.microbatches as f64;
        // The 1F1B bubble, (p - 1) stage times; the interleaved schedule's, (p - 1)/V of them
        // (Narayanan et al. SC'21, section 2.2.2: bubble fraction (p - 1)/(V m)).
        let bubble = (p - 1) as f64 * (tf + tb) / v;
        // Gradient sum over data (and model1 for 1D weights), by sharding stage
        // ([`crate::Sharding`]): without the gradients sharded, a ring all-reduce of the bf16
        // weight gradients (reduce-scatter and all-gather of the updated shard: the same
        // bytes), overlapped with the last microbatch's backward pass over all layers but the
        // first. With them sharded, the layers reduce-scatter over data as they go (their
        // ops); what is left is the all-reduce over model1 of the 1D weights' gradient shard,
        // overlapped as before, and with `gradients` the all-gather over data of the updated
        // weights, overlapped with the next step's first forward pass over all layers but the
        // first.
        let grad_bytes = sh.weights_per_chip * ELEM;
        // The experts' gradients: summed over their data / expert replicas only.
        let expert_bytes = sh.expert_weights_per_chip * ELEM;
        // All layers but the first of a pass (the same expression as ever, for bit-identical
        // figures).
        let after_first = |pass: f64| pass * (l - 1.0).max(0.0) / l.max(1.0);
        let (mut sync_b, sync_f) = match c.shard {
            Sharding::None | Sharding::Optimizer if expert_bytes > 0.0 => (
                timer.collective(Axis::Data, Kind::AllReduce, grad_bytes - expert_bytes)
                    + timer.collective(Axis::ExpertData, Kind::AllReduce, expert_bytes),
                0.0,
            ),
            Sharding::None | Sharding::Optimizer => (
                timer.collective(Axis::Data, Kind::AllReduce, grad_bytes),
                0.0,
            ),
            Sharding::Gradients => (
                0.0,
                timer.collective(Axis::Data, Kind::AllGather, grad_bytes),
            ),
            Sharding::Weights => (0.0, 0.0),
        };
        if c.partition.weight == Split::OneD {
            // Each chip sums over model1 the shard over data it updates: 1/data of the dense
            // weights, 1/(data/expert) of the experts'.
            let shard = if expert_bytes > 0.0 {
                (grad_bytes - expert_bytes) / d as f64
                    + expert_bytes * c.expert.max(1) as f64 / d as f64
            } else {
                grad_bytes / d as f64
            };
            sync_b += timer.collective(Axis::Model1, Kind::AllReduce, shard);
        }
        let sync = sync_b + sync_f;
        // The tied embedding's shard over the model axes, sharded over data too: with the
        // gradients sharded its gradient is reduce-scattered over data every microbatch; with
        // the weights sharded it is also all-gathered before the input lookup and again before
        // the logits' backward pass. Hidden behind the logits' and loss's work (forward and
        // backward), exposed where longer.
        let embedding = embedding_comm(t, &c, |kind, bytes| {
            timer.collective(Axis::Data, kind, bytes)
        });
        let embedding_exposed = (embedding - (self.head.0 + self.head.1)).max(0.0);
        let sync_exposed =
            (sync_b - after_first(tb)).max(0.0) + (sync_f - after_first(tf)).max(0.0);
        // Adam on the weight shard this chip updates: read the bf16 gradient, the fp32 weight
        // and two moments, write them and the bf16 weight (2 + 12 + 12 + 2 bytes per weight).
        let replicas = match c.partition.weight {
            Split::OneD => d * x,
            Split::TwoD => d,
        } as f64;
        let optimizer = timer.memory(updated_weights(sh, c.expert) * 28.0 / replicas);
        let compute = mb * (work_f + work_b) + optimizer;
        let exposed = mb * (comm_f + comm_b + embedding_exposed) + sync_exposed;
        let step = compute + exposed + bubble;
        let (model_flops, hw_flops) = self.flops;
        let peak = m.chip.matrix.0 as f64 * m.chips() as f64;
        let tput = c.batch as f64 / step;
        let memory = sh.memory;
        let activity = self.activity(t, m, &c, &timer, step, send_bytes)?;
        Ok(StepReport {
            config: c,
            step_time_s: step,
            throughput_seqs_per_s: tput,
            mfu: model_flops * tput / peak,
            hfu: hw_flops * tput / peak,
            memory,
            fits_in_memory: memory.total() <= m.hbm_bytes as f64,
            compute_time_s: compute,
            exposed_communication_s: exposed,
            bubble_time_s: bubble,
            optimizer_time_s: optimizer,
            gradient_sync_s: sync,
            expert_all_to_all_s: mb * lm * ma2a,
            moe: self.moe_ops.is_some(),
            stage_times_s: (tf, tb),
            microbatch_seqs: sh.seqs,
            fidelity: if measured.is_some() {
                "flow"
            } else {
                "analytic"
            },
            activity,
        })
    }

    /// What every chip does in a step of `seconds`, summed over the slice: the hardware FLOPs;
    /// each layer's traffic as the timer moves it (a GEMM's operands and result from HBM, its
    /// weight from CMEM where the layer's weights are held there; the vector passes), for
    /// every layer of the stage and every microbatch, the last stage's logits and loss shared
    /// over the stages, and the optimizer's pass; each collective's bytes on the wire (a ring:
    /// (f - 1)/f of the buffer per rank for a gather or a scatter, twice that for an
    /// all-reduce, each byte to a neighbour one link away; groups strided over a dimension
    /// cross more links, which this does not count), the gradient sum and the pipeline sends.
    fn activity(
        &self,
        t: &Transformer,
        m: &Machine,
        c: &Config,
        timer: &Timer<'_>,
        seconds: f64,
        send_bytes: f64,
    ) -> Result<podsim_system::energy::Activity, TrainError> {
        let sh = &self.sh;
        let [p, d, x, y] = c.parallel.0;
        let chips = m.chips();
        let n = chips as f64;
        let (mut hbm, mut onchip, mut link, mut busy) = (0.0, 0.0, 0.0, 0.0);
        let size = |a: Axis| timer.spans[a.index()].size as f64;
        let mut ops = |list: &[Op], k: f64| -> Result<(), TrainError> {
            for o in list {
                match *o {
                    Op::Gemm {
                        m: rows,
                        n: cols,
                        k: inner,
                        count,
                        weight,
                        ..
                    } => {
                        busy += k * count as f64 * timer.streaming(rows, cols, inner)?;
                        let count = count as f64;
                        let streamed = (rows * inner + rows * cols) as f64 * ELEM * count;
                        let w = (inner * cols) as f64 * ELEM * count;
                        hbm += k * streamed;
                        if weight && timer.cmem_weights {
                            onchip += k * w;
                        } else {
                            hbm += k * w;
                        }
                    }
                    Op::Memory { bytes, .. } => hbm += k * bytes,
                    Op::Coll {
                        axis, kind, bytes, ..
                    } => link += k * ring_wire_bytes(kind, size(axis), bytes),
                }
            }
            Ok(())
        };
        let (l, lm) = self.stage_layers();
        let runs = l * c.microbatches as f64;
        ops(&self.ops.forward, runs)?;
        ops(&self.ops.backward, runs)?;
        if let Some(o) = &self.moe_ops {
            let runs = lm * c.microbatches as f64;
            ops(&o.forward, runs)?;
            ops(&o.backward, runs)?;
        }
        // The last stage's logits (three GEMMs of tokens x d_model x vocabulary/model2) and
        // loss (four passes over the logits), on one stage in p.
        let v_chip = t.vocabulary.div_ceil(y) as f64;
        let tok = sh.tokens as f64;
        let e = t.d_model as f64;
        let head = 3.0 * (tok * e + tok * v_chip + e * v_chip) * ELEM + 4.0 * tok * v_chip * ELEM;
        hbm += head * c.microbatches as f64 / p as f64;
        let (v, tk, dm) = (t.vocabulary.div_ceil(y), sh.tokens, t.d_model);
        busy += (timer.streaming(tk, v, dm)?
            + timer.streaming(tk, dm, v)?
            + timer.streaming(dm, v, tk)?)
            * c.microbatches as f64
            / p as f64;
        let replicas = match c.partition.weight {
            Split::OneD => d * x,
            Split::TwoD => d,
        } as f64;
        hbm += updated_weights(sh, c.expert) * 28.0 / replicas;
        let grad_bytes = sh.weights_per_chip * ELEM;
        let expert_bytes = sh.expert_weights_per_chip * ELEM;
        let e = c.expert.max(1) as f64;
        // The step's end of the gradient sum over data (the layers' reduce-scatters and weight
        // gathers of `--shard` are in their ops above); the experts' over their replicas.
        link += match c.shard {
            Sharding::None | Sharding::Optimizer if expert_bytes > 0.0 => {
                ring_wire_bytes(Kind::AllReduce, d as f64, grad_bytes - expert_bytes)
                    + ring_wire_bytes(Kind::AllReduce, d as f64 / e, expert_bytes)
            }
            Sharding::None | Sharding::Optimizer => {
                ring_wire_bytes(Kind::AllReduce, d as f64, grad_bytes)
            }
            Sharding::Gradients => ring_wire_bytes(Kind::AllGather, d as f64, grad_bytes),
            Sharding::Weights => 0.0,
        };
        if c.partition.weight == Split::OneD {
            link += ring_wire_bytes(Kind::AllReduce, x as f64, grad_bytes / d as f64);
        }
        // The embedding's gathers and scatters of `--shard`, on the stages that hold it (the
        // first and the last: all with one stage).
        link += c.microbatches as f64
            * (p.min(2) as f64 / p as f64)
            * embedding_comm(t, c, |kind, bytes| ring_wire_bytes(kind, d as f64, bytes));
        // Every chunk but the last sends its output forward and every one but the first its
        // gradient back, per microbatch: p V - 1 of the p V chunks (p - 1 of p for 1F1B).
        let senders = (p * c.virtual_stages - 1) as f64;
        link += 2.0 * send_bytes * c.microbatches as f64 * senders / p as f64;
        let hw_flops = self.flops.1 * c.batch as f64;
        Ok(podsim_system::energy::Activity {
            chips,
            seconds,
            matrix_flops: hw_flops,
            matrix_busy_s: busy * n,
            hbm_bytes: hbm * n,
            onchip_bytes: onchip * n,
            link_bytes: link * n,
        })
    }
}

/// The collectives over data of the tied embedding's shard (over the model axes) per
/// microbatch with `c.shard`, each as `cost(kind, per-rank bytes)` gives it, summed: its
/// gradient reduce-scattered (gradients and weights sharded), its weights all-gathered for the
/// forward and the backward pass (weights sharded).
fn embedding_comm(t: &Transformer, c: &Config, cost: impl Fn(Kind, f64) -> f64) -> f64 {
    let [_, _, x, y] = c.parallel.0;
    let w_split = match c.partition.weight {
        Split::OneD => y,
        Split::TwoD => y * x,
    } as f64;
    let bytes = (t.vocabulary * t.d_model) as f64 / w_split * ELEM;
    let mut total = 0.0;
    if c.shard.gradients() {
        total += cost(Kind::ReduceScatter, bytes);
    }
    if c.shard.weights() {
        total += 2.0 * cost(Kind::AllGather, bytes);
    }
    total
}

/// The weights a chip's optimizer updates, counted against the dense weights' replicas: the
/// dense weights, and the experts' `expert` times over (they have expert times fewer
/// replicas, so each chip updates that much more of them). The weights per chip for a dense
/// model.
fn updated_weights(sh: &Shard, expert: u64) -> f64 {
    if sh.expert_weights_per_chip > 0.0 {
        sh.weights_per_chip - sh.expert_weights_per_chip
            + sh.expert_weights_per_chip * expert.max(1) as f64
    } else {
        sh.weights_per_chip
    }
}

/// The bytes a pipeline stage sends per microbatch (its output activations).
fn send_bytes_of(t: &Transformer, sh: &Shard, c: &Config) -> f64 {
    let y = c.parallel.of(Axis::Model2) as f64;
    let a_split = if c.activations_split() { y } else { 1.0 };
    sh.tokens as f64 * t.d_model as f64 * ELEM / a_split
}

/// The bytes a rank puts on the wire in a ring collective of `kind` over `f` ranks with a
/// per-rank buffer of `bytes` (nccl-tests' convention).
fn ring_wire_bytes(kind: Kind, f: f64, bytes: f64) -> f64 {
    if f <= 1.0 {
        return 0.0;
    }
    let share = (f - 1.0) / f * bytes;
    match kind {
        Kind::AllReduce => 2.0 * share,
        _ => share,
    }
}

fn compose(
    t: &Transformer,
    m: &Machine,
    c: &Config,
    measured: Option<LayerTimes>,
) -> Result<StepReport, TrainError> {
    spans(m, c)?;
    Prepared::new(t, m, c)?.finish(t, m, c.mapping, measured)
}

/// The step of `c` with closed-form collectives.
pub fn analytic(t: &Transformer, m: &Machine, c: &Config) -> Result<StepReport, TrainError> {
    compose(t, m, c, None)
}

/// The step of `c` with its per-layer collectives measured on the network model `model_for`
/// builds (the flow model for `--model-fidelity flow`).
pub fn measured(
    t: &Transformer,
    m: &Machine,
    net: &Network,
    c: &Config,
    model_for: &mut dyn FnMut() -> Result<Box<dyn NetworkModel>, String>,
) -> Result<StepReport, TrainError> {
    let layer = flow_layers(t, m, net, c, model_for)?;
    compose(t, m, c, Some(layer))
}

/// Microbatch counts worth trying for `c`'s batch: the divisors of the sequences per shard,
/// smallest first.
pub fn microbatch_choices(c: &Config) -> Vec<u64> {
    let [_, d, x, _] = c.parallel.0;
    let replicas = d * x;
    if replicas == 0 || !c.batch.is_multiple_of(replicas) {
        return Vec::new();
    }
    let per = c.batch / replicas;
    (1..=per).filter(|k| per.is_multiple_of(*k)).collect()
}

/// The fastest microbatch count for `c` that fits in memory (closed form), or the fastest of
/// all when none fits.
pub fn best_microbatches(t: &Transformer, m: &Machine, c: &Config) -> Result<Config, TrainError> {
    let mut best: Option<(bool, f64, Config)> = None;
    let mut last_err = None;
    for k in microbatch_choices(c) {
        let cand = Config {
            microbatches: k,
            ..*c
        };
        match analytic(t, m, &cand) {
            Ok(r) => {
                let key = (r.fits_in_memory, r.throughput_seqs_per_s);
                let better = match &best {
                    None => true,
                    Some((f, tp, _)) => (key.0 && !f) || (key.0 == *f && key.1 > *tp),
                };
                if better {
                    best = Some((key.0, key.1, cand));
                }
            }
            Err(e) => last_err = Some(e),
        }
    }
    best.map(|b| b.2)
        .ok_or_else(|| last_err.unwrap_or(TrainError::NoMicrobatches { batch: c.batch }))
}
