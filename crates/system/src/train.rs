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
//! * `pipeline` (P) splits the layers into P stages; microbatches follow a 1F1B schedule (the
//!   GPipe bubble of (P - 1) stage times; at most P microbatches of activations in flight).
//!   Each chip sends its activation shard to its counterpart in the next stage.
//! * Rematerialisation (`full`, the default): a layer keeps only its input and recomputes its
//!   forward pass (with its collectives) before its backward pass.
//!
//! # The step
//!
//! Per layer and microbatch each chip runs the GEMMs of its shard on the chip's matrix units
//! ([`crate::workload::Arrays::gemm_time`]: the weight-stationary tiling model of
//! `podsim-compute`), each no faster than its HBM traffic (operands and result read or
//! written once), the attention score traffic (four passes over the scores, no fusion) and the
//! layer norms, residuals and activation function as memory-bound vector work. Collectives run
//! on the chips of their axis as the mapping places them: the closed form times them as
//! contention-free rings along each dimension the axis spans (a lower bound on what the flow
//! model measures), the flow fidelity runs the layer as a workload on the slice's network with
//! every group at once ([`crate::workload::run`]).

use std::fmt;

use podsim_collective::{Algorithm, Kind};
use podsim_net::NetworkModel;
use podsim_topology::Network;
use podsim_units::{Bytes, Flops, SimDuration};

use crate::workload::{ChipSpec, Group, Task, Unit, Work, Workload};

/// Bytes per element of activations, weights and gradients (bf16).
const ELEM: f64 = 2.0;

/// A decoder-only transformer.
#[derive(Debug, Clone, PartialEq)]
pub struct Transformer {
    /// Its name.
    pub name: String,
    /// Decoder layers.
    pub layers: u64,
    /// Model width.
    pub d_model: u64,
    /// Attention (query) heads.
    pub heads: u64,
    /// Key/value heads (= heads without grouped-query attention).
    pub kv_heads: u64,
    /// Feed-forward hidden width.
    pub d_ff: u64,
    /// Feed-forward matrices (2: in and out; 3: gated, as SwiGLU).
    pub ffn_matrices: u64,
    /// Vocabulary (embedding rows and logits columns).
    pub vocabulary: u64,
    /// Tokens per sequence.
    pub sequence: u64,
    /// Number format of weights and activations (one the matrix units take).
    pub format: String,
    /// The global batch the model trains with, sequences, if it states one.
    pub batch: Option<u64>,
    /// Where the figures come from.
    pub source: String,
}

/// The keys of a model file, for errors and help.
pub const MODEL_KEYS: [&str; 11] = [
    "name",
    "layers",
    "d_model",
    "heads",
    "kv_heads",
    "d_ff",
    "ffn_matrices",
    "vocabulary",
    "sequence",
    "format",
    "batch",
];

impl Transformer {
    /// The built-in models.
    pub fn builtins() -> Vec<Transformer> {
        let m = |name: &str,
                 layers,
                 d_model,
                 heads,
                 d_ff,
                 vocabulary,
                 sequence,
                 batch,
                 source: &str| Transformer {
            name: name.into(),
            layers,
            d_model,
            heads,
            kv_heads: heads,
            d_ff,
            ffn_matrices: 2,
            vocabulary,
            sequence,
            format: "bf16".into(),
            batch: Some(batch),
            source: source.into(),
        };
        vec![
            m(
                "gpt3-175b",
                96,
                12288,
                96,
                4 * 12288,
                50257,
                2048,
                1536,
                "GPT-3 175B: Brown et al. 2020, Table 2.1 (96 layers, d_model 12288, 96 heads, d_ff = 4 d_model, 2048-token context, batch 3.2M tokens = 1536 sequences; the GPT-2 vocabulary of 50257)",
            ),
            m(
                "gpt3-13b",
                40,
                5140,
                40,
                4 * 5140,
                50257,
                2048,
                1024,
                "GPT-3 13B: Brown et al. 2020, Table 2.1 (batch 2M tokens = 1024 sequences)",
            ),
            m(
                "gpt3-1.3b",
                24,
                2048,
                16,
                4 * 2048,
                50257,
                2048,
                512,
                "GPT-3 XL (1.3B): Brown et al. 2020, Table 2.1 (batch 1M tokens = 512 sequences)",
            ),
            Transformer {
                name: "llm-table3".into(),
                layers: 64,
                d_model: 8192,
                heads: 128,
                kv_heads: 128,
                d_ff: 65536,
                ffn_matrices: 3,
                vocabulary: 32000,
                sequence: 2048,
                format: "bf16".into(),
                batch: Some(256),
                source: "the LLM of Table 3 (tpu-v4-isca2023.txt section 4), whose size is unpublished: an assumption, a decoder shaped as LaMDA 137B (Thoppilan et al. 2022: 64 layers, d_model 8192, 128 heads, gated-GELU feed-forward of 65536, 32k SentencePiece vocabulary), 2048 tokens, a batch of 256 sequences (also an assumption)".into(),
            },
        ]
    }

    /// The built-in model `name`.
    pub fn builtin(name: &str) -> Option<Transformer> {
        Self::builtins().into_iter().find(|m| m.name == name)
    }

    /// Check the figures against each other: `Err((key, why))`.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let positive = [
            ("layers", self.layers),
            ("d_model", self.d_model),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("d_ff", self.d_ff),
            ("vocabulary", self.vocabulary),
            ("sequence", self.sequence),
        ];
        for (k, v) in positive {
            if v == 0 {
                return Err((k, "must be at least 1".into()));
            }
            if v > 1 << 24 {
                return Err((k, format!("{v} is beyond the 2^24 podsim accepts")));
            }
        }
        if !self.d_model.is_multiple_of(self.heads) {
            return Err((
                "heads",
                format!(
                    "d_model {} is not a multiple of {} heads",
                    self.d_model, self.heads
                ),
            ));
        }
        if self.kv_heads > self.heads || !self.heads.is_multiple_of(self.kv_heads) {
            return Err((
                "kv_heads",
                format!(
                    "{} key/value heads must divide the {} heads",
                    self.kv_heads, self.heads
                ),
            ));
        }
        if self.batch == Some(0) {
            return Err(("batch", "must be at least 1 sequence".into()));
        }
        if !(2..=3).contains(&self.ffn_matrices) {
            return Err((
                "ffn_matrices",
                format!("{} is not 2 (in, out) or 3 (gated)", self.ffn_matrices),
            ));
        }
        if !["bf16", "int8"].contains(&self.format.as_str()) {
            return Err(("format", format!("`{}` is not bf16 or int8", self.format)));
        }
        Ok(())
    }

    fn head_dim(&self) -> u64 {
        self.d_model / self.heads
    }

    /// Weights of one layer: Q, K, V, O and the feed-forward matrices.
    pub fn layer_params(&self) -> f64 {
        let (e, dh) = (self.d_model as f64, self.head_dim() as f64);
        let qkv = e * (self.heads + 2 * self.kv_heads) as f64 * dh;
        let o = self.heads as f64 * dh * e;
        let ffn = self.ffn_matrices as f64 * e * self.d_ff as f64;
        qkv + o + ffn
    }

    /// Every weight: the layers and the (tied) embedding.
    pub fn params(&self) -> f64 {
        self.layers as f64 * self.layer_params() + (self.vocabulary * self.d_model) as f64
    }

    /// Forward FLOPs of one sequence: 2 per weight per token, the attention scores and their
    /// weighted sum (2 x 2 x s^2 x d_model, causal masking not exploited) and the logits.
    pub fn forward_flops_per_seq(&self) -> f64 {
        let (s, e) = (self.sequence as f64, self.d_model as f64);
        let per_layer = 2.0 * self.layer_params() * s + 4.0 * s * s * e;
        self.layers as f64 * per_layer + 2.0 * s * e * self.vocabulary as f64
    }
}

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
        }
    }
    fn index(self) -> usize {
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
    pub fn parse(s: &str) -> Result<Parallel, String> {
        let t = s.trim();
        if let Some(inner) = t.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            let v: Vec<&str> = inner.split(',').map(str::trim).collect();
            if v.len() != 4 {
                return Err(format!("`{s}`: `[P, D, M1, M2]` takes four sizes"));
            }
            let mut out = [0u64; 4];
            for (o, x) in out.iter_mut().zip(v) {
                *o = x
                    .parse()
                    .map_err(|_| format!("`{x}` is not a whole number"))?;
            }
            return Parallel::checked(out);
        }
        let mut out = [0u64; 4];
        let mut given = [false; 4];
        for part in t.split(',') {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected AXIS=SIZE"))?;
            let a = Axis::ALL
                .into_iter()
                .find(|a| a.name() == k.trim())
                .ok_or_else(|| {
                    format!(
                        "`{}` is not an axis (pipeline, data, model1, model2)",
                        k.trim()
                    )
                })?;
            if given[a.index()] {
                return Err(format!("`{}` is given twice", a.name()));
            }
            given[a.index()] = true;
            out[a.index()] = v
                .trim()
                .parse()
                .map_err(|_| format!("`{}` is not a whole number", v.trim()))?;
        }
        if let Some(a) = Axis::ALL.into_iter().find(|a| !given[a.index()]) {
            return Err(format!(
                "`{}` is missing (give all four: pipeline=P,data=D,model1=M1,model2=M2)",
                a.name()
            ));
        }
        Parallel::checked(out)
    }

    fn checked(v: [u64; 4]) -> Result<Parallel, String> {
        if let Some(i) = v.iter().position(|&x| x == 0 || x > 1 << 20) {
            return Err(format!(
                "`{}` must be between 1 and 2^20, not {}",
                Axis::ALL[i].name(),
                v[i]
            ));
        }
        Ok(Parallel(v))
    }
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
    pub fn parse(s: &str) -> Result<Mapping, String> {
        let v: Vec<&str> = s.split(',').map(str::trim).collect();
        let mut out = Vec::new();
        for x in &v {
            let a = Axis::ALL
                .into_iter()
                .find(|a| a.name() == *x)
                .ok_or_else(|| format!("`{x}` is not an axis (pipeline, data, model1, model2)"))?;
            if out.contains(&a) {
                return Err(format!("`{x}` is given twice"));
            }
            out.push(a);
        }
        if out.len() != 4 {
            return Err(format!(
                "`{s}`: name all four axes, fastest first (e.g. model2,model1,data,pipeline)"
            ));
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
}

impl Remat {
    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Remat::Full => "full",
            Remat::None => "none",
        }
    }
    /// From its name.
    pub fn parse(s: &str) -> Option<Remat> {
        [Remat::Full, Remat::None]
            .into_iter()
            .find(|r| r.name() == s)
    }
}

/// The chip and slice figures a step uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The chip.
    pub chip: ChipSpec,
    /// HBM capacity per chip, bytes (Table 4 via the chip preset).
    pub hbm_bytes: u64,
    /// Slice shape, chips along x, y, z (a 2-D torus has z = 1); on a machine file, its rank
    /// grid: chips a node, then nodes.
    pub dims: [u32; 3],
    /// Whether each dimension wraps.
    pub wrap: [bool; 3],
    /// Whether each dimension's chips meet through switches (a machine file's NVSwitch or fat
    /// tree): any chip reaches any other of the dimension at the dimension's rate, so rings
    /// there use each chip's link once a step and interleaved groups do not share links.
    pub switched: [bool; 3],
    /// Per dimension, the rate one chip sends to the next of that dimension, bytes/s one way
    /// (a torus: its link's, in every dimension).
    pub dim_bytes_per_s: [f64; 3],
    /// Per dimension, the latency of that send plus the endpoint overhead, seconds (the
    /// rings' per-step cost there).
    pub dim_latency_s: [f64; 3],
    /// Link bandwidth one way, bytes/s (a machine file: its slowest dimension's rate, where
    /// pipeline stages meet).
    pub link_bytes_per_s: f64,
    /// Per-hop latency plus endpoint overhead, seconds (the rings' per-step cost; a machine
    /// file: its slowest dimension's).
    pub step_latency_s: f64,
    /// CMEM capacity, bytes (128 MiB on TPU v4, Table 4 via the chip preset; none on v3).
    pub cmem_bytes: u64,
    /// CMEM bandwidth to the cores, bytes/s ([`CMEM_BYTES_PER_S`]).
    pub cmem_bytes_per_s: f64,
    /// Whether CMEM is used (`--cmem off` turns it off, as Fig. 13 does).
    pub cmem_on: bool,
}

pub use crate::presets::CMEM_BYTES_PER_S;

impl Machine {
    /// The machine of a k-ary n-cube network of `chip`s (2-D or 3-D), TPUs whose HBM
    /// capacity Table 4 gives.
    pub fn of(net: &Network, chip: ChipSpec) -> Result<Machine, String> {
        let hbm_bytes = podsim_compute::chips::Chip::preset(&chip.name)
            .and_then(|c| c.tpu)
            .map(|t| t.hbm_bytes)
            .ok_or_else(|| {
                format!(
                    "training steps run on TPU chips (tpuv4, tpuv3), not {}",
                    chip.name
                )
            })?;
        let c = net.cube().ok_or_else(|| {
            format!(
                "training steps map axes onto torus dimensions, and {} is not a mesh or torus",
                net.shorthand()
            )
        })?;
        let d = c.dims();
        if d.is_empty() || d.len() > 3 {
            return Err(format!(
                "{} has {} dimensions; training steps take 1 to 3",
                net.shorthand(),
                d.len()
            ));
        }
        let mut dims = [1u32; 3];
        let mut wrap = [false; 3];
        for (i, &k) in d.iter().enumerate() {
            dims[i] = k;
            wrap[i] = c.wrap()[i];
        }
        let link = net.link();
        let endpoint = crate::presets::endpoint(net, None)
            .map_err(|e| e.to_string())?
            .map(|e| e.overhead.as_secs_f64())
            .unwrap_or(0.0);
        let (beta, alpha) = (
            link.bandwidth.bytes_per_s() as f64,
            link.latency.as_secs_f64() + endpoint,
        );
        Ok(Machine {
            hbm_bytes,
            dims,
            wrap,
            switched: [false; 3],
            dim_bytes_per_s: [beta; 3],
            dim_latency_s: [alpha; 3],
            link_bytes_per_s: beta,
            step_latency_s: alpha,
            cmem_bytes: chip.cmem.map_or(0, |c| c.bytes),
            cmem_bytes_per_s: chip.cmem.map_or(0.0, |c| c.bandwidth.bytes_per_s() as f64),
            cmem_on: chip.cmem.is_some(),
            chip,
        })
    }

    /// The machine of a machine file's network (a [`Network::Graph`] of chips, NICs and
    /// switches) of `chip`s with `hbm_bytes` of memory each: its rank grid (chips a node, then
    /// nodes) as the dimensions, each switched, at the rate and latency of the route from
    /// chip 0 to the next chip along it (the slowest link and the links' latencies on the way,
    /// plus the endpoint overhead).
    pub fn of_machine(net: &Network, chip: ChipSpec, hbm_bytes: u64) -> Result<Machine, String> {
        let Network::Graph(g) = net else {
            return Err(format!(
                "{} is not a machine file's network",
                net.shorthand()
            ));
        };
        let grid = g.grid();
        if grid.is_empty() || grid.len() > 3 {
            return Err(format!(
                "{} has a rank grid of {} dimensions; training steps take 1 to 3",
                g.label(),
                grid.len()
            ));
        }
        let endpoint = g.endpoint_overhead().as_secs_f64();
        let (mut dims, mut rate, mut latency) = ([1u32; 3], [0.0f64; 3], [0.0f64; 3]);
        let mut stride = 1u64;
        for (d, &k) in grid.iter().enumerate() {
            dims[d] = k;
            if k > 1 {
                let route = g
                    .paths(podsim_topology::NodeId(0), podsim_topology::NodeId(stride))
                    .into_iter()
                    .next()
                    .ok_or_else(|| {
                        format!("{}: chip 0 has no route to chip {stride}", g.label())
                    })?;
                let (mut at, mut slowest, mut flight) = (podsim_topology::NodeId(0), f64::MAX, 0.0);
                for next in route {
                    let spec = g
                        .links_from(at)
                        .into_iter()
                        .find(|(v, _)| *v == next)
                        .map(|(_, s)| s)
                        .ok_or_else(|| format!("{}: a route left its links", g.label()))?;
                    slowest = slowest.min(spec.bandwidth.bytes_per_s() as f64);
                    flight += spec.latency.as_secs_f64();
                    at = next;
                }
                rate[d] = slowest;
                latency[d] = flight + endpoint;
            }
            stride *= u64::from(k);
        }
        let spanned = (0..3).filter(|&d| dims[d] > 1);
        let slowest = spanned
            .clone()
            .min_by(|&a, &b| rate[a].total_cmp(&rate[b]))
            .unwrap_or(0);
        let (beta, alpha) = if dims.iter().all(|&k| k <= 1) {
            (net.link().bandwidth.bytes_per_s() as f64, endpoint)
        } else {
            (rate[slowest], latency[slowest])
        };
        for d in 0..3 {
            if dims[d] <= 1 {
                rate[d] = beta;
                latency[d] = alpha;
            }
        }
        Ok(Machine {
            hbm_bytes,
            dims,
            wrap: [false; 3],
            switched: [true; 3],
            dim_bytes_per_s: rate,
            dim_latency_s: latency,
            link_bytes_per_s: beta,
            step_latency_s: alpha,
            cmem_bytes: chip.cmem.map_or(0, |c| c.bytes),
            cmem_bytes_per_s: chip.cmem.map_or(0.0, |c| c.bandwidth.bytes_per_s() as f64),
            cmem_on: chip.cmem.is_some(),
            chip,
        })
    }

    /// The machine a step runs on for `spec`, built as `net`: a machine file's own chip (a
    /// chip preset, whose matrix units time the GEMMs) with the file's memory per chip, or
    /// TPU v4 chips on a slice, mesh or torus.
    pub fn for_system(spec: &crate::SystemSpec, net: &Network) -> Result<Machine, String> {
        match &spec.topology {
            crate::TopoSpec::Machine(mf) => {
                let chip = ChipSpec::preset(&mf.chip.name).ok_or_else(|| {
                    format!(
                        "chip `{}` is not a chip preset; a training step times its GEMMs on a preset's matrix units (tpuv4, tpuv3, a100)",
                        mf.chip.name
                    )
                })?;
                Machine::of_machine(net, chip, mf.chip.memory.0)
            }
            _ => {
                let chip = ChipSpec::preset("tpuv4")
                    .ok_or_else(|| "tpuv4 is missing from the chip presets".to_string())?;
                Machine::of(net, chip)
            }
        }
    }

    fn chips(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d)).product()
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
}

/// How an axis lies on the slice: per dimension it spans, the factor it takes and the stride
/// within that dimension.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    /// Stride of the axis in chip ids.
    stride: u64,
    /// Size.
    size: u64,
    /// Per dimension: (factor, stride within the dimension); factor 1 where it does not span.
    parts: [(u64, u64); 3],
}

/// Why a configuration cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainError {
    /// The configuration does not fit the model, the batch or the slice.
    #[error("{0}")]
    Config(String),
    /// The flow-level run failed.
    #[error("flow model: {0}")]
    Flow(String),
}

fn cfg_err(s: String) -> TrainError {
    TrainError::Config(s)
}

/// Where the axes lie, and why not when they cannot.
fn spans(m: &Machine, c: &Config) -> Result<[Span; 4], TrainError> {
    let chips = m.chips();
    if c.parallel.chips() != chips {
        return Err(cfg_err(format!(
            "the partition spec {} needs {} chips but the slice has {chips}",
            c.parallel,
            c.parallel.chips()
        )));
    }
    let dim_lo: [u64; 3] = [
        1,
        u64::from(m.dims[0]),
        u64::from(m.dims[0]) * u64::from(m.dims[1]),
    ];
    let mut out = [Span {
        stride: 1,
        size: 1,
        parts: [(1, 1); 3],
    }; 4];
    let mut p = 1u64;
    for a in c.mapping.0 {
        let s = c.parallel.of(a);
        if s == 1 {
            // An axis of one chip lies nowhere (its default span).
            continue;
        }
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
            if a_hi % a_lo != 0 || a_lo % lo != 0 {
                return Err(cfg_err(format!(
                    "axis {} of {s} (laid after {p} chips) does not split dimension {} of {} evenly",
                    a.name(),
                    ["x", "y", "z"][d],
                    m.dims[d]
                )));
            }
            span.parts[d] = (a_hi / a_lo, a_lo / lo);
        }
        out[a.index()] = span;
        p *= s;
    }
    Ok(out)
}

/// One piece of a layer's work on every chip.
#[derive(Debug, Clone, PartialEq)]
enum Op {
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
struct LayerOps {
    forward: Vec<Op>,
    backward: Vec<Op>,
}

/// The figures of one configuration that the mapping does not change.
#[derive(Debug, Clone, PartialEq)]
struct Shard {
    /// Tokens per chip per microbatch.
    tokens: u64,
    /// Sequences per chip per microbatch.
    seqs: u64,
    /// Layers per stage (the largest stage).
    layers_per_stage: u64,
    /// Weights per chip (largest stage, with the embedding).
    weights_per_chip: f64,
    memory: MemoryUse,
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

fn shard(t: &Transformer, c: &Config) -> Result<Shard, TrainError> {
    let [p, d, x, y] = c.parallel.0;
    let replicas = d * x;
    if !c.batch.is_multiple_of(replicas) {
        return Err(cfg_err(format!(
            "the batch of {} sequences does not split over data x model1 = {replicas}",
            c.batch
        )));
    }
    let per_shard = c.batch / replicas;
    if c.microbatches == 0 || !per_shard.is_multiple_of(c.microbatches) {
        return Err(cfg_err(format!(
            "{per_shard} sequences per data/model1 shard do not split into {} microbatches",
            c.microbatches
        )));
    }
    if p > t.layers {
        return Err(cfg_err(format!(
            "{p} pipeline stages for {} layers",
            t.layers
        )));
    }
    if y > t.heads {
        return Err(cfg_err(format!(
            "model2 = {y} splits {} attention heads finer than one head",
            t.heads
        )));
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
    let gathered = match c.partition.weight {
        Split::OneD => 0.0,
        Split::TwoD => 2.0 * t.layer_params() / y as f64 * ELEM,
    };
    let workspace = layer_acts + gathered;
    let memory = MemoryUse {
        weights: weights_per_chip * ELEM,
        gradients: weights_per_chip * ELEM,
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

/// The layer's ops for this configuration.
fn layer_ops(t: &Transformer, c: &Config, sh: &Shard) -> LayerOps {
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
    let a_split = match c.partition.activation {
        Split::OneD => 1.0,
        Split::TwoD => y as f64,
    };
    let s = t.sequence;
    // The activation collectives of one block, before and after it.
    let block_in = |v: &mut Vec<Op>| {
        if c.partition.activation == Split::TwoD && y > 1 {
            v.push(Op::Coll {
                name: "gather activations (model2)",
                axis: Axis::Model2,
                kind: Kind::AllGather,
                bytes: act_bytes,
                overlapped: false,
            });
        }
    };
    let block_out = |v: &mut Vec<Op>, bwd: bool| {
        if y > 1 {
            let (name, kind) = match (c.partition.activation, bwd) {
                (Split::OneD, _) => ("all-reduce activations (model2)", Kind::AllReduce),
                (Split::TwoD, false) => ("scatter activations (model2)", Kind::ReduceScatter),
                (Split::TwoD, true) => ("scatter gradients (model2)", Kind::ReduceScatter),
            };
            v.push(Op::Coll {
                name,
                axis: Axis::Model2,
                kind,
                bytes: act_bytes,
                overlapped: false,
            });
        }
    };
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
    type Shape = (&'static str, u64, u64, u64, u64, bool);
    let gemms_fwd: [Shape; 6] = [
        ("qkv projection", tok, qkv_n, e, 1, true),
        ("attention scores", s, s, dh, sh.seqs * heads_chip, false),
        ("attention values", s, dh, s, sh.seqs * heads_chip, false),
        ("output projection", tok, e, o_k, 1, true),
        ("feed-forward in", tok, ff_in, e, 1, true),
        ("feed-forward out", tok, e, ff_out_k, 1, true),
    ];
    let gemm = |i: usize| {
        let (name, m, n, k, count, weight) = gemms_fwd[i];
        Op::Gemm {
            name,
            m,
            n,
            k,
            count,
            weight,
        }
    };
    let mut fwd = Vec::new();
    let weight_2d = c.partition.weight == Split::TwoD && x > 1;
    let w_bytes = t.layer_params() / y as f64 * ELEM;
    let gather_weights = Op::Coll {
        name: "gather weights (model1)",
        axis: Axis::Model1,
        kind: Kind::AllGather,
        bytes: w_bytes,
        overlapped: true,
    };
    if weight_2d {
        fwd.push(gather_weights.clone());
    }
    block_in(&mut fwd);
    fwd.extend([gemm(0), gemm(1), softmax.clone(), gemm(2), gemm(3)]);
    block_out(&mut fwd, false);
    fwd.push(norms.clone());
    block_in(&mut fwd);
    fwd.extend([gemm(4), act_fn.clone(), gemm(5)]);
    block_out(&mut fwd, false);
    // Backward: the recomputed forward (remat), then per GEMM the input gradient (m x k by
    // k x n transposed: m, k, n) and the weight gradient (k x m by m x n: k, n, m), in reverse.
    let mut bwd = Vec::new();
    if weight_2d {
        bwd.push(gather_weights);
    }
    if c.remat == Remat::Full {
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
    let grads = |v: &mut Vec<Op>, i: usize| {
        let (name, m, n, k, count, weight) = gemms_fwd[i];
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
    };
    block_in(&mut bwd);
    grads(&mut bwd, 5);
    bwd.push(act_fn.clone());
    bwd.push(act_fn);
    grads(&mut bwd, 4);
    block_out(&mut bwd, true);
    bwd.push(norms.clone());
    bwd.push(norms);
    block_in(&mut bwd);
    grads(&mut bwd, 3);
    grads(&mut bwd, 2);
    bwd.push(softmax.clone());
    bwd.push(softmax);
    grads(&mut bwd, 1);
    grads(&mut bwd, 0);
    block_out(&mut bwd, true);
    if weight_2d {
        bwd.push(Op::Coll {
            name: "scatter weight gradients (model1)",
            axis: Axis::Model1,
            kind: Kind::ReduceScatter,
            bytes: w_bytes,
            overlapped: true,
        });
    }
    LayerOps {
        forward: fwd,
        backward: bwd,
    }
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
    /// Per microbatch and stage: forward, backward, seconds.
    pub stage_times_s: (f64, f64),
    /// Sequences per microbatch per data/model1 shard.
    pub microbatch_seqs: u64,
    /// Which fidelity timed the collectives.
    pub fidelity: &'static str,
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

/// The time of `op` on one chip, and whether it is communication.
struct Timer<'a> {
    t: &'a Transformer,
    m: &'a Machine,
    spans: [Span; 4],
    /// Whether the layer's weight shard is read from CMEM.
    cmem_weights: bool,
}

/// Whether CMEM holds a layer's weights for `c`: CMEM is on and the weight shard the GEMMs read
/// (after any gather) fits in half of it, the other half left to activations.
fn cmem_holds(t: &Transformer, m: &Machine, c: &Config) -> bool {
    let shard = t.layer_params() / c.parallel.of(Axis::Model2) as f64 * ELEM;
    m.cmem_on && shard <= m.cmem_bytes as f64 / 2.0
}

impl Timer<'_> {
    /// A GEMM's time: the GEMM model's, or its operands' and result's traffic where that is
    /// longer; a weight operand comes from CMEM when the layer's weights are held there.
    fn gemm(&self, m: u64, n: u64, k: u64, weight: bool) -> Result<f64, TrainError> {
        let compute = self
            .m
            .chip
            .arrays
            .gemm_time(m, n, k, &self.t.format)
            .map_err(cfg_err)?
            .as_secs_f64();
        let hbm = self.m.chip.memory.bytes_per_s() as f64;
        let streamed = (m * k + m * n) as f64 * ELEM;
        let w = (k * n) as f64 * ELEM;
        let memory = if weight && self.cmem_weights {
            streamed / hbm + w / self.m.cmem_bytes_per_s
        } else {
            (streamed + w) / hbm
        };
        Ok(compute.max(memory))
    }

    fn memory(&self, bytes: f64) -> f64 {
        bytes / self.m.chip.memory.bytes_per_s() as f64
    }

    /// A contention-free ring collective along each dimension the axis spans: per dimension,
    /// (f - 1)/f of the data that reaches it over the links the ring has there (2 for a
    /// bidirectional all-reduce ring closing through a wraparound, 1 for the unidirectional
    /// rings and for a ring on a line, whose closing edge runs back along it; divided by the
    /// stride when interleaved groups share the links), plus a step latency per ring step.
    fn collective(&self, axis: Axis, kind: Kind, bytes: f64) -> f64 {
        let span = self.spans[axis.index()];
        if span.size <= 1 {
            return 0.0;
        }
        let dims_spanned = span.parts.iter().filter(|p| p.0 > 1).count();
        let mut time = 0.0;
        let mut data = bytes;
        for d in 0..3 {
            let (f, stride) = span.parts[d];
            if f <= 1 {
                continue;
            }
            let beta = self.m.dim_bytes_per_s[d];
            let alpha = self.m.dim_latency_s[d];
            let full = f * stride == u64::from(self.m.dims[d]) && self.m.wrap[d];
            let bidirectional = kind == Kind::AllReduce && dims_spanned == 1;
            // Through switches each chip's link carries one ring a step, whatever the stride.
            let switched = self.m.switched[d];
            let links = match (full, stride) {
                _ if switched => 1.0,
                (true, 1) if bidirectional => 2.0,
                (true, s) if bidirectional => 2.0 / s as f64,
                (_, s) => 1.0 / s as f64,
            };
            let fr = (f - 1) as f64 / f as f64;
            let steps = if switched {
                (f - 1) as f64
            } else {
                (f - 1) as f64 * (stride as f64).max(1.0)
            };
            let phase = fr * data / (links * beta) + steps * alpha;
            time += match kind {
                Kind::AllReduce => 2.0 * phase,
                _ => phase,
            };
            // Dimension-wise: the next dimension works on this one's share (an all-gather
            // moves the same amounts, in the reverse order).
            data /= f as f64;
        }
        time
    }

    fn op(&self, op: &Op) -> Result<(f64, bool), TrainError> {
        Ok(match op {
            Op::Gemm {
                m,
                n,
                k,
                count,
                weight,
                ..
            } => (*count as f64 * self.gemm(*m, *n, *k, *weight)?, false),
            Op::Memory { bytes, .. } => (self.memory(*bytes), false),
            Op::Coll {
                axis, kind, bytes, ..
            } => (self.collective(*axis, *kind, *bytes), true),
        })
    }

    /// (chip work, exposed communication) of a list of ops: serial ops add up; overlapped
    /// collectives hide behind the rest and show only where they take longer.
    fn pass(&self, ops: &[Op]) -> Result<(f64, f64), TrainError> {
        let (mut work, mut comm, mut hidden) = (0.0, 0.0, 0.0);
        for o in ops {
            let (time, is_comm) = self.op(o)?;
            match o {
                Op::Coll {
                    overlapped: true, ..
                } => hidden += time,
                _ if is_comm => comm += time,
                _ => work += time,
            }
        }
        Ok((work, comm + (hidden - work - comm).max(0.0)))
    }
}

/// Model FLOPs and hardware FLOPs per sequence.
fn flops_per_seq(t: &Transformer, remat: Remat) -> (f64, f64) {
    let f = t.forward_flops_per_seq();
    let model = 3.0 * f;
    let layers_fwd = f - 2.0 * (t.sequence * t.d_model * t.vocabulary) as f64;
    let hw = match remat {
        Remat::Full => model + layers_fwd,
        Remat::None => model,
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
    /// Chip work per layer: forward, backward.
    work: (f64, f64),
    /// The last stage's logits and loss: forward, backward.
    head: (f64, f64),
    flops: (f64, f64),
}

impl Prepared {
    /// Chip work, shard and ops of `c` on `chip` (the mapping in `c` is not used).
    pub fn new(t: &Transformer, chip: &Machine, c: &Config) -> Result<Prepared, TrainError> {
        let sh = shard(t, c)?;
        let ops = layer_ops(t, c, &sh);
        let timer = Timer {
            t,
            m: chip,
            cmem_weights: cmem_holds(t, chip, c),
            spans: [Span {
                stride: 1,
                size: 1,
                parts: [(1, 1); 3],
            }; 4],
        };
        let (fw, _) = timer.pass(&ops.forward)?;
        let (bw, _) = timer.pass(&ops.backward)?;
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
            work: (fw, bw),
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
        let l = self.sh.layers_per_stage as f64;
        let stage = l * (self.work.0 + self.work.1) + self.head.0 + self.head.1;
        let p = self.config.parallel.of(Axis::Pipeline) as f64;
        (self.config.microbatches as f64 + p - 1.0) * stage
    }

    /// The step on machine `m` with mapping `mapping`, the collectives in closed form, or as
    /// measured per layer (forward, backward: seconds of exposed communication per layer and
    /// microbatch, from [`flow_layer`]).
    pub fn finish(
        &self,
        t: &Transformer,
        m: &Machine,
        mapping: Mapping,
        measured: Option<(f64, f64)>,
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
            Some(v) => v,
            None => (
                timer.pass(&self.ops.forward)?.1,
                timer.pass(&self.ops.backward)?.1,
            ),
        };
        let sh = &self.sh;
        let [p, d, x, y] = c.parallel.0;
        let l = sh.layers_per_stage as f64;
        let a_split = match c.partition.activation {
            Split::OneD => 1.0,
            Split::TwoD => y as f64,
        };
        // The pipeline send of the stage's output (and of its gradient back), over one link.
        let send = if p > 1 {
            let bytes = sh.tokens as f64 * t.d_model as f64 * ELEM / a_split;
            bytes / m.link_bytes_per_s + m.step_latency_s
        } else {
            0.0
        };
        let work_f = l * self.work.0 + self.head.0;
        let work_b = l * self.work.1 + self.head.1;
        let comm_f = l * fc + send;
        let comm_b = l * bc + send;
        let (tf, tb) = (work_f + comm_f, work_b + comm_b);
        let mb = c.microbatches as f64;
        let bubble = (p - 1) as f64 * (tf + tb);
        // Gradient sum over data (and model1 for 1D weights): a ring all-reduce of the bf16
        // weight gradients (reduce-scatter and all-gather of the updated shard: the same
        // bytes), overlapped with the last microbatch's backward pass over all layers but the
        // first.
        let grad_bytes = sh.weights_per_chip * ELEM;
        let mut sync = timer.collective(Axis::Data, Kind::AllReduce, grad_bytes);
        if c.partition.weight == Split::OneD {
            sync += timer.collective(Axis::Model1, Kind::AllReduce, grad_bytes / d as f64);
        }
        let overlap = tb * (l - 1.0).max(0.0) / l.max(1.0);
        let sync_exposed = (sync - overlap).max(0.0);
        // Adam on the weight shard this chip updates: read the bf16 gradient, the fp32 weight
        // and two moments, write them and the bf16 weight (2 + 12 + 12 + 2 bytes per weight).
        let replicas = match c.partition.weight {
            Split::OneD => d * x,
            Split::TwoD => d,
        } as f64;
        let optimizer = timer.memory(sh.weights_per_chip * 28.0 / replicas);
        let compute = mb * (work_f + work_b) + optimizer;
        let exposed = mb * (comm_f + comm_b) + sync_exposed;
        let step = compute + exposed + bubble;
        let (model_flops, hw_flops) = self.flops;
        let peak = m.chip.matrix.0 as f64 * m.chips() as f64;
        let tput = c.batch as f64 / step;
        let memory = sh.memory;
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
            stage_times_s: (tf, tb),
            microbatch_seqs: sh.seqs,
            fidelity: if measured.is_some() {
                "flow"
            } else {
                "analytic"
            },
        })
    }
}

fn compose(
    t: &Transformer,
    m: &Machine,
    c: &Config,
    measured: Option<(f64, f64)>,
) -> Result<StepReport, TrainError> {
    spans(m, c)?;
    Prepared::new(t, m, c)?.finish(t, m, c.mapping, measured)
}

/// The step of `c` with closed-form collectives.
pub fn analytic(t: &Transformer, m: &Machine, c: &Config) -> Result<StepReport, TrainError> {
    compose(t, m, c, None)
}

/// The chips of every group of the axes `axes` (the chips that differ only in those axes'
/// coordinates), each in rank order (the first axis fastest).
fn lines(spans: &[Span; 4], axes: &[Axis], chips: u64) -> Vec<Vec<u64>> {
    let digit = |id: u64, s: &Span| (id / s.stride) % s.size;
    let mut out = Vec::new();
    for id in 0..chips {
        if axes.iter().any(|a| digit(id, &spans[a.index()]) != 0) {
            continue;
        }
        let mut line = vec![id];
        for a in axes {
            let s = &spans[a.index()];
            line = (0..s.size)
                .flat_map(|j| line.iter().map(move |&c| c + j * s.stride))
                .collect();
        }
        out.push(line);
    }
    out
}

/// The per-layer workload of one microbatch on every chip of the slice: the forward pass, then
/// the backward pass; every stage and replica at once, so the collectives of all groups share
/// the links as the mapping places them. Chip work is timed as the closed form times it (a
/// compute task at the GEMM model's rate, memory tasks at HBM bandwidth), so the fidelities
/// differ only in the network. Returns the workload and the number of forward tasks.
fn layer_workload(
    t: &Transformer,
    m: &Machine,
    c: &Config,
) -> Result<(Workload, usize), TrainError> {
    let spans = spans(m, c)?;
    let sh = shard(t, c)?;
    let ops = layer_ops(t, c, &sh);
    let timer = Timer {
        t,
        m,
        spans,
        cmem_weights: cmem_holds(t, m, c),
    };
    let chips = m.chips();
    let peak = m.chip.matrix.0 as f64;
    let mut w = Workload::default();
    let mut last: Option<usize> = None;
    let mut forward_tasks = 0;
    for (pass, list) in [("forward", &ops.forward), ("backward", &ops.backward)] {
        let pass_start = last;
        for o in list.iter() {
            let (name, work, group, serial) = match o {
                Op::Gemm {
                    name,
                    m,
                    n,
                    k,
                    count,
                    weight,
                } => {
                    let flops = 2.0 * (*m * *n * *k) as f64 * *count as f64;
                    let time = *count as f64 * timer.gemm(*m, *n, *k, *weight)?;
                    (
                        *name,
                        Work::Compute {
                            flops: Flops(flops.ceil() as u64),
                            efficiency: (flops / (time * peak)).clamp(1e-9, 1.0),
                            unit: Unit::Matrix,
                        },
                        Group::All,
                        true,
                    )
                }
                Op::Memory { name, bytes } => (
                    *name,
                    Work::Memory {
                        bytes: Bytes(bytes.ceil() as u64),
                        working_set: None,
                    },
                    Group::All,
                    true,
                ),
                Op::Coll {
                    name,
                    axis,
                    kind,
                    bytes,
                    overlapped,
                } => {
                    let span = spans[axis.index()];
                    if span.size <= 1 {
                        continue;
                    }
                    let dims: Vec<u32> = span
                        .parts
                        .iter()
                        .filter(|p| p.0 > 1)
                        .map(|p| p.0 as u32)
                        .collect();
                    let algorithm = match kind {
                        Kind::AllReduce if dims.len() == 1 => Algorithm::BidirectionalRing,
                        Kind::AllReduce => Algorithm::DimensionWise,
                        _ => Algorithm::Ring,
                    };
                    (
                        *name,
                        Work::Collective {
                            kind: *kind,
                            algorithm,
                            bytes: Bytes(bytes.ceil() as u64),
                        },
                        Group::Lines(lines(&spans, &[*axis], chips), dims),
                        !overlapped,
                    )
                }
            };
            let after = if serial { last } else { pass_start };
            w.tasks.push(Task {
                name: format!("{pass} {} {name}", w.tasks.len()),
                work,
                group,
                after: after.into_iter().collect(),
                repeat: 1,
            });
            if serial {
                last = Some(w.tasks.len() - 1);
            }
        }
        if pass == "forward" {
            forward_tasks = w.tasks.len();
        }
    }
    Ok((w, forward_tasks))
}

/// Run one layer's forward and backward pass for one microbatch (`layer_workload`) on
/// `model`, for traces: the workload and what the run measured.
pub fn layer_run(
    t: &Transformer,
    m: &Machine,
    net: &Network,
    c: &Config,
    model: &mut dyn NetworkModel,
) -> Result<(Workload, crate::workload::WorkloadResult), TrainError> {
    let (w, _) = layer_workload(t, m, c)?;
    let r = crate::workload::run(&w, net, &m.chip, model)
        .map_err(|e| TrainError::Flow(e.to_string()))?;
    Ok((w, r))
}

/// Measure the exposed communication of one layer's forward and backward pass per microbatch
/// on the models `model_for` builds: the layer workload runs on the slice's network with every
/// group at once; its communication on the critical path is what no overlap hid. The forward
/// pass runs alone first; the backward figure is the whole layer's less the forward's.
pub fn flow_layer(
    t: &Transformer,
    m: &Machine,
    net: &Network,
    c: &Config,
    model_for: &mut dyn FnMut() -> Result<Box<dyn NetworkModel>, String>,
) -> Result<(f64, f64), TrainError> {
    let (w, split) = layer_workload(t, m, c)?;
    let fwd = Workload {
        tasks: w.tasks[..split].to_vec(),
    };
    let mut run = |wl: &Workload| -> Result<f64, TrainError> {
        let mut model = model_for().map_err(TrainError::Flow)?;
        crate::workload::run(wl, net, &m.chip, model.as_mut())
            .map(|r| r.exposed_communication_s)
            .map_err(|e| TrainError::Flow(e.to_string()))
    };
    let f = run(&fwd)?;
    let all = run(&w)?;
    Ok((f, (all - f).max(0.0)))
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
    let layer = flow_layer(t, m, net, c, model_for)?;
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
    best.map(|b| b.2).ok_or_else(|| {
        last_err.unwrap_or_else(|| {
            cfg_err(format!(
                "the batch of {} does not split over data x model1",
                c.batch
            ))
        })
    })
}

/// A duration in seconds as a [`SimDuration`] for reports (saturating).
pub fn secs(s: f64) -> SimDuration {
    SimDuration::from_ps((s * 1e12).clamp(0.0, u64::MAX as f64) as u64)
}

/// A slice the OCS can build for a search: chips along x <= y <= z, each a multiple of 4
/// (section 2.5), twisted or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SliceShape {
    /// Chips along x, y, z.
    pub dims: [u32; 3],
    /// Whether the wraparound is twisted.
    pub twisted: bool,
}

impl SliceShape {
    /// Every slice of `chips` chips made of 4x4x4 blocks, twisted too where twistable
    /// (k x k x 2k, k x 2k x 2k).
    pub fn all(chips: u64) -> Vec<SliceShape> {
        let mut out = Vec::new();
        if !chips.is_multiple_of(64) {
            return out;
        }
        let mut a = 4u64;
        while a * a * a <= chips {
            let mut b = a;
            while a * b * b <= chips {
                if chips.is_multiple_of(a * b) {
                    let c = chips / (a * b);
                    if c >= b && c.is_multiple_of(4) && c <= 1 << 16 {
                        let dims = [a as u32, b as u32, c as u32];
                        out.push(SliceShape {
                            dims,
                            twisted: false,
                        });
                        if (a == b && c == 2 * b) || (b == 2 * a && c == b) {
                            out.push(SliceShape {
                                dims,
                                twisted: true,
                            });
                        }
                    }
                }
                b += 4;
            }
            a += 4;
        }
        out
    }

    /// Its shorthand, `tpuv4:slice=AxBxC[:twisted]`.
    pub fn shorthand(&self) -> String {
        let [a, b, c] = self.dims;
        format!(
            "tpuv4:slice={a}x{b}x{c}{}",
            if self.twisted { ":twisted" } else { "" }
        )
    }

    /// Its network, built from blocks and OCS circuits in an empty pod.
    pub fn network(&self) -> Result<Network, TrainError> {
        let mut pod = crate::tpu_v4::TpuPod::new();
        let id = pod
            .allocate(self.dims, self.twisted)
            .map_err(|e| cfg_err(e.to_string()))?;
        pod.slices()
            .find(|s| s.id == id)
            .map(|s| Network::Cube(s.topology.clone()))
            .ok_or_else(|| cfg_err("the pod lost the slice it just made".into()))
    }
}

/// Every partition spec `[P, D, M1, M2]` of `chips` chips that `t` and `batch` allow.
pub fn parallel_specs(t: &Transformer, chips: u64, batch: u64) -> Vec<Parallel> {
    let divisors = |n: u64| -> Vec<u64> { (1..=n).filter(|k| n.is_multiple_of(*k)).collect() };
    let mut out = Vec::new();
    for p in divisors(chips) {
        if p > t.layers {
            continue;
        }
        for d in divisors(chips / p) {
            for x in divisors(chips / p / d) {
                let y = chips / p / d / x;
                if y > t.heads || !batch.is_multiple_of(d * x) {
                    continue;
                }
                out.push(Parallel([p, d, x, y]));
            }
        }
    }
    out
}

/// Builds a fresh network model for a network (the flow model, for the search's survivors).
pub type ModelFor<'a> = dyn FnMut(&Network) -> Result<Box<dyn NetworkModel>, String> + 'a;

/// What a search found.
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// The best configurations, best first, each with its slice and its step (timed at the
    /// fidelity the search ended with).
    pub results: Vec<(SliceShape, StepReport)>,
    /// Configurations evaluated in closed form.
    pub configurations_evaluated: u64,
    /// Configurations skipped by the compute-only bound before any mapping was tried.
    pub pruned: u64,
    /// Configurations that do not fit in HBM.
    pub over_memory: u64,
    /// Survivors timed on the flow model.
    pub flow_evaluated: u64,
    /// Seconds spent in the closed-form pass.
    pub closed_form_s: f64,
}

/// Search slice shapes, partition specs, 1D/2D options, rematerialisation, microbatches and
/// axis mappings for `t` on `chips` TPU v4 chips at global batch `batch`: every configuration
/// in closed form, skipping those whose compute-only bound cannot beat the K-th best found,
/// then the best (up to `flow_limit`, in closed-form order) on the flow model with
/// `model_for`, until the closed-form figure of the next one (an upper bound on its flow
/// throughput) cannot beat the K-th best measured.
pub fn search(
    t: &Transformer,
    chip: &ChipSpec,
    chips: u64,
    batch: u64,
    top: usize,
    flow_limit: usize,
    model_for: &mut ModelFor<'_>,
) -> Result<SearchResult, TrainError> {
    search_with(
        t,
        chip,
        chips,
        batch,
        top,
        flow_limit,
        model_for,
        &mut NoMemo,
    )
}

/// Where a search keeps the layer times the flow model measured, so a search run again (after
/// a kill, say) reuses them instead of measuring again: a key naming the slice and the
/// configuration -> (forward, backward) seconds of one layer.
pub trait FlowMemo {
    /// The times kept for `key`, if any.
    fn get(&mut self, key: &str) -> Option<(f64, f64)>;
    /// Keep the times just measured for `key`.
    fn put(&mut self, key: &str, times: (f64, f64)) -> Result<(), String>;
}

/// A [`FlowMemo`] that keeps nothing.
pub struct NoMemo;

impl FlowMemo for NoMemo {
    fn get(&mut self, _: &str) -> Option<(f64, f64)> {
        None
    }
    fn put(&mut self, _: &str, _: (f64, f64)) -> Result<(), String> {
        Ok(())
    }
}

/// [`search`], with the flow pass's layer times kept in (and taken from) `memo`.
#[allow(clippy::too_many_arguments)]
pub fn search_with(
    t: &Transformer,
    chip: &ChipSpec,
    chips: u64,
    batch: u64,
    top: usize,
    flow_limit: usize,
    model_for: &mut ModelFor<'_>,
    memo: &mut dyn FlowMemo,
) -> Result<SearchResult, TrainError> {
    let top = top.max(1);
    let shapes = SliceShape::all(chips);
    if shapes.is_empty() {
        return Err(cfg_err(format!(
            "{chips} chips make no slice of 4x4x4 blocks (a multiple of 64 is needed)"
        )));
    }
    let mut machines = Vec::new();
    for s in &shapes {
        let net = s.network()?;
        let m = Machine::of(&net, chip.clone()).map_err(cfg_err)?;
        machines.push((*s, net, m));
    }
    let specs = parallel_specs(t, chips, batch);
    let start = std::time::Instant::now();
    // Candidates kept: (throughput, shape index, report), best first; more than `top` so the
    // flow pass has survivors to re-rank.
    let keep = (top * 4).max(flow_limit);
    let mut best: Vec<(f64, usize, StepReport)> = Vec::new();
    let (mut evaluated, mut pruned, mut over) = (0u64, 0u64, 0u64);
    let floor = |best: &Vec<(f64, usize, StepReport)>| {
        if best.len() < keep {
            0.0
        } else {
            best[best.len() - 1].0
        }
    };
    let mappings = Mapping::all();
    for remat in [Remat::Full, Remat::None] {
        for partition in Partition::ALL {
            for parallel in &specs {
                let base = Config {
                    parallel: *parallel,
                    partition,
                    mapping: Mapping::DEFAULT,
                    batch,
                    microbatches: 1,
                    remat,
                };
                for mb in microbatch_choices(&base) {
                    let c = Config {
                        microbatches: mb,
                        ..base
                    };
                    let Ok(prep) = Prepared::new(t, &machines[0].2, &c) else {
                        continue;
                    };
                    let variants = (machines.len() * mappings.len()) as u64;
                    if !prep.fits(&machines[0].2) {
                        over += variants;
                        continue;
                    }
                    if batch as f64 / prep.bound_s() <= floor(&best) {
                        pruned += variants;
                        continue;
                    }
                    for (si, (_, _, m)) in machines.iter().enumerate() {
                        let mut seen: Vec<[Span; 4]> = Vec::new();
                        for &mapping in &mappings {
                            let cm = Config { mapping, ..c };
                            let Ok(sp) = spans(m, &cm) else {
                                continue;
                            };
                            // Mappings that place every axis alike are one configuration.
                            if seen.contains(&sp) {
                                continue;
                            }
                            seen.push(sp);
                            evaluated += 1;
                            let Ok(r) = prep.finish(t, m, mapping, None) else {
                                continue;
                            };
                            let tp = r.throughput_seqs_per_s;
                            if tp > floor(&best) {
                                let at = best.partition_point(|b| b.0 >= tp);
                                best.insert(at, (tp, si, r));
                                best.truncate(keep);
                            }
                        }
                    }
                }
            }
        }
    }
    let closed_form_s = start.elapsed().as_secs_f64();
    // The flow pass, in closed-form order.
    let mut measured: Vec<(f64, usize, StepReport)> = Vec::new();
    let mut flow_evaluated = 0u64;
    for (tp, si, r) in &best {
        if flow_evaluated as usize >= flow_limit {
            break;
        }
        if measured.len() >= top && *tp <= measured[top - 1].0 {
            break;
        }
        let (shape, net, m) = &machines[*si];
        // The key: the slice and every setting of the configuration (no commas, for CSV).
        let key = format!("{} {:?}", shape.shorthand(), r.config).replace(',', ";");
        let layer = match memo.get(&key) {
            Some(times) => times,
            None => {
                let mut mk = || model_for(net);
                let times = flow_layer(t, m, net, &r.config, &mut mk)?;
                memo.put(&key, times).map_err(TrainError::Flow)?;
                times
            }
        };
        let prep = Prepared::new(t, m, &r.config)?;
        let f = prep.finish(t, m, r.config.mapping, Some(layer))?;
        flow_evaluated += 1;
        let ftp = f.throughput_seqs_per_s;
        let at = measured.partition_point(|b| b.0 >= ftp);
        measured.insert(at, (ftp, *si, f));
    }
    let ranked = if flow_limit == 0 { best } else { measured };
    Ok(SearchResult {
        results: ranked
            .into_iter()
            .take(top)
            .map(|(_, si, r)| (machines[si].0, r))
            .collect(),
        configurations_evaluated: evaluated,
        pruned,
        over_memory: over,
        flow_evaluated,
        closed_form_s,
    })
}

/// A training step as a validation case names it (`[case.train]`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainCase {
    /// The model.
    pub model: Transformer,
    /// The slice.
    pub system: crate::SystemSpec,
    /// The partition spec.
    pub parallel: Parallel,
    /// 1D/2D activation/weight.
    pub partition: Partition,
    /// The axis order (`None`: the best of all orders, closed form).
    pub mapping: Option<Mapping>,
    /// Global batch (`None`: the model's).
    pub batch: Option<u64>,
    /// Microbatches (`None`: the fastest that fits, closed form).
    pub microbatches: Option<u64>,
    /// Rematerialisation.
    pub remat: Remat,
    /// Timed on the flow model (else closed form).
    pub flow: bool,
}

impl TrainCase {
    /// The step it names.
    pub fn step(&self) -> Result<StepReport, TrainError> {
        let net = self
            .system
            .build()
            .map_err(|e| cfg_err(format!("{}: {}", self.system.name, e.why)))?;
        let m = Machine::for_system(&self.system, &net).map_err(cfg_err)?;
        let batch = self
            .batch
            .or(self.model.batch)
            .ok_or_else(|| cfg_err(format!("the model {} states no batch", self.model.name)))?;
        let base = Config {
            parallel: self.parallel,
            partition: self.partition,
            mapping: self.mapping.unwrap_or(Mapping::DEFAULT),
            batch,
            microbatches: self.microbatches.unwrap_or(1),
            remat: self.remat,
        };
        let orders = match self.mapping {
            Some(o) => vec![o],
            None => Mapping::all(),
        };
        let mut best: Option<Config> = None;
        let mut best_tp = 0.0;
        let mut last_err = None;
        for mapping in orders {
            let mut c = Config { mapping, ..base };
            if self.microbatches.is_none() {
                match best_microbatches(&self.model, &m, &c) {
                    Ok(x) => c = x,
                    Err(e) => {
                        last_err = Some(e);
                        continue;
                    }
                }
            }
            match analytic(&self.model, &m, &c) {
                Ok(r) if r.throughput_seqs_per_s > best_tp => {
                    best_tp = r.throughput_seqs_per_s;
                    best = Some(c);
                }
                Ok(_) => {}
                Err(e) => last_err = Some(e),
            }
        }
        let c =
            best.ok_or_else(|| last_err.unwrap_or_else(|| cfg_err("no mapping fits".into())))?;
        if self.flow {
            let mut mk = || crate::machine::flow_model(&net);
            measured(&self.model, &m, &net, &c, &mut mk)
        } else {
            analytic(&self.model, &m, &c)
        }
    }
}
