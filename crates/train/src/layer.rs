//! One layer's work on every chip: where the axes lie on the slice and the ops of a layer's
//! forward and backward pass.

use podsim_collective::Kind;

use crate::memory::Shard;
use crate::{Axis, Config, ELEM, Machine, Remat, Sharding, Split, TrainError, Transformer};

/// How an axis lies on the slice: per dimension it spans, the factor it takes and the stride
/// within that dimension.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Span {
    /// Stride of the axis in chip ids.
    pub(crate) stride: u64,
    /// Size.
    pub(crate) size: u64,
    /// Per dimension: (factor, stride within the dimension); factor 1 where it does not span.
    pub(crate) parts: [(u64, u64); 3],
}

/// Where the axes lie (the four of the mapping, then the expert axis and the expert
/// replicas, carved out of the data axis), and why not when they cannot.
pub(crate) fn spans(m: &Machine, c: &Config) -> Result<[Span; 6], TrainError> {
    let chips = m.chips();
    if c.parallel.chips() != chips {
        return Err(TrainError::ChipCount {
            parallel: c.parallel,
            needs: c.parallel.chips(),
            chips,
        });
    }
    let mut out = [Span {
        stride: 1,
        size: 1,
        parts: [(1, 1); 3],
    }; 6];
    let mut p = 1u64;
    let mut data_at = 1u64;
    for a in c.mapping.0 {
        let s = c.parallel.of(a);
        if a == Axis::Data {
            data_at = p;
        }
        if s == 1 {
            // An axis of one chip lies nowhere (its default span).
            continue;
        }
        out[a.index()] = lay(m, a.name(), p, s)?;
        p *= s;
    }
    let (d, e) = (c.parallel.of(Axis::Data), c.expert.max(1));
    if e > 1 && d.is_multiple_of(e) {
        out[Axis::Expert.index()] = lay(m, Axis::Expert.name(), data_at, e)?;
        if d > e {
            out[Axis::ExpertData.index()] = lay(m, Axis::Data.name(), data_at * e, d / e)?;
        }
    } else {
        out[Axis::ExpertData.index()] = out[Axis::Data.index()];
    }
    Ok(out)
}

/// The span of an axis `name` of `s` chips laid after `p` chips (its stride in chip ids).
fn lay(m: &Machine, name: &'static str, p: u64, s: u64) -> Result<Span, TrainError> {
    let dim_lo: [u64; 3] = [
        1,
        u64::from(m.dims[0]),
        u64::from(m.dims[0]) * u64::from(m.dims[1]),
    ];
    let mut span = Span {
        stride: p,
        size: s,
        parts: [(1, 1); 3],
    };
    for d in 0..3 {
        let (lo, hi) = (dim_lo[d], dim_lo[d] * u64::from(m.dims[d]));
        let (a_lo, a_hi) = (p.max(lo), (p * s).min(hi));
        if a_lo >= a_hi {
            continue;
        }
        // The axis must take whole factors of the dimension: start at a multiple of it and,
        // where it ends inside it, end on a factor of its length (an axis of the mapping that
        // does not is caught by the next one; the expert axis, carved out of data, is not).
        if a_hi % a_lo != 0 || a_lo % lo != 0 || (a_hi < hi && hi % a_hi != 0) {
            return Err(TrainError::Uneven {
                axis: name,
                size: s,
                after: p,
                dim: ["x", "y", "z"][d],
                length: m.dims[d],
            });
        }
        span.parts[d] = (a_hi / a_lo, a_lo / lo);
    }
    Ok(span)
}

/// One piece of a layer's work on every chip.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    /// A GEMM on each chip, `count` times: m x k by k x n (`weight`: the k x n operand is the
    /// layer's weight shard, which CMEM can hold).
    Gemm {
        name: &'static str,
        m: u64,
        n: u64,
        k: u64,
        count: u64,
        weight: bool,
    },
    /// Memory-bound vector work: bytes per chip.
    Memory { name: &'static str, bytes: f64 },
    /// A collective over an axis (bytes: per-rank buffer, nccl-tests convention). Overlapped
    /// ones run beside the layer's work (weight gathers prefetched, gradient scatters).
    Coll {
        name: &'static str,
        axis: Axis,
        kind: Kind,
        bytes: f64,
        overlapped: bool,
    },
}

/// Per-chip work of one layer for one microbatch.
#[derive(Debug, Clone, Default)]
pub(crate) struct LayerOps {
    pub(crate) forward: Vec<Op>,
    pub(crate) backward: Vec<Op>,
}

/// A GEMM of the forward pass: name, m, n, k, count, whether its k x n operand is a weight.
type Shape = (&'static str, u64, u64, u64, u64, bool);

/// What a layer's passes are made of for one configuration.
struct Pieces {
    /// Whether the activations between the blocks are split over model2 (2D activations or
    /// sequence parallelism).
    split: bool,
    /// Sequence parallelism (the split along the sequence, for the collectives' names).
    sequence_parallel: bool,
    /// The model2 (tensor) axis size.
    y: u64,
    /// Bytes of the layer's activations (tokens x d_model) on a chip.
    act_bytes: f64,
    norms: Op,
    act_fn: Op,
    softmax: Op,
    gemms_fwd: [Shape; 6],
    /// Whether weights are gathered over model1 (2D weights, model1 > 1).
    weight_2d: bool,
    /// Bytes of the layer's weight shard over model2.
    w_bytes: f64,
    /// Bytes of the layer's weight shard over the model axes (model2, and model1 with 2D
    /// weights): what a chip's data group gathers or scatters with `--shard`.
    w_data_bytes: f64,
    /// How far the weights are sharded over data.
    shard: Sharding,
    remat: Remat,
    /// In an MoE layer: its router, expert GEMMs and all-to-alls.
    moe: Option<MoePieces>,
}

/// What an MoE layer does in place of the dense feed-forward.
struct MoePieces {
    /// The router: tokens x experts by d_model.
    router: Shape,
    /// The experts' GEMMs on a chip, in and out: each of its experts on its capacity's rows.
    ffn: [Shape; 2],
    /// The experts' activation function.
    act_fn: Op,
    /// Bytes each chip sends and receives in the dispatch (and the combine): its rows of
    /// d_model (nccl-tests' per-rank buffer).
    a2a_bytes: f64,
}

impl Pieces {
    fn new(t: &Transformer, c: &Config, sh: &Shard, moe_layer: bool) -> Pieces {
        let [_, _, x, y] = c.parallel.0;
        let (e, dh) = (t.d_model, t.head_dim());
        let tok = sh.tokens;
        let heads_chip = t.heads.div_ceil(y);
        let kv_chip = t.kv_heads.div_ceil(y);
        let qkv_n = (heads_chip + 2 * kv_chip) * dh;
        let o_k = heads_chip * dh;
        let ff_in = t.d_ff.div_ceil(y) * (t.ffn_matrices - 1);
        let ff_out_k = t.d_ff.div_ceil(y);
        let act_bytes = tok as f64 * e as f64 * ELEM;
        let a_split = if c.activations_split() { y as f64 } else { 1.0 };
        let s = t.sequence;
        // Vector work: layer norms, residual adds (8 passes over the layer input shard), the
        // activation function (2 passes over the hidden shard).
        let norms = Op::Memory {
            name: "layer norms and residuals",
            bytes: 8.0 * act_bytes / a_split,
        };
        let act_fn = Op::Memory {
            name: "activation function",
            bytes: 2.0 * tok as f64 * ff_in as f64 * ELEM,
        };
        let softmax = Op::Memory {
            name: "attention softmax",
            bytes: 4.0 * (sh.seqs * heads_chip) as f64 * (s * s) as f64 * ELEM,
        };
        let gemms_fwd: [Shape; 6] = [
            ("qkv projection", tok, qkv_n, e, 1, true),
            ("attention scores", s, s, dh, sh.seqs * heads_chip, false),
            ("attention values", s, dh, s, sh.seqs * heads_chip, false),
            ("output projection", tok, e, o_k, 1, true),
            ("feed-forward in", tok, ff_in, e, 1, true),
            ("feed-forward out", tok, e, ff_out_k, 1, true),
        ];
        Pieces {
            split: c.activations_split(),
            sequence_parallel: c.sequence_parallel,
            y,
            act_bytes,
            norms,
            act_fn,
            softmax,
            gemms_fwd,
            weight_2d: c.partition.weight == Split::TwoD && x > 1,
            w_bytes: t.layer_params() / y as f64 * ELEM,
            w_data_bytes: t.layer_params()
                / match c.partition.weight {
                    Split::OneD => y,
                    Split::TwoD => y * x,
                } as f64
                * ELEM,
            shard: c.shard,
            remat: c.remat,
            moe: match &t.moe {
                Some(moe) if moe_layer => {
                    // Each chip of the expert group holds experts / expert experts and computes
                    // its tokens x experts_per_token x capacity factor rows, padded, as
                    // `local` GEMMs of `cap` rows (one per expert it holds).
                    let local = moe.experts / c.expert.max(1);
                    let rows = crate::memory::expert_rows(tok, moe);
                    let cap = rows.div_ceil(local);
                    let fe_in = t.d_ff.div_ceil(y) * (moe.ffn_matrices - 1);
                    Some(MoePieces {
                        router: ("router", tok, moe.experts, e, 1, true),
                        ffn: [
                            ("expert feed-forward in", cap, fe_in, e, local, true),
                            ("expert feed-forward out", cap, e, ff_out_k, local, true),
                        ],
                        act_fn: Op::Memory {
                            name: "expert activation function",
                            bytes: 2.0 * (cap * local) as f64 * fe_in as f64 * ELEM,
                        },
                        a2a_bytes: rows as f64 * e as f64 * ELEM,
                    })
                }
                _ => None,
            },
        }
    }

    /// An MoE layer's all-to-all over the expert axis.
    fn all_to_all(&self, v: &mut Vec<Op>, name: &'static str) {
        if let Some(x) = &self.moe {
            v.push(Op::Coll {
                name,
                axis: Axis::Expert,
                kind: Kind::AllToAll,
                bytes: x.a2a_bytes,
                overlapped: false,
            });
        }
    }

    /// The feed-forward block's GEMMs and activation function forward: the dense layer's, or
    /// an MoE layer's router, dispatch, experts and combine.
    fn ffn_forward(&self, v: &mut Vec<Op>) {
        match &self.moe {
            None => v.extend([self.gemm(4), self.act_fn.clone(), self.gemm(5)]),
            Some(x) => {
                v.push(shape_op(x.router));
                self.all_to_all(v, "expert dispatch (expert)");
                v.extend([shape_op(x.ffn[0]), x.act_fn.clone(), shape_op(x.ffn[1])]);
                self.all_to_all(v, "expert combine (expert)");
            }
        }
    }

    /// The feed-forward block's backward: the combine's gradient sent back to the experts,
    /// their gradients, the dispatch's gradient sent back to the tokens and the router's.
    fn ffn_backward(&self, v: &mut Vec<Op>) {
        match &self.moe {
            None => {
                self.grads(v, 5);
                v.push(self.act_fn.clone());
                v.push(self.act_fn.clone());
                self.grads(v, 4);
            }
            Some(x) => {
                self.all_to_all(v, "expert combine gradients (expert)");
                shape_grads(v, x.ffn[1]);
                v.push(x.act_fn.clone());
                v.push(x.act_fn.clone());
                shape_grads(v, x.ffn[0]);
                self.all_to_all(v, "expert dispatch gradients (expert)");
                shape_grads(v, x.router);
            }
        }
    }

    /// The activation collective before a block.
    fn block_in(&self, v: &mut Vec<Op>) {
        if self.split && self.y > 1 {
            v.push(Op::Coll {
                name: if self.sequence_parallel {
                    "gather sequence (model2)"
                } else {
                    "gather activations (model2)"
                },
                axis: Axis::Model2,
                kind: Kind::AllGather,
                bytes: self.act_bytes,
                overlapped: false,
            });
        }
    }

    /// The activation collective after a block.
    fn block_out(&self, v: &mut Vec<Op>, bwd: bool) {
        if self.y > 1 {
            let (name, kind) = match (self.split, self.sequence_parallel, bwd) {
                (false, _, _) => ("all-reduce activations (model2)", Kind::AllReduce),
                (true, false, false) => ("scatter activations (model2)", Kind::ReduceScatter),
                (true, false, true) => ("scatter gradients (model2)", Kind::ReduceScatter),
                (true, true, false) => ("scatter sequence (model2)", Kind::ReduceScatter),
                (true, true, true) => ("scatter sequence gradients (model2)", Kind::ReduceScatter),
            };
            v.push(Op::Coll {
                name,
                axis: Axis::Model2,
                kind,
                bytes: self.act_bytes,
                overlapped: false,
            });
        }
    }

    fn gemm(&self, i: usize) -> Op {
        shape_op(self.gemms_fwd[i])
    }

    /// The input gradient and the weight gradient of forward GEMM `i` ([`shape_grads`]).
    fn grads(&self, v: &mut Vec<Op>, i: usize) {
        shape_grads(v, self.gemms_fwd[i]);
    }

    fn gather_weights(&self) -> Op {
        Op::Coll {
            name: "gather weights (model1)",
            axis: Axis::Model1,
            kind: Kind::AllGather,
            bytes: self.w_bytes,
            overlapped: true,
        }
    }

    /// With `--shard weights`: the all-gather over data of the layer's weight shard (before
    /// any gather over model1), prefetched beside the previous layer's work.
    fn gather_weights_data(&self, v: &mut Vec<Op>) {
        if self.shard.weights() {
            v.push(Op::Coll {
                name: "gather weights (data)",
                axis: Axis::Data,
                kind: Kind::AllGather,
                bytes: self.w_data_bytes,
                overlapped: true,
            });
        }
    }

    /// With selective recomputation: the attention's QK^T, softmax and weighted sum of the
    /// values again before the backward pass (Korthikanti et al. 2022, section 4.3).
    fn recompute_selective(&self, v: &mut Vec<Op>) {
        if self.remat == Remat::Selective {
            v.extend([self.gemm(1), self.softmax.clone(), self.gemm(2)]);
        }
    }

    /// With sequence parallelism and the blocks' inputs kept (not recomputed with their
    /// gathers): the block's input, kept split along the sequence, all-gathered again over
    /// model2 for its weight gradients, overlapped with the input gradient's GEMMs
    /// (Korthikanti et al. 2022, section 4.2.2).
    fn gather_kept_input(&self, v: &mut Vec<Op>) {
        if self.sequence_parallel && self.y > 1 && self.remat != Remat::Full {
            v.push(Op::Coll {
                name: "gather sequence for weight gradients (model2)",
                axis: Axis::Model2,
                kind: Kind::AllGather,
                bytes: self.act_bytes,
                overlapped: true,
            });
        }
    }

    fn forward(&self) -> Vec<Op> {
        let mut fwd = Vec::new();
        self.gather_weights_data(&mut fwd);
        if self.weight_2d {
            fwd.push(self.gather_weights());
        }
        self.block_in(&mut fwd);
        fwd.extend([
            self.gemm(0),
            self.gemm(1),
            self.softmax.clone(),
            self.gemm(2),
            self.gemm(3),
        ]);
        self.block_out(&mut fwd, false);
        fwd.push(self.norms.clone());
        self.block_in(&mut fwd);
        self.ffn_forward(&mut fwd);
        self.block_out(&mut fwd, false);
        fwd
    }

    /// Backward: the recomputed forward (remat), then per GEMM the input gradient and the
    /// weight gradient, in reverse.
    fn backward(&self, fwd: &[Op]) -> Vec<Op> {
        let mut bwd = Vec::new();
        self.gather_weights_data(&mut bwd);
        if self.weight_2d {
            bwd.push(self.gather_weights());
        }
        self.recompute_selective(&mut bwd);
        if self.remat == Remat::Full {
            bwd.extend(
                fwd.iter()
                    .filter(|o| {
                        !matches!(
                            o,
                            Op::Coll {
                                overlapped: true,
                                ..
                            }
                        )
                    })
                    .cloned(),
            );
        }
        self.block_in(&mut bwd);
        self.gather_kept_input(&mut bwd);
        self.ffn_backward(&mut bwd);
        self.block_out(&mut bwd, true);
        bwd.push(self.norms.clone());
        bwd.push(self.norms.clone());
        self.block_in(&mut bwd);
        self.gather_kept_input(&mut bwd);
        self.grads(&mut bwd, 3);
        self.grads(&mut bwd, 2);
        bwd.push(self.softmax.clone());
        bwd.push(self.softmax.clone());
        self.grads(&mut bwd, 1);
        self.grads(&mut bwd, 0);
        self.block_out(&mut bwd, true);
        if self.weight_2d {
            bwd.push(Op::Coll {
                name: "scatter weight gradients (model1)",
                axis: Axis::Model1,
                kind: Kind::ReduceScatter,
                bytes: self.w_bytes,
                overlapped: true,
            });
        }
        if self.shard.gradients() {
            // The layer's gradient shard summed over data, each chip keeping 1/data of it
            // (after the model1 reduce-scatter of 2D weights), overlapped with the next
            // layer's backward pass.
            bwd.push(Op::Coll {
                name: "scatter weight gradients (data)",
                axis: Axis::Data,
                kind: Kind::ReduceScatter,
                bytes: self.w_data_bytes,
                overlapped: true,
            });
        }
        bwd
    }
}

/// A forward GEMM as an op.
fn shape_op((name, m, n, k, count, weight): Shape) -> Op {
    Op::Gemm {
        name,
        m,
        n,
        k,
        count,
        weight,
    }
}

/// The input gradient (m x k by k x n transposed: m, k, n) and the weight gradient (k x m by
/// m x n: k, n, m) of a forward GEMM.
fn shape_grads(v: &mut Vec<Op>, (name, m, n, k, count, weight): Shape) {
    v.push(Op::Gemm {
        name,
        m,
        n: k,
        k: n,
        count,
        weight,
    });
    v.push(Op::Gemm {
        name,
        m: k,
        n,
        k: m,
        count,
        weight: false,
    });
}

/// A dense layer's ops for this configuration.
pub(crate) fn layer_ops(t: &Transformer, c: &Config, sh: &Shard) -> LayerOps {
    ops_of(&Pieces::new(t, c, sh, false))
}

/// An MoE layer's ops for this configuration (`None` for a dense model): the dense layer's
/// with the feed-forward block's GEMMs replaced by the router, the dispatch all-to-all over
/// the expert axis, the experts' GEMMs and the combine all-to-all, forward (and again in a
/// full recomputation) and backward (the combine's and the dispatch's gradients).
pub(crate) fn moe_layer_ops(t: &Transformer, c: &Config, sh: &Shard) -> Option<LayerOps> {
    t.moe.as_ref()?;
    Some(ops_of(&Pieces::new(t, c, sh, true)))
}

fn ops_of(p: &Pieces) -> LayerOps {
    let forward = p.forward();
    let backward = p.backward(&forward);
    LayerOps { forward, backward }
}

#[cfg(test)]
mod tests {
    use podsim_collective::Kind;
    use podsim_system::workload::ChipSpec;

    use super::{Op, layer_ops, spans};
    use crate::memory::shard;
    use crate::timer::{Timer, cmem_holds};
    use crate::{
        Axis, Config, Machine, Mapping, Parallel, Partition, Remat, Sharding, SliceShape,
        Transformer,
    };

    #[test]
    fn fsdp_gathers_a_layers_weights_over_the_data_ring_before_each_pass() {
        // One GPT-3 layer's weights, 12 x 12288^2 = 1,811,939,328, over model2 = 8 along x
        // of an 8x8x8 torus: 226,492,416 a chip, 452,984,832 bytes in bf16, which the 64-chip
        // data group (8 along y, 8 along z) gathers before the forward and again before the
        // backward pass, and reduce-scatters (the gradient) after it. In closed form each is
        // a ring along y then z, one 50 GB/s link a ring (no wraparound pair: the rings are
        // one way), a 0.3 us hop a step: 7/8 x 452,984,832 / 50e9 over y, then 7/8 of an
        // eighth of it over z, 7 + 7 steps: 7.9272 ms + 0.9909 ms + 4.2 us = 8.9223 ms.
        let mut t = Transformer::builtin("gpt3-175b").unwrap();
        t.layers = 1;
        let net = SliceShape {
            dims: [8, 8, 8],
            twisted: false,
        }
        .network()
        .unwrap();
        let m = Machine::of(&net, ChipSpec::preset("tpuv4").unwrap()).unwrap();
        let c = Config {
            parallel: Parallel([1, 64, 1, 8]),
            partition: Partition::ALL[0],
            mapping: Mapping([Axis::Model2, Axis::Data, Axis::Model1, Axis::Pipeline]),
            batch: 64,
            microbatches: 1,
            remat: Remat::Full,
            shard: Sharding::Weights,
            sequence_parallel: false,
            virtual_stages: 1,
            expert: 1,
        };
        let ops = layer_ops(&t, &c, &shard(&t, &c).unwrap());
        let data_ops = |list: &[Op]| -> Vec<(Kind, f64, bool)> {
            list.iter()
                .filter_map(|o| match o {
                    Op::Coll {
                        axis: Axis::Data,
                        kind,
                        bytes,
                        overlapped,
                        ..
                    } => Some((*kind, *bytes, *overlapped)),
                    _ => None,
                })
                .collect()
        };
        let b = 452_984_832.0;
        assert_eq!(data_ops(&ops.forward), vec![(Kind::AllGather, b, true)]);
        assert_eq!(
            data_ops(&ops.backward),
            vec![(Kind::AllGather, b, true), (Kind::ReduceScatter, b, true)]
        );
        let timer = Timer {
            t: &t,
            m: &m,
            spans: spans(&m, &c).unwrap(),
            cmem_weights: cmem_holds(&t, &m, &c),
        };
        let expect = 7.0 / 8.0 * b / 50e9 + 7.0 / 8.0 * (b / 8.0) / 50e9 + 14.0 * 0.3e-6;
        let got = timer.collective(Axis::Data, Kind::AllGather, b);
        assert!((got - expect).abs() < 1e-12, "{got} vs {expect}");
        assert!((expect - 8.9223e-3).abs() < 1e-7);
        // Without sharding the layer has no data-axis collective (the gradient sum is the
        // step's, once).
        let none = Config {
            shard: Sharding::None,
            ..c
        };
        let ops = layer_ops(&t, &none, &shard(&t, &none).unwrap());
        assert!(data_ops(&ops.forward).is_empty() && data_ops(&ops.backward).is_empty());
    }
}
