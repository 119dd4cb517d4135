//! What a configuration keeps on each chip: the shard of the batch and the weights, and the
//! memory they take.

use crate::{Config, ELEM, Remat, Split, TrainError, Transformer};

/// The figures of one configuration that the mapping does not change.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shard {
    /// Tokens per chip per microbatch.
    pub(crate) tokens: u64,
    /// Sequences per chip per microbatch.
    pub(crate) seqs: u64,
    /// Layers per stage (the largest stage).
    pub(crate) layers_per_stage: u64,
    /// Weights per chip (largest stage, with the embedding; the experts this chip holds
    /// included).
    pub(crate) weights_per_chip: f64,
    /// Of them, the experts' (0 for a dense model): their replicas are data / expert (x
    /// model1 with 1D weights), not data.
    pub(crate) expert_weights_per_chip: f64,
    /// MoE layers in the largest stage (0 for a dense model); its other layers are dense.
    pub(crate) moe_layers_per_stage: u64,
    pub(crate) memory: MemoryUse,
}

/// Memory per chip, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MemoryUse {
    /// bf16 weights.
    pub weights: f64,
    /// bf16 gradient accumulators.
    pub gradients: f64,
    /// fp32 master weights and Adam's two moments.
    pub optimizer: f64,
    /// Activations kept for the backward pass.
    pub activations: f64,
    /// The working set of one layer (gathered weights, its activations, attention scores).
    pub workspace: f64,
}

impl MemoryUse {
    /// The sum.
    pub fn total(&self) -> f64 {
        self.weights + self.gradients + self.optimizer + self.activations + self.workspace
    }
}

pub(crate) fn shard(t: &Transformer, c: &Config) -> Result<Shard, TrainError> {
    let [p, d, x, y] = c.parallel.0;
    let replicas = d * x;
    if !c.batch.is_multiple_of(replicas) {
        return Err(TrainError::BatchSplit {
            batch: c.batch,
            replicas,
        });
    }
    if d == 1 && c.shard.gradients() {
        return Err(TrainError::ShardWithoutData {
            shard: c.shard.name(),
            parallel: c.parallel,
        });
    }
    let per_shard = c.batch / replicas;
    if c.microbatches == 0 || !per_shard.is_multiple_of(c.microbatches) {
        return Err(TrainError::MicrobatchSplit {
            per_shard,
            microbatches: c.microbatches,
        });
    }
    if p > t.layers {
        return Err(TrainError::Stages {
            stages: p,
            layers: t.layers,
        });
    }
    if y > t.heads {
        return Err(TrainError::Heads {
            model2: y,
            heads: t.heads,
        });
    }
    check_schedule(t, c)?;
    check_experts(t, c)?;
    let seqs = per_shard / c.microbatches;
    let tokens = seqs * t.sequence;
    let layers_per_stage = t.layers.div_ceil(p);
    let emb = (t.vocabulary * t.d_model) as f64;
    // The largest stage's MoE layers: the model's, spread over the stages, at most its layers.
    let moe_layers_per_stage = t.moe_layers().div_ceil(p).min(layers_per_stage);
    let w_split = match c.partition.weight {
        Split::OneD => y,
        Split::TwoD => y * x,
    } as f64;
    // Replicas of each weight shard: data, and model1 when weights are not split over it.
    let weight_replicas = match c.partition.weight {
        Split::OneD => d * x,
        Split::TwoD => d,
    } as f64;
    let (weights_per_chip, expert_weights_per_chip) = match &t.moe {
        None => {
            let stage_params = layers_per_stage as f64 * t.layer_params() + emb;
            (stage_params / w_split, 0.0)
        }
        Some(moe) => {
            // Each chip of an expert group holds experts / expert of each MoE layer's experts,
            // split over the model axes as a dense feed-forward is.
            let dense = (layers_per_stage - moe_layers_per_stage) as f64 * t.layer_params()
                + moe_layers_per_stage as f64 * (t.attention_params() + t.router_params())
                + emb;
            let local = (moe.experts / c.expert.max(1)) as f64;
            let experts = moe_layers_per_stage as f64 * local * t.expert_params();
            ((dense + experts) / w_split, experts / w_split)
        }
    };
    let dense_weights_per_chip = weights_per_chip - expert_weights_per_chip;
    let a_split = if c.activations_split() { y } else { 1 } as f64;
    let e = t.d_model as f64;
    let layer_input = tokens as f64 * e * ELEM / a_split;
    let kept_layers = kept_layers(t, c, layers_per_stage);
    let heads_chip = t.heads.div_ceil(y) as f64;
    let s = t.sequence as f64;
    let scores = seqs as f64 * heads_chip * s * s * ELEM;
    let f = t.d_ff as f64 * (t.ffn_matrices - 1) as f64 / y as f64;
    // Activations of one layer that the backward pass reads: inputs of the six GEMMs, the
    // attention probabilities and the feed-forward hidden activations. In Korthikanti et al.
    // 2022's terms (s tokens, b sequences, h = d_model, a heads, t = model2; bytes), podsim
    // keeps of their sbh(10 + 24/t) + 5as^2b/t a layer under tensor parallelism (Eq. 2) the
    // 8sbh of the two layer norms' inputs and the two blocks' inputs (theirs less the two
    // sbh dropout masks: podsim models no dropout), which sequence parallelism splits over
    // t (Eq. 3: sbh(34/t + 5as^2b/(ht))) as 2D activations do: `a_split`.
    let mut layer_acts = tokens as f64 * ELEM * (4.0 * e / a_split + 2.0 * f)
        + scores
        + tokens as f64 * ELEM * 3.0 * (t.heads * t.head_dim()) as f64 / y as f64;
    if let Some(moe) = &t.moe {
        // An MoE layer keeps, in place of the dense feed-forward's hidden activations, its
        // experts' (tokens x experts_per_token x capacity factor rows), and the dispatched
        // tokens in and the experts' outputs before the combine; the stage's layers on
        // average.
        let rows = expert_rows(tokens, moe) as f64;
        let fe = t.d_ff as f64 * (moe.ffn_matrices - 1) as f64 / y as f64;
        let moe_acts =
            layer_acts - tokens as f64 * ELEM * 2.0 * f + rows * ELEM * (2.0 * fe + 2.0 * e);
        let m = moe_layers_per_stage as f64;
        let n = layers_per_stage as f64;
        layer_acts = ((n - m) * layer_acts + m * moe_acts) / n;
    }
    // Selective recomputation (Korthikanti et al. 2022, section 4.3) drops what scales with
    // s^2: their 5as^2b of Eq. 1 (softmax output, its dropout mask and output), podsim's
    // `scores` (no dropout modelled). Their Table 2, tensor and sequence parallel with
    // selective recomputation: sbh x 34/t a layer, every term split over the tensor axis.
    let activations = match c.remat {
        Remat::Full => kept_layers * layer_input,
        Remat::None => kept_layers * layer_acts,
        Remat::Selective => kept_layers * (layer_acts - scores),
    };
    // Weights gathered for the layer computing and the one prefetched: over model1 (2D
    // weights, as the layers always did, even with model1 = 1) or over data (`--shard
    // weights`), each a layer's whole model2 shard.
    let gathered = if c.partition.weight == Split::TwoD || c.shard.weights() {
        let moe_layer = match &t.moe {
            Some(moe) if moe_layers_per_stage > 0 => {
                t.attention_params()
                    + t.router_params()
                    + (moe.experts / c.expert.max(1)) as f64 * t.expert_params()
            }
            _ => 0.0,
        };
        2.0 * t.layer_params().max(moe_layer) / y as f64 * ELEM
    } else {
        0.0
    };
    // With the gradients sharded over data, a layer's gradient shard (over the model axes), or
    // the embedding's, is whole until its reduce-scatter over data ends: the larger of them.
    let layer_grad = if c.shard.gradients() {
        t.layer_params().max(emb) / w_split * ELEM
    } else {
        0.0
    };
    // With the weights sharded, the tied embedding (input lookup, logits) is gathered whole
    // (its model shard) while the first and last stage use it.
    let embedding = if c.shard.weights() {
        emb / w_split * ELEM
    } else {
        0.0
    };
    let workspace = layer_acts + gathered + layer_grad + embedding;
    let over_data = |yes: bool| if yes { d as f64 } else { 1.0 };
    let memory = MemoryUse {
        weights: weights_per_chip * ELEM / over_data(c.shard.weights()),
        gradients: weights_per_chip * ELEM / over_data(c.shard.gradients()),
        optimizer: if expert_weights_per_chip > 0.0 {
            dense_weights_per_chip * 12.0 / weight_replicas
                + expert_weights_per_chip * 12.0 * c.expert.max(1) as f64 / weight_replicas
        } else {
            weights_per_chip * 12.0 / weight_replicas
        },
        activations,
        workspace,
    };
    Ok(Shard {
        tokens,
        seqs,
        layers_per_stage,
        weights_per_chip,
        expert_weights_per_chip,
        moe_layers_per_stage,
        memory,
    })
}

/// The rows an MoE layer's experts on a chip compute per microbatch: its tokens x
/// experts_per_token x capacity factor (each of the group's experts padded to its capacity),
/// rounded up.
pub(crate) fn expert_rows(tokens: u64, moe: &crate::model::Moe) -> u64 {
    ((tokens * moe.per_token) as f64 * moe.capacity_factor).ceil() as u64
}

/// The expert axis asks for: an MoE model (else it has no effect), a size dividing data and
/// the experts; an MoE model takes no sharding of gradients or weights over data.
fn check_experts(t: &Transformer, c: &Config) -> Result<(), TrainError> {
    let e = c.expert.max(1);
    let d = c.parallel.of(crate::Axis::Data);
    match &t.moe {
        None if e > 1 => Err(TrainError::ExpertOnDense {
            expert: e,
            model: t.name.clone(),
        }),
        None => Ok(()),
        Some(_) if c.shard.gradients() => Err(TrainError::ShardWithExperts {
            shard: c.shard.name(),
        }),
        Some(_) if !d.is_multiple_of(e) => Err(TrainError::ExpertNotInData { expert: e, data: d }),
        Some(moe) if !moe.experts.is_multiple_of(e) => Err(TrainError::ExpertsSplit {
            expert: e,
            experts: moe.experts,
        }),
        Some(_) => Ok(()),
    }
}

/// Sequence parallelism and the interleaved schedule ask for: model2 > 1 and 1D activations
/// (else the flag has no effect); pipeline > 1, layers in pipeline x V equal chunks and
/// microbatches a multiple of pipeline (Megatron-LM's rule for its interleaved schedule).
fn check_schedule(t: &Transformer, c: &Config) -> Result<(), TrainError> {
    let [p, _, _, y] = c.parallel.0;
    if c.sequence_parallel && y == 1 {
        return Err(TrainError::SequenceParallelWithoutModel2 {
            parallel: c.parallel,
        });
    }
    if c.sequence_parallel && c.partition.activation == Split::TwoD {
        return Err(TrainError::SequenceParallelWith2d);
    }
    let v = c.virtual_stages;
    if v == 0 {
        return Err(TrainError::NoVirtualStages);
    }
    if v == 1 {
        return Ok(());
    }
    if p == 1 {
        return Err(TrainError::VirtualStagesWithoutPipeline {
            virtual_stages: v,
            parallel: c.parallel,
        });
    }
    if !t.layers.is_multiple_of(p * v) {
        return Err(TrainError::VirtualStagesLayers {
            virtual_stages: v,
            pipeline: p,
            layers: t.layers,
        });
    }
    if !c.microbatches.is_multiple_of(p) {
        return Err(TrainError::VirtualStagesMicrobatches {
            virtual_stages: v,
            pipeline: p,
            microbatches: c.microbatches,
        });
    }
    Ok(())
}

/// Layers' worth of activations the first stage (the one that keeps the most) holds at once.
///
/// * 1F1B (one chunk a stage): min(m, p) microbatches in flight, each through the stage's
///   layers.
/// * Interleaved, V chunks of L/(pV) layers a stage (Megatron-LM's
///   `forward_backward_pipelining_with_interleaving`): the first stage runs
///   2(p - 1) + (V - 1)p warm-up forward chunks (all m V when m = p) and one more before its
///   first backward: min((V + 1)p - 1, m V) chunks of L/(pV) layers, that is
///   L (1 + (p - 1)/(p V)) layers for m > p: Korthikanti et al. 2022, section 4.2.3 (their
///   m is the interleaving stages), against L for 1F1B with m >= p.
fn kept_layers(t: &Transformer, c: &Config, layers_per_stage: u64) -> f64 {
    let [p, ..] = c.parallel.0;
    let v = c.virtual_stages;
    if v <= 1 {
        return c.microbatches.min(p) as f64 * layers_per_stage as f64;
    }
    let chunks = ((v + 1) * p - 1).min(c.microbatches * v);
    chunks as f64 * (t.layers / (p * v)) as f64
}
