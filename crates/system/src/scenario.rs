//! Running a scenario's analyses: each `[[run]]` of a [`Scenario`] on its systems, one at a
//! time (so a caller can report each as it finishes).

use podsim_collective::{CollectiveError, Measurement, Setup};
use podsim_net::{Recording, RecordingHandle};
use podsim_topology::{Metrics, Network, TopologyError};

use crate::spec::SystemSpec;
use crate::workload::{WorkloadError, WorkloadResult, WorkloadSpec};

/// An analysis to run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunSpec {
    /// Topology metrics of the listed systems (indices into [`Scenario::systems`]).
    Metrics {
        /// Which systems, in order.
        systems: Vec<usize>,
    },
    /// A collective on each listed system, optionally compared with one of them.
    Collective {
        /// Which systems, in order.
        systems: Vec<usize>,
        /// What to run.
        setup: Setup,
        /// The system the others' speed is compared with.
        baseline: Option<usize>,
    },
    /// A workload file, on its own machine.
    Workload {
        /// The workload, read from its file.
        spec: Box<WorkloadSpec>,
    },
    /// A podsim command line (`podsim ARGS...`: noc, gemm, dram, train, ...), run as if typed,
    /// from the scenario file's directory; the command-line tool checks and runs it.
    Command {
        /// The arguments after `podsim`.
        args: Vec<String>,
    },
}

/// The analyses a `[[run]]` may name.
pub const RUN_KINDS: [&str; 4] = ["metrics", "collective", "workload", "command"];

/// A validated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The file it came from.
    pub file: String,
    /// Its title.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// The master random seed (0: no analysis a scenario runs is random, and a `seed` key is
    /// refused).
    pub seed: u64,
    /// The systems described.
    pub systems: Vec<SystemSpec>,
    /// What to run on them.
    pub runs: Vec<RunSpec>,
}

/// What one run of a scenario gave.
#[derive(Debug)]
pub enum RunResult<'a> {
    /// Each system's name, network and metrics.
    Metrics(Vec<(&'a str, Network, Metrics)>),
    /// Each system's index and measurement (with the transfers it recorded, when asked), and
    /// the baseline's time.
    Collective {
        /// The collective.
        setup: &'a Setup,
        /// Per system: its index, measurement and recording.
        results: Vec<(usize, Measurement, Option<Recording>)>,
        /// The baseline system's time, seconds, if the run names one.
        baseline_time_s: Option<f64>,
    },
    /// A podsim command line for the command-line tool to run (see [`RunSpec::Command`]).
    Command {
        /// The arguments after `podsim`.
        args: &'a [String],
    },
    /// A workload run on its machine.
    Workload {
        /// The workload.
        spec: &'a WorkloadSpec,
        /// Its machine's network.
        net: Box<Network>,
        /// What it gave.
        result: WorkloadResult,
    },
}

/// Why a run of a scenario failed.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// A system could not be built.
    #[error("{file}: `{}`: {}", .error.key, .error.why)]
    Build {
        /// The file that describes it.
        file: String,
        /// Why.
        error: TopologyError,
    },
    /// A collective failed on a system.
    #[error("{file}: system `{system}`: {error}")]
    Collective {
        /// The scenario file.
        file: String,
        /// The system.
        system: String,
        /// Why.
        error: Box<CollectiveError>,
    },
    /// A workload failed.
    #[error("{file}: {error}")]
    Workload {
        /// The workload file.
        file: String,
        /// Why.
        error: WorkloadError,
    },
    /// A workload's network model could not be built.
    #[error("{file}: {error}")]
    Model {
        /// The workload file.
        file: String,
        /// Why.
        error: crate::machine::MachineError,
    },
}

/// Run `run` of `scenario` within `memory_limit` bytes; with `record`, keep at most that many
/// transfers of each collective for a trace.
pub fn run_one<'a>(
    scenario: &'a Scenario,
    run: &'a RunSpec,
    memory_limit: u64,
    record: Option<usize>,
) -> Result<RunResult<'a>, ScenarioError> {
    let build = |i: usize| {
        scenario.systems[i]
            .build()
            .map_err(|error| ScenarioError::Build {
                file: scenario.file.clone(),
                error,
            })
    };
    Ok(match run {
        RunSpec::Metrics { systems } => {
            let mut out = Vec::new();
            for &i in systems {
                let net = build(i)?;
                let m = net.metrics();
                out.push((scenario.systems[i].name.as_str(), net, m));
            }
            RunResult::Metrics(out)
        }
        RunSpec::Collective {
            systems,
            setup,
            baseline,
        } => {
            let mut results = Vec::new();
            for &i in systems {
                let net = build(i)?;
                let log = RecordingHandle::default();
                log.borrow_mut().limit = record.unwrap_or(0);
                let models = crate::Models {
                    record: record.is_some().then(|| log.clone()),
                    ..Default::default()
                };
                let s = Setup {
                    memory_limit,
                    ..*setup
                };
                let m = crate::measure_with(&net, &s, &models).map_err(|error| {
                    ScenarioError::Collective {
                        file: scenario.file.clone(),
                        system: scenario.systems[i].name.clone(),
                        error: Box::new(error),
                    }
                })?;
                let rec = record.map(|_| std::mem::take(&mut *log.borrow_mut()));
                results.push((i, m, rec));
            }
            let baseline_time_s = baseline.and_then(|b| {
                results
                    .iter()
                    .find(|(i, _, _)| *i == b)
                    .map(|(_, m, _)| m.time_s)
            });
            RunResult::Collective {
                setup,
                results,
                baseline_time_s,
            }
        }
        RunSpec::Workload { spec } => {
            let (net, result) = run_workload(spec, spec.model)?;
            RunResult::Workload {
                spec,
                net: Box::new(net),
                result,
            }
        }
        RunSpec::Command { args } => RunResult::Command { args },
    })
}

/// Run a workload spec on its machine with `model`.
pub fn run_workload(
    spec: &WorkloadSpec,
    model: podsim_collective::ModelKind,
) -> Result<(Network, WorkloadResult), ScenarioError> {
    let net = spec.system.build().map_err(|error| ScenarioError::Build {
        file: spec.file.clone(),
        error,
    })?;
    let mut m =
        crate::new_model(&net, model, podsim_net::Packetization::NONE, true).map_err(|error| {
            ScenarioError::Model {
                file: spec.file.clone(),
                error,
            }
        })?;
    let result =
        crate::workload::run(&spec.workload, &net, &spec.chip, m.as_mut()).map_err(|error| {
            ScenarioError::Workload {
                file: spec.file.clone(),
                error,
            }
        })?;
    Ok((net, result))
}
