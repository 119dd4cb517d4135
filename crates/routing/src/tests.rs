use super::*;
use podsim_topology::{LinkKind, LinkSpec};
use podsim_units::{Bandwidth, SimDuration};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

fn cube(dims: &[u32], wrap: &[bool]) -> KAryNCube {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(1).unwrap(),
        latency: SimDuration::ZERO,
    };
    KAryNCube::new(dims.to_vec(), wrap.to_vec(), link).unwrap()
}

fn check_all_routes(t: &KAryNCube, r: &Routing) -> Result<(), TestCaseError> {
    let n = t.node_count();
    for s in 0..n {
        for d in 0..n {
            let (src, dst) = (NodeId(s), NodeId(d));
            let hops = r.route(t, src, dst);
            // Minimal: as long as the hop distance.
            prop_assert_eq!(hops.len() as u64, t.distance(src, dst));
            // Ends at the destination, each hop starting where the last ended.
            let mut at = src;
            let mut seen = HashSet::from([src]);
            for h in &hops {
                prop_assert_eq!(h.from, at);
                prop_assert_eq!(t.neighbor(h.from, h.port), Some(h.to));
                prop_assert!(seen.insert(h.to), "loop at {:?}", h.to);
                at = h.to;
            }
            prop_assert_eq!(at, dst);
        }
    }
    Ok(())
}

/// Dimension-order routing on `t` in a dimension order shuffled by `seed`, ties to `Minus`
/// where `minus`.
fn random_order(t: &KAryNCube, seed: u64, minus: bool) -> Routing {
    let mut order: Vec<usize> = (0..t.dims().len()).collect();
    let mut s = seed;
    for i in (1..order.len()).rev() {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        order.swap(i, (s >> 33) as usize % (i + 1));
    }
    Routing::DimensionOrder {
        order: DimensionOrder::new(order, t.dims().len()).unwrap(),
        tie: if minus {
            TieBreak::Minus
        } else {
            TieBreak::Plus
        },
    }
}

fn arb_cube() -> impl Strategy<Value = KAryNCube> {
    prop::collection::vec((1u32..7, any::<bool>()), 1..4).prop_map(|v| {
        let (dims, wrap): (Vec<u32>, Vec<bool>) = v.into_iter().unzip();
        cube(&dims, &wrap)
    })
}

proptest! {
    #[test]
    fn routes_are_minimal_loop_free_and_arrive(t in arb_cube(), seed in any::<u64>(), minus in any::<bool>()) {
        check_all_routes(&t, &random_order(&t, seed, minus))?;
    }
}

#[test]
fn ties_on_even_rings_follow_the_tie_break() {
    let t = cube(&[8], &[true]);
    let plus = Routing::dimension_order(1);
    let hops = plus.route(&t, NodeId(0), NodeId(4));
    assert!(hops.iter().all(|h| h.port.dir == Direction::Plus));
    let minus = Routing::DimensionOrder {
        order: DimensionOrder::ascending(1),
        tie: TieBreak::Minus,
    };
    let hops = minus.route(&t, NodeId(0), NodeId(4));
    // 0 -> 7 (wrap, class 1) -> 6 -> 5 -> 4, all class 1 after the dateline.
    let path: Vec<(u64, u8)> = hops.iter().map(|h| (h.to.0, h.vc.0)).collect();
    assert_eq!(path, vec![(7, 1), (6, 1), (5, 1), (4, 1)]);
}

#[test]
fn dimension_order_is_respected() {
    // 4x4 mesh, Y first: from (0,0) to (2,3) goes up three hops, then right two.
    let t = cube(&[4, 4], &[false, false]);
    let r = Routing::DimensionOrder {
        order: DimensionOrder::new(vec![1, 0], 2).unwrap(),
        tie: TieBreak::Plus,
    };
    let dims: Vec<usize> = r
        .route(&t, NodeId(0), t.node_at(&[2, 3]).unwrap())
        .iter()
        .map(|h| h.port.dim)
        .collect();
    assert_eq!(dims, vec![1, 1, 1, 0, 0]);
    assert!(DimensionOrder::new(vec![0, 0], 2).is_err());
    assert!(DimensionOrder::new(vec![0, 2], 2).is_err());
    assert!(DimensionOrder::new(vec![0], 2).is_err());
}

/// Whether the channel dependency graph of all routes has a cycle. A channel is
/// (node, port, class); consecutive hops of a route make an edge.
type Channel = (u64, usize, bool, u8);
type Dependencies = HashMap<Channel, HashSet<Channel>>;

fn dependency_cycle(t: &KAryNCube, r: &Routing, use_classes: bool) -> bool {
    let key = |h: &Hop| -> Channel {
        (
            h.from.0,
            h.port.dim,
            h.port.dir == Direction::Plus,
            if use_classes { h.vc.0 } else { 0 },
        )
    };
    let mut edges: Dependencies = HashMap::new();
    let n = t.node_count();
    for s in 0..n {
        for d in 0..n {
            let hops = r.route(t, NodeId(s), NodeId(d));
            for w in hops.windows(2) {
                edges.entry(key(&w[0])).or_default().insert(key(&w[1]));
            }
        }
    }
    // Depth-first search for a back edge.
    let mut state: HashMap<Channel, u8> = HashMap::new(); // 1 = on stack, 2 = done
    fn visit(c: Channel, e: &Dependencies, st: &mut HashMap<Channel, u8>) -> bool {
        match st.get(&c) {
            Some(1) => return true,
            Some(2) => return false,
            _ => {}
        }
        st.insert(c, 1);
        if let Some(next) = e.get(&c) {
            for &x in next {
                if visit(x, e, st) {
                    return true;
                }
            }
        }
        st.insert(c, 2);
        false
    }
    let starts: Vec<Channel> = edges.keys().copied().collect();
    starts.into_iter().any(|c| visit(c, &edges, &mut state))
}

#[test]
fn dateline_classes_make_tori_deadlock_free() {
    for dims in [
        vec![3],
        vec![4],
        vec![5],
        vec![8],
        vec![3, 3],
        vec![4, 4],
        vec![4, 5],
        vec![3, 4, 2],
        vec![4, 4, 4],
    ] {
        let n = dims.len();
        let t = cube(&dims, &vec![true; n]);
        for tie in [TieBreak::Plus, TieBreak::Minus] {
            let r = Routing::DimensionOrder {
                order: DimensionOrder::ascending(n),
                tie,
            };
            assert!(
                !dependency_cycle(&t, &r, true),
                "{} has a dependency cycle",
                t.shorthand()
            );
        }
        // Without the classes, every ring of 4 or more closes a cycle of waits.
        if dims.iter().any(|&k| k >= 4) {
            assert!(
                dependency_cycle(&t, &Routing::dimension_order(n), false),
                "{}",
                t.shorthand()
            );
        }
    }
    // Meshes need no classes at all.
    let mesh = cube(&[4, 4], &[false, false]);
    assert!(!dependency_cycle(
        &mesh,
        &Routing::dimension_order(2),
        false
    ));
}

fn twisted(dims: &[u32]) -> KAryNCube {
    cube(dims, &vec![true; dims.len()])
        .with_twist(KAryNCube::named_twist(dims).unwrap())
        .unwrap()
}

proptest! {
    #[test]
    fn minimal_routing_is_dimension_order_on_untwisted_cubes(t in arb_cube()) {
        // Second method: the lattice walk must agree hop for hop (and class for class) with
        // plain dimension order, ascending, ties to Plus.
        let n = t.node_count();
        for s in 0..n {
            for d in 0..n {
                let a = Routing::Minimal.route(&t, NodeId(s), NodeId(d));
                let b = Routing::dimension_order(t.dims().len()).route(&t, NodeId(s), NodeId(d));
                prop_assert_eq!(a, b);
            }
        }
    }
}

#[test]
fn minimal_routing_on_twisted_tori_is_minimal_and_deadlock_free() {
    for dims in [
        vec![8u32, 4],
        vec![16, 8],
        vec![4, 4, 8],
        vec![4, 8, 8],
        vec![2, 2, 4],
    ] {
        let t = twisted(&dims);
        check_all_routes(&t, &Routing::Minimal).unwrap();
        assert!(
            !dependency_cycle(&t, &Routing::Minimal, true),
            "{}",
            t.shorthand()
        );
        assert!(
            dependency_cycle(&t, &Routing::Minimal, false),
            "{}",
            t.shorthand()
        );
    }
}

#[test]
fn tofu_virtual_routes_walk_physical_links() {
    use podsim_topology::{Tofu, TofuGeneration};
    let t = Tofu::new(
        TofuGeneration::TofuD,
        [2, 2, 3],
        [true, false, true],
        [2, 3, 2],
        SimDuration::ZERO,
        "t",
    )
    .unwrap();
    let n = t.cube().node_count();
    let v = t.virtual_torus().unwrap();
    for s in 0..n {
        for d in 0..n {
            let path = tofu_virtual_route(&t, NodeId(s), NodeId(d)).unwrap();
            let mut at = NodeId(s);
            for &(p, _) in &path {
                assert_eq!(t.cube().distance(at, p), 1);
                at = p;
            }
            assert_eq!(at, NodeId(d));
            // As long as the virtual distance: minimal on the virtual torus.
            let (vs, vd) = (
                t.virtual_of(NodeId(s)).unwrap(),
                t.virtual_of(NodeId(d)).unwrap(),
            );
            assert_eq!(path.len() as u64, v.distance(vs, vd));
        }
    }
}

proptest! {
    #[test]
    fn routes_avoid_faults_and_stay_loop_free(dims in prop::collection::vec(2u32..6, 1..4), wrap in any::<bool>(), cuts in prop::collection::vec((any::<u64>(), any::<u8>()), 0..12), pair in (any::<u64>(), any::<u64>())) {
        use podsim_topology::Network;
        let n = dims.len();
        let net = Network::Cube(cube(&dims, &vec![wrap; n]));
        let count = net.node_count();
        let mut faults = Faults::new();
        for (node, port) in cuts {
            let a = NodeId(node % count);
            let nb = net.neighbors(a);
            if !nb.is_empty() {
                faults.fail_link(a, nb[port as usize % nb.len()]);
            }
        }
        let (s, d) = (NodeId(pair.0 % count), NodeId(pair.1 % count));
        match route_around(&net, &faults, s, d) {
            Ok(path) => {
                let mut at = s;
                let mut seen = HashSet::from([s]);
                for &v in &path {
                    prop_assert!(net.neighbors(at).contains(&v));
                    prop_assert!(faults.hop_ok(at, v));
                    prop_assert!(seen.insert(v));
                    at = v;
                }
                prop_assert_eq!(at, d);
                prop_assert!(path.len() as u64 >= net.cube().unwrap().distance(s, d));
                if faults.is_empty() {
                    prop_assert_eq!(path.len() as u64, net.cube().unwrap().distance(s, d));
                }
            }
            Err(RouteError::Unreachable { .. }) => {
                // Check by flooding from the source that the destination really is cut off.
                let mut seen = HashSet::from([s]);
                let mut stack = vec![s];
                while let Some(u) = stack.pop() {
                    for v in net.neighbors(u) {
                        if faults.hop_ok(u, v) && seen.insert(v) {
                            stack.push(v);
                        }
                    }
                }
                prop_assert!(!seen.contains(&d));
            }
            Err(e) => prop_assert!(false, "{}", e),
        }
    }
}

#[test]
fn isolated_and_failed_nodes_are_reported() {
    use podsim_topology::Network;
    let net = Network::Cube(cube(&[4, 4], &[true, true]));
    let mut faults = Faults::new();
    // Node 5's four links fail: nothing reaches it.
    for v in net.neighbors(NodeId(5)) {
        faults.fail_link(NodeId(5), v);
    }
    assert_eq!(
        route_around(&net, &faults, NodeId(0), NodeId(5)),
        Err(RouteError::Unreachable {
            src: NodeId(0),
            dst: NodeId(5)
        })
    );
    // On a 4x4 mesh, 0 -> 2 goes 0-1-2; with node 1 failed it detours 0-4-5-6-2.
    let mesh = Network::Cube(cube(&[4, 4], &[false, false]));
    let mut f2 = Faults::new();
    f2.fail_node(NodeId(1));
    let p = route_around(&mesh, &f2, NodeId(0), NodeId(2)).unwrap();
    assert_eq!(p, vec![NodeId(4), NodeId(5), NodeId(6), NodeId(2)]);
    assert_eq!(
        route_around(&mesh, &f2, NodeId(1), NodeId(2)),
        Err(RouteError::FailedEndpoint(NodeId(1)))
    );
}

#[test]
fn dojo_routes() {
    use podsim_topology::{Dojo, DojoNode, DojoSpec};
    let d = Dojo::new(DojoSpec::system(1, 2)).unwrap();
    // A 10-hop route keeps 10 mesh links occupied (seed, "Communication Mechanisms").
    let (a, b) = (d.router(3, 7), d.router(9, 11));
    let p = dojo_route(&d, &Faults::new(), a, b, Shortcut::Never).unwrap();
    assert_eq!((p.len(), mesh_links(&d, a, &p)), (10, 10));
    // Row first: the first six hops stay on row 7.
    assert!(p[..6].iter().all(|&n| d.node(n)
        == Some(DojoNode::Router {
            x: (n.0 % 180) as u32,
            y: 7
        })));
    // Across the plane, west edge to east edge on row 50: 179 mesh hops directly; through the
    // DIPs of that die row (both attach on row 50) only the links into and out of the DIPs.
    let (w, e) = (d.router(0, 50), d.router(179, 50));
    let direct = dojo_route(&d, &Faults::new(), w, e, Shortcut::Never).unwrap();
    assert_eq!(mesh_links(&d, w, &direct), 179);
    let short = dojo_route(&d, &Faults::new(), w, e, Shortcut::Beyond(20)).unwrap();
    assert_eq!(mesh_links(&d, w, &short), 0);
    assert_eq!(short.len(), 4); // DIP, switch, DIP, router
    // A failed link on the row makes the table turn the packet around it.
    let mut f = Faults::new();
    f.fail_link(d.router(5, 7), d.router(6, 7));
    let p = dojo_route(&d, &f, a, b, Shortcut::Never).unwrap();
    assert_eq!(p.len(), 10); // still minimal: turn early, go round
    let mut at = a;
    for &n in &p {
        assert!(f.hop_ok(at, n));
        at = n;
    }
    assert_eq!(at, b);
}

/// Interface processors, hosts and the switch reach the mesh through their own links: a host
/// to its own DIP directly (PCIe), to another host's DIP through its first DIP and the mesh;
/// the switch to a router through the DIP nearest it.
#[test]
fn dojo_paths_beyond_the_mesh() {
    use podsim_topology::{Dojo, DojoNode, DojoSpec};
    let d = Dojo::new(DojoSpec::system(1, 1)).unwrap();
    let (h0, d0, d3) = (
        d.id(DojoNode::Host(0)),
        d.id(DojoNode::Dip(0)),
        d.id(DojoNode::Dip(3)),
    );
    assert_eq!(dojo_path(&d, h0, d3), vec![d3]);
    // DIP 0 sits on the west edge, die row 0 (router 0,10); DIP 5 on the east edge, die row 0
    // (router 89,10): 89 mesh hops between their routers.
    let d5 = d.id(DojoNode::Dip(5));
    let h1 = d.id(DojoNode::Host(1));
    let p = dojo_path(&d, h0, d5);
    assert_eq!(p.first(), Some(&d0));
    assert_eq!(p.last(), Some(&d5));
    assert_eq!(mesh_links(&d, h0, &p), 89);
    assert_eq!(p.len(), 1 + 1 + 89 + 1);
    // Host 1's first DIP is DIP 5: host 0 to host 1 crosses the same mesh and DIP 5.
    let q = dojo_path(&d, h0, h1);
    assert_eq!(q[..q.len() - 1], p[..]);
    // Every hop is a link.
    let mut at = h0;
    for &n in &q {
        assert!(
            d.links_of(at).iter().any(|&(v, _)| v == n),
            "{at:?} -> {n:?}"
        );
        at = n;
    }
    let sw = d.id(DojoNode::Switch);
    assert_eq!(dojo_path(&d, sw, h0), vec![d0, h0]);
    let r = d.router(1, 10);
    assert_eq!(dojo_path(&d, sw, r), vec![d0, d.router(0, 10), r]);
    assert_eq!(dojo_path(&d, r, sw), vec![d.router(0, 10), d0, sw]);
}

/// The hops `Routing::route` takes hop by hop with `Routing::next_hop` (for minimal routing,
/// the displacement found again at every hop; for dimension order, the dimensions scanned
/// again), as it did before the walks.
fn hop_by_hop(r: &Routing, t: &KAryNCube, src: NodeId, dst: NodeId) -> Vec<Hop> {
    let mut hops = Vec::new();
    let mut cur = src;
    let limit: u64 = t.dims().iter().map(|&k| u64::from(k)).sum();
    while let Some(h) = r.next_hop(t, src, cur, dst) {
        hops.push(h);
        cur = h.to;
        if hops.len() as u64 > limit {
            break;
        }
    }
    hops
}

proptest! {
    /// Minimal routing on a cube walks its displacement once: the same hops, ports and
    /// dateline classes as finding the displacement again at every hop, for every pair of
    /// meshes, tori and mixed cubes of 1 to 3 dimensions (rings of 1 to 6, even and odd).
    #[test]
    fn minimal_routes_walk_one_displacement_as_hop_by_hop(t in arb_cube()) {
        let n = t.node_count();
        for s in 0..n {
            for d in 0..n {
                let (src, dst) = (NodeId(s), NodeId(d));
                prop_assert_eq!(
                    Routing::Minimal.route(&t, src, dst),
                    hop_by_hop(&Routing::Minimal, &t, src, dst)
                );
            }
        }
    }
}

#[test]
fn routes_on_larger_tori_walk_as_hop_by_hop() {
    for t in [
        cube(&[8, 8, 16], &[true, true, true]),
        cube(&[7, 4], &[true, false]),
    ] {
        let n = t.node_count();
        for s in (0..n).step_by(7) {
            for d in 0..n {
                let (src, dst) = (NodeId(s), NodeId(d));
                for r in [Routing::Minimal, Routing::dimension_order(t.dims().len())] {
                    assert_eq!(r.route(&t, src, dst), hop_by_hop(&r, &t, src, dst));
                }
            }
        }
    }
}

proptest! {
    /// Dimension-order routing walks each dimension straight: the same hops, ports and
    /// dateline classes as scanning the dimensions again at every hop, for every pair of
    /// random cubes of 1 to 3 dimensions, random dimension orders and both tie rules.
    #[test]
    fn dimension_order_routes_walk_as_hop_by_hop(t in arb_cube(), seed in any::<u64>(), minus in any::<bool>()) {
        let r = random_order(&t, seed, minus);
        let n = t.node_count();
        for s in 0..n {
            for d in 0..n {
                let (src, dst) = (NodeId(s), NodeId(d));
                prop_assert_eq!(r.route(&t, src, dst), hop_by_hop(&r, &t, src, dst));
            }
        }
    }
}
