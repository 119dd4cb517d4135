//! Energy on the machine floor: the component model is [`podsim_energy`] (re-exported here
//! whole, so `podsim_system::energy::ChipPower` and the rest keep their paths); what needs a
//! workload's run, the power over time, is here.

pub use podsim_energy::*;

/// A run's power over time, machine-wide, watts by component: each sample holds from its time
/// to the next one's. Compute and memory follow the busy intervals (each interval's energy
/// spread evenly over it: the matrix units draw their streaming power while busy); the network is the run's link energy spread evenly over the run
/// (the flow model reports what each link carried, not when); idle is constant.
pub fn power_timeline(
    w: &crate::workload::Workload,
    r: &crate::workload::WorkloadResult,
    chip: &crate::workload::ChipSpec,
    power: &ChipPower,
) -> Vec<(podsim_units::SimTime, Breakdown)> {
    use crate::workload::{Resource, Unit, Work};
    let pj = 1e-12;
    let idle = power.idle_w * r.activity.chips as f64;
    let network = if r.time_s > 0.0 {
        r.activity.link_bytes * power.link_pj_per_byte * pj / r.time_s
    } else {
        0.0
    };
    // Each interval's power, +P at its start and -P at its end: (time, compute, memory).
    let mut steps: Vec<(u64, f64, f64)> = Vec::new();
    for i in &r.intervals {
        let dur = (i.end - i.start).as_ps() as f64 / 1e12;
        if dur <= 0.0 {
            continue;
        }
        let (c, m) = match (&w.tasks[i.task].work, i.resource) {
            (
                Work::Compute {
                    unit: Unit::Matrix, ..
                }
                | Work::Gemm { .. },
                Resource::Matrix,
            ) => (power.matrix_busy_w * dur, 0.0),
            (Work::Memory { bytes, working_set }, Resource::Memory) => {
                let onchip =
                    matches!((working_set, chip.cmem), (Some(ws), Some(c)) if ws.0 <= c.bytes);
                let per_byte = if onchip {
                    power.onchip_pj_per_byte
                } else {
                    power.hbm_pj_per_byte
                };
                (0.0, bytes.0 as f64 * per_byte * pj)
            }
            _ => continue,
        };
        steps.push((i.start.as_ps(), c / dur, m / dur));
        steps.push((i.end.as_ps(), -c / dur, -m / dur));
    }
    steps.sort_by_key(|s| s.0);
    let mut out = vec![(
        podsim_units::SimTime::ZERO,
        Breakdown {
            network,
            idle,
            ..Default::default()
        },
    )];
    let (mut c, mut m) = (0.0f64, 0.0f64);
    let mut k = 0;
    while k < steps.len() {
        let at = steps[k].0;
        while k < steps.len() && steps[k].0 == at {
            c += steps[k].1;
            m += steps[k].2;
            k += 1;
        }
        // Sums of exact opposites can leave a rounding residue (a microwatt is far below
        // anything drawn).
        let clean = |x: f64| if x < 1e-6 { 0.0 } else { x };
        let b = Breakdown {
            compute: clean(c),
            memory: clean(m),
            network,
            idle,
        };
        let t = podsim_units::SimTime::from_ps(at);
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 = b,
            _ => out.push((t, b)),
        }
    }
    // After the run: nothing drawn.
    let end = podsim_units::SimTime::from_ps((r.time_s * 1e12).round() as u64);
    match out.last_mut() {
        Some(last) if last.0 >= end => last.1 = Breakdown::default(),
        _ => out.push((end, Breakdown::default())),
    }
    out
}

/// A collective's energy on `chips` chips of `power`: every chip's idle power for the
/// collective's time and the energy per byte per link crossing of what the flow model's links
/// carried; performance per watt is the algorithm bandwidth (`bytes` per rank over the time)
/// per watt. An energy the chip's figures cannot stand for is an error
/// ([`ChipPower::check`]).
pub fn collective(
    power: &ChipPower,
    chips: u64,
    bytes: u64,
    m: &podsim_collective::Measurement,
) -> Result<EnergyOutput, String> {
    let activity = Activity {
        chips,
        seconds: m.time_s,
        link_bytes: m.link_loads.iter().map(|l| l.wire_bytes).sum(),
        ..Default::default()
    };
    let algbw = if m.time_s > 0.0 {
        bytes as f64 / m.time_s
    } else {
        0.0
    };
    EnergyOutput::new(
        power,
        &activity,
        Some((algbw, "B/s of algorithm bandwidth per W")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4() -> ChipPower {
        ChipPower::preset("tpuv4").expect("a preset")
    }

    #[test]
    fn the_power_timeline_integrates_to_the_runs_energy() {
        use crate::workload::{ChipSpec, Group, Task, Work, Workload, run};
        use podsim_units::{Bytes, Flops};
        // A 4x4x4 TPU v4 torus: chip 0 runs a matrix task and a memory task at
        // once, then an all-reduce over every chip. The timeline's energy (each sample's power
        // times the time to the next) is the run's energy: compute and memory from the
        // intervals, network and idle at their mean.
        let link = crate::tpu_v4::ici_link(podsim_topology::LinkKind::Electrical);
        let net = podsim_topology::Network::Cube(
            podsim_topology::KAryNCube::new(vec![4, 4, 4], vec![true; 3], link).unwrap(),
        );
        let chip = ChipSpec::preset("tpuv4").unwrap();
        let task = |name: &str, work: Work, after: Vec<usize>, group: Group| Task {
            name: name.into(),
            work,
            group,
            after,
            repeat: 1,
        };
        let w = Workload {
            tasks: vec![
                task(
                    "gemm",
                    Work::Compute {
                        flops: Flops(275_000_000_000),
                        efficiency: 0.5,
                        unit: crate::workload::Unit::Matrix,
                    },
                    vec![],
                    Group::List(vec![0]),
                ),
                task(
                    "stream",
                    Work::Memory {
                        bytes: Bytes(1_200_000_000),
                        working_set: None,
                    },
                    vec![],
                    Group::List(vec![0]),
                ),
                task(
                    "sum",
                    Work::Collective {
                        kind: podsim_collective::Kind::AllReduce,
                        algorithm: podsim_collective::Algorithm::DimensionWise,
                        bytes: Bytes(64 << 20),
                    },
                    vec![0, 1],
                    Group::All,
                ),
            ],
        };
        let mut model = crate::machine::flow_model(&net).unwrap();
        let r = run(&w, &net, &chip, model.as_mut()).unwrap();
        let p = v4();
        let line = power_timeline(&w, &r, &chip, &p);
        let mut got = Breakdown::default();
        for pair in line.windows(2) {
            let dt = (pair[1].0 - pair[0].0).as_ps() as f64 / 1e12;
            let b = pair[0].1;
            got.compute += b.compute * dt;
            got.memory += b.memory * dt;
            got.network += b.network * dt;
            got.idle += b.idle * dt;
        }
        let want = p.energy(&r.activity).energy_breakdown_j;
        for ((name, g), (_, e)) in got.parts().iter().zip(want.parts()) {
            assert!((g - e).abs() <= 1e-6 * e.max(1e-9), "{name}: {g} vs {e}");
        }
        // By hand: the GEMM's 275 GFLOP at half of TPU v4's 275.2512 TFLOP/s streams the matrix
        // units for 275e9 / 137.6256e12 = 1.998174 ms (to the picosecond, rounded up), at their
        // streaming power; the stream's 1.2 GB at 31.2 pJ is 0.0374 J.
        let busy = (275e9_f64 / (0.5 * 275.2512e12) * 1e12).ceil() / 1e12;
        assert!((want.compute - busy * TPUV4_MATRIX_BUSY_W).abs() < 1e-12);
        assert!((want.memory - 1.2e9 * HBM2_PJ_PER_BYTE * 1e-12).abs() < 1e-9);
    }
}
