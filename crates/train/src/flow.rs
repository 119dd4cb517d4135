//! One layer as a workload on the slice's network: the flow fidelity and traces.

use podsim_collective::{Algorithm, Kind};
use podsim_net::NetworkModel;
use podsim_system::workload::{Group, Task, Unit, Work, Workload};
use podsim_topology::Network;
use podsim_units::{Bytes, Flops};

use crate::layer::{Op, Span, layer_ops, moe_layer_ops, spans};
use crate::memory::shard;
use crate::timer::{Timer, cmem_holds};
use crate::{Axis, Config, LayerTimes, Machine, TrainError, Transformer};

/// The chips of every group of the axes `axes` (the chips that differ only in those axes'
/// coordinates), each in rank order (the first axis fastest).
fn lines(spans: &[Span; 6], axes: &[Axis], chips: u64) -> Vec<Vec<u64>> {
    let digit = |id: u64, s: &Span| (id / s.stride) % s.size;
    let mut out = Vec::new();
    for id in 0..chips {
        if axes.iter().any(|a| digit(id, &spans[a.index()]) != 0) {
            continue;
        }
        let mut line = vec![id];
        for a in axes {
            let s = &spans[a.index()];
            line = (0..s.size)
                .flat_map(|j| line.iter().map(move |&c| c + j * s.stride))
                .collect();
        }
        out.push(line);
    }
    out
}

/// The per-layer workload of one microbatch on every chip of the slice: the forward pass, then
/// the backward pass; every stage and replica at once, so the collectives of all groups share
/// the links as the mapping places them. Chip work is timed as the closed form times it (a
/// compute task at the GEMM model's rate, memory tasks at HBM bandwidth), so the fidelities
/// differ only in the network. Returns the workload and the number of forward tasks. `moe`:
/// an MoE layer's (the model's dense layer where it has none).
fn layer_workload(
    t: &Transformer,
    m: &Machine,
    c: &Config,
    moe: bool,
) -> Result<(Workload, usize), TrainError> {
    let spans = spans(m, c)?;
    let sh = shard(t, c)?;
    let ops = match moe_layer_ops(t, c, &sh) {
        Some(o) if moe => o,
        _ => layer_ops(t, c, &sh),
    };
    let timer = Timer {
        t,
        m,
        spans,
        cmem_weights: cmem_holds(t, m, c),
    };
    let chips = m.chips();
    let peak = m.chip.matrix.0 as f64;
    let mut w = Workload::default();
    let mut last: Option<usize> = None;
    let mut forward_tasks = 0;
    for (pass, list) in [("forward", &ops.forward), ("backward", &ops.backward)] {
        let pass_start = last;
        for o in list.iter() {
            let (name, work, group, serial) = match o {
                Op::Gemm {
                    name,
                    m,
                    n,
                    k,
                    count,
                    weight,
                } => {
                    let flops = 2.0 * (*m * *n * *k) as f64 * *count as f64;
                    let time = *count as f64 * timer.gemm(*m, *n, *k, *weight)?;
                    (
                        *name,
                        Work::Compute {
                            flops: Flops(flops.ceil() as u64),
                            efficiency: (flops / (time * peak)).clamp(1e-9, 1.0),
                            unit: Unit::Matrix,
                        },
                        Group::All,
                        true,
                    )
                }
                Op::Memory { name, bytes } => (
                    *name,
                    Work::Memory {
                        bytes: Bytes(bytes.ceil() as u64),
                        working_set: None,
                    },
                    Group::All,
                    true,
                ),
                Op::Coll {
                    name,
                    axis,
                    kind,
                    bytes,
                    overlapped,
                } => {
                    let span = spans[axis.index()];
                    if span.size <= 1 {
                        continue;
                    }
                    let dims: Vec<u32> = span
                        .parts
                        .iter()
                        .filter(|p| p.0 > 1)
                        .map(|p| p.0 as u32)
                        .collect();
                    let algorithm = match kind {
                        Kind::AllReduce if dims.len() == 1 => Algorithm::BidirectionalRing,
                        Kind::AllReduce => Algorithm::DimensionWise,
                        // Every chip of the expert group sends its share straight to every
                        // other, as `podsim collective all-to-all` does by default.
                        Kind::AllToAll => Algorithm::Direct,
                        _ => Algorithm::Ring,
                    };
                    (
                        *name,
                        Work::Collective {
                            kind: *kind,
                            algorithm,
                            bytes: Bytes(bytes.ceil() as u64),
                        },
                        Group::Lines(lines(&spans, &[*axis], chips), dims),
                        !overlapped,
                    )
                }
            };
            let after = if serial { last } else { pass_start };
            w.tasks.push(Task {
                name: format!("{pass} {} {name}", w.tasks.len()),
                work,
                group,
                after: after.into_iter().collect(),
                repeat: 1,
            });
            if serial {
                last = Some(w.tasks.len() - 1);
            }
        }
        if pass == "forward" {
            forward_tasks = w.tasks.len();
        }
    }
    Ok((w, forward_tasks))
}

/// Run one layer's forward and backward pass for one microbatch (`layer_workload`) on
/// `model`, for traces: the workload and what the run measured; an MoE layer's where the model
/// has them.
pub fn layer_run(
    t: &Transformer,
    m: &Machine,
    net: &Network,
    c: &Config,
    model: &mut dyn NetworkModel,
) -> Result<(Workload, podsim_system::workload::WorkloadResult), TrainError> {
    let (w, _) = layer_workload(t, m, c, t.moe.is_some())?;
    let r = podsim_system::workload::run(&w, net, &m.chip, model)?;
    Ok((w, r))
}

/// Measure the exposed communication of one dense layer's forward and backward pass per
/// microbatch on the models `model_for` builds: the layer workload runs on the slice's network
/// with every group at once; its communication on the critical path is what no overlap hid.
/// The forward pass runs alone first; the backward figure is the whole layer's less the
/// forward's.
pub fn flow_layer(
    t: &Transformer,
    m: &Machine,
    net: &Network,
    c: &Config,
    model_for: &mut dyn FnMut() -> Result<Box<dyn NetworkModel>, String>,
) -> Result<(f64, f64), TrainError> {
    let (f, b, _) = flow_kind(t, m, net, c, model_for, false)?;
    Ok((f, b))
}

/// [`flow_layer`] for each kind of layer the model has: its dense layer (where the largest
/// stage has one) and its MoE layer, with the time the MoE layer's all-to-alls took in the
/// whole layer's run (each from its start to its end, contending with the collectives
/// beside it).
pub fn flow_layers(
    t: &Transformer,
    m: &Machine,
    net: &Network,
    c: &Config,
    model_for: &mut dyn FnMut() -> Result<Box<dyn NetworkModel>, String>,
) -> Result<LayerTimes, TrainError> {
    if t.moe.is_none() {
        return Ok(LayerTimes {
            dense: flow_layer(t, m, net, c, model_for)?,
            moe: None,
        });
    }
    let sh = shard(t, c)?;
    let dense = if sh.moe_layers_per_stage < sh.layers_per_stage {
        flow_layer(t, m, net, c, model_for)?
    } else {
        (0.0, 0.0)
    };
    Ok(LayerTimes {
        dense,
        moe: Some(flow_kind(t, m, net, c, model_for, true)?),
    })
}

/// A layer's (forward, backward) exposed communication and its all-to-alls' time on the flow
/// model.
fn flow_kind(
    t: &Transformer,
    m: &Machine,
    net: &Network,
    c: &Config,
    model_for: &mut dyn FnMut() -> Result<Box<dyn NetworkModel>, String>,
    moe: bool,
) -> Result<(f64, f64, f64), TrainError> {
    let (w, split) = layer_workload(t, m, c, moe)?;
    let fwd = Workload {
        tasks: w.tasks[..split].to_vec(),
    };
    let mut run = |wl: &Workload| -> Result<podsim_system::workload::WorkloadResult, TrainError> {
        let mut model = model_for().map_err(TrainError::Flow)?;
        podsim_system::workload::run(wl, net, &m.chip, model.as_mut()).map_err(TrainError::Workload)
    };
    let f = run(&fwd)?.exposed_communication_s;
    let whole = run(&w)?;
    let all = whole.exposed_communication_s;
    let a2a = w
        .tasks
        .iter()
        .zip(&whole.tasks)
        .filter(|(task, _)| {
            matches!(
                task.work,
                Work::Collective {
                    kind: Kind::AllToAll,
                    ..
                }
            )
        })
        .map(|(_, timing)| timing.end_s - timing.start_s)
        .sum();
    Ok((f, (all - f).max(0.0), a2a))
}
