//! The workload executor against the done-means of the system-floor issue: compute then an
//! all-reduce takes the sum of the two measured alone; overlapped, the larger; two concurrent
//! all-reduces contend; the critical path names the right tasks.

use podsim_collective::{Algorithm, Kind, ModelKind, Setup};
use podsim_net::Packetization;
use podsim_system::tpu_v4::TpuPod;
use podsim_system::workload::{ChipSpec, Group, Task, Unit, Work, Workload, run};
use podsim_system::{measure, new_model};
use podsim_topology::Network;
use podsim_units::{Bytes, Flops};

fn slice_4x4x4() -> Network {
    let mut pod = TpuPod::new();
    let id = pod.allocate([4, 4, 4], false).unwrap();
    Network::Cube(pod.slices().find(|s| s.id == id).unwrap().topology.clone())
}

fn fwd() -> Task {
    Task {
        name: "fwd".into(),
        work: Work::Compute {
            flops: Flops(2_750_000_000_000),
            efficiency: 1.0,
            unit: Unit::Matrix,
        },
        group: Group::All,
        after: vec![],
        repeat: 1,
    }
}

fn grads(name: &str, after: Vec<usize>) -> Task {
    Task {
        name: name.into(),
        work: Work::Collective {
            kind: Kind::AllReduce,
            algorithm: Algorithm::Ring,
            bytes: Bytes(64 << 20),
        },
        group: Group::All,
        after,
        repeat: 1,
    }
}

/// `podsim collective all-reduce --topology tpuv4:slice=4x4x4 --bytes "64 MiB"` (flow model).
fn all_reduce_alone(net: &Network) -> f64 {
    measure(
        net,
        &Setup {
            kind: Kind::AllReduce,
            algorithm: Algorithm::Ring,
            bytes: 64 << 20,
            model: ModelKind::Flow,
            packets: Packetization::NONE,
            chunk: 0,
            ecmp: true,
            memory_limit: u64::MAX,
        },
    )
    .unwrap()
    .time_s
}

/// 2.75 TFLOP at the TPU v4's peak: 8 MXUs x 128 x 128 MACs x 2 FLOPs x 1.05 GHz
/// (tpu-v4-isca2023.txt, Table 4: 275 TFLOP/s).
fn compute_alone() -> f64 {
    2.75e12 / (8.0 * 128.0 * 128.0 * 2.0 * 1.05e9)
}

fn run_on_flow(w: &Workload, net: &Network) -> podsim_system::workload::WorkloadResult {
    let chip = ChipSpec::preset("tpuv4").unwrap();
    let mut m = new_model(net, ModelKind::Flow, Packetization::NONE, true).unwrap();
    run(w, net, &chip, m.as_mut()).unwrap()
}

#[test]
fn compute_then_all_reduce_takes_the_sum() {
    let net = slice_4x4x4();
    let w = Workload {
        tasks: vec![fwd(), grads("grads", vec![0])],
    };
    let r = run_on_flow(&w, &net);
    let want = compute_alone() + all_reduce_alone(&net);
    assert!(
        (r.time_s - want).abs() <= 1e-3 * want,
        "{} vs {want}",
        r.time_s
    );
    assert_eq!(r.critical_path, vec!["fwd", "grads"]);
    assert!((r.compute_busy_s - compute_alone()).abs() < 1e-9);
    // Nothing overlaps: all the communication is exposed.
    assert!((r.exposed_communication_s - r.communication_time_s).abs() < 1e-12);
    assert!((r.tasks[1].start_s - compute_alone()).abs() < 1e-9);
}

#[test]
fn overlapped_compute_and_all_reduce_take_the_larger() {
    let net = slice_4x4x4();
    let w = Workload {
        tasks: vec![fwd(), grads("grads", vec![])],
    };
    let r = run_on_flow(&w, &net);
    let (c, a) = (compute_alone(), all_reduce_alone(&net));
    let want = c.max(a);
    assert!(
        (r.time_s - want).abs() <= 1e-3 * want,
        "{} vs {want}",
        r.time_s
    );
    // The all-reduce (about 2.6 ms) hides under the 10 ms of compute.
    assert!(a < c);
    assert_eq!(r.critical_path, vec!["fwd"]);
    assert!(
        r.exposed_communication_s < 1e-12,
        "{}",
        r.exposed_communication_s
    );
}

#[test]
fn two_concurrent_all_reduces_contend() {
    let net = slice_4x4x4();
    let one = all_reduce_alone(&net);
    let w = Workload {
        tasks: vec![grads("a", vec![]), grads("b", vec![])],
    };
    let r = run_on_flow(&w, &net);
    assert!(r.time_s > one * 1.001, "{} vs one {one}", r.time_s);
    assert!(
        r.time_s <= 2.0 * one * 1.001,
        "{} vs two {}",
        r.time_s,
        2.0 * one
    );
}

#[test]
fn repeated_tasks_run_back_to_back_and_dependents_wait_for_the_last() {
    let net = slice_4x4x4();
    let mut f = fwd();
    f.repeat = 3;
    let w = Workload {
        tasks: vec![f, grads("grads", vec![0])],
    };
    let r = run_on_flow(&w, &net);
    let want = 3.0 * compute_alone() + all_reduce_alone(&net);
    assert!(
        (r.time_s - want).abs() <= 1e-3 * want,
        "{} vs {want}",
        r.time_s
    );
    assert!((r.compute_busy_s - 3.0 * compute_alone()).abs() < 1e-9);
}

fn dojo(spec: podsim_topology::DojoSpec) -> Network {
    Network::Dojo(podsim_topology::Dojo::new(spec).unwrap())
}

fn run_on(net: &Network, tasks: Vec<Task>) -> Result<f64, String> {
    let chip = ChipSpec::preset("dojo-node").unwrap();
    let mut model = new_model(net, ModelKind::Flow, Packetization::NONE, false).unwrap();
    run(&Workload { tasks }, net, &chip, model.as_mut())
        .map(|r| r.time_s)
        .map_err(|e| e.to_string())
}

fn task(name: &str, work: Work, group: Group) -> Task {
    Task {
        name: name.into(),
        work,
        group,
        after: vec![],
        repeat: 1,
    }
}

/// DMA from the nearest DIP: node (1, 10) of a tile with its DIPs is one hop from DIP 0's edge
/// router (0, 10). By hand: the DIP's edge link carries 900 GB/s / 20 routers = 45 GB/s and
/// binds (the DIP injects up to 800 GB/s from HBM, the node takes 128 GB/s), so 64 KiB take
/// 65,536 / 45e9 = 1,456.36 ns plus 100 ns (the edge link) + 0.5 ns (one mesh hop).
#[test]
fn dma_streams_from_the_nearest_dip() {
    let net = dojo(podsim_topology::DojoSpec::system(1, 1));
    let node = 10 * 90 + 1;
    let t = run_on(
        &net,
        vec![task(
            "w",
            Work::Dma {
                bytes: Bytes(64 << 10),
            },
            Group::List(vec![node]),
        )],
    )
    .unwrap();
    let want = 65_536.0 / 45e9 + 100.5e-9;
    assert!((t - want).abs() < 1e-12, "{t} vs {want}");
    // A tile without DIPs has nothing to stream from; a DMA larger than a node's SRAM is
    // refused.
    let bare = dojo(podsim_topology::DojoSpec::tile());
    let e = run_on(
        &bare,
        vec![task("w", Work::Dma { bytes: Bytes(64) }, Group::All)],
    )
    .unwrap_err();
    assert!(e.contains("has none"), "{e}");
    let e = run_on(
        &net,
        vec![task(
            "w",
            Work::Dma {
                bytes: Bytes(2 << 20),
            },
            Group::All,
        )],
    )
    .unwrap_err();
    assert!(e.contains("SRAM"), "{e}");
}

/// Barriers on two neighbouring nodes of a D1 die, by hand (crates/system/src/dojo_barrier.rs:
/// 0.5 ns per router, 0.5 ns per on-die link; a software round adds 10 ns). Hardware: the root
/// is (0, 0); ARM: the leaf's router 0.5, the link 0.5, the root's router 0.5; GRANT: the link
/// 0.5 and the leaf's router 0.5: 2.5 ns. Software: one dissemination round, 0.5 + 10 =
/// 10.5 ns. A fifth hardware tree on the same nodes is refused.
#[test]
fn barrier_trees_in_a_workload() {
    let net = dojo(podsim_topology::DojoSpec::die());
    let pair = Group::List(vec![0, 1]);
    let hw = |name: &str| {
        task(
            name,
            Work::Barrier {
                hardware: true,
                fan_in: 4,
            },
            pair.clone(),
        )
    };
    let t = run_on(&net, vec![hw("b")]).unwrap();
    assert!((t - 2.5e-9).abs() < 1e-15, "{t}");
    let sw = task(
        "s",
        Work::Barrier {
            hardware: false,
            fan_in: 4,
        },
        pair.clone(),
    );
    let t = run_on(&net, vec![sw]).unwrap();
    assert!((t - 10.5e-9).abs() < 1e-15, "{t}");
    let four: Vec<Task> = (0..4).map(|i| hw(&format!("b{i}"))).collect();
    assert!(run_on(&net, four).is_ok());
    let five: Vec<Task> = (0..5).map(|i| hw(&format!("b{i}"))).collect();
    let e = run_on(&net, five).unwrap_err();
    assert!(e.contains("fifth barrier tree"), "{e}");
    let e = run_on(&slice_4x4x4(), vec![hw("b")]).unwrap_err();
    assert!(e.contains("not a DOJO plane"), "{e}");
}
