//! Configuration errors that name the file, the line, the key and what was expected.

use std::fmt;

/// A value in a scenario (or on the command line) that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file, or `<command line>`.
    pub file: String,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// The dotted key, e.g. `system.link_bandwidth`.
    pub key: String,
    /// What was wrong and what was expected.
    pub why: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}, line {}: `{}`: {}", self.file, l, self.key, self.why),
            None => write!(f, "{}: `{}`: {}", self.file, self.key, self.why),
        }
    }
}

impl std::error::Error for ConfigError {}

pub use podsim_units::{edit_distance, nearest};

/// The 1-based line holding byte `offset` of `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The dotted name of the table that holds byte `offset`: the last `[header]` above it.
pub(crate) fn table_at(text: &str, offset: usize) -> String {
    text[..offset.min(text.len())]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
        .unwrap_or_default()
}

/// Turn a TOML/serde error into a [`ConfigError`] naming the line and key, and for an unknown
/// key the nearest valid one.
pub(crate) fn from_toml(file: &str, text: &str, e: &toml::de::Error) -> ConfigError {
    let msg = e.message().trim().to_string();
    let offset = e.span().map(|s| s.start);
    let line = offset.map(|o| line_of(text, o));
    let table = offset.map(|o| table_at(text, o)).unwrap_or_default();
    let at_span = e
        .span()
        .and_then(|s| text.get(s))
        .unwrap_or("")
        .trim()
        .to_string();
    let qualify = |k: &str| {
        if table.is_empty() {
            k.to_string()
        } else {
            format!("{table}.{k}")
        }
    };
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let field = rest.split('`').next().unwrap_or("");
        let expected: Vec<&str> = rest
            .split_once(", expected")
            .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
            .unwrap_or_default();
        let why = match nearest(field, &expected) {
            Some(n) => format!(
                "unknown key; the nearest valid key is `{n}` (valid here: {})",
                expected.join(", ")
            ),
            None => "unknown key; this table takes no keys".to_string(),
        };
        return ConfigError {
            file: file.into(),
            line,
            key: qualify(field),
            why,
        };
    }
    // Other errors: name the key written on the offending line, if there is one.
    let key_on_line = offset
        .and_then(|o| {
            text[..o.min(text.len())]
                .rsplit('\n')
                .next()
                .map(|l| l.to_string())
        })
        .and_then(|l| l.split_once('=').map(|(k, _)| k.trim().to_string()))
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| {
            if msg.starts_with("missing field `") {
                msg.split('`').nth(1).unwrap_or("").to_string()
            } else {
                at_span.split('=').next().unwrap_or("").trim().to_string()
            }
        });
    ConfigError {
        file: file.into(),
        line,
        key: qualify(&key_on_line),
        why: msg.replace('\n', " "),
    }
}

/// Any TOML document into `T`, with errors naming the file, line and key.
pub fn parse_toml<T: serde::de::DeserializeOwned>(
    file: &str,
    text: &str,
) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| from_toml(file, text, &e))
}
