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
}

/// The keys of a model file, for errors and help.
pub const MODEL_KEYS: [&str; 12] = [
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
                source: "PaLM 540B: Chowdhery et al. 2022 (arXiv 2204.02311), Table 1: 118 layers, d_model 18432, 48 heads, multi-query attention (one key/value head), heads 256 wide (not d_model/heads = 384), SwiGLU feed-forward of 4 d_model = 73728, 256k vocabulary, 2048-token sequences, a batch of 2048 sequences (4M tokens, its last and largest): 540.35B weights, as Table 1".into(),
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
    /// weighted sum (2 x 2 x s^2 x [`Transformer::attention_width`], causal masking not
    /// exploited) and the logits.
    pub fn forward_flops_per_seq(&self) -> f64 {
        let (s, e) = (self.sequence as f64, self.d_model as f64);
        let per_layer = 2.0 * self.layer_params() * s + 4.0 * s * s * self.attention_width();
        self.layers as f64 * per_layer + 2.0 * s * e * self.vocabulary as f64
    }
}
