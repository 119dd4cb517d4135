//! `podsim validate`: the validation cases read (built in or from a directory), evaluated
//! on every core (and, started by `mpirun` on a build with the `mpi` feature, spread over the
//! ranks) by `podsim_validation` with their values kept in a resumable CSV, and their table or
//! JSON printed by rank 0, the same as one process.

use std::path::Path;
use std::process::ExitCode;

use crate::{Failure, args};
use podsim_report::sweep_file;

/// A case's value, or its error as (message, whether the input is at fault), as it crosses
/// between ranks.
type Wire = Result<Option<u64>, (String, bool)>;

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
    // Rank 0 (the only process, without MPI) keeps the CSV; every rank learns which cases it
    // holds, and the others run a batch at a time, case i of a batch on rank i mod N (on every
    // core of it), their values gathered on rank 0 in case order.
    let (rank, ranks) = podsim_ranks::place();
    let mut sweep = match csv {
        Some(path) if rank == 0 => {
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
        _ => None,
    };
    let kept: Vec<bool> = podsim_ranks::share((rank == 0).then(|| {
        keys.iter()
            .map(|k| sweep.as_ref().is_some_and(|(_, kept)| kept.contains_key(k)))
            .collect()
    }))?;
    let bar = podsim_report::progress::Progress::start("podsim validate", Some(cases.len() as u64));
    // Cases run a batch at a time on every core of every rank; each batch lands in the CSV in
    // case order.
    let batch = rayon::current_num_threads().max(1) * ranks;
    let mut results: Vec<Result<Option<u64>, Failure>> = Vec::with_capacity(cases.len());
    for ((chunk, chunk_keys), chunk_kept) in cases
        .chunks(batch)
        .zip(keys.chunks(batch))
        .zip(kept.chunks(batch))
    {
        let got: Option<Vec<Option<Wire>>> = sweep_file::run_batch(chunk.len(), |i| {
            if chunk_kept[i] {
                return None;
            }
            let (file, case) = &chunk[i];
            let r =
                podsim_validation::evaluate(case, file).map_err(|e| (e.to_string(), e.is_usage()));
            bar.inc();
            Some(r)
        })?;
        let Some(got) = got else {
            // Another rank: rank 0 writes and prints.
            continue;
        };
        for (g, key) in got.into_iter().zip(chunk_keys) {
            let r = match g {
                Some(r) => {
                    let r = r.map_err(|(msg, usage)| {
                        if usage {
                            Failure::usage(msg)
                        } else {
                            Failure::runtime(msg)
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
    if rank != 0 {
        return Ok(ExitCode::SUCCESS);
    }
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
