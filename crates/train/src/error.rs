//! Why a training step, a machine or a partition spec cannot be had: [`TrainError`].

use podsim_report::sweep_file::SweepFileError;
use podsim_system::presets::EndpointError;
use podsim_system::tpu_v4::SliceError;
use podsim_system::workload::WorkloadError;

use crate::Parallel;

/// Why a configuration cannot run, a network is not a machine a step takes, or a partition
/// spec, mapping or CMEM setting is not understood. Every variant but [`TrainError::Flow`],
/// [`TrainError::Workload`] and [`TrainError::Memo`] is bad input, and
/// [`TrainError::Elsewhere`] where it says so (see [`TrainError::is_input`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainError {
    /// Gradients or weights sharded over a data axis of one chip: there is nothing to shard
    /// them over.
    #[error(
        "--shard {shard} splits over the data axis, and the partition spec {parallel} has data = 1; shard with data > 1, or --shard none"
    )]
    ShardWithoutData {
        /// The sharding stage.
        shard: &'static str,
        /// The partition spec.
        parallel: Parallel,
    },
    /// Sequence parallelism without a tensor axis to split the sequence over.
    #[error(
        "--sequence-parallel splits the sequence over model2, and the partition spec {parallel} has model2 = 1: it would have no effect; give model2 > 1 or drop the flag"
    )]
    SequenceParallelWithoutModel2 {
        /// The partition spec.
        parallel: Parallel,
    },
    /// Sequence parallelism with 2D activations, which are already split over model2.
    #[error(
        "--sequence-parallel splits the activations over model2, and 2D activations (--partition 2d/...) already are (along d_model): it would have no effect; use 1d activations or drop the flag"
    )]
    SequenceParallelWith2d,
    /// An expert axis where the partition spec is read without one (a validation case).
    #[error("`{spec}`: the expert axis is not taken here; give the four axes")]
    ExpertNotTaken {
        /// The spec as given.
        spec: String,
    },
    /// An expert axis on a dense model.
    #[error(
        "--parallel expert={expert}: the model {model} is dense (no `experts` key), so the expert axis would have no effect; drop it or give the model experts"
    )]
    ExpertOnDense {
        /// The expert axis's size.
        expert: u64,
        /// The model's name.
        model: String,
    },
    /// An expert axis that does not divide the data axis it is carved from.
    #[error(
        "--parallel expert={expert}: the expert axis is carved out of the data axis, and {expert} does not divide data = {data}"
    )]
    ExpertNotInData {
        /// The expert axis's size.
        expert: u64,
        /// The data axis's size.
        data: u64,
    },
    /// Experts that do not split evenly over the expert axis.
    #[error(
        "--parallel expert={expert}: the model's {experts} experts do not split evenly over {expert} chips (give an expert axis that divides {experts})"
    )]
    ExpertsSplit {
        /// The expert axis's size.
        expert: u64,
        /// The model's experts per MoE layer.
        experts: u64,
    },
    /// Gradients or weights sharded over data on an MoE model.
    #[error(
        "--shard {shard} with a mixture of experts is not modelled (its experts' state would shard over the expert replicas); use --shard none or optimizer"
    )]
    ShardWithExperts {
        /// The sharding stage.
        shard: &'static str,
    },
    /// Virtual stages of 0.
    #[error("--virtual-stages must be at least 1 (1: no interleaving)")]
    NoVirtualStages,
    /// Virtual stages without a pipeline.
    #[error(
        "--virtual-stages {virtual_stages} interleaves pipeline stages, and the partition spec {parallel} has pipeline = 1: it would have no effect; give pipeline > 1 or --virtual-stages 1"
    )]
    VirtualStagesWithoutPipeline {
        /// Chunks per stage asked for.
        virtual_stages: u64,
        /// The partition spec.
        parallel: Parallel,
    },
    /// Layers that do not split into pipeline x virtual stages chunks.
    #[error(
        "--virtual-stages {virtual_stages}: {layers} layers do not split into pipeline {pipeline} x {virtual_stages} chunks of equal size"
    )]
    VirtualStagesLayers {
        /// Chunks per stage asked for.
        virtual_stages: u64,
        /// Pipeline stages.
        pipeline: u64,
        /// The model's layers.
        layers: u64,
    },
    /// Microbatches that are not a multiple of the pipeline stages (Megatron-LM's rule for
    /// its interleaved schedule).
    #[error(
        "--virtual-stages {virtual_stages}: the interleaved schedule needs microbatches a multiple of pipeline = {pipeline} (Megatron-LM's rule), not {microbatches}"
    )]
    VirtualStagesMicrobatches {
        /// Chunks per stage asked for.
        virtual_stages: u64,
        /// Pipeline stages.
        pipeline: u64,
        /// Microbatches per step.
        microbatches: u64,
    },
    /// The chip is not a TPU whose HBM capacity Table 4 gives.
    #[error("training steps run on TPU chips (tpuv4, tpuv3), not {chip}")]
    NotTpu {
        /// The chip's name.
        chip: String,
    },
    /// The network is not a k-ary n-cube.
    #[error("training steps map axes onto torus dimensions, and {network} is not a mesh or torus")]
    NotCube {
        /// The network's shorthand.
        network: String,
    },
    /// The torus has no dimension or more than three.
    #[error("{network} has {dims} dimensions; training steps take 1 to 3")]
    Dimensions {
        /// The network's shorthand.
        network: String,
        /// Its dimensions.
        dims: usize,
    },
    /// The network's endpoint overhead is not one it has.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// A machine file's step was asked of a network that is not a machine file's.
    #[error("{network} is not a machine file's network")]
    NotMachineFile {
        /// The network's shorthand.
        network: String,
    },
    /// The machine file's rank grid has no dimension or more than three.
    #[error("{machine} has a rank grid of {dims} dimensions; training steps take 1 to 3")]
    RankGrid {
        /// The machine's label.
        machine: String,
        /// Its grid's dimensions.
        dims: usize,
    },
    /// Chip 0 of a machine file reaches no chip along a dimension of the rank grid.
    #[error("{machine}: chip 0 has no route to chip {chip}")]
    NoRoute {
        /// The machine's label.
        machine: String,
        /// The chip it cannot reach.
        chip: u64,
    },
    /// A route took a link the network does not have.
    #[error("{machine}: a route left its links")]
    RouteOffLinks {
        /// The machine's label.
        machine: String,
    },
    /// The machine file's chip is not one a step can time (the system crate's message).
    #[error("{0}")]
    Chip(String),
    /// A chip preset the step needs is missing.
    #[error("{chip} is missing from the chip presets")]
    MissingPreset {
        /// The preset's name.
        chip: &'static str,
    },
    /// `--cmem` was given for a chip without CMEM.
    #[error("the {chip} chip has no CMEM, so the setting has no effect; drop the flag")]
    NoCmem {
        /// The chip's name.
        chip: String,
    },
    /// A CMEM setting other than `on` or `off`.
    #[error("`{setting}` is not on or off")]
    CmemSetting {
        /// The setting given.
        setting: String,
    },
    /// The bracket form of a partition spec without four sizes.
    #[error("`{spec}`: `[P, D, M1, M2]` takes four sizes")]
    ParallelSizes {
        /// The spec as given.
        spec: String,
    },
    /// An axis size that is not a whole number.
    #[error("`{value}` is not a whole number")]
    NotWholeNumber {
        /// The size as given.
        value: String,
    },
    /// A part of a partition spec that is not `AXIS=SIZE`.
    #[error("`{part}`: expected AXIS=SIZE")]
    ExpectedAxisSize {
        /// The part as given.
        part: String,
    },
    /// A name that is not one of the four axes.
    #[error("`{name}` is not an axis (pipeline, data, model1, model2)")]
    NotAxis {
        /// The name as given.
        name: String,
    },
    /// An axis named twice.
    #[error("`{axis}` is given twice")]
    AxisTwice {
        /// The axis.
        axis: String,
    },
    /// An axis the named form of a partition spec leaves out.
    #[error("`{axis}` is missing (give all four: pipeline=P,data=D,model1=M1,model2=M2)")]
    AxisMissing {
        /// The axis.
        axis: &'static str,
    },
    /// An axis size of 0 or above 2^20.
    #[error("`{axis}` must be between 1 and 2^20, not {size}")]
    AxisSize {
        /// The axis.
        axis: &'static str,
        /// Its size.
        size: u64,
    },
    /// A mapping that does not name all four axes.
    #[error("`{mapping}`: name all four axes, fastest first (e.g. model2,model1,data,pipeline)")]
    MappingAxes {
        /// The mapping as given.
        mapping: String,
    },
    /// A validation case's system does not build.
    #[error("{system}: {why}")]
    Build {
        /// The system's name.
        system: String,
        /// Why it does not build.
        why: String,
    },
    /// Neither the case nor the model gives a batch.
    #[error("the model {model} states no batch")]
    NoBatch {
        /// The model's name.
        model: String,
    },
    /// No mapping of the axes fits the slice.
    #[error("no mapping fits")]
    NoMappingFits,
    /// The partition spec needs another number of chips than the slice has.
    #[error("the partition spec {parallel} needs {needs} chips but the slice has {chips}")]
    ChipCount {
        /// The partition spec.
        parallel: Parallel,
        /// The chips it needs.
        needs: u64,
        /// The chips the slice has.
        chips: u64,
    },
    /// An axis that does not split a dimension of the slice evenly where the mapping lays it.
    #[error(
        "axis {axis} of {size} (laid after {after} chips) does not split dimension {dim} of {length} evenly"
    )]
    Uneven {
        /// The axis.
        axis: &'static str,
        /// Its size.
        size: u64,
        /// The chips the axes before it take.
        after: u64,
        /// The dimension (`x`, `y` or `z`).
        dim: &'static str,
        /// The dimension's chips.
        length: u32,
    },
    /// The batch does not split over the data and model1 replicas.
    #[error("the batch of {batch} sequences does not split over data x model1 = {replicas}")]
    BatchSplit {
        /// The global batch, sequences.
        batch: u64,
        /// data x model1.
        replicas: u64,
    },
    /// A shard's sequences do not split into the microbatches.
    #[error(
        "{per_shard} sequences per data/model1 shard do not split into {microbatches} microbatches"
    )]
    MicrobatchSplit {
        /// Sequences per data/model1 shard.
        per_shard: u64,
        /// Microbatches asked for.
        microbatches: u64,
    },
    /// More pipeline stages than layers.
    #[error("{stages} pipeline stages for {layers} layers")]
    Stages {
        /// Pipeline stages.
        stages: u64,
        /// The model's layers.
        layers: u64,
    },
    /// model2 splits the attention heads finer than one head.
    #[error("model2 = {model2} splits {heads} attention heads finer than one head")]
    Heads {
        /// model2's size.
        model2: u64,
        /// The model's attention heads.
        heads: u64,
    },
    /// No microbatch count fits the batch.
    #[error("the batch of {batch} does not split over data x model1")]
    NoMicrobatches {
        /// The global batch, sequences.
        batch: u64,
    },
    /// The chip's matrix units cannot run a GEMM (the system crate's message).
    #[error("{0}")]
    Gemm(String),
    /// The pod cannot make a slice of the search's shape.
    #[error(transparent)]
    Slice(#[from] SliceError),
    /// The pod made a slice and then did not have it.
    #[error("the pod lost the slice it just made")]
    SliceLost,
    /// The search's chips make no slice of 4x4x4 blocks.
    #[error("{chips} chips make no slice of 4x4x4 blocks (a multiple of 64 is needed)")]
    NoSlice {
        /// The chips asked for.
        chips: u64,
    },
    /// The flow model could not be built (its builder's message).
    #[error("flow model: {0}")]
    Flow(String),
    /// The flow-level run of a layer failed.
    #[error("flow model: {0}")]
    Workload(#[from] WorkloadError),
    /// The layer times the flow model measured could not be kept.
    #[error("flow model: {0}")]
    Memo(#[from] SweepFileError),
    /// A survivor timed on another MPI rank failed (`podsim train --search` under `mpirun`,
    /// [`crate::FlowRunner`]), or the ranks could not exchange their times: the message as it
    /// was given there, and whether the input was at fault.
    #[error("{message}")]
    Elsewhere {
        /// The error's message.
        message: String,
        /// Whether it was bad input ([`TrainError::is_input`] there).
        input: bool,
    },
}

impl TrainError {
    /// Whether the error is the input's (a machine, partition spec, mapping, setting or
    /// configuration a step does not take) rather than a failed run.
    pub fn is_input(&self) -> bool {
        match self {
            TrainError::Elsewhere { input, .. } => *input,
            e => !matches!(
                e,
                TrainError::Flow(_) | TrainError::Workload(_) | TrainError::Memo(_)
            ),
        }
    }
}
