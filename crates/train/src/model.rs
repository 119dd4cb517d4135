//! The model: a decoder-only transformer, the built-in ones and their sizes.

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
    /// Width of an attention head, where it is not d_model / heads (PaLM's 256 for 48 heads
    /// of an 18432 model); `None`: d_model / heads.
    pub head_dim: Option<u64>,
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
    /// The mixture of experts, where some feed-forward layers are one (`None`: dense).
    pub moe: Option<Moe>,
}

/// A mixture-of-experts feed-forward layer (GShard, Lepikhin et al. 2021; Switch, Fedus et
/// al. 2022; GLaM, Du et al. 2022): a router picks `per_token` of `experts` feed-forward
/// networks for each token; each expert takes at most `capacity_factor` x its even share of
/// the tokens (tokens x per_token / experts), padded to that capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct Moe {
    /// Experts per MoE layer (at least 2).
    pub experts: u64,
    /// Experts each token is routed to (top-k).
    pub per_token: u64,
    /// Each expert's capacity over its even share of the routed tokens.
    pub capacity_factor: f64,
    /// Every `every`-th layer's feed-forward block is an MoE layer (GLaM, Switch: 2).
    pub every: u64,
    /// Matrices of each expert's feed-forward network (2: in, out; 3: gated).
    pub ffn_matrices: u64,
}

/// The keys of a model file, for errors and help.
pub const MODEL_KEYS: [&str; 17] = [
    "name",
    "layers",
    "d_model",
    "heads",
    "kv_heads",
    "head_dim",
    "d_ff",
    "ffn_matrices",
    "vocabulary",
    "sequence",
    "format",
    "batch",
    "experts",
    "experts_per_token",
    "expert_capacity_factor",
    "expert_every",
    "expert_ffn_matrices",
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
            head_dim: None,
            d_ff,
            ffn_matrices: 2,
            vocabulary,
            sequence,
            format: "bf16".into(),
            batch: Some(batch),
            source: source.into(),
            moe: None,
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
                head_dim: None,
                d_ff: 65536,
                ffn_matrices: 3,
                vocabulary: 32000,
                sequence: 2048,
                format: "bf16".into(),
                batch: Some(256),
                moe: None,
                source: "the LLM of Table 3 (tpu-v4-isca2023.txt section 4), whose size is unpublished: an assumption, a decoder shaped as LaMDA 137B (Thoppilan et al. 2022: 64 layers, d_model 8192, 128 heads, gated-GELU feed-forward of 65536, 32k SentencePiece vocabulary), 2048 tokens, a batch of 256 sequences (also an assumption)".into(),
            },
            // PaLM 540B (Chowdhery et al. 2022, arXiv 2204.02311, Table 1, whose caption gives
            // the attention head size, always 256): trained on two
            // TPU v4 pods of 3072 chips, each 12-way model parallel and 256-way fully sharded
            // data parallel (section 4), so one pod's step is `--batch 1024` with
            // `--parallel [1,256,1,12] --shard weights`.
            Transformer {
                name: "palm-540b".into(),
                layers: 118,
                d_model: 18432,
                heads: 48,
                kv_heads: 1,
                head_dim: Some(256),
                d_ff: 4 * 18432,
                ffn_matrices: 3,
                vocabulary: 256000,
                sequence: 2048,
                format: "bf16".into(),
                batch: Some(2048),
                moe: None,
                source: "PaLM 540B: Chowdhery et al. 2022 (arXiv 2204.02311), Table 1: 118 layers, d_model 18432, 48 heads, multi-query attention (one key/value head), heads 256 wide (not d_model/heads = 384), SwiGLU feed-forward of 4 d_model = 73728, 256k vocabulary, 2048-token sequences, a batch of 2048 sequences (4M tokens, its last and largest): 540.35B weights, as Table 1".into(),
            },
            // GLaM 64B/64E (Du et al. 2022, "GLaM: Efficient Scaling of Language Models with
            // Mixture-of-Experts", ICML, arXiv 2112.06905): trained on 1024 TPU v4 chips.
            Transformer {
                name: "glam-64b-64e".into(),
                layers: 64,
                d_model: 8192,
                heads: 128,
                kv_heads: 128,
                head_dim: Some(128),
                d_ff: 32768,
                ffn_matrices: 3,
                vocabulary: 256000,
                sequence: 1024,
                format: "bf16".into(),
                batch: Some(1024),
                moe: Some(Moe {
                    experts: 64,
                    per_token: 2,
                    capacity_factor: 1.0,
                    every: 2,
                    ffn_matrices: 2,
                }),
                source: "GLaM 64B/64E: Du et al. 2022 (ICML; arXiv 2112.06905), Table 4: 64 layers, d_model 8192, 128 heads of 128, feed-forward 32768, 64 experts; section 3: top-2 gating, an MoE layer in place of every other layer's feed-forward, a gated (GLU) feed-forward in the other layers; section 5: 1024-token sequences packed into batches of 1M tokens (1024 sequences), a 256k SentencePiece vocabulary; experts as plain two-matrix feed-forwards and an expert capacity factor of 1 (GShard's capacity of 2N/E for top-2, Lepikhin et al. 2021) are assumptions. podsim counts 1.162T weights and 96.6B activated per token (Table 4: 1.2T, 96.6B)".into(),
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
        if self.head_dim == Some(0) {
            return Err(("head_dim", "must be at least 1".into()));
        }
        if self.head_dim.is_some_and(|d| d > 1 << 24) {
            return Err(("head_dim", "is beyond the 2^24 podsim accepts".into()));
        }
        if self.head_dim.is_none() && !self.d_model.is_multiple_of(self.heads) {
            return Err((
                "heads",
                format!(
                    "d_model {} is not a multiple of {} heads (give head_dim)",
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
        if let Some(x) = &self.moe {
            if x.experts < 2 || x.experts > 1 << 16 {
                return Err((
                    "experts",
                    format!(
                        "{} is not between 2 and 2^16 (0 or no key: a dense model)",
                        x.experts
                    ),
                ));
            }
            if x.per_token == 0 || x.per_token > x.experts {
                return Err((
                    "experts_per_token",
                    format!(
                        "{} is not between 1 and the {} experts",
                        x.per_token, x.experts
                    ),
                ));
            }
            if !(x.capacity_factor.is_finite()
                && x.capacity_factor > 0.0
                && x.capacity_factor <= 64.0)
            {
                return Err((
                    "expert_capacity_factor",
                    format!("{} is not above 0 and at most 64", x.capacity_factor),
                ));
            }
            if x.every == 0 || x.every > self.layers {
                return Err((
                    "expert_every",
                    format!(
                        "{} is not between 1 and the {} layers (1: every layer's feed-forward is an MoE layer)",
                        x.every, self.layers
                    ),
                ));
            }
            if !(2..=3).contains(&x.ffn_matrices) {
                return Err((
                    "expert_ffn_matrices",
                    format!("{} is not 2 (in, out) or 3 (gated)", x.ffn_matrices),
                ));
            }
        }
        if !["bf16", "int8"].contains(&self.format.as_str()) {
            return Err(("format", format!("`{}` is not bf16 or int8", self.format)));
        }
        Ok(())
    }

    /// Width of an attention head: `head_dim`, else d_model / heads.
    pub fn head_dim(&self) -> u64 {
        self.head_dim.unwrap_or(self.d_model / self.heads)
    }

    /// The width the attention's scores and weighted sum work over: heads x head_dim where
    /// `head_dim` is given, else d_model (as podsim always counted it).
    pub fn attention_width(&self) -> f64 {
        self.head_dim.map_or(self.d_model, |d| self.heads * d) as f64
    }

    /// Weights of one dense layer: Q, K, V, O and the feed-forward matrices.
    pub fn layer_params(&self) -> f64 {
        let ffn = self.ffn_matrices as f64 * self.d_model as f64 * self.d_ff as f64;
        self.attention_params() + ffn
    }

    /// Weights of one layer's attention: Q, K, V and O.
    pub fn attention_params(&self) -> f64 {
        let (e, dh) = (self.d_model as f64, self.head_dim() as f64);
        let qkv = e * (self.heads + 2 * self.kv_heads) as f64 * dh;
        let o = self.heads as f64 * dh * e;
        qkv + o
    }

    /// Weights of one expert's feed-forward network (0 for a dense model).
    pub fn expert_params(&self) -> f64 {
        self.moe.as_ref().map_or(0.0, |x| {
            x.ffn_matrices as f64 * self.d_model as f64 * self.d_ff as f64
        })
    }

    /// Weights of an MoE layer's router, d_model x experts (0 for a dense model).
    pub fn router_params(&self) -> f64 {
        self.moe
            .as_ref()
            .map_or(0.0, |x| (self.d_model * x.experts) as f64)
    }

    /// Weights of one MoE layer: its attention, router and every expert (0 for a dense model).
    pub fn moe_layer_params(&self) -> f64 {
        self.moe.as_ref().map_or(0.0, |x| {
            self.attention_params() + self.router_params() + x.experts as f64 * self.expert_params()
        })
    }

    /// Weights of one MoE layer that a token uses: its attention, router and the
    /// `experts_per_token` experts it is routed to (0 for a dense model).
    pub fn moe_layer_active_params(&self) -> f64 {
        self.moe.as_ref().map_or(0.0, |x| {
            self.attention_params()
                + self.router_params()
                + x.per_token as f64 * self.expert_params()
        })
    }

    /// The MoE layers: every `expert_every`-th layer (layers / expert_every, rounded down; 0 for
    /// a dense model).
    pub fn moe_layers(&self) -> u64 {
        self.moe.as_ref().map_or(0, |x| self.layers / x.every)
    }

    /// The dense layers: the others.
    pub fn dense_layers(&self) -> u64 {
        self.layers - self.moe_layers()
    }

    /// Every weight: the layers (every expert of the MoE layers) and the (tied) embedding.
    pub fn params(&self) -> f64 {
        let emb = (self.vocabulary * self.d_model) as f64;
        if self.moe.is_none() {
            return self.layers as f64 * self.layer_params() + emb;
        }
        self.dense_layers() as f64 * self.layer_params()
            + self.moe_layers() as f64 * self.moe_layer_params()
            + emb
    }

    /// The weights a token uses: as [`Transformer::params`], with the experts it is routed to
    /// in place of every expert (the same for a dense model).
    pub fn active_params(&self) -> f64 {
        if self.moe.is_none() {
            return self.params();
        }
        self.dense_layers() as f64 * self.layer_params()
            + self.moe_layers() as f64 * self.moe_layer_active_params()
            + (self.vocabulary * self.d_model) as f64
    }

    /// Forward FLOPs of one sequence: 2 per weight a token uses per token (an MoE layer's
    /// router and the `experts_per_token` experts of each token, not the capacity's padding),
    /// the attention scores and their weighted sum (2 x 2 x s^2 x
    /// [`Transformer::attention_width`], causal masking not exploited) and the logits.
    pub fn forward_flops_per_seq(&self) -> f64 {
        let (s, e) = (self.sequence as f64, self.d_model as f64);
        let attention = 4.0 * s * s * self.attention_width();
        let logits = 2.0 * s * e * self.vocabulary as f64;
        if self.moe.is_none() {
            let per_layer = 2.0 * self.layer_params() * s + attention;
            return self.layers as f64 * per_layer + logits;
        }
        let dense = 2.0 * self.layer_params() * s + attention;
        let moe = 2.0 * self.moe_layer_active_params() * s + attention;
        self.dense_layers() as f64 * dense + self.moe_layers() as f64 * moe + logits
    }
}
