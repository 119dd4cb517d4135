//! The TPU v4 pod's slices: the links they own rebuild exactly their topology, slices never
//! share a chip or a circuit.

use podsim_system::tpu_v4::*;
use podsim_topology::{LinkKind, NodeId, metrics};
use std::collections::{BTreeSet, HashSet};

/// Rebuild a slice's links from the pod's state alone: the electrical mesh inside each of its
/// blocks plus one link per OCS circuit it owns. Returns the set of (lower, higher) node pairs
/// with a count, so parallel links (a 1-block dimension wraps on itself) are kept.
fn links_from_pod(pod: &TpuPod, s: &Slice) -> Vec<(u64, u64)> {
    let side = BLOCK_SIDE;
    let grid: Vec<u32> = s.shape.iter().map(|x| x / side).collect();
    let grid_pos = |b: usize| -> [u32; 3] {
        let i = s
            .blocks
            .iter()
            .position(|&x| x == b)
            .expect("block of the slice") as u32;
        [
            i % grid[0],
            (i / grid[0]) % grid[1],
            i / (grid[0] * grid[1]),
        ]
    };
    let node = |b: usize, local: [u32; 3]| -> u64 {
        let g = grid_pos(b);
        let c: Vec<u64> = (0..3).map(|j| u64::from(g[j] * side + local[j])).collect();
        c[0] + u64::from(s.shape[0]) * (c[1] + u64::from(s.shape[1]) * c[2])
    };
    let mut out = Vec::new();
    for &b in &s.blocks {
        for x in 0..side {
            for y in 0..side {
                for z in 0..side {
                    let here = [x, y, z];
                    for d in 0..3 {
                        if here[d] + 1 < side {
                            let mut there = here;
                            there[d] += 1;
                            let (a, c) = (node(b, here), node(b, there));
                            out.push((a.min(c), a.max(c)));
                        }
                    }
                }
            }
        }
    }
    for (a, c, owner) in pod.circuits() {
        if owner != s.id {
            continue;
        }
        let d = (a.ocs / 16) as usize;
        let index = a.ocs % 16;
        let others: Vec<usize> = (0..3).filter(|&j| j != d).collect();
        let chip = |p: OcsPort| -> u64 {
            let mut local = [0u32; 3];
            local[others[0]] = index % side;
            local[others[1]] = index / side;
            local[d] = if p.port.is_multiple_of(2) {
                side - 1
            } else {
                0
            };
            node((p.port / 2) as usize, local)
        };
        let (u, v) = (chip(a), chip(c));
        out.push((u.min(v), u.max(v)));
    }
    out.sort();
    out
}

fn links_of_topology(s: &Slice) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = s
        .topology
        .links()
        .map(|l| (l.from.0.min(l.to.0), l.from.0.max(l.to.0)))
        .collect();
    v.sort();
    v
}

#[test]
fn the_pod_needs_48_ocses_and_holds_4096_chips() {
    // Section 2.2: 6 faces x 16 links / 2 = 48 OCSes; 64 blocks x 64 chips = 4096;
    // 64 blocks x 2 ports = 128 of the OCS's 136 ports.
    assert_eq!(ocs_needed(BLOCK_SIDE), 48);
    let mut pod = TpuPod::new();
    assert_eq!(pod.chips(), 4096);
    let id = pod.allocate([16, 16, 16], false).unwrap();
    let s = pod.slices().find(|s| s.id == id).unwrap();
    assert_eq!(s.topology.node_count(), 4096);
    let ocses: BTreeSet<u32> = pod.circuits().map(|(a, _, _)| a.ocs).collect();
    assert_eq!(ocses.len(), 48);
    for o in ocses {
        let ports = pod.circuits().filter(|(a, _, _)| a.ocs == o).count() * 2;
        assert_eq!(ports, 128);
        assert!(ports as u32 <= OCS_PORTS);
    }
    // 96 optical links per block, each a circuit: 64 x 96 / 2 = 3072.
    assert_eq!(pod.circuits().count(), 3072);
    assert_eq!(links_from_pod(&pod, s), links_of_topology(s));
}

#[test]
fn circuits_rebuild_exactly_the_slice_topology() {
    for (shape, twisted) in [
        ([4, 4, 4], false),
        ([4, 4, 8], false),
        ([4, 4, 8], true),
        ([4, 8, 8], true),
        ([4, 4, 12], false),
        ([8, 8, 16], true),
    ] {
        let mut pod = TpuPod::new();
        let id = pod.allocate(shape, twisted).unwrap();
        let s = pod.slices().find(|s| s.id == id).unwrap().clone();
        assert_eq!(
            links_from_pod(&pod, &s),
            links_of_topology(&s),
            "{shape:?} twisted={twisted}"
        );
        assert_eq!(s.topology.is_twisted(), twisted);
        // Every block of the slice has all 96 optical ports in use.
        let used: HashSet<OcsPort> = pod.circuits().flat_map(|(a, c, _)| [a, c]).collect();
        assert_eq!(used.len(), 96 * s.blocks.len());
        // Optical links: those leaving a block, as many as the circuits.
        let optical = metrics(&s.topology)
            .links_by_kind
            .iter()
            .find(|k| k.0 == LinkKind::Optical)
            .map_or(0, |k| k.1);
        assert_eq!(optical as usize, pod.circuits().count());
    }
}

#[test]
fn slices_are_air_gapped() {
    let mut pod = TpuPod::new();
    pod.fail_host(0, 3);
    pod.fail_host(5, 15);
    let ids = [
        pod.allocate([4, 4, 8], true).unwrap(),
        pod.allocate([4, 8, 8], false).unwrap(),
        pod.allocate([1, 2, 2], false).unwrap(),
        pod.allocate([8, 8, 8], false).unwrap(),
        pod.allocate([4, 4, 4], false).unwrap(),
    ];
    let slices: Vec<Slice> = pod.slices().cloned().collect();
    assert_eq!(slices.len(), ids.len());
    // No block (so no chip) in two slices, and no failed block used.
    let mut seen = HashSet::new();
    for s in &slices {
        for &b in &s.blocks {
            assert!(seen.insert(b), "block {b} shared");
            assert!(b != 0 && b != 5, "failed block {b} used");
        }
    }
    // Every circuit joins ports of blocks of its own slice, and each port has one circuit.
    for (a, c, owner) in pod.circuits() {
        let s = slices.iter().find(|s| s.id == owner).unwrap();
        for p in [a, c] {
            assert!(s.blocks.contains(&((p.port / 2) as usize)));
            assert_eq!(pod.circuit(p).map(|x| x.1), Some(owner));
        }
    }
    // Each slice still matches its topology with the others present.
    for s in slices.iter().filter(|s| s.shape.iter().all(|x| x % 4 == 0)) {
        assert_eq!(links_from_pod(&pod, s), links_of_topology(s));
    }
    // Releasing frees blocks and circuits for the next slice.
    let before = pod.free_blocks().len();
    pod.release(ids[1]).unwrap();
    assert_eq!(pod.free_blocks().len(), before + 4); // 4x8x8 = 1 x 2 x 2 blocks
    assert!(pod.circuits().all(|(_, _, o)| o != ids[1]));
    assert!(pod.release(ids[1]).is_err());
}

#[test]
fn sub_block_slices_are_meshes() {
    let mut pod = TpuPod::new();
    let id = pod.allocate([1, 2, 2], false).unwrap();
    let s = pod.slices().find(|s| s.id == id).unwrap();
    // 1x2x2 mesh: 4 chips, 4 links, no wraparound, no circuits.
    assert_eq!(
        (s.topology.node_count(), s.topology.links().count()),
        (4, 4)
    );
    assert_eq!(pod.circuits().count(), 0);
    assert_eq!(
        s.topology.neighbor(
            NodeId(0),
            podsim_topology::Port {
                dim: 0,
                dir: podsim_topology::Direction::Minus
            }
        ),
        None
    );
}

#[test]
fn bad_requests_are_refused() {
    let mut pod = TpuPod::new();
    assert!(matches!(
        pod.allocate([8, 4, 4], false),
        Err(SliceError::BadShape { .. })
    )); // x > y
    assert!(matches!(
        pod.allocate([4, 4, 6], false),
        Err(SliceError::BadShape { .. })
    ));
    assert!(matches!(
        pod.allocate([4, 4, 4], true),
        Err(SliceError::BadShape { .. })
    )); // no twist
    assert!(matches!(
        pod.allocate([2, 2, 2], true),
        Err(SliceError::BadShape { .. })
    ));
    assert!(matches!(
        pod.allocate([0, 4, 4], false),
        Err(SliceError::BadShape { .. })
    ));
    // Capacity: 64 blocks; with one host failed only 63 remain for a 4096-chip slice.
    pod.fail_host(7, 0);
    assert_eq!(
        pod.allocate([16, 16, 16], false),
        Err(SliceError::NoCapacity {
            shape: "16x16x16".into(),
            needed: 64,
            free: 63
        })
    );
    assert!(pod.allocate([12, 16, 16], false).is_ok()); // 48 blocks
    assert!(matches!(
        pod.allocate([2, 2, 1], false),
        Err(SliceError::BadShape { .. })
    ));
}

#[test]
fn a_grid_of_tiles_is_never_slower_than_columns_and_equal_on_one_row() {
    use podsim_compute::chips::Tiling;
    let arrays = |tiling| podsim_system::workload::Arrays {
        units: 12,
        shape: (16, 16),
        clock_hz: 1_000_000_000,
        formats: vec!["bf16".into()],
        tiling,
        weight_load: podsim_compute::gemm::WeightLoad::Serial,
        efficiency: 1.0,
    };
    let (cols, grid) = (arrays(Tiling::Columns), arrays(Tiling::Grid));
    for (m, n, k) in [
        (1, 4096, 512),
        (2048, 64, 512),
        (512, 512, 512),
        (7, 33, 65),
    ] {
        let c = cols.gemm_time(m, n, k, "bf16").unwrap();
        let g = grid.gemm_time(m, n, k, "bf16").unwrap();
        // The grid tries every split of the 12 units into rows x columns, the columns alone
        // (1 x 12) among them; one row of the result leaves only that split.
        assert!(g <= c, "{m}x{n}x{k}: grid {g:?} against columns {c:?}");
        if m == 1 {
            assert_eq!(g, c);
        }
    }
    // 2,048 rows and 64 columns over 12 units: columns give each unit 6 of the 64 columns (6
    // of its 16 used) for all 2,048 rows; a grid of 3 x 4 gives 683 rows of 16 columns, so
    // it is faster.
    assert!(
        grid.gemm_time(2048, 64, 512, "bf16").unwrap()
            < cols.gemm_time(2048, 64, 512, "bf16").unwrap()
    );
}

#[test]
fn a_machine_files_efficiencies_slow_its_gemms_and_its_memory() {
    use podsim_system::cluster::{Fraction, MachineChip};
    use podsim_system::workload::ChipSpec;
    use podsim_units::{Bandwidth, Bytes, FlopRate};
    // The a100 preset as a machine file states it, at peak, then at half of the tiling
    // model's rate and a quarter of HBM's bandwidth.
    let peak = ChipSpec::preset("a100").unwrap();
    let chip = |m: Option<f64>, b: Option<f64>| MachineChip {
        name: "a100".into(),
        matrix_flops: peak.matrix,
        memory: Bytes(80 << 30),
        memory_bandwidth: Bandwidth::from_bytes_per_s(2_039_000_000_000).unwrap(),
        matrix_unit: None,
        matrix_efficiency: m.and_then(Fraction::new),
        memory_efficiency: b.and_then(Fraction::new),
        source: String::new(),
    };
    let full = ChipSpec::of_machine(&chip(None, None)).unwrap();
    assert_eq!(full, peak);
    let slow = ChipSpec::of_machine(&chip(Some(0.5), Some(0.25))).unwrap();
    // Twice the time, to the picosecond the model rounds up to.
    let (m, n, k) = (4096, 4608, 12288);
    let t = |c: &ChipSpec| c.arrays.gemm_time(m, n, k, "bf16").unwrap().as_ps();
    assert!(
        t(&slow).abs_diff(2 * t(&full)) <= 1,
        "{} {}",
        t(&slow),
        t(&full)
    );
    // 2039 GB/s x 0.25 = 509.75 GB/s.
    assert_eq!(slow.memory.bytes_per_s(), 509_750_000_000);
    // The peak MFU counts against is the datasheet's, unchanged.
    assert_eq!(slow.matrix, FlopRate(peak.matrix.0));
}
