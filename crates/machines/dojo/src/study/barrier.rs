//! `podsim dojo barrier`: hardware barrier trees over synchronisation domains against a
//! software dissemination barrier ([`crate::barrier`]).

use podsim_report::render;
use podsim_topology::Dojo;

use super::{StudyError, setting};
use crate::barrier::{
    self as dojo_barrier, BarrierTreeError, Domain, DomainResult, barriers, whole,
};

/// The barriers to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierOptions<'a> {
    /// The topology as given (`dojo:die`), for the output and errors.
    pub topology: &'a str,
    /// Children per tree node, a row each.
    pub fan_in: &'a [u32],
    /// The domains file, when the domains came from one (errors name it).
    pub domains_file: Option<&'a str>,
    /// Report the software barrier as `latency_s`.
    pub software: bool,
}

/// The barriers at one fan-in, as `podsim dojo barrier --json` prints them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BarrierRun {
    /// The topology as given.
    pub topology: String,
    /// Children per tree node.
    pub fan_in: u32,
    /// Whether `latency_s` is the software barrier's.
    pub software: bool,
    /// The slowest domain, s.
    pub latency_s: f64,
    /// Each domain's tree.
    pub domains: Vec<DomainResult>,
}

/// Every fan-in's barriers.
#[derive(Debug, Clone, PartialEq)]
pub struct BarrierStudy {
    /// One per fan-in.
    pub runs: Vec<BarrierRun>,
    /// The topology as given.
    topology: String,
}

/// Build and time a tree per domain of `domains` (default: one domain of every router) at
/// each fan-in of `o`.
pub fn barrier(
    d: &Dojo,
    domains: Option<&[Domain]>,
    o: &BarrierOptions<'_>,
) -> Result<BarrierStudy, StudyError> {
    let all = [whole(d, "all")];
    let domains = domains.unwrap_or(&all);
    let mut runs = Vec::new();
    for &k in o.fan_in {
        let rs = barriers(d, domains, k).map_err(|e| match (&e, o.domains_file) {
            (BarrierTreeError::Memory { .. }, _) => StudyError::Run(format!("{}: {e}", o.topology)),
            (_, Some(file)) => StudyError::File {
                file: file.to_string(),
                why: e.to_string(),
            },
            (_, None) => setting("--fan-in", e),
        })?;
        let pick = |r: &DomainResult| {
            if o.software {
                r.software_latency_s
            } else {
                r.latency_s
            }
        };
        runs.push(BarrierRun {
            topology: o.topology.to_string(),
            fan_in: k,
            software: o.software,
            latency_s: rs.iter().map(pick).fold(0.0, f64::max),
            domains: rs,
        });
    }
    Ok(BarrierStudy {
        runs,
        topology: o.topology.to_string(),
    })
}

impl BarrierStudy {
    /// The text `podsim dojo barrier` prints.
    pub fn text(&self) -> String {
        let ns = |s: f64| format!("{:.1} ns", s * 1e9);
        let mut rows = vec![(
            "domain".to_string(),
            vec![
                "fan-in".to_string(),
                "members".into(),
                "depth".into(),
                "tree".into(),
                "software".into(),
                "rounds".into(),
            ],
        )];
        for run in &self.runs {
            for r in &run.domains {
                rows.push((
                    r.name.clone(),
                    vec![
                        run.fan_in.to_string(),
                        r.members.to_string(),
                        r.depth.to_string(),
                        ns(r.latency_s),
                        ns(r.software_latency_s),
                        r.rounds.to_string(),
                    ],
                ));
            }
        }
        format!(
            "{}{}: ARM up and GRANT down the tree, {} ns per router, the links' latencies along X-then-Y routes; software: dissemination, {} ns per round beyond the route (assumptions)\n",
            render(&rows),
            self.topology,
            dojo_barrier::ROUTER_NS,
            dojo_barrier::SOFTWARE_ROUND_NS
        )
    }
}
