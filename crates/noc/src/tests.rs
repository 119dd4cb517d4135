use super::*;
use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network, NodeId};
use podsim_units::{Bandwidth, SimDuration};

fn cube(dims: &[u32], wrap: bool) -> Network {
    let link = LinkSpec {
        kind: LinkKind::OnChip,
        bandwidth: Bandwidth::from_gbps(16).unwrap(),
        latency: SimDuration::from_ns(1),
    };
    Network::Cube(KAryNCube::new(dims.to_vec(), vec![wrap; dims.len()], link).unwrap())
}

#[test]
fn smoke() {
    let net = cube(&[8, 8], false);
    for rate in [0.05, 0.2, 0.4, 0.5] {
        let r = run(
            &net,
            NocRouting::DimensionOrder,
            &RouterConfig::default(),
            &RunSpec::new(Pattern::Uniform, rate),
        )
        .unwrap();
        eprintln!("{:?}", NocResult { links: vec![], ..r });
    }
    let _ = NodeId(0);
}
