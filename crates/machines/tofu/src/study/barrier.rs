//! `podsim tofu barrier`: the Tofu barrier on a TofuD node or across a TofuD machine against
//! software dissemination, or a one-element all-reduce through the BGs
//! ([`crate::barrier`]); Fig. 8's curves.

use std::path::Path;

use podsim_report::{Series, render};
use podsim_topology::{Network, Tofu, TofuGeneration};
use serde_json::{Value, json};

use super::{StudyError, setting, us};
use crate::barrier::{
    self as tofu_barrier, Allocation, BarrierError, BarrierResult, ReduceOp, machine_barrier,
    node_allreduce, node_barrier,
};
use crate::node::NodeResources;

/// `--generation` (TofuD only) and `--allocation`: the allocation rule.
pub fn allocation(generation: &str, allocation: &str) -> Result<Allocation, StudyError> {
    if generation != "tofud" {
        return Err(setting(
            "--generation",
            format!(
                "`{generation}`: the barrier is timed for tofud only (the paper measures its components on TofuD, section V.E)"
            ),
        ));
    }
    Allocation::parse(allocation)
        .ok_or_else(|| setting("--allocation", format!("`{allocation}` is not test or mpi")))
}

/// The Tofu network `--nodes SPEC` built.
pub fn machine(spec: &str, net: Network) -> Result<Tofu, StudyError> {
    match net {
        Network::Tofu(t) => Ok(t),
        _ => Err(setting(
            "--nodes",
            format!("`{spec}` is not a Tofu network (tofu:fugaku, tofud:XxYxZ)"),
        )),
    }
}

/// The reduction `--allreduce` names.
pub fn reduce_op(s: &str) -> Result<ReduceOp, StudyError> {
    ReduceOp::parse(s).ok_or_else(|| {
        setting(
            "--allreduce",
            format!("`{s}` is not sum, max, min, and, or, fsum, fmax or fmin"),
        )
    })
}

/// The barriers to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierOptions<'a> {
    /// How points get BCHs and BGs.
    pub allocation: Allocation,
    /// Points per node, one row each.
    pub points: &'a [u32],
    /// An all-reduce through the BGs instead of a bare barrier (one node).
    pub allreduce: Option<ReduceOp>,
    /// Elements of the all-reduce.
    pub elements: usize,
    /// Bytes a machine-wide run may take.
    pub memory_limit: u64,
}

/// A one-element all-reduce's outcome: point p gives (p + 1)(e + 1) in element e.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AllreduceOutput {
    /// The reduction's name.
    pub op: &'static str,
    /// Elements reduced.
    pub elements: usize,
    /// What point 0 holds at the end (integers as signed, floats as numbers).
    pub result: Vec<Value>,
    /// The same reduction folded directly.
    pub expected: Vec<Value>,
    /// Whether every point holds what the direct fold gives.
    pub all_points_agree: bool,
}

/// One row of points, as `podsim tofu barrier --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BarrierRow {
    /// The barrier's timing.
    #[serde(flatten)]
    pub result: BarrierResult,
    /// Across a machine: the software dissemination barrier of puts, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub software_dissemination_s: Option<f64>,
    /// With an all-reduce: its outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allreduce: Option<AllreduceOutput>,
}

/// Every row of a barrier study.
#[derive(Debug, Clone, PartialEq)]
pub struct BarrierStudy {
    /// One per point count asked for.
    pub rows: Vec<BarrierRow>,
    /// The allocation rule.
    allocation: Allocation,
    /// The point counts asked for.
    points: Vec<u32>,
    /// The machine's label, across a machine.
    machine: Option<String>,
}

/// The all-reduce of `p` points on one node.
fn allreduce_row(o: &BarrierOptions<'_>, op: ReduceOp, p: u32) -> Result<BarrierRow, StudyError> {
    let bchs = NodeResources::of(TofuGeneration::TofuD).bchs;
    if p > bchs {
        return Err(setting(
            "--points",
            format!(
                "{p} points: an all-reduce through the BGs takes at most {bchs}, a TofuD node's BCHs (Table II)"
            ),
        ));
    }
    let value = |i: u64, e: u64| -> u64 {
        let v = (i + 1) * (e + 1);
        if op.is_float() {
            (v as f64).to_bits()
        } else {
            v
        }
    };
    let inputs: Vec<Vec<u64>> = (0..u64::from(p))
        .map(|i| (0..o.elements as u64).map(|e| value(i, e)).collect())
        .collect();
    let (r, out) =
        node_allreduce(o.allocation, op, &inputs).map_err(|e| setting("--allreduce", e))?;
    // The same reduction folded directly, point by point: what every point must hold.
    let expected: Vec<u64> = (0..o.elements)
        .map(|e| {
            inputs
                .iter()
                .map(|v| v[e])
                .reduce(|x, y| op.combine(x, y))
                .expect("at least one point")
        })
        .collect();
    let show = |v: &[u64]| -> Vec<Value> {
        v.iter()
            .map(|&x| {
                if op.is_float() {
                    json!(f64::from_bits(x))
                } else {
                    json!(x as i64)
                }
            })
            .collect()
    };
    let name = ReduceOp::ALL
        .iter()
        .find(|(_, o)| *o == op)
        .map_or("", |(n, _)| n);
    Ok(BarrierRow {
        result: r,
        software_dissemination_s: None,
        allreduce: Some(AllreduceOutput {
            op: name,
            elements: o.elements,
            result: show(&out[0]),
            expected: show(&expected),
            all_points_agree: out.iter().all(|v| *v == expected),
        }),
    })
}

/// Time the barriers (or all-reduces) `o` asks for, on one node or across `machine`.
pub fn barrier(o: &BarrierOptions<'_>, machine: Option<&Tofu>) -> Result<BarrierStudy, StudyError> {
    if o.allreduce.is_some() && machine.is_some() {
        return Err(setting(
            "--allreduce",
            "the all-reduce runs on one node; drop --nodes",
        ));
    }
    let mut rows = Vec::new();
    for &p in o.points {
        if let Some(op) = o.allreduce {
            rows.push(allreduce_row(o, op, p)?);
            continue;
        }
        let (r, sw) = match machine {
            None => (node_barrier(p, o.allocation), None),
            Some(t) => match machine_barrier(t, p, o.allocation, o.memory_limit) {
                Ok((r, sw)) => (Ok(r), Some(sw)),
                Err(e) => (Err(e), None),
            },
        };
        let r = r.map_err(|e| match e {
            BarrierError::Memory { .. } => StudyError::Run(e.to_string()),
            BarrierError::TooManyNodes(_) | BarrierError::NoNodes => setting("--nodes", e),
            e => setting("--points", e),
        })?;
        rows.push(BarrierRow {
            result: r,
            software_dissemination_s: sw,
            allreduce: None,
        });
    }
    Ok(BarrierStudy {
        rows,
        allocation: o.allocation,
        points: o.points.to_vec(),
        machine: machine.map(|t| t.label().to_string()),
    })
}

impl BarrierStudy {
    /// The allocation rule's name.
    fn allocation_name(&self) -> &'static str {
        match self.allocation {
            Allocation::Test => "test",
            Allocation::Mpi => "mpi",
        }
    }

    /// Draw Fig. 8's curves to `path`: latency against the points, serialized and minimum,
    /// and (for the test allocation on one node) the MPI rule for the same processes.
    pub fn plot(&self, path: &Path) -> Result<(), StudyError> {
        let curve = |f: &dyn Fn(&tofu_barrier::BarrierResult) -> f64| -> Vec<(f64, f64)> {
            self.rows
                .iter()
                .map(|r| (f64::from(r.result.processes), f(&r.result) * 1e6))
                .collect()
        };
        let alloc = self.allocation_name();
        let mut series = vec![
            Series {
                name: format!("{alloc} allocation, serialized (each TNI one server)"),
                points: curve(&|r| r.latency_s),
                second: false,
            },
            Series {
                name: format!("{alloc} allocation, minimum (every gate in parallel)"),
                points: curve(&|r| r.minimum_latency_s),
                second: false,
            },
        ];
        if self.allocation == Allocation::Test && self.machine.is_none() {
            let mpi: Result<Vec<(f64, f64)>, StudyError> = self
                .points
                .iter()
                .map(|&p| {
                    node_barrier(p, Allocation::Mpi)
                        .map(|r| (f64::from(p), r.latency_s * 1e6))
                        .map_err(|e| setting("--points", e))
                })
                .collect();
            series.push(Series {
                name: "MPI rule (one BCH per TNI, groups through memory)".into(),
                points: mpi?,
                second: false,
            });
        }
        let ymax = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0, f64::max)
            * 1.15;
        podsim_report::lines_svg(
            path,
            "Tofu barrier on a TofuD node (Table VI, Fig. 8)",
            "start-and-end points (processes) per node",
            "latency (us)",
            &series,
            ymax,
        )
        .map_err(|e| StudyError::Run(e.to_string()))
    }

    /// The text `podsim tofu barrier` prints: a row per point count, then notes.
    pub fn text(&self) -> String {
        let mut table = vec![(
            "points".to_string(),
            vec![
                "TNIs".to_string(),
                "groups".into(),
                "BCHs/TNI".into(),
                "BGs/TNI".into(),
                "stages".into(),
                "serialized".into(),
                "minimum".into(),
            ],
        )];
        if self.machine.is_some() {
            table[0].1.push("software".into());
        }
        for row in &self.rows {
            let r = &row.result;
            let label = if r.processes == r.points {
                r.points.to_string()
            } else {
                format!("{} ({} processes)", r.points, r.processes)
            };
            let mut cells = vec![
                r.tnis.to_string(),
                r.groups_per_node.to_string(),
                r.bchs_per_tni.to_string(),
                r.bgs_per_tni.to_string(),
                r.stages.to_string(),
                us(r.latency_s),
                us(r.minimum_latency_s),
            ];
            if let Some(sw) = row.software_dissemination_s {
                cells.push(us(sw));
            }
            table.push((label, cells));
        }
        let mut text = render(&table);
        for n in self.notes() {
            text.push_str(&n);
            text.push('\n');
        }
        text
    }

    /// The notes under the table.
    fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!(
            "allocation: {}; each group reduces its points to one BG, the groups run recursive doubling, and the last round broadcasts back",
            self.allocation_name()
        ), "components: BCH + start-and-end BG 0.48 us (0.19 us overlapped between BCHs of a TNI, 0.29 us serialized), relay BG 0.13 us (section V.E)".to_string()];
        if let Some(label) = &self.machine {
            notes.push(format!(
                "{} nodes of {}: rounds across nodes pay the hops x 0.1 us; software: a put per round (0.41 us at the ends + hops), a 0.1 us memory flag on one node",
                self.rows.first().map_or(0, |r| r.result.nodes),
                label
            ));
        }
        for row in &self.rows {
            let Some(x) = &row.allreduce else { continue };
            notes.push(format!(
                "all-reduce {} of {} element(s) over {} points: {} at every point: {} (folded directly: {})",
                x.op,
                x.elements,
                row.result.points,
                Value::Array(x.result.clone()),
                if x.all_points_agree { "yes" } else { "NO" },
                Value::Array(x.expected.clone())
            ));
        }
        if self.rows.iter().any(|r| r.result.memory_sync_s > 0.0) {
            notes.push("processes sharing a BCH meet in memory first and are released after: (log2 q + 1) flags of 0.1 us (an assumption)".into());
        }
        notes
    }
}
