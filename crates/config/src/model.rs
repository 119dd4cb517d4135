//! Model files for `podsim train`: a decoder-only transformer in TOML.
//!
//! ```toml
//! name = "my-llm"          # optional (default: the file's name)
//! layers = 32
//! d_model = 4096
//! heads = 32
//! kv_heads = 8             # optional (default: heads; fewer for grouped-query attention)
//! d_ff = 11008
//! ffn_matrices = 3         # optional: 2 (in, out; the default) or 3 (gated, as SwiGLU)
//! vocabulary = 32000
//! sequence = 2048          # tokens per sequence
//! format = "bf16"          # optional: bf16 (default) or int8
//! batch = 512              # optional: the global batch in sequences (else give --batch)
//! ```

use serde::Deserialize;

use podsim_train::Transformer;

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
    d_ff: u64,
    #[serde(default)]
    ffn_matrices: Option<u64>,
    vocabulary: u64,
    sequence: u64,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    batch: Option<u64>,
}

/// Parse a model file (`file` names it in errors).
pub fn parse_model(file: &str, text: &str) -> Result<Transformer, ConfigError> {
    let raw: RawModel = parse_toml(file, text)?;
    let stem = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| file.to_string());
    let t = Transformer {
        name: raw.name.unwrap_or(stem),
        layers: raw.layers,
        d_model: raw.d_model,
        heads: raw.heads,
        kv_heads: raw.kv_heads.unwrap_or(raw.heads),
        d_ff: raw.d_ff,
        ffn_matrices: raw.ffn_matrices.unwrap_or(2),
        vocabulary: raw.vocabulary,
        sequence: raw.sequence,
        format: raw.format.unwrap_or_else(|| "bf16".into()),
        batch: raw.batch,
        source: format!("model file {file}"),
    };
    t.check().map_err(|(key, why)| ConfigError {
        file: file.into(),
        line: None,
        key: key.into(),
        why,
    })?;
    Ok(t)
}
