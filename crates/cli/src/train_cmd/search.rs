//! `podsim train --search`: the search of Table 3 (`podsim_train::run_search`), its flow-model
//! measurements kept in a sweep CSV when `--csv` is given, its flow-model survivors spread over
//! MPI ranks when `mpirun` starts it (the same output as one process, printed by rank 0).

use std::process::ExitCode;

use podsim_report::to_json;
use podsim_system::workload::ChipSpec;
use podsim_train::{
    FlowMemo, FlowRunner, LayerTimes, NoMemo, SurvivorTimes, TrainError, Transformer,
};

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
    // Rank 0 (the only process, without MPI) keeps the CSV; every rank sees the times kept in
    // it, so that every rank takes the same survivors in the same batches, one per rank.
    let rank = podsim_ranks::place().0;
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
            let opened = if rank == 0 {
                Some(podsim_report::sweep_file::SweepFile::open(
                    path,
                    &context,
                    "configuration,forward_s,backward_s",
                    !a.no_resume,
                )?)
            } else {
                None
            };
            let (file, kept) = match opened {
                Some((file, kept)) => (Some(file), podsim_ranks::share(Some(kept))?),
                None => (None, podsim_ranks::share(None)?),
            };
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
        &mut OverRanks {
            ranks: podsim_ranks::place().1,
        },
    )
    .map_err(failure)?;
    if rank != 0 {
        // Another rank: rank 0 prints.
        return Ok(ExitCode::SUCCESS);
    }
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
/// appended as it is done (by rank 0, which holds the file), reused when the search runs
/// again.
struct CsvMemo {
    file: Option<podsim_report::sweep_file::SweepFile>,
    kept: std::collections::HashMap<String, Vec<String>>,
}

/// The search's survivors timed one per MPI rank at a time (started by `mpirun` on a build
/// with the `mpi` feature; one process is one rank, timing them one after another), their
/// times gathered on every rank: each survivor's two seconds as their bits, so every rank
/// takes exactly the values the one that timed them found, and an error as its message and
/// whether the input was at fault.
struct OverRanks {
    ranks: usize,
}

impl FlowRunner for OverRanks {
    fn batch(&self) -> usize {
        self.ranks
    }
    fn run(
        &mut self,
        n: usize,
        each: &(dyn Fn(usize) -> SurvivorTimes + Sync),
    ) -> Result<Vec<SurvivorTimes>, TrainError> {
        if self.ranks <= 1 {
            return Ok((0..n).map(each).collect());
        }
        let gather = |e: podsim_ranks::RanksError| TrainError::Elsewhere {
            message: e.to_string(),
            input: false,
        };
        // A dense layer's two seconds and an MoE layer's three, as their bits.
        type Wire = Result<((u64, u64), Option<(u64, u64, u64)>), (String, bool)>;
        let got: Option<Vec<Wire>> = podsim_report::sweep_file::run_batch(n, |i| match each(i) {
            Ok(LayerTimes { dense, moe }) => Ok((
                (dense.0.to_bits(), dense.1.to_bits()),
                moe.map(|(f, b, a)| (f.to_bits(), b.to_bits(), a.to_bits())),
            )),
            Err(e) => Err((e.to_string(), e.is_input())),
        })
        .map_err(gather)?;
        let all: Vec<Wire> = podsim_ranks::share(got).map_err(gather)?;
        Ok(all
            .into_iter()
            .map(|w| match w {
                Ok(((fwd, bwd), moe)) => Ok(LayerTimes {
                    dense: (f64::from_bits(fwd), f64::from_bits(bwd)),
                    moe: moe
                        .map(|(f, b, a)| (f64::from_bits(f), f64::from_bits(b), f64::from_bits(a))),
                }),
                Err((message, input)) => Err(TrainError::Elsewhere { message, input }),
            })
            .collect())
    }
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
        match self.file.as_mut() {
            Some(file) => file.append(&format!("{key},{fwd},{bwd}")),
            None => Ok(()),
        }
    }
}
