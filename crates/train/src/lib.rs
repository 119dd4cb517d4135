//! Transformer training steps on a TPU v4 slice (tpu-v4-isca2023.txt sections 2.7 and 4,
//! Table 3): a model, a partition spec `[pipeline, data, model1, model2]` with the 1D/2D
//! activation/weight partitioning option, a mapping of the four axes onto the slice's torus
//! dimensions, and the step the combination makes.
//!
//! # podsim's reading of the partitioning (after GSPMD, Xu et al. 2021, Fig. 7)
//!
//! * `model2` (Y) is the tensor axis: attention heads and the feed-forward hidden dimension are
//!   split over it (Megatron style). Activations between blocks are replicated over Y (1D
//!   activation: an all-reduce over Y after each block, forward and backward) or split over Y
//!   along d_model as well (2D activation: an all-gather over Y before each block and a
//!   reduce-scatter after it; the same bytes, less memory and vector work per chip).
//! * `model1` (X) splits the batch of the activations (each X shard computes its own tokens).
//!   With 1D weights the weights are replicated over X and their gradients join the data
//!   parallel sum at the end of the step; with 2D weights they are also split over X along
//!   d_model and all-gathered over X before each layer's forward and backward (overlapped with
//!   the previous layer's work), their gradients reduce-scattered over X.
//! * `data` (D) replicates the model; gradients are summed over D (and X for 1D weights) once
//!   per step, overlapped with the last microbatch's backward pass. Optimizer state (fp32
//!   master weights, Adam's two moments) is split over every replica of a weight (weight-update
//!   sharding, Xu et al. 2020).
//! * Sharding over data ([`Sharding`], `--shard`, the ZeRO stages): `optimizer` is that
//!   default (ZeRO-1); `gradients` (ZeRO-2) also splits the gradient accumulators over D,
//!   each layer's gradient reduce-scattered over D after its backward pass and the updated
//!   weights all-gathered once a step; `weights` (ZeRO-3 / FSDP) also splits the bf16 weights,
//!   each layer's gathered over D before its forward and backward passes (prefetched) and its
//!   gradient reduce-scattered after, as the 2D weights are over X.
//! * `pipeline` (P) splits the layers into P stages; microbatches follow a 1F1B schedule (the
//!   GPipe bubble of (P - 1) stage times; at most P microbatches of activations in flight).
//!   Each chip sends its activation shard to its counterpart in the next stage. With V
//!   virtual stages (`--virtual-stages`, Megatron-LM's interleaved 1F1B, Narayanan et al.
//!   SC'21) each stage holds V chunks of layers: the bubble is (P - 1)/V stage times, a
//!   microbatch crosses V stage boundaries a stage each way, and the first stage keeps
//!   L(1 + (P - 1)/(PV)) layers of activations (Korthikanti et al. 2022, section 4.2.3).
//! * Sequence parallelism (`--sequence-parallel`, Korthikanti et al. 2022, section 4.2.2):
//!   with 1D activations, the activations between the blocks split over Y along the
//!   sequence, as 2D activations split them along d_model: an all-gather over Y before each
//!   block and a reduce-scatter after it replace the all-reduce, the layer norms and
//!   residuals work on 1/Y of the tokens, and with the blocks' inputs kept (not recomputed)
//!   each is gathered again, overlapped, for its weight gradients.
//! * Mixture of experts ([`Moe`], GShard: Lepikhin et al. 2021; Switch: Fedus et al. 2022;
//!   GLaM: Du et al. 2022): every `every`-th layer's feed-forward is `experts` feed-forward
//!   networks, of which a router picks `per_token` for each token. The expert axis E
//!   ([`Config::expert`], `expert=E` in `--parallel`) is carved out of the data axis, as GShard
//!   and GLaM shard experts over the data-parallel replicas: E divides data, each chip holds
//!   experts/E of each MoE layer's experts (split over the model axes as a dense feed-forward
//!   is), and its tokens x per_token x capacity factor rows (each expert padded to its
//!   capacity) go to the chips holding their experts in a dispatch all-to-all over the E chips
//!   and come back in a combine all-to-all (tokens x d_model x per_token x capacity factor x 2
//!   bytes a chip each; with model2 > 1 each tensor rank exchanges the tokens it holds), forward,
//!   again when a full recomputation reruns the forward, and backward (their gradients): six a
//!   MoE layer and microbatch with `full`, four without. The experts' gradients are summed over
//!   their data/E replicas only, and their optimizer state split over those. MFU counts the
//!   weights a token uses (its per_token experts, not the capacity's padding). Sharding
//!   gradients or weights over data is not modelled with experts.
//! * Rematerialisation (`full`, the default): a layer keeps only its input and recomputes its
//!   forward pass (with its collectives) before its backward pass; `selective` (Korthikanti
//!   et al., section 4.3) keeps all but the attention scores and recomputes the attention's
//!   QK^T, softmax and weighted sum of the values; `none` keeps everything.
//!
//! # The step
//!
//! Per layer and microbatch each chip runs the GEMMs of its shard on the chip's matrix units
//! ([`podsim_system::workload::Arrays::gemm_time`]: the weight-stationary tiling model of
//! `podsim-compute`), each no faster than its HBM traffic (operands and result read or
//! written once), the attention score traffic (four passes over the scores, no fusion) and the
//! layer norms, residuals and activation function as memory-bound vector work. Collectives run
//! on the chips of their axis as the mapping places them: the closed form times them as
//! contention-free rings along each dimension the axis spans (a lower bound on what the flow
//! model measures), the flow fidelity runs the layer as a workload on the slice's network with
//! every group at once ([`podsim_system::workload::run`]).
//!
//! # Where each part lives
//!
//! `model` (the transformer and the built-in ones), `parallel` (partition spec, 1D/2D option,
//! mapping, rematerialisation, [`Config`]), `machine` (the chip and slice figures, [`Machine`]),
//! `memory` (the shard and the memory per chip), `layer` (where the axes lie and a layer's ops),
//! `timer` (the closed-form time of an op), `step` (a step: [`Prepared`], [`analytic`],
//! [`measured`], microbatch counts), `flow` (a layer as a workload on the network), `search`
//! (Table 3's search), `case` (a validation case's step), `output` (what `podsim train`
//! prints: [`StepOutput`], [`SearchOutput`], with their text) and `error` (why any of them
//! failed: [`TrainError`]); every public item is named here at the crate's root.

mod case;
mod error;
mod flow;
mod layer;
mod machine;
mod memory;
mod model;
mod output;
mod parallel;
mod search;
mod step;
mod timer;

use podsim_units::SimDuration;

pub use case::TrainCase;
pub use error::TrainError;
pub use flow::{flow_layer, flow_layers, layer_run};
pub use machine::{CMEM_BYTES_PER_S, Machine};
pub use memory::MemoryUse;
pub use model::{MODEL_KEYS, Moe, Transformer};
pub use output::{
    Choose, MemoryOutput, OptimizerParts, SearchEntry, SearchOutput, StepFigures, StepOutput,
    choose, run_search, run_step,
};
pub use parallel::{Axis, Config, Mapping, Parallel, Partition, Remat, Sharding, Split};
pub use search::{
    FlowMemo, FlowRunner, ModelFor, NoMemo, SearchResult, Serial, SliceShape, SurvivorTimes,
    parallel_specs, search, search_by, search_with,
};
pub use step::{
    LayerTimes, Prepared, StepReport, analytic, best_microbatches, measured, microbatch_choices,
};

/// Bytes per element of activations, weights and gradients (bf16).
pub(crate) const ELEM: f64 = 2.0;

/// A duration in seconds as a [`SimDuration`] for reports (saturating).
pub fn secs(s: f64) -> SimDuration {
    SimDuration::from_ps((s * 1e12).clamp(0.0, u64::MAX as f64) as u64)
}
