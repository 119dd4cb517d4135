//! A workload's run in a trace (`podsim workload`, `podsim train`, `podsim run`): a process per
//! chip, a thread per resource, an event per task.

use podsim_system::workload::{Workload, WorkloadResult};
use serde_json::json;

use crate::Trace;

/// Add a workload run to a trace: a process per chip that did work (process id `pid_offset` +
/// chip, named `label` chip), a thread per resource, an event per task on each chip.
pub fn add_workload(
    t: &mut Trace,
    workload: &Workload,
    r: &WorkloadResult,
    chips: u64,
    pid_offset: u64,
    label: &str,
) {
    let mut used = std::collections::BTreeSet::new();
    for i in &r.intervals {
        used.insert((i.chip, i.resource));
    }
    let mut named = std::collections::BTreeSet::new();
    for &(c, _) in &used {
        if named.insert(c) {
            // Past the chips: a DOJO interface processor streaming by DMA (DIPs are the first
            // nodes after the routers).
            if c < chips {
                t.process(pid_offset + c, format!("{label}chip {c}"));
            } else {
                t.process(pid_offset + c, format!("{label}DIP {}", c - chips));
            }
        }
    }
    for &(c, res) in &used {
        t.thread(pid_offset + c, res as u64, res.name());
    }
    for i in &r.intervals {
        t.complete(
            pid_offset + i.chip,
            i.resource as u64,
            &workload.tasks[i.task].name,
            i.start,
            i.end - i.start,
            json!({"run": i.run}),
        );
    }
}

/// The process id of the power track [`add_power`] draws: past every chip and interface.
pub const POWER_PID: u64 = 1 << 40;

/// Add a run's power over time ([`podsim_system::energy::power_timeline`]) as a counter track
/// "power (W)" of its own process, one series per component (compute, memory, network, idle).
pub fn add_power(
    t: &mut Trace,
    timeline: &[(podsim_units::SimTime, podsim_system::energy::Breakdown)],
) {
    t.process(POWER_PID, "machine power");
    for (at, b) in timeline {
        let parts = b.parts();
        let values: Vec<(&str, f64)> = parts.iter().map(|&(n, w)| (n, w)).collect();
        t.counter(POWER_PID, "power (W)", *at, &values);
    }
}
