//! `podsim validate`: the validation cases read (built in or from a directory), evaluated
//! on every core by `podsim_validation` with their values kept in a resumable CSV, and their
//! table or JSON printed.

use std::path::Path;
use std::process::ExitCode;

use crate::{Failure, args};
use podsim_report::sweep_file;

/// `podsim validate`.
pub(crate) fn validate(
    dir: Option<&Path>,
    csv: Option<&Path>,
    no_resume: bool,
    json: bool,
) -> Result<ExitCode, Failure> {
    if csv.is_none() && no_resume {
        return Err(args::flag_err(
            "--no-resume",
            "only a --csv is resumed; add --csv or drop the flag",
        ));
    }
    let files = podsim_config::validation_files(dir).map_err(Failure::usage)?;
    // Every file parsed first (its errors in file order), then every case evaluated on all
    // cores; the table and the first error are those of the serial run, in case order.
    let mut cases = Vec::new();
    for (file, text) in &files {
        for c in podsim_config::parse_validation_with(file, text, &podsim_config::machine_file)? {
            cases.push((file.as_str(), c));
        }
    }
    let keys = podsim_validation::case_keys(cases.iter().map(|(f, _)| *f));
    let mut sweep = match csv {
        Some(path) => {
            let mut context = sweep_file::base_context();
            context.push((
                "cases",
                format!(
                    "{} cases, fingerprint {:016x}",
                    cases.len(),
                    podsim_validation::fingerprint(&files)
                ),
            ));
            Some(sweep_file::SweepFile::open(
                path,
                &context,
                podsim_validation::CSV_HEADER,
                !no_resume,
            )?)
        }
        None => None,
    };
    let bar = podsim_report::progress::Progress::start("podsim validate", Some(cases.len() as u64));
    // Cases run a batch at a time on every core; each batch lands in the CSV in case order.
    let batch = rayon::current_num_threads().max(1);
    let mut results: Vec<Result<Option<u64>, Failure>> = Vec::with_capacity(cases.len());
    for (chunk, chunk_keys) in cases.chunks(batch).zip(keys.chunks(batch)) {
        let kept = |i: usize| {
            sweep
                .as_ref()
                .is_some_and(|(_, kept)| kept.contains_key(&chunk_keys[i]))
        };
        let got = podsim_validation::evaluate_batch(chunk, kept, || bar.inc());
        for (g, key) in got.into_iter().zip(chunk_keys) {
            let r = match g {
                Some(r) => {
                    let r = r.map_err(|e| {
                        if e.is_usage() {
                            Failure::usage(e.to_string())
                        } else {
                            Failure::runtime(e.to_string())
                        }
                    });
                    if let Some((file, _)) = sweep.as_mut() {
                        file.append(&podsim_validation::csv_row(
                            key,
                            r.as_ref().copied().map_err(Failure::msg),
                        ))?;
                    }
                    r
                }
                None => {
                    bar.inc();
                    let f = sweep.as_ref().and_then(|(_, kept)| kept.get(key));
                    match f.map(|f| f[1].as_str()) {
                        Some(v) => podsim_validation::kept_value(v).ok_or_else(|| {
                            Failure::usage(format!(
                                "{}: case {key}: `{v}` is not a value; give --no-resume",
                                csv.map(|p| p.display().to_string()).unwrap_or_default()
                            ))
                        }),
                        None => Err(Failure::runtime(format!("case {key} neither kept nor run"))),
                    }
                }
            };
            results.push(r);
        }
    }
    bar.finish();
    let mut reports = Vec::with_capacity(cases.len());
    for ((_, c), got) in cases.iter().zip(results) {
        reports.push(podsim_validation::CaseReport::new(c, got?));
    }
    let report = podsim_validation::ValidationReport::new(reports);
    if json {
        outln!("{}", podsim_report::to_json(&report));
    } else {
        out!("{}", report.text());
    }
    Ok(if report.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
