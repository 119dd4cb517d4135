//! `podsim dojo node`: a kernel through the node's funnel pipeline ([`crate::dojo_node`]).

use std::collections::BTreeMap;

use podsim_report::render;

use crate::dojo_node::{self, Kernel, KernelError, NodeReport};

/// A kernel's run as `podsim dojo node --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NodeOutput {
    /// The kernel's name.
    pub kernel: String,
    /// Cycles in steady state.
    pub cycles: u64,
    /// The busiest stage.
    pub binding_stage: &'static str,
    /// Each stage's utilisation, 0 to 1.
    pub utilization: BTreeMap<&'static str, f64>,
    /// Instructions.
    pub instructions: u64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// FLOPs over the run.
    pub flops: u64,
    /// Seconds at 2 GHz.
    pub time_s: f64,
    /// The kernel's threads.
    #[serde(skip)]
    threads: usize,
    /// The run, stages in order.
    #[serde(skip)]
    report: NodeReport,
}

/// Run `k` through the funnel.
pub fn node(k: &Kernel) -> Result<NodeOutput, KernelError> {
    let r = dojo_node::run(k)?;
    Ok(NodeOutput {
        kernel: k.name.clone(),
        cycles: r.cycles,
        binding_stage: r.binding.name(),
        utilization: r.utilization.iter().map(|(s, u)| (s.name(), *u)).collect(),
        instructions: r.instructions,
        ipc: r.ipc,
        flops: r.flops,
        time_s: r.time_s,
        threads: k.threads.len(),
        report: r,
    })
}

impl NodeOutput {
    /// The text `podsim dojo node` prints.
    pub fn text(&self) -> String {
        let r = &self.report;
        let mut rows = vec![(
            "stage".to_string(),
            vec!["width".to_string(), "utilization".into()],
        )];
        for (s, u) in &r.utilization {
            rows.push((
                s.name().to_string(),
                vec![
                    format!("{}/cycle", s.width()),
                    format!(
                        "{:.1}%{}",
                        u * 100.0,
                        if *s == r.binding { "  <- binds" } else { "" }
                    ),
                ],
            ));
        }
        format!(
            "{}{}: {} thread{}, {} instructions in {} cycles ({:.2} IPC, {:.3} us at 2 GHz), {} FLOPs ({:.1} per cycle of the node's {}); bound by {}\n",
            render(&rows),
            self.kernel,
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            r.instructions,
            r.cycles,
            r.ipc,
            r.time_s * 1e6,
            r.flops,
            r.flops as f64 / r.cycles as f64,
            dojo_node::matmul_flops_per_cycle(),
            r.binding.name()
        )
    }
}
