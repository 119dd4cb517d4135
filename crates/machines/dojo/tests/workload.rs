//! DOJO's workload tasks on the generic executor: DMA from the nearest DIP and barrier trees,
//! by hand (moved from `podsim-system`'s workload tests with the tasks).

use podsim_dojo::workload::{DojoTask, barrier, dma};
use podsim_system::choices::{ModelKind, Packetization};
use podsim_system::new_model;
use podsim_system::tpu_v4::TpuPod;
use podsim_system::workload::{ChipSpec, Group, Task, Work, Workload, run};
use podsim_topology::Network;
use podsim_units::Bytes;

fn slice_4x4x4() -> Network {
    let mut pod = TpuPod::new();
    let id = pod.allocate([4, 4, 4], false).unwrap();
    Network::Cube(pod.slices().find(|s| s.id == id).unwrap().topology.clone())
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
        vec![task("w", dma(Bytes(64 << 10)), Group::List(vec![node]))],
    )
    .unwrap();
    let want = 65_536.0 / 45e9 + 100.5e-9;
    assert!((t - want).abs() < 1e-12, "{t} vs {want}");
    // A tile without DIPs has nothing to stream from; a DMA larger than a node's SRAM is
    // refused.
    let bare = dojo(podsim_topology::DojoSpec::tile());
    let e = run_on(&bare, vec![task("w", dma(Bytes(64)), Group::All)]).unwrap_err();
    assert!(e.contains("has none"), "{e}");
    let e = run_on(&net, vec![task("w", dma(Bytes(2 << 20)), Group::All)]).unwrap_err();
    assert!(e.contains("SRAM"), "{e}");
}

/// Barriers on two neighbouring nodes of a D1 die, by hand (crates/machines/dojo/src/barrier.rs:
/// 0.5 ns per router, 0.5 ns per on-die link; a software round adds 10 ns). Hardware: the root
/// is (0, 0); ARM: the leaf's router 0.5, the link 0.5, the root's router 0.5; GRANT: the link
/// 0.5 and the leaf's router 0.5: 2.5 ns. Software: one dissemination round, 0.5 + 10 =
/// 10.5 ns. A fifth hardware tree on the same nodes is refused.
#[test]
fn barrier_trees_in_a_workload() {
    let net = dojo(podsim_topology::DojoSpec::die());
    let pair = Group::List(vec![0, 1]);
    let hw = |name: &str| task(name, barrier(true, 4), pair.clone());
    let t = run_on(&net, vec![hw("b")]).unwrap();
    assert!((t - 2.5e-9).abs() < 1e-15, "{t}");
    let sw = task("s", barrier(false, 4), pair.clone());
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

/// Tasks compare by value through the trait object: a workload file parsed twice gives equal
/// workloads.
#[test]
fn dojo_tasks_compare_by_value() {
    assert_eq!(dma(Bytes(64)), dma(Bytes(64)));
    assert_ne!(dma(Bytes(64)), dma(Bytes(128)));
    assert_ne!(barrier(true, 4), barrier(false, 4));
    assert_eq!(
        barrier(true, 2),
        DojoTask::Barrier {
            hardware: true,
            fan_in: 2
        }
        .work()
    );
    assert!(dma(Bytes(64)).communicates() && barrier(false, 4).communicates());
}
