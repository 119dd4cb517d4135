//! `podsim train --search`: the search of Table 3 (`podsim_train::run_search`), its flow-model
//! measurements kept in a sweep CSV when `--csv` is given.

use std::process::ExitCode;

use podsim_report::to_json;
use podsim_system::workload::ChipSpec;
use podsim_train::{FlowMemo, NoMemo, Transformer};

use super::{TrainArgs, failure};
use crate::Failure;
use crate::args::{flag_err, none_given};

/// Run `podsim train --search`.
pub(super) fn search(
    a: &TrainArgs,
    t: &Transformer,
    chip: &ChipSpec,
    batch: u64,
    shard: podsim_train::Sharding,
) -> Result<ExitCode, Failure> {
    none_given(
        &[
            (a.system.is_some(), "--system"),
            (a.parallel.is_some(), "--parallel"),
            (a.partition.is_some(), "--partition"),
            (a.mapping.is_some(), "--mapping"),
            (a.microbatches.is_some(), "--microbatches"),
            (a.trace.is_some(), "--trace"),
            (a.remat != "full", "--remat"),
            (a.sequence_parallel, "--sequence-parallel"),
            (a.virtual_stages != 1, "--virtual-stages"),
            (a.model_fidelity != "flow", "--model-fidelity"),
            (a.cmem.is_some(), "--cmem"),
        ],
        "the search chooses it; drop the flag or drop --search",
    )?;
    none_given(
        &[(a.energy, "--energy"), (a.plot.is_some(), "--plot")],
        "a search ranks by throughput and reports no energy; run the step it finds with --energy",
    )?;
    if t.moe.is_some() && shard.gradients() {
        return Err(failure(podsim_train::TrainError::ShardWithExperts {
            shard: shard.name(),
        }));
    }
    let chips = a
        .chips
        .ok_or_else(|| flag_err("--chips", "the search needs the slice's chips (e.g. 512)"))?;
    if chips == 0 || chips > 4096 {
        return Err(flag_err(
            "--chips",
            format!("{chips} is not between 64 and the pod's 4096"),
        ));
    }
    if a.top == 0 {
        return Err(flag_err("--top", "must be at least 1"));
    }
    if a.no_resume && a.csv.is_none() {
        return Err(flag_err(
            "--no-resume",
            "only a --csv is resumed; add --csv or drop the flag",
        ));
    }
    let mut memo: Box<dyn FlowMemo> = match &a.csv {
        Some(path) => {
            let mut context = podsim_report::sweep_file::base_context();
            context.extend([
                ("model", t.name.clone()),
                ("chips", chips.to_string()),
                ("batch", batch.to_string()),
                ("chip", chip.name.clone()),
            ]);
            podsim_engine::watch::note(format!(
                "measured configurations are kept in {}; run the search again to resume",
                path.display()
            ));
            let (file, kept) = podsim_report::sweep_file::SweepFile::open(
                path,
                &context,
                "configuration,forward_s,backward_s",
                !a.no_resume,
            )?;
            Box::new(CsvMemo { file, kept })
        }
        None => Box::new(NoMemo),
    };
    let r = podsim_train::run_search(
        t,
        chip,
        chips,
        batch,
        a.top,
        a.flow_survivors,
        shard,
        memo.as_mut(),
    )
    .map_err(failure)?;
    if a.json {
        outln!("{}", to_json(&r));
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{}", r.summary());
    // The rate is the machine's, not the model's: on stderr, so that stdout is the same on
    // every run.
    eprintln!("{}", r.rate_note());
    out!("{}", r.table());
    Ok(ExitCode::SUCCESS)
}

/// The search's flow-model layer times in a sweep CSV: one row per configuration measured,
/// appended as it is done, reused when the search runs again.
struct CsvMemo {
    file: podsim_report::sweep_file::SweepFile,
    kept: std::collections::HashMap<String, Vec<String>>,
}

impl FlowMemo for CsvMemo {
    fn get(&mut self, key: &str) -> Option<(f64, f64)> {
        let f = self.kept.get(key)?;
        Some((f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?))
    }
    fn put(
        &mut self,
        key: &str,
        (fwd, bwd): (f64, f64),
    ) -> Result<(), podsim_report::sweep_file::SweepFileError> {
        self.file.append(&format!("{key},{fwd},{bwd}"))
    }
}
