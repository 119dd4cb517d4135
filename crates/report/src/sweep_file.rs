//! A sweep's CSV file that survives: it opens with the run's context (`# key: value` lines:
//! podsim's version, the command line, and what decides the results), then the column header,
//! then one row per point appended and flushed as soon as the point is done, so a killed sweep
//! loses at most the point in flight. Run again with the same settings, the sweep keeps the
//! rows already there and computes only the rest; a file written by different settings is an
//! error that says what differs.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a sweep file could not be opened or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepFileError {
    /// The file there is not one this sweep may keep or overwrite (bad input: the user picks
    /// another file or starts over).
    #[error("{0}")]
    Refused(String),
    /// The file could not be written.
    #[error("{path}: cannot write: {why}")]
    Write {
        /// The file, as shown.
        path: String,
        /// What the system said.
        why: String,
    },
}

fn write_failed(path: &Path) -> impl Fn(std::io::Error) -> SweepFileError + '_ {
    move |e| SweepFileError::Write {
        path: path.display().to_string(),
        why: e.to_string(),
    }
}

/// An open sweep file.
#[derive(Debug)]
pub struct SweepFile {
    path: PathBuf,
    file: std::fs::File,
}

/// A sweep's file as a rank holds it: on rank 0 (the only process without MPI) the open file
/// and the rows it kept, by key; on every other rank `None`.
pub type Opened = Option<(SweepFile, HashMap<String, Vec<String>>)>;

/// Open a sweep's file on rank 0 only ([`SweepFile::open`]), noting for `--time-limit` that
/// its finished `points` ("sizes", "loads") are kept there.
pub fn open_on_rank0(
    path: &Path,
    context: &[(&str, String)],
    header: &str,
    resume: bool,
    points: &str,
) -> Result<Opened, SweepFileError> {
    podsim_engine::watch::note(format!(
        "finished {points} are kept in {}; run the sweep again to resume",
        path.display()
    ));
    if podsim_ranks::place().0 != 0 {
        return Ok(None);
    }
    SweepFile::open(path, context, header, resume).map(Some)
}

/// The `n` points of a batch run on every core of every rank, `run(i)` for point i: on rank
/// 0 their results in point order, on the others `None` ([`podsim_ranks::spread`]).
pub fn run_batch<T>(
    n: usize,
    run: impl Fn(usize) -> T + Sync,
) -> Result<Option<Vec<T>>, podsim_ranks::RanksError>
where
    T: serde::Serialize + serde::de::DeserializeOwned + Send,
{
    podsim_ranks::spread(n, |mine| {
        use rayon::prelude::*;
        mine.par_iter().map(|&i| run(i)).collect()
    })
}

/// The context keys a resumed file must match (the command line may differ, e.g. in flag
/// order or in `--json`).
const NOT_COMPARED: &[&str] = &["command"];

fn context_lines(context: &[(&str, String)]) -> String {
    context
        .iter()
        .map(|(k, v)| format!("# {k}: {v}\n"))
        .collect()
}

impl SweepFile {
    /// Open `path` for a sweep with `context` and the column `header`. With `resume` and a file
    /// already there written with the same context and header, its rows are kept and returned
    /// (keyed by their first column); otherwise the file starts over. A file there from
    /// different settings is an error unless `resume` is off. When the last column is `error`,
    /// rows that record a failure are dropped, so those points run again.
    pub fn open(
        path: &Path,
        context: &[(&str, String)],
        header: &str,
        resume: bool,
    ) -> Result<(SweepFile, HashMap<String, Vec<String>>), SweepFileError> {
        let shown = path.display();
        let mut kept = HashMap::new();
        let mut keep_text = None;
        // A file that is there and not one of podsim's CSVs (they open with `# podsim: `) is
        // never overwritten, with or without --no-resume: it is someone else's data.
        if let Ok(bytes) = std::fs::read(path)
            && !bytes.is_empty()
            && !bytes.starts_with(b"# podsim: ")
        {
            return Err(SweepFileError::Refused(format!(
                "{shown}: not a CSV podsim wrote (it does not open with `# podsim: `); podsim does not overwrite it: give another --csv, or remove the file"
            )));
        }
        if resume
            && let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            let mut old: Vec<(String, String)> = Vec::new();
            let mut lines = text.lines();
            let mut old_header = None;
            for line in lines.by_ref() {
                if let Some(kv) = line.strip_prefix("# ") {
                    if let Some((k, v)) = kv.split_once(": ") {
                        old.push((k.to_string(), v.to_string()));
                    }
                } else {
                    old_header = Some(line.to_string());
                    break;
                }
            }
            for (k, v) in context {
                if NOT_COMPARED.contains(k) {
                    continue;
                }
                let was = old.iter().find(|(ok, _)| ok == k).map(|(_, v)| v.as_str());
                if was != Some(v.as_str()) {
                    return Err(SweepFileError::Refused(format!(
                        "{shown}: written by a different sweep ({k}: {} there, {v} now); give another --csv or --no-resume to start it over",
                        was.unwrap_or("missing")
                    )));
                }
            }
            if old_header.as_deref() != Some(header) {
                return Err(SweepFileError::Refused(format!(
                    "{shown}: its columns are not this sweep's; give another --csv or --no-resume to start it over"
                )));
            }
            // Whole rows only: a row cut by a kill (no newline, or too few fields) is dropped.
            let columns = header.split(',').count();
            let retry_failed = header.ends_with(",error");
            let mut good = String::new();
            good.push_str(&context_lines(context));
            good.push_str(header);
            good.push('\n');
            let body_start = text
                .find(&format!("{header}\n"))
                .map(|i| i + header.len() + 1);
            if let Some(start) = body_start {
                for line in text[start..].split_inclusive('\n') {
                    let Some(row) = line.strip_suffix('\n') else {
                        break;
                    };
                    let fields: Vec<String> = row.split(',').map(str::to_string).collect();
                    if fields.len() != columns {
                        break;
                    }
                    // A point that failed is run again.
                    if retry_failed && fields.last().is_some_and(|e| !e.is_empty()) {
                        continue;
                    }
                    good.push_str(line);
                    kept.insert(fields[0].clone(), fields);
                }
            }
            keep_text = Some(good);
        }
        let start = keep_text.unwrap_or_else(|| format!("{}{header}\n", context_lines(context)));
        std::fs::write(path, start).map_err(write_failed(path))?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(write_failed(path))?;
        Ok((
            SweepFile {
                path: path.to_path_buf(),
                file,
            },
            kept,
        ))
    }

    /// Append one finished point's row and flush it to the file.
    pub fn append(&mut self, row: &str) -> Result<(), SweepFileError> {
        writeln!(self.file, "{row}")
            .and_then(|()| self.file.flush())
            .map_err(write_failed(&self.path))
    }
}

/// The context every sweep file starts with: podsim's version and the command line.
pub fn base_context() -> Vec<(&'static str, String)> {
    vec![
        ("podsim", env!("CARGO_PKG_VERSION").to_string()),
        ("command", command_line()),
    ]
}

/// The command line as typed, `podsim` and its arguments joined by spaces. An argument that is
/// not valid UTF-8 (a path on Unix may be any bytes) keeps its valid parts and shows each
/// other byte as `\xNN`, so two different command lines never read the same.
pub fn command_line() -> String {
    std::iter::once("podsim".to_string())
        .chain(std::env::args_os().skip(1).map(|a| escape(&a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `arg` as text: its UTF-8 runs as they are, every other byte as `\xNN`.
fn escape(arg: &std::ffi::OsStr) -> String {
    if let Some(s) = arg.to_str() {
        return s.to_string();
    }
    let bytes = arg.as_encoded_bytes();
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_file_keeps_its_whole_rows_and_refuses_other_settings() {
        let dir = std::env::temp_dir().join(format!("podsim-sweep-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.csv");
        let ctx = vec![("podsim", "1".to_string()), ("bytes", "8".to_string())];
        let (mut f, kept) = SweepFile::open(&path, &ctx, "key,value,error", true).unwrap();
        assert!(kept.is_empty());
        f.append("a,1,").unwrap();
        f.append("b,,failed").unwrap();
        drop(f);
        // A row cut by a kill is dropped, a failed one runs again.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("c,3");
        std::fs::write(&path, text).unwrap();
        let (_, kept) = SweepFile::open(&path, &ctx, "key,value,error", true).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept["a"], ["a", "1", ""]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# podsim: 1\n# bytes: 8\nkey,value,error\na,1,\n"
        );
        let other = vec![("podsim", "1".to_string()), ("bytes", "16".to_string())];
        let e = SweepFile::open(&path, &other, "key,value,error", true).unwrap_err();
        assert!(matches!(e, SweepFileError::Refused(_)), "{e}");
        assert!(e.to_string().contains("(bytes: 8 there, 16 now)"), "{e}");
        std::fs::write(&path, "x,y\n").unwrap();
        let e = SweepFile::open(&path, &ctx, "key,value,error", false).unwrap_err();
        assert!(e.to_string().contains("not a CSV podsim wrote"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
