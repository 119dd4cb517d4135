//! The eight production applications of tpu-v4-isca2023.txt section 5 (Figs. 11-13: CNN0,
//! CNN1, RNN0, RNN1, BERT0, BERT1, DLRM0, DLRM1), as PUBLIC models of the same kind, each
//! trained data-parallel on a TPU v4 slice and on a TPU v3 slice of the same chip count: the
//! step times, v4 over v3, and CMEM on over off (Figs. 12 and 13), predicted from the chips'
//! mechanisms with nothing fitted to those figures.
//!
//! The paper publishes only each application's kind (and a few words: RNN1's "small weights and
//! small batch size", DLRM0's use of bisection, DLRM0's 137M weights in section 7.9). The shapes
//! here come from public models of each kind, chosen before any result was seen; each
//! [`App`] names its source. They stand in for Google's internal models and are not them.
//!
//! # The step (CNNs, RNNs, BERTs)
//!
//! A [`DenseModel`] is a list of [`Op`]s per chip: GEMMs (convolutions as im2col GEMMs,
//! LSTM gates, transformer projections and attention) and vector work (batch norm, ReLU,
//! depthwise convolutions, LSTM gate functions, softmax, layer norm). The step is a
//! [`Workload`] run by the workload executor ([`podsim_system::workload::run`]) on the
//! slice's flow model:
//!
//! * each GEMM is a compute task on the chip's matrix units timed by [`gemm_time`] (the
//!   weight-stationary tiling model of `podsim-compute`: 8 MXUs on v4, 4 on v3, at their clocks,
//!   each double-buffering its weight tile so the next tile shifts in while the current one
//!   computes, `podsim_compute::gemm::WeightLoad::DoubleBuffered`; the product split over the
//!   units along rows or columns, whichever is faster), beside
//!   `memory` tasks for its
//!   traffic: activations in and out from HBM (1200 vs 900 GB/s), the weight from HBM or, on
//!   TPU v4 with CMEM on, from CMEM when the weights it is reused with fit in CMEM's 128 MiB
//!   (the executor's rule: a memory task whose working set fits streams at CMEM bandwidth). The
//!   working set of a weight: for a recurrence (an LSTM's timesteps), the recurrent weights of
//!   its stack, read again every timestep; for any other layer, every weight of the model (a
//!   weight is read once forward and once backward, so it can stay on chip only if all do).
//!   A layer takes the longer of its GEMM and its traffic (they run on different resources);
//!   the next layer waits for both.
//! * vector work is memory-bound: its bytes stream from HBM (the VPU's ALUs are not the limit
//!   for these element-wise passes; podsim's TPU presets state no VPU rate). A convolution's
//!   batch norm and activation are fused into the kernels around it as XLA fuses them, leaving
//!   the batch statistics' passes ([`BATCH_NORM_PASSES`]: 1 pass over the output forward, 4
//!   backward); the LSTMs' gate functions, the softmaxes, BERT's layer norms and GELUs stay
//!   passes of their own (read and write forward, twice that backward), an assumption not
//!   revisited here.
//! * backward: per GEMM, the input gradient (reading the weight again) and the weight gradient;
//!   a recurrence's weight gradient is one GEMM over all its timesteps after the loop.
//! * gradient all-reduce: the bf16 gradients are summed over all chips (the all-dimensions
//!   all-reduce on the flow model of the slice, [`podsim_collective`]: a share per dimension
//!   and direction, every link at once, as "injection bandwidth limits" a data-parallel
//!   all-reduce, section 3.4), in buckets of at least
//!   [`BUCKET_BYTES`], each issued when its last layer's backward pass is done, overlapping the
//!   rest of the backward pass.
//! * the optimizer update streams each weight's state through HBM once all sums are done.
//!
//! Every chip does the same work (data parallelism, the per-chip batch fixed: weak scaling as
//! Fig. 8's caption has it), so compute and memory tasks run on chip 0 standing for all of them;
//! the collectives run on every chip of the slice.
//!
//! # DLRMs
//!
//! The two DLRMs run through [`crate::dlrm::step`] (SparseCore lookups at the slower of HBM
//! gathers and the SparseCores, the embedding all-to-all and the dense all-reduce on the slice's
//! flow model, the dense GEMMs on the matrix units). That model has no CMEM path: CMEM on or off
//! does not change them.
//!
//! # Slices
//!
//! 64 to 1024 chips, powers of two. TPU v4: the most cube-like slice of 4x4x4 blocks, twisted
//! where twistable (Table 2: 4x4x8_T and 4x8x8_T are the most used 128- and 256-chip slices,
//! 8x8x16_T the most used 1K one). TPU v3: the most square a x b slice ([`crate::dlrm::tpuv3_slice`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use podsim_collective::{Algorithm, Kind};
use podsim_topology::Network;
use podsim_units::{Bytes, Flops, SimDuration};

use crate::dlrm::{Dlrm, Generation, Placement};
use podsim_system::energy::{Activity, ChipPower, Energy};
use podsim_system::workload::{ChipSpec, Group, Task, Unit, Work, Workload};

/// Bytes per element of activations, weights and gradients (bf16).
const ELEM: u64 = 2;

/// Gradients are summed in buckets of at least this many bytes (25 MiB: PyTorch DDP's default
/// bucket, Li et al. 2020, "PyTorch Distributed", VLDB; XLA likewise combines small
/// all-reduces). An assumption about the software, the same on both chips.
pub const BUCKET_BYTES: u64 = 25 << 20;

/// One piece of a model's per-chip work in a training step.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// An `m` x `k` by `k` x `n` product, `count` independent times (attention heads x
    /// sequences), each of `steps` timesteps (1 outside a recurrence).
    Gemm {
        /// What it is.
        name: String,
        /// Rows of the result.
        m: u64,
        /// Columns of the result.
        n: u64,
        /// Reduction length.
        k: u64,
        /// Independent products of this shape.
        count: u64,
        /// Timesteps of the recurrence it belongs to (1: none).
        steps: u64,
        /// Whether the `k` x `n` operand is a trained weight (else both are activations).
        weight: bool,
        /// The recurrent stack it belongs to (0: none): the weights of a stack's recurrent
        /// GEMMs are the working set its timesteps reuse.
        stack: u32,
    },
    /// Element-wise work: bytes through HBM in the forward and the backward pass, per
    /// timestep (`steps` of them).
    Vector {
        /// What it is.
        name: String,
        /// Bytes per forward pass (per timestep).
        bytes: u64,
        /// Bytes per backward pass (per timestep): twice the forward bytes for a pass that
        /// reads its input and writes its output (the backward reads the incoming gradient and
        /// the saved input and writes the outgoing gradient), less where fusion saves passes
        /// (`conv`).
        backward_bytes: u64,
        /// Timesteps (1 outside a recurrence).
        steps: u64,
    },
}

impl Op {
    fn gemm(name: impl Into<String>, m: u64, n: u64, k: u64) -> Op {
        Op::Gemm {
            name: name.into(),
            m,
            n,
            k,
            count: 1,
            steps: 1,
            weight: true,
            stack: 0,
        }
    }
    fn vector(name: impl Into<String>, bytes: u64) -> Op {
        Op::fused(name, bytes, 2 * bytes)
    }
    fn fused(name: impl Into<String>, bytes: u64, backward_bytes: u64) -> Op {
        Op::Vector {
            name: name.into(),
            bytes,
            backward_bytes,
            steps: 1,
        }
    }
    /// Trained weights of the op.
    pub fn weights(&self) -> u64 {
        match self {
            Op::Gemm {
                k, n, weight: true, ..
            } => k * n,
            _ => 0,
        }
    }
}

/// A dense (non-embedding) model's per-chip step.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseModel {
    /// The forward pass, in order.
    pub ops: Vec<Op>,
    /// Bytes of optimizer traffic per weight in the update (read and written: momentum SGD 20,
    /// Adam 28, plain SGD 12).
    pub optimizer_bytes_per_weight: u64,
}

impl DenseModel {
    /// Trained weights.
    pub fn weights(&self) -> u64 {
        self.ops.iter().map(Op::weights).sum()
    }
    /// The recurrent weights of stack `s`, bytes.
    fn stack_bytes(&self, s: u32) -> u64 {
        self.ops
            .iter()
            .filter(|o| matches!(o, Op::Gemm { stack, steps, .. } if *stack == s && *steps > 1))
            .map(Op::weights)
            .sum::<u64>()
            * ELEM
    }
}

/// What an application trains.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// GEMMs and vector work on the TensorCores ([`DenseModel`]).
    Dense(DenseModel),
    /// Embeddings on the SparseCores and dense layers ([`crate::dlrm`]).
    Dlrm(Dlrm),
}

/// One of the eight applications.
#[derive(Debug, Clone, PartialEq)]
pub struct App {
    /// The paper's name (CNN0, ...).
    pub name: &'static str,
    /// The public model that stands in for it.
    pub model: &'static str,
    /// Examples (images, sequences) per chip per step.
    pub batch_per_chip: u64,
    /// Where the shape, batch and optimizer come from.
    pub source: &'static str,
    /// The work.
    pub shape: Shape,
}

/// The paper's names of the eight applications, in Fig. 12's order.
pub const APP_NAMES: [&str; 8] = [
    "CNN0", "CNN1", "RNN0", "RNN1", "BERT0", "BERT1", "DLRM0", "DLRM1",
];

/// Passes over a convolution's output map that its batch norm and activation cost beyond the
/// convolution's own traffic (which reads its input map and writes its output once), forward
/// and backward, when XLA fuses the element-wise work into the kernels around it.
///
/// XLA fuses element-wise operations into the kernels that produce or consume their operands:
/// "Fusion is XLA's single most important optimization ... this fused operation does not write
/// out the intermediate values ... to memory; instead it 'streams' the results of these
/// intermediate computations directly to their users" (the XLA overview, openxla.org/xla and
/// tensorflow.org/xla; its architecture page: XLA "fuses pipelined operations to reduce memory
/// overhead"). What fusion cannot remove is a reduction over the whole batch: training batch
/// norm normalizes with the mean and variance of the mini-batch (Ioffe and Szegedy 2015,
/// Algorithm 1), so no output element can be normalized before the convolution has written
/// its whole map, and its backward needs the sums of the gradient and of the gradient times
/// the normalized input over the batch (their section 3) before any input gradient. The fused
/// kernels' traffic (podsim's reading of those two sources; that a reduction is not fused
/// into the convolution's own output is podsim's assumption, on the slow side):
///
/// * forward, 1 pass: the statistics read the written map once; the normalization and the
///   activation are applied as the next kernel reads the map (the bytes it reads anyway).
/// * backward, 4 passes: the two sums read the incoming gradient and the saved map (2); each
///   of the convolution's two backward GEMMs (input gradient, weight gradient) forms the
///   batch norm's and activation's input gradient as it reads the incoming gradient, reading
///   the saved map beside it (1 each).
///
/// Unfused (what podsim assumed before), the statistics read the map, the normalization reads
/// and writes it and the activation reads and writes it again: 4 passes forward, 8 backward.
pub const BATCH_NORM_PASSES: (u64, u64) = (1, 4);

/// A convolution as an im2col GEMM with its batch norm and activation: `b` images of `hw` x
/// `hw` outputs, `cin` -> `cout` channels, a `kk` x `kk` kernel; the batch norm and the
/// activation fused around it ([`BATCH_NORM_PASSES`]).
fn conv(ops: &mut Vec<Op>, name: &str, b: u64, hw: u64, cin: u64, cout: u64, kk: u64) {
    let m = b * hw * hw;
    let map = m * cout * ELEM;
    ops.push(Op::gemm(name, m, cout, cin * kk * kk));
    ops.push(Op::fused(
        format!("{name} batch norm, activation"),
        BATCH_NORM_PASSES.0 * map,
        BATCH_NORM_PASSES.1 * map,
    ));
}

/// ResNet-50 (He et al. 2016, Table 1; v1.5 as MLPerf trains it, stride on the 3x3): 224 x 224
/// inputs, bottleneck stages of 3, 4, 6, 3 blocks.
pub(crate) fn resnet50(b: u64) -> DenseModel {
    let mut ops = Vec::new();
    conv(&mut ops, "conv1 7x7", b, 112, 3, 64, 7);
    // Max pool: read the 112^2 x 64 map, write the 56^2 one.
    ops.push(Op::vector(
        "max pool",
        b * (112 * 112 + 56 * 56) * 64 * ELEM,
    ));
    let mut cin = 64;
    let mut hw = 56;
    for (stage, (blocks, width)) in [(3u64, 64u64), (4, 128), (6, 256), (3, 512)]
        .into_iter()
        .enumerate()
    {
        let cout = 4 * width;
        for blk in 0..blocks {
            let first = blk == 0;
            let out_hw = if first && stage > 0 { hw / 2 } else { hw };
            let n = format!("stage {} block {}", stage + 2, blk + 1);
            conv(&mut ops, &format!("{n} 1x1 reduce"), b, hw, cin, width, 1);
            conv(&mut ops, &format!("{n} 3x3"), b, out_hw, width, width, 3);
            conv(
                &mut ops,
                &format!("{n} 1x1 expand"),
                b,
                out_hw,
                width,
                cout,
                1,
            );
            if first {
                conv(
                    &mut ops,
                    &format!("{n} projection"),
                    b,
                    out_hw,
                    cin,
                    cout,
                    1,
                );
            }
            // The residual add with the expansion's batch-norm normalization and the ReLU fused
            // into it: read the two maps, write the sum once (two kernels read it, the next
            // block's first convolution and its shortcut, so it is written, not recomputed).
            // Backward: add the two incoming gradients and apply the ReLU's mask (read the
            // two and the saved sum, write one: 4 passes).
            let map = b * out_hw * out_hw * cout * ELEM;
            ops.push(Op::fused(format!("{n} residual"), 3 * map, 4 * map));
            cin = cout;
            hw = out_hw;
        }
    }
    ops.push(Op::vector("global pool", b * 7 * 7 * 2048 * ELEM));
    ops.push(Op::gemm("fc 1000", b, 1000, 2048));
    DenseModel {
        ops,
        optimizer_bytes_per_weight: 20,
    }
}

/// EfficientNet-B0 (Tan and Le 2019, Table 1): MBConv blocks (1x1 expansion, depthwise k x k,
/// 1x1 projection), squeeze-and-excitation left out (under 1% of the FLOPs). Depthwise
/// convolutions do not map onto the matrix units: they are vector work (read the input map and
/// write the output, with batch norm and the activation fused as for a convolution,
/// [`BATCH_NORM_PASSES`]).
fn efficientnet_b0(b: u64) -> DenseModel {
    let mut ops = Vec::new();
    conv(&mut ops, "stem 3x3", b, 112, 3, 32, 3);
    let mut cin = 32;
    let mut hw = 112;
    // (expansion, kernel, stride, channels, repeats), Table 1.
    let stages: [(u64, u64, u64, u64, u64); 7] = [
        (1, 3, 1, 16, 1),
        (6, 3, 2, 24, 2),
        (6, 5, 2, 40, 2),
        (6, 3, 2, 80, 3),
        (6, 5, 1, 112, 3),
        (6, 5, 2, 192, 4),
        (6, 3, 1, 320, 1),
    ];
    for (si, (e, k, s, c, r)) in stages.into_iter().enumerate() {
        for i in 0..r {
            let stride = if i == 0 { s } else { 1 };
            let out_hw = hw / stride;
            let mid = cin * e;
            let n = format!("MBConv{e} stage {} block {}", si + 2, i + 1);
            if e > 1 {
                conv(&mut ops, &format!("{n} expand"), b, hw, cin, mid, 1);
            }
            // Depthwise k x k: read the (k^2-reused) input, write the output, and the batch
            // norm's statistics read it (1 pass). Backward, one kernel for both gradients:
            // read the saved input and write its gradient (2 input maps), the batch norm's
            // sums read the incoming gradient and the saved output (2 output maps), and the
            // kernel reads both again to form the gradient it convolves (2 more).
            let (map_in, map_out) = (b * hw * hw * mid * ELEM, b * out_hw * out_hw * mid * ELEM);
            ops.push(Op::fused(
                format!("{n} depthwise {k}x{k}"),
                map_in + (1 + BATCH_NORM_PASSES.0) * map_out,
                2 * map_in + BATCH_NORM_PASSES.1 * map_out,
            ));
            conv(&mut ops, &format!("{n} project"), b, out_hw, mid, c, 1);
            cin = c;
            hw = out_hw;
        }
    }
    conv(&mut ops, "head 1x1", b, 7, 320, 1280, 1);
    ops.push(Op::vector("global pool", b * 7 * 7 * 1280 * ELEM));
    ops.push(Op::gemm("fc 1000", b, 1000, 1280));
    DenseModel {
        ops,
        optimizer_bytes_per_weight: 20,
    }
}

/// An LSTM layer of `h` units over `steps` timesteps with `b` sequences and `input` inputs per
/// step: the input projection of every timestep as one GEMM, the recurrent GEMM per timestep
/// (its weight read every timestep), the gate functions (read the 4h gates, write c and h:
/// 3 passes over 4h values) per timestep.
#[allow(clippy::too_many_arguments)]
fn lstm(
    ops: &mut Vec<Op>,
    name: &str,
    b: u64,
    steps: u64,
    input: u64,
    recurrent_k: u64,
    h: u64,
    stack: u32,
) {
    ops.push(Op::gemm(
        format!("{name} input projection"),
        b * steps,
        4 * h,
        input,
    ));
    ops.push(Op::Gemm {
        name: format!("{name} recurrent"),
        m: b,
        n: 4 * h,
        k: recurrent_k,
        count: 1,
        steps,
        weight: true,
        stack,
    });
    ops.push(Op::Vector {
        name: format!("{name} gates"),
        bytes: 3 * b * 4 * h * ELEM,
        backward_bytes: 2 * 3 * b * 4 * h * ELEM,
        steps,
    });
}

/// GNMT (Wu et al. 2016, sections 3-5): 8 encoder and 8 decoder LSTM layers of 1024 units, the
/// decoder's recurrence also taking the 1024-wide attention context, a 32k wordpiece
/// vocabulary; sequences of 50 tokens (an assumption: MLPerf's GNMT caps them at 50 for
/// training). The bottom encoder layer is bidirectional in GNMT: here it is one layer of 1024
/// (the same FLOPs as two directions of 512 and twice the recurrent weights; a simplification).
fn gnmt(b: u64) -> DenseModel {
    let (h, t, vocab) = (1024u64, 50u64, 32_000u64);
    let mut ops = vec![Op::vector("source embedding", 2 * b * t * h * ELEM)];
    for l in 0..8 {
        lstm(&mut ops, &format!("encoder {}", l + 1), b, t, h, h, h, 1);
    }
    ops.push(Op::vector("target embedding", 2 * b * t * h * ELEM));
    for l in 0..8 {
        lstm(
            &mut ops,
            &format!("decoder {}", l + 1),
            b,
            t,
            h,
            2 * h,
            h,
            2,
        );
    }
    // Attention per decoder step: scores and context over the 50 encoder outputs of each
    // sequence (read twice), and the softmax.
    let attention = 2 * b * t * h * ELEM + 4 * b * t * ELEM;
    ops.push(Op::Vector {
        name: "attention".into(),
        bytes: attention,
        backward_bytes: 2 * attention,
        steps: t,
    });
    ops.push(Op::gemm("softmax projection", b * t, vocab, h));
    ops.push(Op::vector("softmax", 4 * b * t * vocab * ELEM));
    DenseModel {
        ops,
        optimizer_bytes_per_weight: 28,
    }
}

/// The large LSTM language model of Zaremba, Sutskever and Vinyals 2014 ("Recurrent Neural
/// Network Regularization", section 4.1): 2 layers of 1500 units unrolled 35 steps, batch 20,
/// a 10k vocabulary, plain SGD.
fn ptb_lstm(b: u64) -> DenseModel {
    let (h, t, vocab) = (1500u64, 35u64, 10_000u64);
    let mut ops = vec![Op::vector("embedding", 2 * b * t * h * ELEM)];
    for l in 0..2 {
        lstm(&mut ops, &format!("layer {}", l + 1), b, t, h, h, h, 1);
    }
    ops.push(Op::gemm("softmax projection", b * t, vocab, h));
    ops.push(Op::vector("softmax", 4 * b * t * vocab * ELEM));
    DenseModel {
        ops,
        optimizer_bytes_per_weight: 12,
    }
}

/// A BERT encoder (Devlin et al. 2018): `layers` of width `d`, `heads` heads, feed-forward
/// `ff`, `b` sequences of `s` tokens; the masked-LM head on 15% of the tokens over the 30,522
/// wordpieces; Adam.
pub(crate) fn bert(layers: u64, d: u64, heads: u64, ff: u64, b: u64, s: u64) -> DenseModel {
    let tok = b * s;
    let dh = d / heads;
    let mut ops = vec![Op::vector("embeddings", 3 * tok * d * ELEM)];
    for l in 0..layers {
        let n = format!("layer {}", l + 1);
        ops.push(Op::gemm(format!("{n} qkv"), tok, 3 * d, d));
        for (what, m, nn, k) in [("scores", s, s, dh), ("values", s, dh, s)] {
            ops.push(Op::Gemm {
                name: format!("{n} attention {what}"),
                m,
                n: nn,
                k,
                count: b * heads,
                steps: 1,
                weight: false,
                stack: 0,
            });
            if what == "scores" {
                ops.push(Op::vector(
                    format!("{n} softmax"),
                    4 * b * heads * s * s * ELEM,
                ));
            }
        }
        ops.push(Op::gemm(format!("{n} output"), tok, d, d));
        ops.push(Op::vector(
            format!("{n} layer norm, residual"),
            4 * tok * d * ELEM,
        ));
        ops.push(Op::gemm(format!("{n} feed-forward in"), tok, ff, d));
        ops.push(Op::vector(format!("{n} gelu"), 2 * tok * ff * ELEM));
        ops.push(Op::gemm(format!("{n} feed-forward out"), tok, d, ff));
        ops.push(Op::vector(
            format!("{n} layer norm, residual 2"),
            4 * tok * d * ELEM,
        ));
    }
    let masked = (tok * 15).div_ceil(100);
    ops.push(Op::gemm("masked-LM transform", masked, d, d));
    ops.push(Op::gemm("masked-LM logits", masked, 30_522, d));
    ops.push(Op::vector("masked-LM softmax", 4 * masked * 30_522 * ELEM));
    DenseModel {
        ops,
        optimizer_bytes_per_weight: 28,
    }
}

impl App {
    /// The eight applications, in Fig. 12's order.
    pub fn all() -> Vec<App> {
        let dlrm0 = Dlrm {
            name: "dlrm0",
            dense_params: 137e6,
            batch_per_chip: 2048,
            source: "Fig. 8's DLRM (tpu-v4-isca2023.txt Fig. 8 caption) with DLRM0's 137M dense weights (section 7.9) and 2048 examples per chip (section 7.9: internal recommendation models reach batch sizes of 2048-4096, read per chip); the rest as dlrm.rs assumes for Fig. 8",
            ..Dlrm::fig8()
        };
        vec![
            App {
                name: "CNN0",
                model: "ResNet-50",
                batch_per_chip: 256,
                source: "ResNet-50 v1.5 (He et al. 2016, Table 1), 224x224, bf16; 256 images per chip (Cloud TPU's ResNet-50 reference trains a batch of 1024 on a v3-8 of 4 chips); momentum SGD",
                shape: Shape::Dense(resnet50(256)),
            },
            App {
                name: "CNN1",
                model: "EfficientNet-B0",
                batch_per_chip: 256,
                source: "CNN1 is a PA-NAS model (section 4, [Li21]: the EfficientNet-X family); shaped as EfficientNet-B0 (Tan and Le 2019, Table 1), 224x224, without squeeze-and-excitation, depthwise convolutions as vector work; 256 images per chip (assumed, as CNN0); RMSProp (momentum-SGD traffic)",
                shape: Shape::Dense(efficientnet_b0(256)),
            },
            App {
                name: "RNN0",
                model: "GNMT",
                batch_per_chip: 128,
                source: "GNMT (Wu et al. 2016): 8+8 LSTM layers of 1024 with attention, 32k wordpieces; 128 sentence pairs per chip (GNMT's per-replica batch of 128, section 5), 50 tokens (MLPerf GNMT's training cap); Adam",
                shape: Shape::Dense(gnmt(128)),
            },
            App {
                name: "RNN1",
                model: "PTB LSTM (large)",
                batch_per_chip: 20,
                source: "small weights and small batch (section 5): the large LSTM language model of Zaremba et al. 2014, section 4.1 (2 layers of 1500, 35 steps, batch 20 per chip, 10k vocabulary, 66M weights); SGD",
                shape: Shape::Dense(ptb_lstm(20)),
            },
            App {
                name: "BERT0",
                model: "BERT-Large",
                batch_per_chip: 4,
                source: "BERT-Large (Devlin et al. 2018: 24 layers, 1024 wide, 16 heads, 4096 feed-forward); 4 sequences of 512 tokens per chip (the paper's 256 sequences of 512 on 16 Cloud TPUs = 64 chips); Adam",
                shape: Shape::Dense(bert(24, 1024, 16, 4096, 4, 512)),
            },
            App {
                name: "BERT1",
                model: "BERT-Base",
                batch_per_chip: 16,
                source: "BERT-Base (Devlin et al. 2018: 12 layers, 768 wide, 12 heads, 3072 feed-forward); 16 sequences of 512 tokens per chip (the paper's 256 sequences on 4 Cloud TPUs = 16 chips); Adam",
                shape: Shape::Dense(bert(12, 768, 12, 3072, 16, 512)),
            },
            App {
                name: "DLRM0",
                model: "Fig. 8 DLRM, 137M dense",
                batch_per_chip: dlrm0.batch_per_chip,
                source: dlrm0.source,
                shape: Shape::Dlrm(dlrm0),
            },
            App {
                name: "DLRM1",
                model: "Fig. 8 DLRM",
                batch_per_chip: Dlrm::fig8().batch_per_chip,
                source: "Fig. 8's DLRM as crates/machines/tpu/src/dlrm.rs models it (100M dense, 20B embedding weights, 300 features into 150 tables, valency 10, width 128, 512 examples per chip)",
                shape: Shape::Dlrm(Dlrm::fig8()),
            },
        ]
    }

    /// The application called `name` (any case).
    pub fn named(name: &str) -> Option<App> {
        Self::all()
            .into_iter()
            .find(|a| a.name.eq_ignore_ascii_case(name))
    }

    /// Its trained weights (dense weights for the DLRMs).
    pub fn weights(&self) -> f64 {
        match &self.shape {
            Shape::Dense(d) => d.weights() as f64,
            Shape::Dlrm(d) => d.dense_params,
        }
    }
}

/// A slice: its shorthand and its network.
pub type Slice = (String, Network);

/// The slices of `chips` chips the comparison uses: TPU v4 and TPU v3.
pub fn slices(chips: u64) -> Result<(Slice, Slice), String> {
    let (v4, v3) = match chips {
        64 => ("tpuv4:slice=4x4x4", "tpuv3:8x8"),
        128 => ("tpuv4:slice=4x4x8:twisted", "tpuv3:8x16"),
        256 => ("tpuv4:slice=4x8x8:twisted", "tpuv3:16x16"),
        512 => ("tpuv4:slice=8x8x8", "tpuv3:16x32"),
        1024 => ("tpuv4:slice=8x8x16:twisted", "tpuv3:32x32"),
        _ => {
            return Err(format!(
                "{chips} chips: the comparison runs on 64, 128, 256, 512 or 1024 (TPU v3 slices stop at 1024)"
            ));
        }
    };
    let (n4, _) = crate::dlrm::system(v4)?;
    let (n3, _) = crate::dlrm::system(v3)?;
    Ok(((v4.to_string(), n4), (v3.to_string(), n3)))
}

/// The time of an `m` x `k` by `k` x `n` product on `chip`'s matrix units, split over them
/// along rows or columns, whichever [`podsim_system::workload::Arrays::gemm_time`] times
/// faster: the units form `s` groups that each take `m / s` rows, the columns split evenly
/// within a group (`s` = 1 is `gemm_time`'s own column split). A narrow layer (a convolution of 64 output
/// channels) would otherwise leave all but one column of units idle, however many a chip has.
pub fn gemm_time(chip: &ChipSpec, m: u64, n: u64, k: u64) -> Result<SimDuration, String> {
    let units = chip.arrays.units.max(1);
    let mut best: Option<SimDuration> = None;
    for s in (1..=units).filter(|s| units.is_multiple_of(*s)) {
        let arrays = podsim_system::workload::Arrays {
            units: units / s,
            ..chip.arrays.clone()
        };
        let t = arrays.gemm_time(m.div_ceil(s), n, k, "bf16")?;
        best = Some(best.map_or(t, |b| b.min(t)));
    }
    best.ok_or_else(|| "the chip has no matrix unit".into())
}

/// A dense model's step on `chip` as a workload: see the module docs.
pub fn workload(d: &DenseModel, chip: &ChipSpec) -> Result<Workload, String> {
    workload_with(d, chip, Algorithm::AllDimensions, BUCKET_BYTES, 1)
}

/// [`workload`] with the gradients summed by `algorithm` in buckets of at least
/// `bucket_bytes` (a machine file's GPUs sum them with another algorithm than a torus's, and
/// each framework fuses its own bucket size), and the optimizer's update sharded over
/// `optimizer_shards` chips (1: every chip updates every weight; n: each updates its 1/n, as
/// cross-replica weight-update sharding does, the summed gradients reduce-scattered and the
/// new weights all-gathered, which together move what the all-reduce moves).
pub fn workload_with(
    d: &DenseModel,
    chip: &ChipSpec,
    algorithm: Algorithm,
    bucket_bytes: u64,
    optimizer_shards: u64,
) -> Result<Workload, String> {
    let model_bytes = d.weights() * ELEM;
    let mut w = Workload::default();
    // Tasks of the previous layer, which the next one waits for.
    let mut prev: Vec<usize> = Vec::new();
    let push = |w: &mut Workload, name: String, work: Work, after: &[usize], repeat: u64| {
        let repeat = u32::try_from(repeat.max(1)).map_err(|_| format!("{name}: too many runs"))?;
        w.tasks.push(Task {
            name,
            work,
            group: Group::List(vec![0]),
            after: after.to_vec(),
            repeat,
        });
        Ok::<usize, String>(w.tasks.len() - 1)
    };
    let mem = |bytes: u64, ws: Option<u64>| Work::Memory {
        bytes: Bytes(bytes),
        working_set: ws.map(Bytes),
    };
    let peak = chip.matrix.0 as f64;
    let gemm = |m: u64, n: u64, k: u64| -> Result<Work, String> {
        let t = gemm_time(chip, m, n, k)?.as_secs_f64();
        let flops = 2.0 * (m * n * k) as f64;
        Ok(Work::Compute {
            flops: Flops(flops.ceil() as u64),
            efficiency: (flops / (t * peak)).clamp(1e-9, 1.0),
            unit: Unit::Matrix,
        })
    };
    // A layer: a GEMM beside its traffic (activations from HBM, the weight from wherever its
    // working set fits), all waiting for the layer before.
    #[allow(clippy::too_many_arguments)]
    fn layer(
        w: &mut Workload,
        prev: &[usize],
        name: String,
        g: Work,
        act_bytes: u64,
        weight_bytes: u64,
        ws: Option<u64>,
        runs: u64,
    ) -> Result<Vec<usize>, String> {
        let runs32 = u32::try_from(runs.max(1)).map_err(|_| format!("{name}: too many runs"))?;
        let mut out = Vec::new();
        let mut add = |n: String, work: Work| {
            w.tasks.push(Task {
                name: n,
                work,
                group: Group::List(vec![0]),
                after: prev.to_vec(),
                repeat: runs32,
            });
            out.push(w.tasks.len() - 1);
        };
        add(name.clone(), g);
        add(
            format!("{name}: activations"),
            Work::Memory {
                bytes: Bytes(act_bytes),
                working_set: None,
            },
        );
        if weight_bytes > 0 {
            add(
                format!("{name}: weights"),
                Work::Memory {
                    bytes: Bytes(weight_bytes),
                    working_set: ws.map(Bytes),
                },
            );
        }
        Ok(out)
    }
    let ws_of = |stack: u32, steps: u64| {
        if steps > 1 && stack > 0 {
            d.stack_bytes(stack)
        } else {
            model_bytes
        }
    };
    // Forward.
    for op in &d.ops {
        prev = match op {
            Op::Gemm {
                name,
                m,
                n,
                k,
                count,
                steps,
                weight,
                stack,
            } => {
                let wb = if *weight { k * n * ELEM } else { 0 };
                let act = (m * k + m * n + if *weight { 0 } else { k * n }) * ELEM;
                layer(
                    &mut w,
                    &prev,
                    format!("forward {name}"),
                    gemm(*m, *n, *k)?,
                    act,
                    wb,
                    Some(ws_of(*stack, *steps)),
                    count * steps,
                )?
            }
            Op::Vector {
                name, bytes, steps, ..
            } => {
                vec![push(
                    &mut w,
                    format!("forward {name}"),
                    mem(*bytes, None),
                    &prev,
                    *steps,
                )?]
            }
        };
    }
    // Backward, in reverse; gradient buckets summed as they fill.
    let mut bucket = 0u64;
    let mut sums: Vec<usize> = Vec::new();
    let all_reduce = |bytes: u64| Work::Collective {
        kind: Kind::AllReduce,
        algorithm,
        bytes: Bytes(bytes),
    };
    for (i, op) in d.ops.iter().enumerate().rev() {
        match op {
            Op::Gemm {
                name,
                m,
                n,
                k,
                count,
                steps,
                weight,
                stack,
            } => {
                // Input gradient: dY (m x n) by the weight transposed (n x k), per timestep.
                let wb = if *weight { k * n * ELEM } else { 0 };
                let act = (m * n + m * k + if *weight { 0 } else { k * n }) * ELEM;
                prev = layer(
                    &mut w,
                    &prev,
                    format!("backward {name}: input gradient"),
                    gemm(*m, *k, *n)?,
                    act,
                    wb,
                    Some(ws_of(*stack, *steps)),
                    count * steps,
                )?;
                // Weight gradient: X^T (k x m) by dY (m x n), over every timestep at once.
                let mm = m * steps;
                let act = (mm * k + mm * n) * ELEM;
                let out = k * n * ELEM;
                prev = layer(
                    &mut w,
                    &prev,
                    format!("backward {name}: weight gradient"),
                    gemm(*k, *n, mm)?,
                    act + out,
                    0,
                    None,
                    *count,
                )?;
                if *weight {
                    bucket += k * n * ELEM;
                }
            }
            Op::Vector {
                name,
                backward_bytes,
                steps,
                ..
            } => {
                prev = vec![push(
                    &mut w,
                    format!("backward {name}"),
                    mem(*backward_bytes, None),
                    &prev,
                    *steps,
                )?];
            }
        }
        if bucket > 0 && (bucket >= bucket_bytes || i == 0) {
            w.tasks.push(Task {
                name: format!("all-reduce gradients ({} B)", bucket),
                work: all_reduce(bucket),
                group: Group::All,
                after: prev.clone(),
                repeat: 1,
            });
            sums.push(w.tasks.len() - 1);
            bucket = 0;
        }
    }
    let mut after = prev;
    after.extend(sums);
    push(
        &mut w,
        "optimizer update".into(),
        mem(
            (d.weights() * d.optimizer_bytes_per_weight).div_ceil(optimizer_shards.max(1)),
            None,
        ),
        &after,
        1,
    )?;
    Ok(w)
}

/// One application's step on one slice.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTime {
    /// Seconds per step.
    pub step_time_s: f64,
    /// Communication no overlap hid, seconds: the gradient sums on the critical path of a
    /// dense model's step; a DLRM's two all-to-alls when its sparse part binds the step, `None`
    /// when its dense part does (dlrm.rs does not separate the dense all-reduce from the GEMMs).
    pub exposed_communication_s: Option<f64>,
    /// What the slice's chips did in the step (every chip's share: the dense models' work on
    /// chip 0 stands for all of them), for the energy model.
    pub activity: Activity,
}

impl StepTime {
    /// The step's energy on chips of `power`.
    pub fn energy(&self, power: &ChipPower) -> Energy {
        power.energy(&self.activity)
    }
}

/// The chip of a slice: TPU v4 (CMEM on or off) or v3.
fn chip_of(generation: &Generation, cmem: bool) -> Result<ChipSpec, String> {
    let mut chip = ChipSpec::preset(generation.chip.name)
        .ok_or_else(|| format!("no chip preset `{}`", generation.chip.name))?;
    if !cmem {
        chip.cmem = None;
    }
    Ok(chip)
}

/// `app`'s step on `net` (a TPU slice of `generation`), CMEM on or off (v4 only).
pub fn step(
    app: &App,
    net: &Network,
    generation: Generation,
    cmem: bool,
) -> Result<StepTime, String> {
    match &app.shape {
        Shape::Dlrm(d) => {
            let r = crate::dlrm::step(d, net, generation, Placement::SparseCore)?;
            let exposed = (r.embedding_time_s >= r.dense_time_s).then_some(r.all_to_all_time_s);
            Ok(StepTime {
                step_time_s: r.step_time_s,
                exposed_communication_s: exposed,
                activity: r.activity,
            })
        }
        Shape::Dense(d) => {
            let chip = chip_of(&generation, cmem)?;
            let w = workload(d, &chip)?;
            let mut model = podsim_system::machine::flow_model(net)?;
            run_step(&w, net, &chip, model.as_mut()).map_err(|e| format!("{}: {e}", app.name))
        }
    }
}

/// A dense model's step workload `w` run on `net`'s chips of `chip` under `model`: chip 0's
/// compute and memory stand for every chip's, the links carried every chip's collectives.
pub(crate) fn run_step(
    w: &Workload,
    net: &Network,
    chip: &ChipSpec,
    model: &mut dyn podsim_net::NetworkModel,
) -> Result<StepTime, String> {
    let r = podsim_system::workload::run(w, net, chip, model).map_err(|e| e.to_string())?;
    let n = net.endpoints();
    let a = r.activity;
    let activity = Activity {
        chips: n,
        seconds: r.time_s,
        link_bytes: a.link_bytes,
        ..a.times(n as f64)
    };
    Ok(StepTime {
        step_time_s: r.time_s,
        exposed_communication_s: Some(r.exposed_communication_s),
        activity,
    })
}

/// One application on both slices.
#[derive(Debug, Clone, PartialEq)]
pub struct AppResult {
    /// The paper's name.
    pub name: &'static str,
    /// The public model standing in for it.
    pub model: &'static str,
    /// Examples per chip.
    pub batch_per_chip: u64,
    /// Trained (dense) weights.
    pub weights: f64,
    /// TPU v4, CMEM as asked (one of the two below).
    pub v4: StepTime,
    /// TPU v4 with CMEM on.
    pub v4_cmem_on: StepTime,
    /// TPU v4 with CMEM off.
    pub v4_cmem_off: StepTime,
    /// TPU v3.
    pub v3: StepTime,
}

impl AppResult {
    /// v3 step time over v4's (Fig. 12).
    pub fn speedup(&self) -> f64 {
        self.v3.step_time_s / self.v4.step_time_s
    }
    /// v4 with CMEM off over v4 with CMEM on (Fig. 13), whichever the v4 column shows.
    pub fn cmem_gain(&self) -> f64 {
        self.v4_cmem_off.step_time_s / self.v4_cmem_on.step_time_s
    }
    /// TPU v4's performance per watt over TPU v3's (Fig. 13): the same work per step on both,
    /// so the ratio of the steps' energies, v3 over v4 (CMEM as the v4 column has it).
    pub fn perf_per_watt_gain(&self) -> Result<f64, String> {
        let (v4, v3) = powers()?;
        Ok(self.v3.energy(&v3).energy_j / self.v4.energy(&v4).energy_j)
    }
    /// CMEM on over off in performance per watt on TPU v4 (section 7.5): the energy of a step
    /// with CMEM off over with it on.
    pub fn cmem_perf_per_watt_gain(&self) -> Result<f64, String> {
        let (v4, _) = powers()?;
        Ok(self.v4_cmem_off.energy(&v4).energy_j / self.v4_cmem_on.energy(&v4).energy_j)
    }
}

/// TPU v4's and v3's power figures ([`podsim_system::energy::TPU_POWER`]).
pub fn powers() -> Result<(ChipPower, ChipPower), String> {
    let get = |n: &str| ChipPower::preset(n).ok_or_else(|| format!("no power figures for `{n}`"));
    Ok((get("tpuv4")?, get("tpuv3")?))
}

/// The comparison on one chip count.
#[derive(Debug, Clone, PartialEq)]
pub struct AppsReport {
    /// Chips per slice.
    pub chips: u64,
    /// The TPU v4 slice.
    pub v4_system: String,
    /// The TPU v3 slice.
    pub v3_system: String,
    /// Whether CMEM is on for the v4 column.
    pub cmem: bool,
    /// Per application, in Fig. 12's order.
    pub apps: Vec<AppResult>,
}

/// The geometric mean of `v`.
pub fn geomean(v: impl IntoIterator<Item = f64>) -> f64 {
    let (mut s, mut n) = (0.0, 0.0);
    for x in v {
        s += x.ln();
        n += 1.0;
    }
    if n == 0.0 { f64::NAN } else { (s / n).exp() }
}

impl AppsReport {
    /// Geometric mean of the v4-over-v3 speedups (Fig. 13's "2.1x").
    pub fn geomean_speedup(&self) -> f64 {
        geomean(self.apps.iter().map(AppResult::speedup))
    }
    /// Geometric mean of CMEM on over off.
    pub fn geomean_cmem_gain(&self) -> f64 {
        geomean(self.apps.iter().map(AppResult::cmem_gain))
    }
    /// Geometric mean of TPU v4's performance per watt over TPU v3's (Fig. 13's "2.7x").
    pub fn geomean_perf_per_watt_gain(&self) -> Result<f64, String> {
        let v = self
            .apps
            .iter()
            .map(AppResult::perf_per_watt_gain)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(geomean(v))
    }
    /// Geometric mean of CMEM on over off in performance per watt (section 7.5's "1.24x").
    pub fn geomean_cmem_perf_per_watt_gain(&self) -> Result<f64, String> {
        let v = self
            .apps
            .iter()
            .map(AppResult::cmem_perf_per_watt_gain)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(geomean(v))
    }
    /// Each application's mean chip power on TPU v4 (the v4 column) or v3, watts.
    pub fn powers_w(&self, v3: bool) -> Result<Vec<f64>, String> {
        let (p4, p3) = powers()?;
        Ok(self
            .apps
            .iter()
            .map(|a| {
                if v3 {
                    a.v3.energy(&p3).average_power_w
                } else {
                    a.v4.energy(&p4).average_power_w
                }
            })
            .collect())
    }
}

/// `a` on both slices (CMEM on and off on v4), the v4 column with CMEM `cmem`.
fn one(a: &App, v4: &Network, v3: &Network, cmem: bool) -> Result<AppResult, String> {
    let on = step(a, v4, Generation::tpu_v4(), true)?;
    let off = step(a, v4, Generation::tpu_v4(), false)?;
    let old = step(a, v3, Generation::tpu_v3(), false)?;
    Ok(AppResult {
        name: a.name,
        model: a.model,
        batch_per_chip: a.batch_per_chip,
        weights: a.weights(),
        v4: if cmem { on.clone() } else { off.clone() },
        v4_cmem_on: on,
        v4_cmem_off: off,
        v3: old,
    })
}

/// One application's result on `chips` chips (CMEM on in the v4 column), computed once per
/// process: the validation cases read the same runs many times (speed-up, CMEM gain, power,
/// performance per watt), on several threads at once.
fn memo(a: &App, chips: u64, v4: &Network, v3: &Network) -> Result<AppResult, String> {
    type Slot = Arc<OnceLock<Result<AppResult, String>>>;
    static RUNS: OnceLock<Mutex<HashMap<(&'static str, u64), Slot>>> = OnceLock::new();
    let slot = {
        let mut runs = RUNS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Arc::clone(runs.entry((a.name, chips)).or_default())
    };
    slot.get_or_init(|| one(a, v4, v3, true)).clone()
}

/// Run `apps` (all eight when empty) on `chips`-chip slices of TPU v4 (CMEM on and off; the v4
/// column with CMEM `cmem`) and TPU v3.
pub fn compare(chips: u64, cmem: bool, apps: &[App]) -> Result<AppsReport, String> {
    let ((v4_name, v4), (v3_name, v3)) = slices(chips)?;
    let list = if apps.is_empty() {
        App::all()
    } else {
        apps.to_vec()
    };
    let mut out = Vec::new();
    for a in &list {
        out.push(one(a, &v4, &v3, cmem)?);
    }
    Ok(AppsReport {
        chips,
        v4_system: v4_name,
        v3_system: v3_name,
        cmem,
        apps: out,
    })
}

/// The memory the flow model needs for the largest collective of the comparison on `chips`
/// chips (the DLRMs' all-to-all), bytes: what `--memory-limit` is checked against.
pub fn memory_estimate(chips: u64) -> Result<u128, String> {
    let ((_, v4), (_, v3)) = slices(chips)?;
    let mut most = 0u128;
    for net in [&v4, &v3] {
        let dims = net.rank_grid();
        for kind in [Kind::AllReduce, Kind::AllToAll] {
            let algorithm = match kind {
                Kind::AllReduce => Algorithm::AllDimensions,
                _ => Algorithm::DimensionWise,
            };
            let r = podsim_collective::Request {
                kind,
                algorithm,
                bytes: 1 << 20,
                ranks: chips as usize,
                dims: dims.clone(),
                chunk: 0,
            };
            let t = podsim_collective::transfers(&r);
            most = most.max(podsim_collective::memory_estimate(
                net,
                podsim_collective::ModelKind::Flow,
                t,
            ));
        }
    }
    Ok(most)
}

/// The optical fabric's share of a TPU v4 pod's power (section 2.10's "<3%"): its 48 OCSes
/// and one optics module per block-side end of each optical link (64 blocks x 6 faces x 16,
/// `podsim_system::tpu_v4`), over that plus 4096 chips at `chip_w` each. The hosts are not
/// counted (no seed gives their power), so this is the share of the chips' and the fabric's
/// power, an upper bound on the share of a total that includes hosts.
pub fn ocs_power_share(chip_w: f64) -> f64 {
    use podsim_system::energy::optics::{OPTICS_400G_W, PALOMAR_OCS_W};
    use podsim_system::tpu_v4::{BLOCK_SIDE, BLOCKS, ocs_needed};
    let ocs = f64::from(ocs_needed(BLOCK_SIDE)) * PALOMAR_OCS_W;
    let modules = (BLOCKS as u32 * 6 * BLOCK_SIDE * BLOCK_SIDE) as f64 * OPTICS_400G_W;
    let chips = (BLOCKS as u32 * BLOCK_SIDE.pow(3)) as f64 * chip_w;
    (ocs + modules) / (ocs + modules + chips)
}

/// An application comparison as a validation case names it (`[case.app]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppCase {
    /// The application (`CNN0`, ...), or `None` for the geometric mean of all eight.
    pub app: Option<String>,
    /// Chips per slice.
    pub chips: u64,
    /// CMEM on the v4 slice (`app_speedup`).
    pub cmem: bool,
    /// The power an `app_power` case reads: which chip (`true`: TPU v3) and which statistic
    /// of the applications' mean chip powers.
    pub power: Option<(bool, PowerStatistic)>,
}

/// Which statistic of the applications' mean chip powers an `app_power` case reads (Table 4's
/// min/mean/max).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerStatistic {
    /// The least.
    Min,
    /// The arithmetic mean.
    Mean,
    /// The greatest.
    Max,
}

impl PowerStatistic {
    /// The statistic a case names: `min`, `mean` or `max`.
    pub fn parse(s: &str) -> Option<PowerStatistic> {
        match s {
            "min" => Some(PowerStatistic::Min),
            "mean" => Some(PowerStatistic::Mean),
            "max" => Some(PowerStatistic::Max),
            _ => None,
        }
    }
}

impl AppCase {
    fn report(&self) -> Result<AppsReport, String> {
        let apps = match &self.app {
            None => App::all(),
            Some(n) => vec![App::named(n).ok_or_else(|| format!("`{n}` is not an application"))?],
        };
        let ((v4_name, v4), (v3_name, v3)) = slices(self.chips)?;
        let mut out = Vec::new();
        for a in &apps {
            let mut r = memo(a, self.chips, &v4, &v3)?;
            if !self.cmem {
                r.v4 = r.v4_cmem_off.clone();
            }
            out.push(r);
        }
        Ok(AppsReport {
            chips: self.chips,
            v4_system: v4_name,
            v3_system: v3_name,
            cmem: self.cmem,
            apps: out,
        })
    }
    /// v4 over v3 (geometric mean without an app).
    pub fn speedup(&self) -> Result<f64, String> {
        Ok(self.report()?.geomean_speedup())
    }
    /// CMEM on over off on v4 (geometric mean without an app).
    pub fn cmem_gain(&self) -> Result<f64, String> {
        Ok(self.report()?.geomean_cmem_gain())
    }
    /// TPU v4's performance per watt over v3's (geometric mean without an app).
    pub fn perf_per_watt_gain(&self) -> Result<f64, String> {
        self.report()?.geomean_perf_per_watt_gain()
    }
    /// CMEM on over off in performance per watt (geometric mean without an app).
    pub fn cmem_perf_per_watt_gain(&self) -> Result<f64, String> {
        self.report()?.geomean_cmem_perf_per_watt_gain()
    }
    /// The optical fabric's share of a pod's power ([`ocs_power_share`]) with chips at the
    /// mean over these applications of each one's mean TPU v4 power.
    pub fn ocs_power_share(&self) -> Result<f64, String> {
        let p = self.report()?.powers_w(false)?;
        Ok(ocs_power_share(
            p.iter().sum::<f64>() / p.len().max(1) as f64,
        ))
    }
    /// The statistic `power` names of the applications' mean chip powers, watts.
    pub fn power_w(&self) -> Result<f64, String> {
        let (v3, stat) = self
            .power
            .ok_or("an app_power case names its chip and statistic")?;
        let p = self.report()?.powers_w(v3)?;
        Ok(match stat {
            PowerStatistic::Min => p.iter().copied().fold(f64::INFINITY, f64::min),
            PowerStatistic::Max => p.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            PowerStatistic::Mean => p.iter().sum::<f64>() / p.len().max(1) as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_shapes_have_their_published_weight_counts() {
        let w = |name: &str| App::named(name).unwrap().weights();
        // ResNet-50: 25.6M parameters (He et al. 2016); its convolutions and classifier hold
        // 25.5M of them (the rest are batch-norm scales and biases).
        assert!((w("CNN0") - 25.6e6).abs() < 0.01 * 25.6e6, "{}", w("CNN0"));
        // BERT-Large 340M and BERT-Base 110M (Devlin et al. 2018), the word embedding counted
        // once (tied to the masked-LM logits here).
        assert!((w("BERT0") - 340e6).abs() < 0.03 * 340e6, "{}", w("BERT0"));
        assert!((w("BERT1") - 110e6).abs() < 0.03 * 110e6, "{}", w("BERT1"));
        // The large PTB LSTM: 66M (Zaremba et al. 2014), of which the 10k x 1500 input
        // embedding is a lookup (vector work) here: 2 x 4 x 1500 x 3000 + 1500 x 10000 = 51M.
        assert_eq!(w("RNN1"), 51e6);
        // DLRM0: 137M dense weights (section 7.9).
        assert_eq!(w("DLRM0"), 137e6);
    }

    #[test]
    fn resnet50_takes_its_published_flops() {
        // ResNet-50: 3.8-4.1 GMACs per 224x224 image (He et al. 2016, Table 1: 3.8e9 FLOPs
        // counted as multiply-adds; 4.1e9 for v1.5's stride on the 3x3).
        let Shape::Dense(d) = App::named("CNN0").unwrap().shape else {
            panic!("dense");
        };
        let macs: u64 = d
            .ops
            .iter()
            .map(|o| match o {
                Op::Gemm { m, n, k, .. } => m * n * k,
                Op::Vector { .. } => 0,
            })
            .sum();
        let per_image = macs as f64 / 256.0;
        assert!((3.8e9..4.2e9).contains(&per_image), "{per_image}");
    }

    #[test]
    fn gemm_splits_narrow_products_over_rows_by_hand() {
        // 1024 x 128 by 128 x 64 on TPU v4's 8 units of 128 x 128 at 1.05 GHz. A WS fold takes
        // 2R + T + Scf cycles (podsim_compute::gemm, RTL convention). Columns split 8 ways:
        // 8 columns per unit, one fold of 256 + 1024 + 8 = 1288 cycles. Rows split 8 ways: 128
        // rows per unit, 256 + 128 + 64 = 448 cycles; 4 ways: 256 + 256 + 32 = 544; 2 ways: 256
        // + 512 + 16 = 784. The best: 448 cycles = 426.667 ns.
        let chip = ChipSpec::preset("tpuv4").unwrap();
        let t = gemm_time(&chip, 1024, 64, 128).unwrap();
        assert_eq!(t.as_ps(), (448.0e12_f64 / 1.05e9).ceil() as u64);
    }

    #[test]
    fn double_buffered_mxus_time_the_recurrent_gemm_by_hand() {
        // RNN1's recurrent GEMM per timestep: 20 rows (the batch) by 1500 x 6000 (4 gates of
        // 1500) on TPU v4's 8 MXUs of 128 x 128 at 1.05 GHz. Columns split 8 ways: 750 per
        // unit, 6 column folds x 12 row folds (1500 / 128) = 72 folds of T = 20 rows.
        // Double-buffered (Jouppi et al. 2017: the next tile shifts in while the current one
        // computes), a fold every max(T, R) = 128 cycles: 128 + 71 x 128 + (20 + 128 + 110,
        // the last fold's rows, partial sums and 750 - 5 x 128 = 110 columns) = 9,474 cycles.
        // Split over rows instead (2 groups of 10 rows, 1500 columns each: 12 x 12 = 144
        // folds) takes 128 + 143 x 128 + 10 + 128 + 92 = 18,662: the columns win. Serially the
        // 72 folds would take 72 x (256 + 20) + 750 x 12 = 28,872 cycles.
        let chip = ChipSpec::preset("tpuv4").unwrap();
        let t = gemm_time(&chip, 20, 6000, 1500).unwrap();
        assert_eq!(t.as_ps(), (9_474.0e12_f64 / 1.05e9).ceil() as u64);
        // The weights it streams, 1500 x 6000 x 2 B = 18 MB, take 15 us from HBM at 1.2 TB/s:
        // with the load hidden the 9.0 us of the arrays no longer bind, the weight stream does.
        assert!(t.as_secs_f64() < 18e6 / 1.2e12);
    }

    #[test]
    fn fused_batch_norm_costs_one_pass_forward_and_four_backward() {
        // A 3x3 convolution of 64 -> 64 channels on one 56 x 56 image: its output map is
        // 56 x 56 x 64 x 2 B = 401,408 B. Fused (BATCH_NORM_PASSES' sources): the batch
        // statistics read it once forward (401,408 B), the backward sums and the two backward
        // GEMMs' reads of the saved map take 4 passes (1,605,632 B); unfused it was 4 and 8
        // passes (1,605,632 and 3,211,264 B).
        let mut ops = Vec::new();
        conv(&mut ops, "c", 1, 56, 64, 64, 3);
        match &ops[1] {
            Op::Vector {
                bytes,
                backward_bytes,
                ..
            } => assert_eq!((*bytes, *backward_bytes), (401_408, 1_605_632)),
            o => panic!("{o:?}"),
        }
        // The step moves them through HBM: 1 GB forward and 4 GB backward take 5 GB at
        // 1200 GB/s on TPU v4 = 4.1667 ms.
        let app = App {
            name: "test",
            model: "one fused pass",
            batch_per_chip: 1,
            source: "a test",
            shape: Shape::Dense(DenseModel {
                ops: vec![Op::fused("bn", 1_000_000_000, 4_000_000_000)],
                optimizer_bytes_per_weight: 0,
            }),
        };
        let r = compare(64, true, &[app]).unwrap();
        assert!((r.apps[0].v4.step_time_s - 5e9 / 1.2e12).abs() < 1e-9);
    }

    #[test]
    fn memory_bound_work_runs_at_the_hbm_ratio() {
        // One element-wise pass of 1 GB forward and 2 GB backward and nothing else: 3 GB at
        // 1200 GB/s on v4 (2.5 ms), at 900 GB/s on v3 (3.333 ms): Table 4's 1.33x.
        let app = App {
            name: "test",
            model: "one vector pass",
            batch_per_chip: 1,
            source: "a test",
            shape: Shape::Dense(DenseModel {
                ops: vec![Op::vector("pass", 1_000_000_000)],
                optimizer_bytes_per_weight: 0,
            }),
        };
        let r = compare(64, true, &[app]).unwrap();
        let a = &r.apps[0];
        assert!(
            (a.v4.step_time_s - 2.5e-3).abs() < 1e-9,
            "{}",
            a.v4.step_time_s
        );
        assert!((a.v3.step_time_s - 3e9 / 0.9e12).abs() < 1e-9);
        assert!((a.speedup() - 4.0 / 3.0).abs() < 1e-6);
        assert_eq!(a.cmem_gain(), 1.0);
    }

    #[test]
    fn a_sharded_update_streams_its_share_of_the_optimizer_state() {
        // One 1024 x 1024 weight (1,048,576 weights) at 20 optimizer bytes each: 20,971,520 B
        // the update streams on one chip, 327,680 B on each of 64 shards.
        let d = DenseModel {
            ops: vec![Op::gemm("fc", 8, 1024, 1024)],
            optimizer_bytes_per_weight: 20,
        };
        let chip = ChipSpec::preset("tpuv4").unwrap();
        let update = |shards| {
            let w =
                workload_with(&d, &chip, Algorithm::AllDimensions, BUCKET_BYTES, shards).unwrap();
            let t = w
                .tasks
                .iter()
                .find(|t| t.name == "optimizer update")
                .unwrap();
            match &t.work {
                Work::Memory { bytes, .. } => bytes.0,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(update(1), 20_971_520);
        assert_eq!(update(64), 327_680);
    }

    #[test]
    fn a_recurrence_reuses_its_stack_and_other_layers_the_whole_model() {
        // PTB LSTM: the recurrent weights of its stack are 2 x 4 x 1500 x 1500 x 2 B = 36 MB
        // (they fit CMEM's 128 MiB); any other weight's working set is every weight, 51M x 2 B.
        let Shape::Dense(d) = App::named("RNN1").unwrap().shape else {
            panic!("dense");
        };
        let chip = ChipSpec::preset("tpuv4").unwrap();
        let w = workload(&d, &chip).unwrap();
        let ws = |name: &str| {
            w.tasks
                .iter()
                .find(|t| t.name == name)
                .and_then(|t| match t.work {
                    Work::Memory { working_set, .. } => working_set.map(|b| b.0),
                    _ => None,
                })
                .unwrap()
        };
        assert_eq!(ws("forward layer 1 recurrent: weights"), 36_000_000);
        assert_eq!(ws("forward layer 1 input projection: weights"), 102_000_000);
        // 35 timesteps of the recurrence.
        let rec = w
            .tasks
            .iter()
            .find(|t| t.name == "forward layer 1 recurrent")
            .unwrap();
        assert_eq!(rec.repeat, 35);
        // Gradients: 102 MB in buckets of at least 25 MiB, the last one possibly smaller.
        let sums: u64 = w
            .tasks
            .iter()
            .filter_map(|t| match t.work {
                Work::Collective { bytes, .. } => Some(bytes.0),
                _ => None,
            })
            .sum();
        assert_eq!(sums, 102_000_000);
    }

    #[test]
    fn the_optical_fabric_share_counts_ocses_modules_and_chips_by_hand() {
        // 48 OCSes x 108 W = 5,184 W; 64 blocks x 6 faces x 16 links = 6,144 modules x 8.5 W =
        // 52,224 W; 4096 chips x 170 W = 696,320 W: 57,408 / 753,728 = 0.07617.
        let share = ocs_power_share(170.0);
        assert!((share - 57_408.0 / 753_728.0).abs() < 1e-12, "{share}");
        // No chips' power: the fabric is all of it.
        assert_eq!(ocs_power_share(0.0), 1.0);
    }

    #[test]
    fn bad_chip_counts_and_names_are_refused() {
        assert!(
            slices(100)
                .unwrap_err()
                .contains("64, 128, 256, 512 or 1024")
        );
        assert!(App::named("rnn1").is_some());
        assert!(App::named("RNN2").is_none());
        let c = AppCase {
            app: Some("RNN2".into()),
            chips: 128,
            cmem: true,
            power: None,
        };
        assert!(c.speedup().unwrap_err().contains("not an application"));
    }
}
