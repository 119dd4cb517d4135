//! A set of validation cases run as `podsim validate` runs them: the case files built into
//! podsim, each case's key in a resumable CSV, the cases evaluated a batch at a time on every
//! core, and the table of outcomes (its text and its JSON).

use crate::{CaseReport, QuantityError, Summary, ValidationCase, Verdict};

/// The validation cases built into podsim: the files of `validation/` (path and text), sorted
/// by name when run (a test checks the two agree).
pub const CASE_FILES: &[(&str, &str)] = &[
    (
        "validation/hybrid-ici-ib.toml",
        include_str!("../../../validation/hybrid-ici-ib.toml"),
    ),
    (
        "validation/bisection-scaling.toml",
        include_str!("../../../validation/bisection-scaling.toml"),
    ),
    (
        "validation/compute.toml",
        include_str!("../../../validation/compute.toml"),
    ),
    (
        "validation/tofud-frame.toml",
        include_str!("../../../validation/tofud-frame.toml"),
    ),
    (
        "validation/tofu-family-throughput.toml",
        include_str!("../../../validation/tofu-family-throughput.toml"),
    ),
    (
        "validation/tpu-v4-twisted-all-to-all.toml",
        include_str!("../../../validation/tpu-v4-twisted-all-to-all.toml"),
    ),
    (
        "validation/tenstorrent.toml",
        include_str!("../../../validation/tenstorrent.toml"),
    ),
    (
        "validation/tenstorrent-dram.toml",
        include_str!("../../../validation/tenstorrent-dram.toml"),
    ),
    (
        "validation/tenstorrent-energy.toml",
        include_str!("../../../validation/tenstorrent-energy.toml"),
    ),
    (
        "validation/dojo.toml",
        include_str!("../../../validation/dojo.toml"),
    ),
    (
        "validation/bgq-sequoia.toml",
        include_str!("../../../validation/bgq-sequoia.toml"),
    ),
    (
        "validation/k-computer.toml",
        include_str!("../../../validation/k-computer.toml"),
    ),
    (
        "validation/tofu-family.toml",
        include_str!("../../../validation/tofu-family.toml"),
    ),
    (
        "validation/tofu-put-latency.toml",
        include_str!("../../../validation/tofu-put-latency.toml"),
    ),
    (
        "validation/rooflines.toml",
        include_str!("../../../validation/rooflines.toml"),
    ),
    (
        "validation/tpu-v4-availability.toml",
        include_str!("../../../validation/tpu-v4-availability.toml"),
    ),
    (
        "validation/tofu-resources.toml",
        include_str!("../../../validation/tofu-resources.toml"),
    ),
    (
        "validation/tofu-barrier.toml",
        include_str!("../../../validation/tofu-barrier.toml"),
    ),
    (
        "validation/tpu-v4-dlrm.toml",
        include_str!("../../../validation/tpu-v4-dlrm.toml"),
    ),
    (
        "validation/tpu-v4-table3.toml",
        include_str!("../../../validation/tpu-v4-table3.toml"),
    ),
    (
        "validation/tpu-v4-pod.toml",
        include_str!("../../../validation/tpu-v4-pod.toml"),
    ),
    (
        "validation/tpu-v4-v3-apps.toml",
        include_str!("../../../validation/tpu-v4-v3-apps.toml"),
    ),
    (
        "validation/tpu-v4-energy.toml",
        include_str!("../../../validation/tpu-v4-energy.toml"),
    ),
    (
        "validation/tpu-v4-mlperf.toml",
        include_str!("../../../validation/tpu-v4-mlperf.toml"),
    ),
    (
        "validation/gpu-clusters.toml",
        include_str!("../../../validation/gpu-clusters.toml"),
    ),
];

/// Why a case has no value.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// A system of the case could not be built: the case file is at fault.
    #[error("{file}: `{key}`: {why}")]
    Topology {
        /// The case file.
        file: String,
        /// The key at fault.
        key: String,
        /// Why.
        why: String,
    },
    /// The case's quantity could not be measured.
    #[error("{file}: case `{figure}`: {error}")]
    Measure {
        /// The case file.
        file: String,
        /// The case's figure.
        figure: String,
        /// Why.
        error: Box<QuantityError>,
    },
}

impl CaseError {
    /// Whether the input is at fault (a case file to fix), not the run.
    pub fn is_usage(&self) -> bool {
        matches!(self, CaseError::Topology { .. })
    }
}

/// podsim's value for `case` of `file` ([`ValidationCase::evaluate`]), its error naming the file.
pub fn evaluate(case: &ValidationCase, file: &str) -> Result<Option<u64>, CaseError> {
    case.evaluate().map_err(|e| match e {
        QuantityError::Topology(t) => CaseError::Topology {
            file: file.to_string(),
            key: t.key.to_string(),
            why: t.why,
        },
        error => CaseError::Measure {
            file: file.to_string(),
            figure: case.figure.clone(),
            error: Box::new(error),
        },
    })
}

/// Evaluate `cases` (each with its file) on every core, in case order; a case that `skip`
/// names by its index is not run (`None`), and `done` is called as each run case ends.
pub fn evaluate_batch(
    cases: &[(&str, ValidationCase)],
    skip: impl Fn(usize) -> bool + Sync,
    done: impl Fn() + Sync,
) -> Vec<Option<Result<Option<u64>, CaseError>>> {
    use rayon::prelude::*;
    cases
        .par_iter()
        .enumerate()
        .map(|(i, (file, c))| {
            if skip(i) {
                return None;
            }
            let r = evaluate(c, file);
            done();
            Some(r)
        })
        .collect()
}

/// The column header of a validation CSV.
pub const CSV_HEADER: &str = "case,value,error";

/// Each case's key in the CSV, given each case's file in case order: its file and its place in
/// it.
pub fn case_keys<'a>(files: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut keys = Vec::new();
    let mut place = std::collections::HashMap::new();
    for file in files {
        let k = place.entry(file).or_insert(0usize);
        keys.push(format!("{}#{k}", file.replace([',', '\n'], ";")));
        *k += 1;
    }
    keys
}

/// The case files' names and text, fingerprinted (FNV-1a): a CSV from other cases is refused.
pub fn fingerprint(files: &[(String, String)]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, text) in files {
        for b in name.bytes().chain(text.bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The CSV row of the case `key`: its value (`-` for none) or its error.
pub fn csv_row(key: &str, got: Result<Option<u64>, &str>) -> String {
    match got {
        Ok(Some(v)) => format!("{key},{v},"),
        Ok(None) => format!("{key},-,"),
        Err(e) => format!("{key},,{}", e.replace([',', '\n'], ";")),
    }
}

/// A value a CSV kept (`-`: none); `None` where it is not a value.
pub fn kept_value(v: &str) -> Option<Option<u64>> {
    match v {
        "-" => Some(None),
        v => v.parse::<u64>().ok().map(Some),
    }
}

/// The outcome of a set of cases: `podsim validate`'s table and its `--json` object.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ValidationReport {
    /// Each case's outcome, in case order.
    pub cases: Vec<CaseReport>,
    /// The count by class and verdict.
    pub summary: Summary,
}

impl ValidationReport {
    /// The report of `cases`.
    pub fn new(cases: Vec<CaseReport>) -> ValidationReport {
        let summary = Summary::of(&cases);
        ValidationReport { cases, summary }
    }

    /// Whether any case failed, whatever its class.
    pub fn failed(&self) -> bool {
        self.summary.failed()
    }

    /// The table `podsim validate` prints: a row per case, then the summary line.
    pub fn text(&self) -> String {
        let mut rows = vec![(
            "figure".to_string(),
            [
                "class",
                "source",
                "published",
                "podsim",
                "tolerance",
                "result",
            ]
            .map(String::from)
            .to_vec(),
        )];
        for r in &self.cases {
            let verdict = match r.result {
                Verdict::Pass => "pass".to_string(),
                Verdict::Fail => "FAIL".to_string(),
                Verdict::NotReproduced => {
                    format!("NOT REPRODUCED: {}", r.reason.as_deref().unwrap_or(""))
                }
            };
            rows.push((
                r.figure.clone(),
                vec![
                    r.class.name().to_string(),
                    r.source.clone(),
                    r.published_text.clone(),
                    r.podsim_text.clone(),
                    r.tolerance_text.clone(),
                    verdict,
                ],
            ));
        }
        format!(
            "{}\n{}\n",
            podsim_report::render(&rows),
            self.summary.line()
        )
    }
}

#[cfg(test)]
mod tests {
    /// Keys number the cases of each file from 0, commas and newlines made safe for a CSV.
    #[test]
    fn keys_count_within_each_file() {
        let keys = super::case_keys(["a.toml", "a.toml", "b,c.toml", "a.toml"]);
        assert_eq!(keys, ["a.toml#0", "a.toml#1", "b;c.toml#0", "a.toml#2"]);
    }

    /// Rows and kept values read back as they were written.
    #[test]
    fn csv_rows_read_back() {
        assert_eq!(super::csv_row("k#0", Ok(Some(42))), "k#0,42,");
        assert_eq!(super::csv_row("k#0", Ok(None)), "k#0,-,");
        assert_eq!(super::csv_row("k#0", Err("a, b")), "k#0,,a; b");
        assert_eq!(super::kept_value("42"), Some(Some(42)));
        assert_eq!(super::kept_value("-"), Some(None));
        assert_eq!(super::kept_value("x"), None);
    }
}
