//! What every reader of podsim's files shares: the file and text a value came from, so an error
//! names its file, line and key ([`Ctx`]), the readers of the quantities every file writes the
//! same way, and where machine files are found.

use toml::Spanned;

use podsim_topology::LinkKind;
use podsim_units::{Bandwidth, SimDuration};

use crate::error::{ConfigError, line_of, nearest};

/// Finds the text of a machine file by the path a file names (`machine = PATH`): a file on
/// disk, or one of the machine files built into the binary.
pub type MachineFiles<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Helps validation name the file and line of a value.
pub(crate) struct Ctx<'a> {
    pub file: &'a str,
    pub text: &'a str,
    /// Where machine files named by `machine = PATH` are found (`None`: nowhere).
    pub machines: Option<MachineFiles<'a>>,
}

impl Ctx<'_> {
    pub fn err<T>(
        &self,
        span: Option<std::ops::Range<usize>>,
        key: &str,
        why: impl std::fmt::Display,
    ) -> Result<T, ConfigError> {
        Err(ConfigError {
            file: self.file.into(),
            line: span.map(|s| line_of(self.text, s.start)),
            key: key.into(),
            why: why.to_string(),
        })
    }
}

pub(crate) fn bandwidth(
    ctx: &Ctx<'_>,
    v: &Spanned<String>,
    key: &str,
) -> Result<Bandwidth, ConfigError> {
    v.get_ref().parse::<Bandwidth>().or_else(|e| {
        ctx.err(
            Some(v.span()),
            key,
            format!("{e}; expected a positive bandwidth such as \"50 GB/s\""),
        )
    })
}

pub(crate) fn duration(
    ctx: &Ctx<'_>,
    v: &Spanned<String>,
    key: &str,
) -> Result<SimDuration, ConfigError> {
    v.get_ref().parse::<SimDuration>().or_else(|e| {
        ctx.err(
            Some(v.span()),
            key,
            format!("{e}; expected a time such as \"100 ns\""),
        )
    })
}

pub(crate) fn kind(ctx: &Ctx<'_>, v: &Spanned<String>, key: &str) -> Result<LinkKind, ConfigError> {
    let s = v.get_ref().as_str();
    LinkKind::ALL
        .iter()
        .copied()
        .find(|k| k.name() == s)
        .map_or_else(
            || {
                let names: Vec<&str> = LinkKind::ALL.iter().map(|k| k.name()).collect();
                ctx.err(
                    Some(v.span()),
                    key,
                    format!(
                        "`{s}` is not a link kind; the nearest is `{}` (kinds: {})",
                        nearest(s, &names).unwrap_or("electrical"),
                        names.join(", ")
                    ),
                )
            },
            Ok,
        )
}

pub(crate) fn positive_u32(ctx: &Ctx<'_>, v: &Spanned<i64>, key: &str) -> Result<u32, ConfigError> {
    match u32::try_from(*v.get_ref()) {
        Ok(n) if n > 0 => Ok(n),
        _ => ctx.err(
            Some(v.span()),
            key,
            format!("{} is not a positive whole number", v.get_ref()),
        ),
    }
}

/// The largest file a scenario names that podsim reads (as the command line's inputs).
pub const MAX_INCLUDED_BYTES: u64 = 16 << 20;

/// The text of `path`, if it is a regular file of at most [`MAX_INCLUDED_BYTES`].
pub(crate) fn read_capped(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    f.take(MAX_INCLUDED_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_INCLUDED_BYTES {
        return Err(format!(
            "larger than {MAX_INCLUDED_BYTES} bytes, the most podsim reads"
        ));
    }
    Ok(text)
}
