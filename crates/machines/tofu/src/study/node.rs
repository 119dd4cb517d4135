//! `podsim tofu node`: processes placed on a node's communication resources (Table II).

use podsim_report::render;

use super::{StudyError, put::Row, setting};
use crate::node::{NodeResources, Placement, ProcessRequest, place};

/// The placement asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeOptions<'a> {
    /// tofu, tofu2 or tofud.
    pub generation: &'a str,
    /// Processes on the node.
    pub processes: u32,
    /// CQs each process asks for.
    pub cqs: u32,
    /// BCHs each process asks for.
    pub bchs: u32,
    /// Each process's CMG (empty: round-robin).
    pub cmgs: &'a [u32],
}

/// A node's resources as `podsim tofu node --json` prints them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Resources {
    /// Cores.
    pub cores: u32,
    /// CMGs.
    pub cmgs: u32,
    /// CMGs far from the TNIs.
    pub far_cmgs: u32,
    /// TNIs.
    pub tnis: u32,
    /// CQs per TNI.
    pub cqs_per_tni: u32,
    /// CQs per TNI the system keeps.
    pub system_cqs_per_tni: u32,
    /// BCHs.
    pub bchs: u32,
    /// BGs.
    pub bgs: u32,
}

/// A placement as `podsim tofu node --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NodeOutput {
    /// The generation's name.
    pub generation: &'static str,
    /// The node's resources.
    pub resources: Resources,
    /// What each process got.
    pub processes: Vec<Placement>,
}

/// Place the processes `o` asks for.
pub fn node(o: &NodeOptions<'_>) -> Result<NodeOutput, StudyError> {
    let generation = Row::parse(o.generation, None, false)?.generation;
    let res = NodeResources::of(generation);
    if o.processes == 0 {
        return Err(setting(
            "--processes",
            "0 processes: nothing to place; give at least 1 (the node's resources print with every placement)",
        ));
    }
    if o.cqs == 0 && o.bchs == 0 {
        return Err(setting(
            "--cqs",
            "0 CQs and 0 BCHs: each process asks for nothing to place; give a CQ (to put or get) or a BCH (a barrier-only process)",
        ));
    }
    if !o.cmgs.is_empty() && o.cmgs.len() != o.processes as usize {
        return Err(setting(
            "--cmgs",
            format!(
                "{} CMGs for {} processes: give one per process or none",
                o.cmgs.len(),
                o.processes
            ),
        ));
    }
    let requests: Vec<ProcessRequest> = (0..o.processes)
        .map(|p| ProcessRequest {
            cmg: o.cmgs.get(p as usize).copied().unwrap_or(p % res.cmgs),
            cqs: o.cqs,
            bchs: o.bchs,
        })
        .collect();
    let processes = place(generation, &requests).map_err(|e| setting("--processes", e))?;
    Ok(NodeOutput {
        generation: generation.name(),
        resources: Resources {
            cores: res.cores,
            cmgs: res.cmgs,
            far_cmgs: res.far_cmgs,
            tnis: res.tnis,
            cqs_per_tni: res.cqs_per_tni,
            system_cqs_per_tni: res.system_cqs_per_tni,
            bchs: res.bchs,
            bgs: res.bgs,
        },
        processes,
    })
}

impl NodeOutput {
    /// The text `podsim tofu node` prints.
    pub fn text(&self) -> String {
        let pairs = |v: &[(u32, u32)]| {
            if v.is_empty() {
                "-".to_string()
            } else {
                v.iter()
                    .map(|(t, i)| format!("TNI{t}.{i}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        };
        let mut rows = vec![(
            "process".to_string(),
            vec!["CMG".to_string(), "CQs".into(), "BCHs".into()],
        )];
        for (i, p) in self.processes.iter().enumerate() {
            rows.push((
                i.to_string(),
                vec![
                    format!("{}{}", p.cmg, if p.far { " (far)" } else { "" }),
                    pairs(&p.cqs),
                    pairs(&p.bchs),
                ],
            ));
        }
        let res = &self.resources;
        format!(
            "{}{}: {} cores, {} CMGs ({} far), {} TNIs x {} CQs{}, {} BCHs, {} BGs (Table II)\n",
            render(&rows),
            self.generation,
            res.cores,
            res.cmgs,
            res.far_cmgs,
            res.tnis,
            res.cqs_per_tni,
            if res.system_cqs_per_tni > 0 {
                format!(" ({} for the system)", res.system_cqs_per_tni)
            } else {
                String::new()
            },
            res.bchs,
            res.bgs
        )
    }
}
