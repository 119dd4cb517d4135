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
