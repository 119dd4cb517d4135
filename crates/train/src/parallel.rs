//! The parallel configuration: the partition spec, the 1D/2D option, the axis mapping and
//! rematerialisation.

use std::fmt;

use crate::TrainError;

/// How activations or weights are split over the two model axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Split {
    /// Over one axis.
    OneD,
    /// Over both.
    TwoD,
}

impl Split {
    fn name(self) -> &'static str {
        match self {
            Split::OneD => "1D",
            Split::TwoD => "2D",
        }
    }
}

/// Table 3's "1D/2D activation/weight partitioning" option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Partition {
    /// How activations are split.
    pub activation: Split,
    /// How weights are split.
    pub weight: Split,
}

impl Partition {
    /// The four options.
    pub const ALL: [Partition; 4] = [
        Partition {
            activation: Split::OneD,
            weight: Split::OneD,
        },
        Partition {
            activation: Split::OneD,
            weight: Split::TwoD,
        },
        Partition {
            activation: Split::TwoD,
            weight: Split::OneD,
        },
        Partition {
            activation: Split::TwoD,
            weight: Split::TwoD,
        },
    ];

    /// From `1d/2d` (activation/weight, either case).
    pub fn parse(s: &str) -> Option<Partition> {
        let (a, w) = s.split_once('/')?;
        let one = |x: &str| match x.trim().to_ascii_lowercase().as_str() {
            "1d" => Some(Split::OneD),
            "2d" => Some(Split::TwoD),
            _ => None,
        };
        Some(Partition {
            activation: one(a)?,
            weight: one(w)?,
        })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.activation.name(), self.weight.name())
    }
}

/// The four parallel axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Axis {
    /// Pipeline stages.
    Pipeline,
    /// Data-parallel replicas.
    Data,
    /// Batch-split model axis (X).
    Model1,
    /// Tensor axis (Y).
    Model2,
    /// The expert axis: the first `expert` of the data replicas (the data axis's fastest
    /// part), among which an MoE layer's experts are split and its tokens exchanged
    /// (all-to-all). Not one of the mapping's axes: it lies where the data axis does.
    Expert,
    /// The data replicas of one expert: the data axis less the expert axis (data / expert of
    /// them, each `expert` data replicas apart), over which expert weights' gradients are
    /// summed.
    ExpertData,
}

impl Axis {
    /// All four, in Table 3's order.
    pub const ALL: [Axis; 4] = [Axis::Pipeline, Axis::Data, Axis::Model1, Axis::Model2];
    /// The name in `--parallel` and `--mapping`.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Pipeline => "pipeline",
            Axis::Data => "data",
            Axis::Model1 => "model1",
            Axis::Model2 => "model2",
            Axis::Expert => "expert",
            Axis::ExpertData => "expert replicas",
        }
    }
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Table 3's partition spec `[pipeline, data, model1, model2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Parallel(pub [u64; 4]);

impl Parallel {
    /// The size of `a`.
    pub fn of(&self, a: Axis) -> u64 {
        self.0[a.index()]
    }
    /// Chips it needs.
    pub fn chips(&self) -> u64 {
        self.0.iter().product()
    }
    /// From `pipeline=P,data=D,model1=M1,model2=M2` (every axis named once) or `[P,D,M1,M2]`.
    /// The expert axis is refused here ([`Parallel::parse_with_expert`] takes it).
    pub fn parse(s: &str) -> Result<Parallel, TrainError> {
        match Parallel::parse_with_expert(s)? {
            (p, None) => Ok(p),
            _ => Err(TrainError::ExpertNotTaken {
                spec: s.to_string(),
            }),
        }
    }

    /// From `pipeline=P,data=D,model1=M1,model2=M2[,expert=E]` (every axis named once) or
    /// `[P,D,M1,M2]` / `[P,D,M1,M2,E]`: the partition spec and the expert axis's size E where
    /// given (it is carved out of the data axis: E divides D; not given, 1).
    pub fn parse_with_expert(s: &str) -> Result<(Parallel, Option<u64>), TrainError> {
        let t = s.trim();
        if let Some(inner) = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            let v: Vec<&str> = inner.split(',').map(str::trim).collect();
            if v.len() != 4 && v.len() != 5 {
                return Err(TrainError::ParallelSizes {
                    spec: s.to_string(),
                });
            }
            let mut out = [0u64; 5];
            let given = v.len() == 5;
            for (o, x) in out.iter_mut().zip(v) {
                *o = x.parse().map_err(|_| TrainError::NotWholeNumber {
                    value: x.to_string(),
                })?;
            }
            let p = Parallel::checked([out[0], out[1], out[2], out[3]])?;
            let expert = if given {
                Some(checked_expert(out[4])?)
            } else {
                None
            };
            return Ok((p, expert));
        }
        let mut out = [0u64; 4];
        let mut given = [false; 4];
        let mut expert = None;
        for part in t.split(',') {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| TrainError::ExpectedAxisSize {
                    part: part.to_string(),
                })?;
            if k.trim() == "expert" {
                if expert.is_some() {
                    return Err(TrainError::AxisTwice {
                        axis: "expert".into(),
                    });
                }
                expert = Some(v.trim().parse().map_err(|_| TrainError::NotWholeNumber {
                    value: v.trim().to_string(),
                })?);
                continue;
            }
            let a = Axis::ALL
                .into_iter()
                .find(|a| a.name() == k.trim())
                .ok_or_else(|| TrainError::NotAxis {
                    name: k.trim().to_string(),
                })?;
            if given[a.index()] {
                return Err(TrainError::AxisTwice {
                    axis: a.name().to_string(),
                });
            }
            given[a.index()] = true;
            out[a.index()] = v.trim().parse().map_err(|_| TrainError::NotWholeNumber {
                value: v.trim().to_string(),
            })?;
        }
        if let Some(a) = Axis::ALL.into_iter().find(|a| !given[a.index()]) {
            return Err(TrainError::AxisMissing { axis: a.name() });
        }
        let expert = match expert {
            Some(e) => Some(checked_expert(e)?),
            None => None,
        };
        Ok((Parallel::checked(out)?, expert))
    }

    /// The spec with the expert axis: `[P,D,M1,M2]` where it is 1, else `[P,D,M1,M2,E]`.
    pub fn with_expert(&self, expert: u64) -> String {
        if expert <= 1 {
            return self.to_string();
        }
        let [p, d, m1, m2] = self.0;
        format!("[{p},{d},{m1},{m2},{expert}]")
    }

    fn checked(v: [u64; 4]) -> Result<Parallel, TrainError> {
        if let Some(i) = v.iter().position(|&x| x == 0 || x > 1 << 20) {
            return Err(TrainError::AxisSize {
                axis: Axis::ALL[i].name(),
                size: v[i],
            });
        }
        Ok(Parallel(v))
    }
}

/// The expert axis's size, between 1 and 2^20.
fn checked_expert(e: u64) -> Result<u64, TrainError> {
    if e == 0 || e > 1 << 20 {
        return Err(TrainError::AxisSize {
            axis: "expert",
            size: e,
        });
    }
    Ok(e)
}

impl fmt::Display for Parallel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [p, d, m1, m2] = self.0;
        write!(f, "[{p},{d},{m1},{m2}]")
    }
}

/// Which axes fill the slice's chips, fastest first: chip ids count x fastest, then y, then z,
/// and the axes take them in this order, so the first axis lies along x (and spills onto y when
/// it is longer than x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mapping(pub [Axis; 4]);

impl Mapping {
    /// The default: the tensor axis fastest, then model1, data, pipeline.
    pub const DEFAULT: Mapping = Mapping([Axis::Model2, Axis::Model1, Axis::Data, Axis::Pipeline]);

    /// From `model2,model1,data,pipeline` (each axis once).
    pub fn parse(s: &str) -> Result<Mapping, TrainError> {
        let v: Vec<&str> = s.split(',').map(str::trim).collect();
        let mut out = Vec::new();
        for x in &v {
            let a = Axis::ALL
                .into_iter()
                .find(|a| a.name() == *x)
                .ok_or_else(|| TrainError::NotAxis {
                    name: x.to_string(),
                })?;
            if out.contains(&a) {
                return Err(TrainError::AxisTwice {
                    axis: x.to_string(),
                });
            }
            out.push(a);
        }
        if out.len() != 4 {
            return Err(TrainError::MappingAxes {
                mapping: s.to_string(),
            });
        }
        Ok(Mapping([out[0], out[1], out[2], out[3]]))
    }

    /// Every order.
    pub fn all() -> Vec<Mapping> {
        let mut out = Vec::new();
        for a in Axis::ALL {
            for b in Axis::ALL {
                for c in Axis::ALL {
                    for d in Axis::ALL {
                        let v = [a, b, c, d];
                        let distinct = (0..4).all(|i| (i + 1..4).all(|j| v[i] != v[j]));
                        if distinct {
                            out.push(Mapping(v));
                        }
                    }
                }
            }
        }
        out
    }
}

impl fmt::Display for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|a| a.name()).collect();
        f.write_str(&names.join(","))
    }
}

/// Rematerialisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Remat {
    /// Keep each layer's input, recompute the rest before the backward pass.
    Full,
    /// Keep every activation the backward pass needs.
    None,
    /// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
    /// Models", arXiv 2205.05198, section 4.3): keep every activation but the attention's
    /// score-sized ones (its softmax output; podsim models no dropout) and recompute the
    /// attention's QK^T, softmax and weighted sum of the values before the backward pass.
    Selective,
}

impl Remat {
    /// The three, in the order the search tries them.
    pub const ALL: [Remat; 3] = [Remat::Full, Remat::None, Remat::Selective];
    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Remat::Full => "full",
            Remat::None => "none",
            Remat::Selective => "selective",
        }
    }
    /// From its name.
    pub fn parse(s: &str) -> Option<Remat> {
        Remat::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// How far the weights' state is sharded over the data axis (ZeRO stages, Rajbhandari et al.
/// 2020; `Weights` is PyTorch's FSDP / fully sharded data parallelism). Each stage keeps what
/// the one before it shards.
///
/// * `None`: as podsim always modelled data parallelism: bf16 weights and gradient
///   accumulators on every replica; the fp32 master weights and Adam moments already split
///   over every replica of a weight (weight-update sharding, Xu et al. 2020); the gradient sum
///   once a step as a ring all-reduce overlapped with the last backward pass.
/// * `Optimizer` (ZeRO-1): the optimizer state split over data and the gradient sum as a
///   reduce-scatter, each replica updating its shard, then an all-gather of the updated bf16
///   weights: in a ring the same bytes as the all-reduce. That is what `None` already models,
///   so this stage is the same step as `None` (named for the user who asks for ZeRO-1).
/// * `Gradients` (ZeRO-2): the gradient accumulators split over data too: each layer's
///   gradient is reduce-scattered over data right after its backward pass, every microbatch
///   (overlapped with the next layer's backward, as DeepSpeed's buckets are), so a chip
///   keeps 1/data of the accumulators plus one layer's unsharded gradient; the updated
///   weights are all-gathered over data after the optimizer, overlapped with the next step's
///   first forward pass.
/// * `Weights` (ZeRO-3 / FSDP): the bf16 weights split over data too: each layer's weights
///   are all-gathered over data before its forward and again before its backward pass, every
///   microbatch (prefetched: overlapped with the previous layer's work), and its gradient
///   reduce-scattered after its backward pass (overlapped); a chip keeps its 1/data shard and
///   two gathered layers (the one computing and the one prefetched). Nothing is gathered after
///   the optimizer: each chip updates the shard it keeps.
///
/// The tied embedding is sharded as the layers are: its gradient reduce-scattered over data
/// every microbatch (`Gradients`, `Weights`), its weights gathered before the input lookup and
/// before the logits' backward pass (`Weights`), hidden behind the logits' and loss's work; the
/// workspace holds the larger of a layer's and the embedding's unsharded gradient, and with
/// `Weights` the gathered embedding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sharding {
    /// Nothing more than the optimizer state's weight-update sharding.
    None,
    /// ZeRO-1: the optimizer state (the same step as `None`).
    Optimizer,
    /// ZeRO-2: also the gradient accumulators.
    Gradients,
    /// ZeRO-3 / FSDP: also the bf16 weights.
    Weights,
}

impl Sharding {
    /// The four stages, least sharded first.
    pub const ALL: [Sharding; 4] = [
        Sharding::None,
        Sharding::Optimizer,
        Sharding::Gradients,
        Sharding::Weights,
    ];
    /// The name in `--shard`.
    pub fn name(self) -> &'static str {
        match self {
            Sharding::None => "none",
            Sharding::Optimizer => "optimizer",
            Sharding::Gradients => "gradients",
            Sharding::Weights => "weights",
        }
    }
    /// From its name.
    pub fn parse(s: &str) -> Option<Sharding> {
        Sharding::ALL.into_iter().find(|x| x.name() == s)
    }
    /// Whether the gradient accumulators are split over data (ZeRO-2 and 3).
    pub fn gradients(self) -> bool {
        self >= Sharding::Gradients
    }
    /// Whether the bf16 weights are split over data (ZeRO-3).
    pub fn weights(self) -> bool {
        self == Sharding::Weights
    }
}

/// One training configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Config {
    /// The partition spec.
    pub parallel: Parallel,
    /// 1D/2D activation/weight.
    pub partition: Partition,
    /// Axes onto chips.
    pub mapping: Mapping,
    /// Global batch, sequences.
    pub batch: u64,
    /// Microbatches per step (per pipeline).
    pub microbatches: u64,
    /// Rematerialisation.
    pub remat: Remat,
    /// How far the weights' state is sharded over the data axis.
    pub shard: Sharding,
    /// Megatron-LM's sequence parallelism (Korthikanti et al. 2022, section 4.2.2): with 1D
    /// activations, the layer norms and residuals run on 1/model2 of the sequence, each
    /// all-reduce over model2 becomes an all-gather before the block and a reduce-scatter
    /// after it (the same bytes on a ring), the kept activations outside the blocks and the
    /// pipeline sends are split over model2.
    pub sequence_parallel: bool,
    /// Chunks of layers per pipeline stage (Megatron-LM's interleaved 1F1B schedule, Narayanan
    /// et al. SC'21, section 2.2.2): 1 is the plain 1F1B schedule.
    pub virtual_stages: u64,
    /// The expert axis ([`Axis::Expert`]): an MoE model's experts split over this many of the
    /// data replicas (GShard's and GLaM's expert parallelism); it divides data. 1: every chip
    /// holds every expert and no tokens are exchanged.
    pub expert: u64,
}

impl Config {
    /// Whether the activations between the blocks are split over model2: 2D activations
    /// (along d_model) or sequence parallelism (along the sequence): the same bytes a chip
    /// keeps, works on, gathers and scatters.
    pub(crate) fn activations_split(&self) -> bool {
        self.partition.activation == Split::TwoD || self.sequence_parallel
    }
}
