//! Model files for `podsim train`: a decoder-only transformer in TOML.
//!
//! ```toml
//! name = "my-llm"          # optional (default: the file's name)
//! layers = 32
//! d_model = 4096
//! heads = 32
//! kv_heads = 8             # optional (default: heads; fewer for grouped-query attention)
//! head_dim = 128           # optional (default: d_model / heads)
//! d_ff = 11008
//! ffn_matrices = 3         # optional: 2 (in, out; the default) or 3 (gated, as SwiGLU)
//! vocabulary = 32000
//! sequence = 2048          # tokens per sequence
//! format = "bf16"          # optional: bf16 (default) or int8
//! batch = 512              # optional: the global batch in sequences (else give --batch)
//! # A mixture of experts (all optional; without `experts`, or with 0, the model is dense and
//! # the other four keys are refused):
//! experts = 64             # experts per MoE layer (at least 2)
//! experts_per_token = 2    # top-k: experts each token is routed to (needed with experts)
//! expert_capacity_factor = 1.0  # each expert's capacity over its even share (needed)
//! expert_every = 2         # every N-th layer's feed-forward is an MoE layer (default 1)
//! expert_ffn_matrices = 2  # each expert's feed-forward matrices (default: ffn_matrices)
//! ```

use serde::Deserialize;

use podsim_train::{Moe, Transformer};

use crate::error::{ConfigError, parse_toml};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    #[serde(default)]
    name: Option<String>,
    layers: u64,
    d_model: u64,
    heads: u64,
    #[serde(default)]
    kv_heads: Option<u64>,
    #[serde(default)]
    head_dim: Option<u64>,
    d_ff: u64,
    #[serde(default)]
    ffn_matrices: Option<u64>,
    vocabulary: u64,
    sequence: u64,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    batch: Option<u64>,
    #[serde(default)]
    experts: Option<u64>,
    #[serde(default)]
    experts_per_token: Option<u64>,
    #[serde(default)]
    expert_capacity_factor: Option<f64>,
    #[serde(default)]
    expert_every: Option<u64>,
    #[serde(default)]
    expert_ffn_matrices: Option<u64>,
}

/// Parse a model file (`file` names it in errors).
pub fn parse_model(file: &str, text: &str) -> Result<Transformer, ConfigError> {
    let raw: RawModel = parse_toml(file, text)?;
    let stem = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| file.to_string());
    let err = |key: &str, why: String| ConfigError {
        file: file.into(),
        line: None,
        key: key.into(),
        why,
    };
    let ffn_matrices = raw.ffn_matrices.unwrap_or(2);
    let moe = match raw.experts.unwrap_or(0) {
        0 => {
            let given = [
                ("experts_per_token", raw.experts_per_token.is_some()),
                (
                    "expert_capacity_factor",
                    raw.expert_capacity_factor.is_some(),
                ),
                ("expert_every", raw.expert_every.is_some()),
                ("expert_ffn_matrices", raw.expert_ffn_matrices.is_some()),
            ];
            if let Some((key, _)) = given.iter().find(|g| g.1) {
                return Err(err(
                    key,
                    "the model is dense (no `experts`, or 0), so this key has no effect; give `experts` or drop it".into(),
                ));
            }
            None
        }
        experts => Some(Moe {
            experts,
            per_token: raw.experts_per_token.ok_or_else(|| {
                err(
                    "experts_per_token",
                    "a model with `experts` needs the experts each token is routed to (top-k; GLaM: 2)".into(),
                )
            })?,
            capacity_factor: raw.expert_capacity_factor.ok_or_else(|| {
                err(
                    "expert_capacity_factor",
                    "a model with `experts` needs each expert's capacity over its even share of the tokens (e.g. 1.0, or 1.25)".into(),
                )
            })?,
            every: raw.expert_every.unwrap_or(1),
            ffn_matrices: raw.expert_ffn_matrices.unwrap_or(ffn_matrices),
        }),
    };
    let t = Transformer {
        name: raw.name.unwrap_or(stem),
        layers: raw.layers,
        d_model: raw.d_model,
        heads: raw.heads,
        kv_heads: raw.kv_heads.unwrap_or(raw.heads),
        head_dim: raw.head_dim,
        d_ff: raw.d_ff,
        ffn_matrices,
        vocabulary: raw.vocabulary,
        sequence: raw.sequence,
        format: raw.format.unwrap_or_else(|| "bf16".into()),
        batch: raw.batch,
        source: format!("model file {file}"),
        moe,
    };
    t.check().map_err(|(key, why)| err(key, why))?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::parse_model;

    #[test]
    fn head_dim_sets_the_heads_width_and_defaults_to_d_model_over_heads() {
        // PaLM 540B's layer (Chowdhery et al. 2022, Table 1 and its caption: 48 heads of 256,
        // d_model 18432, one key/value head, a SwiGLU feed-forward of 73728): Q 18432 x 12288,
        // K and V 18432 x 256 each, O 12288 x 18432 and three 18432 x 73728 matrices:
        // 18432 x (12288 + 512 + 12288 + 221184) = 4,539,285,504 weights.
        let text = "layers = 118\nd_model = 18432\nheads = 48\nkv_heads = 1\nhead_dim = 256\n\
                    d_ff = 73728\nffn_matrices = 3\nvocabulary = 256000\nsequence = 2048\n";
        let t = parse_model("palm.toml", text).unwrap();
        assert_eq!(t.head_dim(), 256);
        assert_eq!(t.layer_params(), 4_539_285_504.0);
        // Without it: 18432 / 48 = 384 wide.
        let t = parse_model("palm.toml", &text.replace("head_dim = 256\n", "")).unwrap();
        assert_eq!(t.head_dim(), 384);
        // 0 is refused, naming the key.
        let e =
            parse_model("palm.toml", &text.replace("head_dim = 256", "head_dim = 0")).unwrap_err();
        assert_eq!(e.key, "head_dim");
    }

    #[test]
    fn expert_keys_make_a_mixture_of_experts_and_are_refused_where_they_do_nothing() {
        let dense = "layers = 4\nd_model = 1024\nheads = 16\nd_ff = 4096\nvocabulary = 32000\n\
                     sequence = 512\n";
        let moe = format!(
            "{dense}experts = 8\nexperts_per_token = 2\nexpert_capacity_factor = 1.25\n\
             expert_every = 2\n"
        );
        let t = parse_model("moe.toml", &moe).unwrap();
        let x = t.moe.as_ref().unwrap();
        assert_eq!((x.experts, x.per_token, x.every), (8, 2, 2));
        assert_eq!(x.capacity_factor, 1.25);
        // The experts' feed-forward defaults to the model's (2 matrices here).
        assert_eq!(x.ffn_matrices, 2);
        // 2 of the 4 layers are MoE layers.
        assert_eq!(t.moe_layers(), 2);
        // A dense model (no experts, or 0) takes no other expert key.
        for key in ["experts_per_token = 2", "expert_every = 2"] {
            let e = parse_model("d.toml", &format!("{dense}{key}\n")).unwrap_err();
            assert_eq!(e.key, key.split(' ').next().unwrap());
            assert!(e.why.contains("no effect"), "{}", e.why);
        }
        let e =
            parse_model("d.toml", &format!("{dense}experts = 0\nexpert_every = 2\n")).unwrap_err();
        assert_eq!(e.key, "expert_every");
        // experts needs top-k and the capacity factor; one expert is not a mixture.
        let e = parse_model("m.toml", &format!("{dense}experts = 8\n")).unwrap_err();
        assert_eq!(e.key, "experts_per_token");
        let e = parse_model(
            "m.toml",
            &format!("{dense}experts = 8\nexperts_per_token = 2\n"),
        )
        .unwrap_err();
        assert_eq!(e.key, "expert_capacity_factor");
        let e = parse_model("m.toml", &moe.replace("experts = 8", "experts = 1")).unwrap_err();
        assert_eq!(e.key, "experts");
        let e = parse_model(
            "m.toml",
            &moe.replace("experts_per_token = 2", "experts_per_token = 9"),
        )
        .unwrap_err();
        assert_eq!(e.key, "experts_per_token");
        let e = parse_model("m.toml", &moe.replace("1.25", "0.0")).unwrap_err();
        assert_eq!(e.key, "expert_capacity_factor");
    }
}
