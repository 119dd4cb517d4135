//! A scenario's collective run (`podsim run`, `podsim report`): the collective on each of the
//! scenario's systems, with its speedup over the baseline system, as a table and as the JSON
//! objects of `podsim run --json`.

use podsim_collective::{CollectiveOutput, Measurement, Setup};

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
