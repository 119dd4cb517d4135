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
    /// Weights per chip (largest stage, with the embedding).
    pub(crate) weights_per_chip: f64,
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
    let seqs = per_shard / c.microbatches;
    let tokens = seqs * t.sequence;
    let layers_per_stage = t.layers.div_ceil(p);
    let emb = (t.vocabulary * t.d_model) as f64;
    let stage_params = layers_per_stage as f64 * t.layer_params() + emb;
    let w_split = match c.partition.weight {
        Split::OneD => y,
        Split::TwoD => y * x,
    } as f64;
    let weights_per_chip = stage_params / w_split;
    // Replicas of each weight shard: data, and model1 when weights are not split over it.
    let weight_replicas = match c.partition.weight {
        Split::OneD => d * x,
        Split::TwoD => d,
    } as f64;
    let a_split = match c.partition.activation {
        Split::OneD => 1,
        Split::TwoD => y,
    } as f64;
    let e = t.d_model as f64;
    let layer_input = tokens as f64 * e * ELEM / a_split;
    let in_flight = c.microbatches.min(p) as f64;
    let heads_chip = t.heads.div_ceil(y) as f64;
    let s = t.sequence as f64;
    let scores = seqs as f64 * heads_chip * s * s * ELEM;
    let f = t.d_ff as f64 * (t.ffn_matrices - 1) as f64 / y as f64;
    // Activations of one layer that the backward pass reads: inputs of the six GEMMs, the
    // attention probabilities and the feed-forward hidden activations.
    let layer_acts = tokens as f64 * ELEM * (4.0 * e / a_split + 2.0 * f)
        + scores
        + tokens as f64 * ELEM * 3.0 * (t.heads * t.head_dim()) as f64 / y as f64;
    let activations = match c.remat {
        Remat::Full => in_flight * layers_per_stage as f64 * layer_input,
        Remat::None => in_flight * layers_per_stage as f64 * layer_acts,
    };
    // Weights gathered for the layer computing and the one prefetched: over model1 (2D
    // weights, as the layers always did, even with model1 = 1) or over data (`--shard
    // weights`), each a layer's whole model2 shard.
    let gathered = if c.partition.weight == Split::TwoD || c.shard.weights() {
        2.0 * t.layer_params() / y as f64 * ELEM
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
        optimizer: weights_per_chip * 12.0 / weight_replicas,
        activations,
        workspace,
    };
    Ok(Shard {
        tokens,
        seqs,
        layers_per_stage,
        weights_per_chip,
        memory,
    })
}
