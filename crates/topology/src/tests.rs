use super::*;
use crate::metrics::{bfs_distances, exhaustive_bisection, straight_cut_bisection};
use podsim_units::{Bandwidth, SimDuration};
use proptest::prelude::*;

fn spec(gbps: u64) -> LinkSpec {
    LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(gbps).unwrap(),
        latency: SimDuration::from_ns(10),
    }
}

fn cube(dims: &[u32], wrap: &[bool]) -> KAryNCube {
    KAryNCube::new(dims.to_vec(), wrap.to_vec(), spec(50)).unwrap()
}

#[test]
fn torus_4x4x8_by_hand() {
    let m = metrics(&cube(&[4, 4, 8], &[true; 3]));
    // 128 nodes, 3 links per node (one Plus link per dimension) = 384.
    assert_eq!((m.nodes, m.links, m.degree_max), (128, 384, 6));
    // Diameter 2 + 2 + 4 = 8.
    assert_eq!(m.diameter, 8);
    // Ring sums over ordered pairs: k=4: 4 × 4 = 16; k=8: 8 × 16 = 128.
    // Total = 32² × 16 × 2 + 16² × 128 = 65,536 over 128 × 127 ordered pairs.
    assert!((m.average_distance - 65_536.0 / (128.0 * 127.0)).abs() < 1e-12);
    // Cutting the 8-long dimension cuts 2 links on each of 16 rings: 32 links,
    // × 50 GB/s × 2 directions = 3.2 TB/s.
    assert_eq!(m.bisection_links, 32);
    assert_eq!(m.bisection_bandwidth_bytes_per_s, 3_200_000_000_000);
    assert_eq!(m.bisection_method, BisectionMethod::StraightCut);
}

#[test]
fn mesh_8x8_by_hand() {
    let m = metrics(&cube(&[8, 8], &[false; 2]));
    // 2 dimensions × 8 lines × 7 links = 112; corner degree 2, interior 4; diameter 7 + 7.
    assert_eq!(
        (m.nodes, m.links, m.degree_max, m.degree_min, m.diameter),
        (64, 112, 4, 2, 14)
    );
    // Line sum (k³-k)/3 = 168; total 2 × 8² × 168 = 21,504 over 64 × 63 pairs = 16/3.
    assert!((m.average_distance - 16.0 / 3.0).abs() < 1e-12);
    // The middle cut crosses 8 links: 8 × 50 GB/s × 2 = 800 GB/s.
    assert_eq!(
        (m.bisection_links, m.bisection_bandwidth_bytes_per_s),
        (8, 800_000_000_000)
    );
}

#[test]
fn k_computer_physical_network() {
    // tofu-interconnect-d.txt, section II.A: 82,944 nodes, 46.1 TB/s bisection at 5.0 GB/s per
    // link, 1.66 PB/s injection at 20 GB/s (4 TNIs) per node.
    let t = KAryNCube::new(
        vec![24, 18, 16, 2, 3, 2],
        vec![true, false, true, false, true, false],
        spec(5),
    )
    .unwrap()
    .with_interfaces(4)
    .unwrap();
    let m = metrics(&t);
    assert_eq!(m.nodes, 82_944);
    // Cheapest cut: across Y (mesh of 18), one link on each of 82,944/18 = 4,608 lines.
    assert_eq!(m.bisection_links, 4_608);
    assert_eq!(m.bisection_bandwidth_bytes_per_s, 4_608 * 5_000_000_000 * 2);
    assert_eq!(
        m.total_injection_bandwidth_bytes_per_s,
        82_944 * 20_000_000_000
    );
    // Ports: X, Z, B two each; Y two in the interior; A, C one each: 10 (the seed's 10 ports).
    assert_eq!(m.degree_max, 10);
}

#[test]
fn blocks_split_links_by_kind() {
    // TPU v4 4x4x8 slice from two 4x4x4 blocks: each block is a 4x4x4 mesh (3 × 16 × 3 = 144
    // electrical links); the other 384 - 288 = 96 links are optical.
    let optical = LinkSpec {
        kind: LinkKind::Optical,
        ..spec(50)
    };
    let t = cube(&[4, 4, 8], &[true; 3])
        .with_blocks(Blocks {
            shape: vec![4, 4, 4],
            between: optical,
        })
        .unwrap();
    let m = metrics(&t);
    assert_eq!(
        m.links_by_kind,
        vec![(LinkKind::Electrical, 288), (LinkKind::Optical, 96)]
    );
    assert_eq!(
        t.links()
            .filter(|l| l.spec.kind == LinkKind::Optical)
            .count(),
        96
    );
    assert!(
        cube(&[4, 4, 8], &[true; 3])
            .with_blocks(Blocks {
                shape: vec![4, 4, 3],
                between: optical
            })
            .is_err()
    );
}

#[test]
fn bad_shapes_are_rejected() {
    assert!(KAryNCube::new(vec![0, 4], vec![true, true], spec(1)).is_err());
    assert!(KAryNCube::new(vec![], vec![], spec(1)).is_err());
    assert!(KAryNCube::new(vec![4, 4], vec![true], spec(1)).is_err());
    assert!(KAryNCube::new(vec![1 << 20, 1 << 20, 2], vec![true; 3], spec(1)).is_err());
}

#[test]
fn million_node_torus_is_closed_form() {
    let m = metrics(&cube(&[100, 100, 100], &[true; 3]));
    assert_eq!(m.nodes, 1_000_000);
    assert_eq!(m.links, 3_000_000);
    assert_eq!(m.diameter, 150);
    // Cut across one dimension: 2 links on each of 10,000 rings.
    assert_eq!(m.bisection_links, 20_000);
    // Ring of 100: line sum 100 × 2500; total 3 × 10⁸ × 250,000 over 10⁶ × (10⁶ - 1) pairs.
    let want = 3.0 * 1e8 * 250_000.0 / (1e6 * 999_999.0);
    assert!((m.average_distance - want).abs() < 1e-9);
}

/// Every shape with at most 24 nodes and up to three dimensions of size >= 2.
fn small_shapes() -> Vec<(Vec<u32>, Vec<bool>)> {
    let mut out = Vec::new();
    for a in 2..=24u32 {
        for b in 1..=12u32 {
            for c in 1..=6u32 {
                if a * b * c > 24 || (b == 1 && c > 1) {
                    continue;
                }
                let dims: Vec<u32> = [a, b, c].into_iter().filter(|&k| k > 1 || k == a).collect();
                for w in 0..(1u32 << dims.len()) {
                    let wrap = (0..dims.len()).map(|i| w & (1 << i) != 0).collect();
                    out.push((dims.clone(), wrap));
                }
            }
        }
    }
    out
}

#[test]
fn straight_cut_matches_exhaustive_search_on_small_shapes() {
    let mut mismatches = Vec::new();
    for (dims, wrap) in small_shapes() {
        let t = cube(&dims, &wrap);
        let closed = straight_cut_bisection(&t);
        let exact = exhaustive_bisection(&t);
        if closed != exact {
            mismatches.push(format!(
                "{}: closed {:?} exhaustive {:?}",
                t.shorthand(),
                closed,
                exact
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn closed_form_distances_match_breadth_first_search() {
    for (dims, wrap) in small_shapes().into_iter().step_by(3) {
        let t = cube(&dims, &wrap);
        let n = t.node_count();
        let mut sum = 0u64;
        let mut diameter = 0;
        for s in 0..n {
            let d = bfs_distances(&t, NodeId(s));
            for (v, &x) in d.iter().enumerate() {
                assert_eq!(x, t.distance(NodeId(s), NodeId(v as u64)));
            }
            sum += d.iter().sum::<u64>();
            diameter = diameter.max(*d.iter().max().unwrap());
        }
        let m = metrics(&t);
        assert_eq!(m.diameter, diameter, "{}", t.shorthand());
        let avg = sum as f64 / (n * (n - 1)) as f64;
        assert!(
            (m.average_distance - avg).abs() < 1e-12,
            "{}",
            t.shorthand()
        );
        assert_eq!(m.links as usize, t.links().count());
    }
}

fn arb_cube() -> impl Strategy<Value = KAryNCube> {
    prop::collection::vec((1u32..7, any::<bool>()), 1..5).prop_map(|v| {
        let (dims, wrap): (Vec<u32>, Vec<bool>) = v.into_iter().unzip();
        cube(&dims, &wrap)
    })
}

proptest! {
    #[test]
    fn coordinates_round_trip(t in arb_cube(), pick in any::<u64>()) {
        let node = NodeId(pick % t.node_count());
        let c = t.coords(node).unwrap();
        prop_assert_eq!(t.node_at(&c), Some(node));
        for (d, &x) in c.iter().enumerate() {
            prop_assert_eq!(t.coord(node, d), x);
        }
        prop_assert!(t.coords(NodeId(t.node_count())).is_none());
    }

    #[test]
    fn links_are_symmetric_and_degrees_as_expected(t in arb_cube()) {
        let mut port_total = 0u64;
        for n in 0..t.node_count() {
            let node = NodeId(n);
            let ports = t.ports(node);
            port_total += ports.len() as u64;
            // Degree: per dimension, 2 ports inside a line or on any ring (a ring of 2 has two
            // parallel links), 1 at a mesh end, 0 in a line of 1.
            let mut want = 0;
            for (d, &k) in t.dims().iter().enumerate() {
                let c = t.coord(node, d);
                want += match k {
                    1 => 0,
                    _ if t.wrap()[d] => 2,
                    2 => 1,
                    _ => u32::from(c > 0) + u32::from(c + 1 < k),
                };
            }
            prop_assert_eq!(ports.len() as u32, want);
            prop_assert!(want <= t.degree_max() && want >= t.degree_min());
            for p in ports {
                let other = t.neighbor(node, p).unwrap();
                let back = Port { dim: p.dim, dir: match p.dir { Direction::Plus => Direction::Minus, Direction::Minus => Direction::Plus } };
                prop_assert_eq!(t.neighbor(other, back), Some(node));
                prop_assert_eq!(t.link_spec(node, p).map(|s| s.bandwidth), Some(t.link().bandwidth));
            }
        }
        // Each link has two ends.
        prop_assert_eq!(port_total, 2 * metrics(&t).links);
    }
}

fn twisted(dims: &[u32]) -> KAryNCube {
    let t = cube(dims, &vec![true; dims.len()]);
    let s = KAryNCube::named_twist(dims).expect("a twistable shape");
    t.with_twist(s).unwrap()
}

#[test]
fn named_twists() {
    // k x k x 2k: both k-dimensions shift the 2k one by k.
    assert_eq!(
        KAryNCube::named_twist(&[4, 4, 8]),
        Some(vec![vec![0, 0, 4], vec![0, 0, 4], vec![0, 0, 0]])
    );
    // k x 2k x 2k: the k-dimension shifts both 2k ones by k.
    assert_eq!(
        KAryNCube::named_twist(&[4, 8, 8]),
        Some(vec![vec![0, 4, 4], vec![0, 0, 0], vec![0, 0, 0]])
    );
    // 2a x a: the short dimension shifts the long one by a.
    assert_eq!(
        KAryNCube::named_twist(&[16, 8]),
        Some(vec![vec![0, 0], vec![8, 0]])
    );
    assert_eq!(KAryNCube::named_twist(&[4, 4, 4]), None);
    assert_eq!(KAryNCube::named_twist(&[4, 8, 12]), None);
    assert_eq!(KAryNCube::named_twist(&[16]), None);
}

#[test]
fn twists_are_validated() {
    let t = cube(&[4, 4, 8], &[true; 3]);
    assert!(
        t.clone()
            .with_twist(vec![vec![1, 0, 0], vec![0; 3], vec![0; 3]])
            .is_err()
    ); // self
    assert!(
        t.clone()
            .with_twist(vec![vec![0, 0, 8], vec![0; 3], vec![0; 3]])
            .is_err()
    ); // too big
    assert!(
        t.clone()
            .with_twist(vec![vec![0, 0, 4], vec![0; 3], vec![1, 0, 0]])
            .is_err()
    ); // chain
    assert!(t.clone().with_twist(vec![vec![0; 3]; 2]).is_err()); // wrong length
    let mesh = cube(&[4, 8], &[false, true]);
    assert!(mesh.with_twist(vec![vec![0, 4], vec![0, 0]]).is_err()); // not wrapped
}

#[test]
fn twisted_tori_beat_regular_ones() {
    // Camara et al.: the rectangular twisted torus 2a x a has diameter a, the regular one
    // a + a/2. Our k x k x 2k and k x 2k x 2k twists reach 3k/2 against 2k and 5k/2.
    for (dims, want_diameter) in [
        (vec![16u32, 8], 8u64),
        (vec![8, 4], 4),
        (vec![4, 4, 8], 6),
        (vec![4, 8, 8], 6),
        (vec![8, 8, 16], 12),
        (vec![8, 16, 16], 12),
    ] {
        let regular = metrics(&cube(&dims, &vec![true; dims.len()]));
        let tw = metrics(&twisted(&dims));
        assert_eq!(tw.diameter, want_diameter, "{dims:?}");
        assert!(tw.diameter < regular.diameter, "{dims:?}");
        assert!(tw.average_distance < regular.average_distance, "{dims:?}");
        assert!(tw.bisection_links > regular.bisection_links, "{dims:?}");
        assert_eq!(tw.distance_method, DistanceMethod::VertexTransitive);
        assert_eq!((tw.nodes, tw.links), (regular.nodes, regular.links));
    }
}

#[test]
fn twisted_displacements_are_minimal_and_short() {
    for dims in [
        vec![4u32, 4, 8],
        vec![4, 8, 8],
        vec![16, 8],
        vec![6, 3],
        vec![2, 2, 4],
    ] {
        let t = twisted(&dims);
        for src in [0, 1, t.node_count() / 3, t.node_count() - 1] {
            let bfs = bfs_distances(&t, NodeId(src));
            for (v, &want) in bfs.iter().enumerate() {
                let d = t.displacement(NodeId(src), NodeId(v as u64));
                assert_eq!(
                    d.iter().map(|x| x.unsigned_abs()).sum::<u64>(),
                    want,
                    "{dims:?} {src}->{v}"
                );
                // Each dimension is walked at most k steps, so a route crosses each dimension's
                // wrap-around at most once (what the dateline classes need).
                for (k, x) in t.dims().iter().zip(&d) {
                    assert!(x.unsigned_abs() <= u64::from(*k), "{dims:?} {d:?}");
                }
            }
        }
    }
}

#[test]
fn twisted_links_are_symmetric() {
    for dims in [vec![4u32, 4, 8], vec![4, 8, 8], vec![16, 8]] {
        let t = twisted(&dims);
        let mut count = 0;
        for n in 0..t.node_count() {
            for p in t.ports(NodeId(n)) {
                let other = t.neighbor(NodeId(n), p).unwrap();
                let back = Port {
                    dim: p.dim,
                    dir: if p.dir == Direction::Plus {
                        Direction::Minus
                    } else {
                        Direction::Plus
                    },
                };
                assert_eq!(t.neighbor(other, back), Some(NodeId(n)));
                count += 1;
            }
        }
        assert_eq!(count, 2 * t.links().count());
    }
}

#[test]
fn tofu_link_bandwidths_from_lanes_rate_and_coding() {
    // Seed Table I: 8 x 6.25 Gb/s x 8/10 / 8 = 5.0 GB/s; 4 x 25.78125 x 64/66 / 8 = 12.5 GB/s;
    // 2 x 28.05 x 64/66 / 8 = 6.8 GB/s.
    assert_eq!(
        TofuGeneration::Tofu.link_bandwidth().bytes_per_s(),
        5_000_000_000
    );
    assert_eq!(
        TofuGeneration::Tofu2.link_bandwidth().bytes_per_s(),
        12_500_000_000
    );
    assert_eq!(
        TofuGeneration::TofuD.link_bandwidth().bytes_per_s(),
        6_800_000_000
    );
    assert_eq!(
        TofuGeneration::TofuD.link_arithmetic(),
        "2 lanes x 28.05 Gb/s x 64/66 coding / 8 bits = 6.8 GB/s"
    );
}

#[test]
fn tofu_presets() {
    // K computer, seed II.A: 82,944 nodes, 20 GB/s per node (4 TNIs x 5 GB/s), 46.1 TB/s
    // physical bisection (4,608 links x 5 GB/s x 2) and 34.6 TB/s virtual: the 48x36x48 torus
    // cut across a 48-long axis, 2 x 36 x 48 = 3,456 links x 5 GB/s x 2 = 34.56 TB/s.
    let k = Tofu::k_computer();
    let m = metrics(k.cube());
    assert_eq!(m.nodes, 82_944);
    assert_eq!(m.injection_bandwidth_bytes_per_s, 20_000_000_000);
    assert_eq!(m.bisection_bandwidth_bytes_per_s, 46_080_000_000_000);
    assert_eq!(m.degree_max, 10);
    let v = k.virtual_torus().unwrap();
    assert_eq!(v.dims(), &[48, 36, 48]);
    assert_eq!(
        metrics(v).bisection_bandwidth_bytes_per_s,
        34_560_000_000_000
    );
    // Fugaku: 24 x 23 x 24 x 2 x 3 x 2 = 158,976 nodes; TofuD: 6 TNIs x 6.8 = 40.8 GB/s.
    let f = Tofu::fugaku();
    let m = metrics(f.cube());
    assert_eq!(m.nodes, 158_976);
    assert_eq!(m.injection_bandwidth_bytes_per_s, 40_800_000_000);
    assert_eq!(f.virtual_torus().unwrap().dims(), &[48, 46, 72]);
    // FX100 chassis (seed IV.B): 1 x 1 x 3 x 2 x 1 x 2 = 12 nodes, Tofu2 links, 4 TNIs.
    let x = Tofu::fx100_chassis();
    assert_eq!(metrics(x.cube()).nodes, 12);
    assert_eq!(
        metrics(x.cube()).injection_bandwidth_bytes_per_s,
        50_000_000_000
    );
    assert!(x.virtual_torus().is_none());
}

#[test]
fn virtual_torus_hops_are_physical_links() {
    for t in [
        Tofu::new(
            TofuGeneration::TofuD,
            [3, 2, 4],
            [true, false, true],
            [2, 3, 2],
            SimDuration::ZERO,
            "small",
        )
        .unwrap(),
        Tofu::new(
            TofuGeneration::Tofu,
            [1, 5, 2],
            [false, true, true],
            [2, 3, 2],
            SimDuration::ZERO,
            "odd",
        )
        .unwrap(),
        Tofu::k_computer(),
    ] {
        let v = t.virtual_torus().unwrap();
        let n = v.node_count();
        assert_eq!(n, t.cube().node_count());
        let step = if n > 1000 { 97 } else { 1 };
        let mut seen = std::collections::HashSet::new();
        for r in (0..n).step_by(step) {
            let p = t.physical_of(NodeId(r)).unwrap();
            assert_eq!(t.virtual_of(p), Some(NodeId(r)));
            assert!(seen.insert(p));
            for port in v.ports(NodeId(r)) {
                let q = t.physical_of(v.neighbor(NodeId(r), port).unwrap()).unwrap();
                assert_eq!(
                    t.cube().distance(p, q),
                    1,
                    "{}: virtual hop {r} -> not adjacent",
                    t.label()
                );
            }
        }
    }
}

fn fat(k: u32) -> FatTree {
    FatTree::new(k, spec(25)).unwrap()
}

#[test]
fn fat_tree_by_hand() {
    // k = 4: 4³/4 = 16 hosts, 5·16/4 = 20 switches, 3·16 = 48 links. From a host: 1 host at 2
    // hops (same edge), 2·1 = 2 at 4 (same pod), 3 pods × 4 = 12 at 6: (2 + 8 + 72) / 15.
    let f = fat(4);
    let m = Network::FatTree(f.clone()).metrics();
    assert_eq!((m.nodes, m.switches, m.links, m.diameter), (16, 20, 48, 6));
    assert!((m.average_distance - 82.0 / 15.0).abs() < 1e-12);
    assert_eq!(m.bisection_links, 8);
    // 8 links × 25 GB/s × 2 ways.
    assert_eq!(m.bisection_bandwidth_bytes_per_s, 400_000_000_000);
    // Full bisection: all-to-all is limited by injection, not by the bisection.
    assert_eq!(m.all_to_all_limited_by, "injection");
    // Every switch has k ports, every host one; links counted from both ends; every link is
    // listed by both of its ends.
    for n in 0..f.hosts() + f.switches() {
        for v in f.neighbors(NodeId(n)) {
            assert!(f.neighbors(v).contains(&NodeId(n)), "{n} -> {v:?}");
        }
    }
    let total: usize = (0..f.hosts() + f.switches())
        .map(|n| f.neighbors(NodeId(n)).len())
        .sum();
    assert_eq!(total as u64, 2 * f.links());
    for n in f.hosts()..f.hosts() + f.switches() {
        assert_eq!(f.neighbors(NodeId(n)).len(), 4);
    }
    assert!(FatTree::new(3, spec(1)).is_err());
    assert!(FatTree::new(0, spec(1)).is_err());
}

#[test]
fn fat_tree_paths_are_all_the_equal_cost_paths() {
    let f = fat(6);
    let h = f.hosts();
    for a in [0, 1, 5, h / 2, h - 1] {
        for b in 0..h {
            let paths = f.paths(a, b);
            let d = f.host_distance(a, b);
            // ECMP: 1 path under one edge switch, k/2 = 3 inside a pod, (k/2)² = 9 across pods.
            let want = match d {
                0 | 2 => 1,
                4 => 3,
                _ => 9,
            };
            assert_eq!(paths.len(), want, "{a}->{b}");
            let distinct: std::collections::HashSet<_> = paths.iter().collect();
            assert_eq!(distinct.len(), want);
            for p in paths {
                assert_eq!(p.len() as u64, d);
                let mut at = NodeId(a);
                for &n in &p {
                    assert!(f.neighbors(at).contains(&n), "{a}->{b}: {at:?} -/- {n:?}");
                    at = n;
                }
                assert_eq!(at, NodeId(b));
            }
        }
    }
}

/// The fewest links whose removal separates hosts `side` from the other hosts, switches free
/// to fall either way: a unit-capacity max flow (Edmonds-Karp).
fn min_cut(f: &FatTree, side: &[bool]) -> u64 {
    let n = (f.hosts() + f.switches()) as usize;
    let (s, t) = (n, n + 1);
    let mut cap = vec![std::collections::HashMap::<usize, i64>::new(); n + 2];
    for (u, c) in cap.iter_mut().enumerate().take(n) {
        for v in f.neighbors(NodeId(u as u64)) {
            *c.entry(v.0 as usize).or_default() += 1;
        }
    }
    for (h, &in_s) in side.iter().enumerate() {
        let (a, b) = if in_s { (s, h) } else { (h, t) };
        *cap[a].entry(b).or_default() += 1 << 30;
        cap[b].entry(a).or_default();
    }
    let mut flow = 0;
    loop {
        let mut prev = vec![usize::MAX; n + 2];
        prev[s] = s;
        let mut q = std::collections::VecDeque::from([s]);
        while let Some(u) = q.pop_front() {
            let next: Vec<usize> = cap[u]
                .iter()
                .filter(|(_, c)| **c > 0)
                .map(|(v, _)| *v)
                .collect();
            for v in next {
                if prev[v] == usize::MAX {
                    prev[v] = u;
                    q.push_back(v);
                }
            }
        }
        if prev[t] == usize::MAX {
            return flow;
        }
        let mut v = t;
        while v != s {
            let u = prev[v];
            *cap[u].get_mut(&v).unwrap() -= 1;
            *cap[v].entry(u).or_default() += 1;
            v = u;
        }
        flow += 1;
    }
}

#[test]
fn fat_tree_bisection_is_the_minimum_over_all_balanced_host_splits() {
    // k = 4: every split of the 16 hosts into 8 + 8 (host 0 on one side), by max flow.
    let f = fat(4);
    let h = f.hosts() as u32;
    let mut best = u64::MAX;
    for mask in 0u32..(1 << h) {
        if mask.count_ones() != h / 2 || mask & 1 == 0 {
            continue;
        }
        let side: Vec<bool> = (0..h).map(|i| mask & (1 << i) != 0).collect();
        best = best.min(min_cut(&f, &side));
    }
    assert_eq!(best, f.bisection_links());
}

#[test]
fn dojo_die_and_tile_by_hand() {
    // One D1 die: 354 nodes x 1.25 MB = 442.5 MB (seed: "440 MB"); 18 x 20 routers,
    // 20 x 17 + 18 x 19 = 682 on-die links.
    let die = Dojo::new(DojoSpec::die()).unwrap();
    assert_eq!((die.compute_nodes(), die.routers()), (354, 360));
    assert_eq!(die.sram().0, 442_500_000);
    let m = Network::Dojo(die.clone()).metrics();
    assert_eq!((m.nodes, m.links), (354, 682));
    assert_eq!(m.links_by_kind, vec![(LinkKind::OnChip, 682)]);
    assert_eq!(m.diameter, 17 + 19);
    // Tile: 25 dies, 8,850 nodes ("about 9000"), 11.0625 GB ("11 GB"); 90 x 100 routers; die
    // boundaries: 4 columns x 100 + 4 rows x 90 = 760 links off-die.
    let tile = Dojo::new(DojoSpec::tile()).unwrap();
    assert_eq!(
        (tile.compute_nodes(), tile.width(), tile.height()),
        (8_850, 90, 100)
    );
    assert_eq!(tile.sram().0, 11_062_500_000);
    let m = Network::Dojo(tile.clone()).metrics();
    let electrical = m
        .links_by_kind
        .iter()
        .find(|k| k.0 == LinkKind::Electrical)
        .unwrap()
        .1;
    assert_eq!(electrical, 760);
    // Link rates: on-die 256 GB/s bidirectional = 128 each way, 500 ps (1 cycle at 2 GHz); die to
    // die in a tile 2 TB/s over the 20 routers of a die's side = 100 GB/s; across a tile edge
    // 900 GB/s / 20 = 45 GB/s.
    assert_eq!(
        tile.mesh_link(0, 0, 0).bandwidth.bytes_per_s(),
        128_000_000_000
    );
    assert_eq!(tile.mesh_link(0, 0, 0).latency.as_ps(), 500);
    assert_eq!(
        tile.mesh_link(17, 0, 0).bandwidth.bytes_per_s(),
        100_000_000_000
    );
    let system = Dojo::new(DojoSpec::system(1, 2)).unwrap();
    assert_eq!(
        system.mesh_link(89, 0, 0).bandwidth.bytes_per_s(),
        45_000_000_000
    );
    // 1 x 2 tiles: 5 die rows x 2 edges = 10 DIPs, 2 hosts; 10 x 32 GB HBM.
    assert_eq!((system.dips(), system.hosts()), (10, 2));
}

#[test]
fn dojo_links_are_symmetric_and_counted() {
    let d = Dojo::new(DojoSpec::system(1, 1)).unwrap();
    let mut ends = 0u64;
    for n in 0..d.node_count() {
        for (v, spec) in d.links_of(NodeId(n)) {
            assert!(d.links_of(v).contains(&(NodeId(n), spec)), "{n} -> {v:?}");
            ends += 1;
        }
    }
    let counted: u64 = d.link_counts().iter().map(|k| k.1).sum();
    assert_eq!(ends, 2 * counted);
    assert!(
        Dojo::new(DojoSpec {
            die_nodes: 400,
            ..DojoSpec::die()
        })
        .is_err()
    );
}

#[test]
fn large_dojo_metrics_are_closed_form() {
    // 10 x 12 tiles: 1080 x 1000 routers (1.08 million), 3000 dies, 1,062,000 nodes.
    let d = Dojo::new(DojoSpec::system(10, 12)).unwrap();
    let m = Network::Dojo(d).metrics();
    assert_eq!(m.nodes, 1_062_000);
    assert_eq!(m.diameter, 1079 + 999);
}

#[test]
fn tenstorrent_grids_by_the_descriptors() {
    // Grayskull: 13 x 12 tiles, 8 DRAM banks, 12 x 10 = 120 workers; 32 B/cycle at 1.2 GHz.
    let gs = TtGrid::grayskull();
    assert_eq!(
        (gs.cube().node_count(), gs.dram_banks(), gs.workers()),
        (156, 8, 120)
    );
    assert_eq!(gs.cube().link().bandwidth.bytes_per_s(), 38_400_000_000);
    assert_eq!(gs.kind(1, 6), Some(TileKind::Dram(1)));
    // Wormhole: 10 x 12, 12 banks, 8 x 10 = 80 workers; 32 GB/s links at 1 GHz; N150 harvests
    // one row (72 workers), N300 two (64).
    let wh = TtGrid::wormhole(0).unwrap();
    assert_eq!(
        (wh.cube().node_count(), wh.dram_banks(), wh.workers()),
        (120, 12, 80)
    );
    assert_eq!(wh.cube().link().bandwidth.bytes_per_s(), 32_000_000_000);
    assert_eq!(TtGrid::wormhole(1).unwrap().workers(), 72);
    assert_eq!(TtGrid::wormhole(2).unwrap().workers(), 64);
    assert!(TtGrid::wormhole(11).is_err());
    assert!(wh.clone().with_harvested_rows(&[0]).is_err()); // y = 0 is DRAM and Ethernet
    // Every bank endpoint is a DRAM tile of the bank's channel (banks 2c, 2c+1 on channel c).
    for i in 0..12 {
        let (x, y) = wh.bank_tile(i).unwrap();
        assert_eq!(wh.kind(x, y), Some(TileKind::Dram(i as u32 / 2)));
    }
}

#[test]
fn noc_paths_go_their_own_way_round() {
    let wh = TtGrid::wormhole(0).unwrap();
    // NoC0 east then south: (8,3) -> (1,2) wraps east 3 hops (9, 0, 1) then south 11 (4..11, 0..2).
    let p = wh.noc_path(Noc::Noc0, (8, 3), (1, 2));
    assert_eq!(p.len(), 3 + 11);
    assert_eq!(&p[..3], &[(9, 3), (0, 3), (1, 3)]);
    // NoC1 north then west: the same pair is 1 north, then 7 west.
    let q = wh.noc_path(Noc::Noc1, (8, 3), (1, 2));
    assert_eq!(q.len(), 1 + 7);
    assert_eq!(q[0], (8, 2));
    // A reader next to its bank gets the data back in one hop on one of the NoCs (the seed's
    // placement): bank 4's tile (5,1) to the worker at (6,1) is one hop east on NoC0.
    assert_eq!(wh.noc_path(Noc::Noc0, (5, 1), (6, 1)), vec![(6, 1)]);
    // Each NoC path is a walk on the grid's torus.
    for (a, b) in [((0, 0), (9, 11)), ((4, 7), (4, 7)), ((9, 1), (2, 10))] {
        for noc in [Noc::Noc0, Noc::Noc1] {
            let mut at = wh.tile(a.0, a.1);
            for &(x, y) in &wh.noc_path(noc, a, b) {
                let next = wh.tile(x, y);
                assert_eq!(wh.cube().distance(at, next), 1);
                at = next;
            }
            assert_eq!(at, wh.tile(b.0, b.1));
        }
    }
}

#[test]
fn hybrid_ici_ib_by_hand() {
    // 128 chips: 16 groups of a 2x2x2 ICI torus (3 dims x 4 lines x 2 links = 24 each: 384);
    // k = 8 fat tree (8³/4 = 128 hosts): 3 x 128 = 384 IB links. Each chip: 6 ICI + 1 IB.
    let h = Hybrid::new(128).unwrap();
    assert_eq!(h.fat_tree().k(), 8);
    assert_eq!(h.links(), (384, 384));
    let net = Network::Hybrid(h.clone());
    for n in 0..net.node_count() {
        for v in net.neighbors(NodeId(n)) {
            assert!(net.neighbors(v).contains(&NodeId(n)));
        }
    }
    assert_eq!(net.links_from(NodeId(5)).len(), 7);
    // ICI paths stay in the group; chip 0 to 7 is 3 hops (one per dimension).
    assert_eq!(h.ici_path(NodeId(0), NodeId(7)).len(), 3);
    let m = net.metrics();
    // Bisection: the fat tree's 64 IB links (full bisection), x 25 GB/s x 2.
    assert_eq!(
        (
            m.nodes,
            m.bisection_links,
            m.bisection_bandwidth_bytes_per_s
        ),
        (128, 64, 3_200_000_000_000)
    );
    assert!(Hybrid::new(12).is_err());
    assert!(Hybrid::new(8192).is_err());
}

#[test]
fn metrics_beyond_64_bits_are_computed_not_saturated() {
    // Regression: `podsim topo torus:65536x65536` printed u64::MAX as the total injection.
    // 2^32 nodes x 4 interfaces x 50 GB/s = 8.589934592 x 10^20 B/s.
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: podsim_units::Bandwidth::from_gbps(50).unwrap(),
        latency: podsim_units::SimDuration::ZERO,
    };
    let t = KAryNCube::new(vec![65536, 65536], vec![true, true], link).unwrap();
    let m = metrics(&t);
    assert_eq!(
        m.total_injection_bandwidth_bytes_per_s,
        (1u128 << 32) * 4 * 50_000_000_000
    );
    // Cut across one dimension: 2 x 65,536 links, both ways, 50 GB/s.
    assert_eq!(
        m.bisection_bandwidth_bytes_per_s,
        2 * 65_536 * 2 * 50_000_000_000
    );
}

/// On untwisted cubes the displacement is, per dimension, the coordinate difference taken to
/// its nearest representative modulo k on wrapped dimensions (ties to +k/2) and left as it is
/// on open ones: checked for every pair of a mixed 4x5x6 (torus, mesh, torus) and a 1-D ring
/// of 2. Port positions without building the port list equal the list's, on meshes, tori and a
/// twisted torus.
#[test]
fn untwisted_displacements_and_port_positions_by_hand() {
    for (dims, wrap) in [
        (vec![4u32, 5, 6], vec![true, false, true]),
        (vec![2u32], vec![true]),
    ] {
        let c = cube(&dims, &wrap);
        for a in 0..c.node_count() {
            for b in 0..c.node_count() {
                let v = c.displacement(NodeId(a), NodeId(b));
                for (d, &k) in dims.iter().enumerate() {
                    let r = i64::from(c.coord(NodeId(b), d)) - i64::from(c.coord(NodeId(a), d));
                    let k = i64::from(k);
                    let want = if wrap[d] && k >= 2 {
                        // The representative in (-k/2, k/2].
                        let mut y = ((r % k) + k) % k;
                        if 2 * y > k {
                            y -= k;
                        }
                        y
                    } else {
                        r
                    };
                    assert_eq!(v[d], want, "{dims:?} {a}->{b} dim {d}");
                }
            }
        }
    }
    for c in [
        cube(&[4, 3], &[false, false]),
        cube(&[4, 4, 2], &[true, true, true]),
        cube(&[1, 3, 2], &[true, false, true]),
        twisted(&[4, 4, 8]),
    ] {
        for n in 0..c.node_count() {
            let ports = c.ports(NodeId(n));
            for dim in 0..c.dims().len() {
                for dir in [Direction::Plus, Direction::Minus] {
                    let p = Port { dim, dir };
                    assert_eq!(
                        c.port_index(NodeId(n), p),
                        ports.iter().position(|&q| q == p)
                    );
                }
            }
        }
    }
}
