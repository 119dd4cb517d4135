//! The directed links of a network, numbered, and the paths transfers take over them.

use podsim_topology::{LinkSpec, Network, NodeId};

/// Every directed link of a network (each bidirectional link is two), in compressed rows:
/// the links leaving node `n` are `offsets[n] .. offsets[n + 1]`, in [`Network::links_from`]
/// order.
#[derive(Debug, Clone)]
pub struct LinkTable {
    offsets: Vec<usize>,
    targets: Vec<NodeId>,
    specs: Vec<LinkSpec>,
}

/// A directed link's index in a [`LinkTable`].
pub type LinkId = usize;

impl LinkTable {
    /// Number every directed link of `net`.
    pub fn new(net: &Network) -> Self {
        let n = net.node_count() as usize;
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::new();
        let mut specs = Vec::new();
        offsets.push(0);
        for u in 0..n as u64 {
            for (v, s) in net.links_from(NodeId(u)) {
                targets.push(v);
                specs.push(s);
            }
            offsets.push(targets.len());
        }
        LinkTable {
            offsets,
            targets,
            specs,
        }
    }

    /// Directed links in all.
    pub fn len(&self) -> usize {
        self.targets.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }
    /// The spec of link `l`.
    pub fn spec(&self, l: LinkId) -> LinkSpec {
        self.specs[l]
    }
    /// The node link `l` leads to.
    pub fn target(&self, l: LinkId) -> NodeId {
        self.targets[l]
    }
    /// The `i`-th link leaving `n`.
    pub fn out_link(&self, n: NodeId, i: usize) -> Option<LinkId> {
        let (a, b) = (
            *self.offsets.get(n.0 as usize)?,
            *self.offsets.get(n.0 as usize + 1)?,
        );
        (a + i < b).then_some(a + i)
    }
    /// The first link from `a` to `b`.
    pub fn link_between(&self, a: NodeId, b: NodeId) -> Option<LinkId> {
        let (s, e) = (
            *self.offsets.get(a.0 as usize)?,
            *self.offsets.get(a.0 as usize + 1)?,
        );
        (s..e).find(|&l| self.targets[l] == b)
    }
}

/// The paths a transfer from `src` to `dst` may take, as lists of directed links: the
/// routing layer's paths ([`podsim_routing::paths`]) on this link table.
pub fn paths(net: &Network, links: &LinkTable, src: NodeId, dst: NodeId) -> Vec<Vec<LinkId>> {
    podsim_routing::paths(net, src, dst)
        .iter()
        .filter_map(|p| {
            p.iter()
                .map(|h| match h.port {
                    Some(i) => links.out_link(h.from, i),
                    None => links.link_between(h.from, h.to),
                })
                .collect::<Option<Vec<LinkId>>>()
        })
        .collect()
}
