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
