//! A scenario's runs as `podsim run` and `podsim report` print them: each run's table, its
//! JSON objects (`podsim run --json`) and what it recorded in a trace; a collective on each of
//! the scenario's systems comes with its speedup over the baseline system.

use podsim_collective::{CollectiveOutput, Measurement, Setup};
use podsim_system::Scenario;
use podsim_system::scenario::RunResult;

/// One system's measurement: the object `podsim run --json` prints for it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CollectiveRunRow<'a> {
    /// The measurement on the system (`topology`: the system's name), without timing keys.
    #[serde(flatten)]
    pub output: CollectiveOutput<'a>,
    /// The baseline system's time over this one's (where the run names a baseline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup_vs_baseline: Option<f64>,
}

/// A collective run on each system of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveRun<'a> {
    /// The collective.
    pub setup: &'a Setup,
    /// Each system's row, in the scenario's order.
    pub rows: Vec<CollectiveRunRow<'a>>,
}

impl<'a> CollectiveRun<'a> {
    /// The run of `setup` on `systems` (each its name and measurement), the baseline system
    /// taking `baseline_time_s` where the run names one.
    pub fn new(
        setup: &'a Setup,
        systems: &[(&'a str, &'a Measurement)],
        baseline_time_s: Option<f64>,
    ) -> CollectiveRun<'a> {
        let rows = systems
            .iter()
            .map(|(name, m)| CollectiveRunRow {
                output: CollectiveOutput::new(setup.kind, setup.algorithm, setup.model, name, m),
                speedup_vs_baseline: baseline_time_s.map(|b| b / m.time_s),
            })
            .collect();
        CollectiveRun { setup, rows }
    }

    /// The run as `podsim run` prints it: a heading line and a table.
    pub fn text(&self) -> String {
        let mut rows = vec![(
            "system".to_string(),
            vec![
                "ranks".into(),
                "time".into(),
                "algbw".into(),
                "busbw".into(),
                "lower bound".into(),
                "vs baseline".into(),
            ],
        )];
        for r in &self.rows {
            let m = r.output.measurement;
            rows.push((
                r.output.topology.to_string(),
                vec![
                    m.ranks.to_string(),
                    format!("{:.4} ms", m.time_s * 1e3),
                    format!("{:.2} GB/s", m.algorithm_bandwidth_bytes_per_s / 1e9),
                    format!("{:.2} GB/s", m.bus_bandwidth_bytes_per_s / 1e9),
                    format!("{:.4} ms", m.lower_bound_time_s * 1e3),
                    r.speedup_vs_baseline
                        .map_or("-".into(), |s| format!("{s:.3}x")),
                ],
            ));
        }
        format!(
            "{} ({}), {} per rank, {} model\n{}",
            self.setup.kind,
            self.setup.algorithm.name(),
            podsim_units::Bytes(self.setup.bytes),
            self.setup.model.name(),
            crate::render(&rows)
        )
    }
}

/// Add what one run of a scenario recorded to a trace, its ranks under their own block of
/// process ids (`traced_runs` counts the blocks used).
pub fn add_result_trace(
    t: &mut crate::Trace,
    scenario: &Scenario,
    result: &RunResult,
    traced_runs: &mut u64,
) {
    match result {
        RunResult::Workload { spec, net, result } => {
            crate::workload::add_workload(
                t,
                &spec.workload,
                result,
                net.endpoints(),
                *traced_runs << 32,
                &format!("{}: ", spec.name),
            );
            *traced_runs += 1;
        }
        RunResult::Metrics(_) | RunResult::Command { .. } => {}
        RunResult::Collective { setup, results, .. } => {
            for (i, _, rec) in results {
                if let Some(rec) = rec {
                    let s = &scenario.systems[*i];
                    crate::add_transfers(
                        t,
                        rec,
                        *traced_runs << 32,
                        &format!("{} ({}): ", s.name, setup.kind),
                    );
                    *traced_runs += 1;
                }
            }
        }
    }
}

/// One run of a scenario as `podsim run --json` prints it: an object per system.
pub fn result_json(scenario: &Scenario, result: &RunResult) -> Vec<serde_json::Value> {
    match result {
        // Run by the CLI itself (see `exec_command`), never handed here.
        RunResult::Command { .. } => Vec::new(),
        RunResult::Workload { spec, net, result } => vec![crate::to_json(
            &podsim_system::workload::WorkloadOutput::new(
                spec,
                result,
                spec.model,
                net.endpoints(),
            ),
        )],
        RunResult::Metrics(systems) => systems
            .iter()
            .map(|(name, net, m)| {
                let mut v = crate::metrics_json(net, m);
                v["system"] = serde_json::Value::String(name.to_string());
                v
            })
            .collect(),
        RunResult::Collective {
            setup,
            results,
            baseline_time_s,
        } => collective_run(scenario, setup, results, *baseline_time_s)
            .rows
            .iter()
            .map(crate::to_json)
            .collect(),
    }
}

/// A collective run of a scenario on its systems, for its table and JSON.
fn collective_run<'a>(
    scenario: &'a Scenario,
    setup: &'a podsim_collective::Setup,
    results: &'a [(
        usize,
        podsim_collective::Measurement,
        Option<podsim_net::Recording>,
    )],
    baseline_time_s: Option<f64>,
) -> crate::CollectiveRun<'a> {
    let systems: Vec<(&str, &podsim_collective::Measurement)> = results
        .iter()
        .map(|(i, m, _)| (scenario.systems[*i].name.as_str(), m))
        .collect();
    crate::CollectiveRun::new(setup, &systems, baseline_time_s)
}

/// One run of a scenario as `podsim run` prints it: a heading line and a table.
pub fn result_text(scenario: &Scenario, result: &RunResult) -> String {
    match result {
        // Run by the CLI itself (see `exec_command`), never handed here.
        RunResult::Command { args } => format!("podsim {}\n", args.join(" ")),
        RunResult::Workload { spec, net, result } => format!(
            "workload {} on {} ({} chips of {}), {} model\n{}",
            spec.name,
            spec.system.name,
            net.endpoints(),
            spec.chip.name,
            spec.model.name(),
            crate::render(&result.summary_rows())
        ),
        RunResult::Metrics(systems) => {
            let names: Vec<String> = systems.iter().map(|(n, _, _)| n.to_string()).collect();
            let built: Vec<_> = systems
                .iter()
                .map(|(_, net, m)| (net.clone(), m.clone()))
                .collect();
            crate::metrics_table(&names, &built)
        }
        RunResult::Collective {
            setup,
            results,
            baseline_time_s,
        } => collective_run(scenario, setup, results, *baseline_time_s).text(),
    }
}

/// Whether `podsim run --energy` can give `run` its energy: `Ok(true)` for a collective on the
/// flow model over systems whose chips have power figures and for a workload on the flow model
/// whose chip has them, `Ok(false)` for a run that takes no time or runs its own command line
/// (metrics, command runs), and why not otherwise (naming the run and system). Asked of every
/// run before any runs.
pub fn energy_applies(scenario: &Scenario, index: usize) -> Result<bool, String> {
    use podsim_system::RunSpec;
    let run = &scenario.runs[index];
    let at = format!("{}: `run[{index}]`", scenario.file);
    let flow = |m: podsim_collective::ModelKind| {
        if m == podsim_collective::ModelKind::Flow {
            Ok(())
        } else {
            Err(format!(
                "{at}: the energy of the links comes from the flow model's link loads; this run uses the {} model",
                m.name()
            ))
        }
    };
    match run {
        RunSpec::Metrics { .. } | RunSpec::Command { .. } => Ok(false),
        RunSpec::Collective { systems, setup, .. } => {
            flow(setup.model)?;
            for &i in systems {
                let s = &scenario.systems[i];
                podsim_system::energy::ChipPower::of_chip(s.chip_name())
                    .map_err(|e| format!("{at}: system `{}`: {e}", s.name))?;
            }
            Ok(true)
        }
        RunSpec::Workload { spec } => {
            flow(spec.model)?;
            podsim_system::energy::ChipPower::of_chip(Some(&spec.chip.name))
                .map_err(|e| format!("{at}: workload `{}`: {e}", spec.name))?;
            Ok(true)
        }
    }
}

/// The energy of each system's part of `result` (a run [`energy_applies`] to), in the order
/// `result_json` gives its objects: a collective's energy on each system (its chips' idle power
/// for the collective's time and the bytes its links carried; performance per watt as
/// algorithm bandwidth per watt), a workload's over its machine.
pub fn result_energy(
    scenario: &Scenario,
    result: &RunResult,
) -> Result<Vec<(String, podsim_system::energy::EnergyOutput)>, String> {
    use podsim_system::energy::{ChipPower, EnergyOutput};
    match result {
        RunResult::Metrics(_) | RunResult::Command { .. } => Ok(Vec::new()),
        RunResult::Collective { setup, results, .. } => results
            .iter()
            .map(|(i, m, _)| {
                let s = &scenario.systems[*i];
                let power = ChipPower::of_chip(s.chip_name())?;
                let e = podsim_system::energy::collective(&power, m.ranks as u64, setup.bytes, m)?;
                Ok((s.name.clone(), e))
            })
            .collect(),
        RunResult::Workload { spec, result, .. } => {
            let power = ChipPower::of_chip(Some(&spec.chip.name))?;
            Ok(vec![(
                spec.system.name.clone(),
                EnergyOutput::new(&power, &result.activity, None)?,
            )])
        }
    }
}
