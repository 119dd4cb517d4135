//! DOJO's hardware barrier trees (dojo-microarchitecture.txt, "System Synchronization",
//! Figure 7), against a software dissemination barrier on the same mesh.
//!
//! A barrier tree spans a synchronisation domain: any set of nodes, adjacent or not. A node
//! that reaches the barrier executes BARM; its router sends "ARM" to its parent once its own
//! BARM and the ARMs of all its children are in; the root, armed by all, sends "GRANT" down
//! the tree, and a node's barrier is over when the GRANT reaches it. The routers handle the
//! messages without software. A node may belong to up to four trees at once
//! ([`MAX_TREES_PER_NODE`]); domains may overlap (Figure 7: blue and yellow domains, red nodes
//! in both), each with its own tree.
//!
//! # Shape
//! podsim builds a tree of fan-in `k` over a domain by placement: the root is the member
//! nearest the domain's centre (by mesh distance to the mean coordinates, ties to the lower
//! row, then column); the other members are sorted along the longer side of their bounding
//! box and cut into `k` runs of equal size, and each run becomes a subtree the same way. Each
//! subtree is spatially compact, so a message rarely crosses a die boundary it need not, and
//! the depth is about `log_k` of the domain's size.
//!
//! # Timing
//! A message between two routers takes the sum of the link latencies along its X-then-Y route
//! (one 500 ps cycle per on-die hop, ~100 ns per die crossing: [`podsim_topology::Dojo`]).
//! A router handles an ARM or a GRANT in one 2 GHz cycle ([`ROUTER_NS`], an assumption: the
//! paper says only that the routers handle them). Barrier messages are a few bytes; podsim
//! does not let them contend with data. The software barrier is a dissemination barrier over
//! the domain's members in id order: in round `r` each member increments a semaphore of the
//! member `2^r` ahead with a remote write and waits on its own; each round costs the route's
//! latency plus [`SOFTWARE_ROUND_NS`] of instruction issue, semaphore update and wake-up (an
//! assumption).

use std::collections::BTreeMap;

use podsim_topology::{Dojo, NodeId};

/// Trees a node may belong to at once (the paper: "up to four barrier trees").
pub const MAX_TREES_PER_NODE: usize = 4;
/// A router's handling of one ARM or GRANT, ps: one cycle at 2 GHz (an assumption).
pub const ROUTER_PS: u64 = 500;
/// [`ROUTER_PS`] in ns, for the docs.
pub const ROUTER_NS: f64 = 0.5;
/// Software's cost per dissemination round beyond the route, ns: a remote semaphore increment
/// issued from the scalar stage, its commit, and the waiting thread's wake-up, taken as 20
/// cycles at 2 GHz (an assumption; the paper gives no software figures).
pub const SOFTWARE_ROUND_NS: u64 = 10;

/// A synchronisation domain: a named set of routers, by plane coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Domain {
    /// Its name.
    pub name: String,
    /// Its members, (x, y).
    pub members: Vec<(u32, u32)>,
}

/// Why a barrier cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarrierTreeError {
    /// A node in more than four trees.
    #[error(
        "node ({x}, {y}) would belong to {count} barrier trees ({domains}); a DOJO node takes part in at most four"
    )]
    TooManyTrees {
        /// Column.
        x: u32,
        /// Row.
        y: u32,
        /// Trees asked for.
        count: usize,
        /// The domains.
        domains: String,
    },
    /// A member off the plane.
    #[error("domain `{domain}`: ({x}, {y}) is not on the {w} x {h} mesh")]
    OffMesh {
        /// The domain.
        domain: String,
        /// Column.
        x: u32,
        /// Row.
        y: u32,
        /// Mesh width.
        w: u32,
        /// Mesh height.
        h: u32,
    },
    /// An empty domain, or one listing a node twice.
    #[error("domain `{0}`: {1}")]
    Members(String, String),
    /// A fan-in below two.
    #[error("fan-in {0}: a tree needs a fan-in of at least 2")]
    FanIn(u32),
    /// The trees would not fit under the process's memory limit.
    #[error(
        "{members} domain members need about {estimate} for their trees and routes, more than the memory limit of {limit} (--memory-limit)"
    )]
    Memory {
        /// Members over all domains.
        members: u64,
        /// The estimate.
        estimate: podsim_units::Bytes,
        /// The limit.
        limit: podsim_units::Bytes,
    },
}

/// Memory the trees take per domain member, bytes: the member lists, the tree's order and
/// parents, the copies while the tree grows, and the map of trees per node. Measured (peak
/// RSS less the empty process) at 217 B a member on `dojo:plane` (225,000 routers) and
/// `dojo:system=10x10` (900,000); rounded up.
pub const BYTES_PER_MEMBER: u64 = 256;

/// A barrier tree over one domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// Members in tree order (the root first; a parent before its children).
    pub order: Vec<(u32, u32)>,
    /// Each member's parent in [`Tree::order`] (`None` for the root).
    pub parents: Vec<Option<usize>>,
    /// Fan-in.
    pub fan_in: u32,
}

impl Tree {
    /// The parent of member `i` of [`Tree::order`].
    pub fn parent(&self, i: usize) -> Option<usize> {
        self.parents[i]
    }
    /// Levels below the root.
    pub fn depth(&self) -> u32 {
        let mut depth = vec![0u32; self.order.len()];
        for i in 1..self.order.len() {
            depth[i] = depth[self.parents[i].expect("not the root")] + 1;
        }
        depth.into_iter().max().unwrap_or(0)
    }
}

/// One domain's barrier.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DomainResult {
    /// The domain.
    pub name: String,
    /// Members.
    pub members: usize,
    /// The tree's depth.
    pub depth: u32,
    /// The hardware barrier: all members arrive at 0, the last GRANT lands, s.
    pub latency_s: f64,
    /// The software dissemination barrier on the same members, s.
    pub software_latency_s: f64,
    /// Dissemination rounds.
    pub rounds: u32,
}

/// The latency of the X-then-Y route between two routers, ps.
pub fn route_ps(d: &Dojo, a: (u32, u32), b: (u32, u32)) -> u64 {
    let mut t = 0u64;
    let (mut x, y0) = a;
    while x != b.0 {
        let (lo, next) = if b.0 > x { (x, x + 1) } else { (x - 1, x - 1) };
        t += d.mesh_link(lo, y0, 0).latency.as_ps();
        x = next;
    }
    let mut y = y0;
    while y != b.1 {
        let (lo, next) = if b.1 > y { (y, y + 1) } else { (y - 1, y - 1) };
        t += d.mesh_link(x, lo, 1).latency.as_ps();
        y = next;
    }
    t
}

/// The member nearest the centre of `members` (mesh distance to the mean, ties to the lower
/// row, then column).
fn centre(members: &[(u32, u32)]) -> (u32, u32) {
    let n = members.len().max(1) as f64;
    let cx = members.iter().map(|m| f64::from(m.0)).sum::<f64>() / n;
    let cy = members.iter().map(|m| f64::from(m.1)).sum::<f64>() / n;
    *members
        .iter()
        .min_by(|a, b| {
            let da = (f64::from(a.0) - cx).abs() + (f64::from(a.1) - cy).abs();
            let db = (f64::from(b.0) - cx).abs() + (f64::from(b.1) - cy).abs();
            da.total_cmp(&db).then((a.1, a.0).cmp(&(b.1, b.0)))
        })
        .expect("a domain has members")
}

/// The tree of fan-in `k` over `members` (module docs, "Shape").
pub fn build_tree(members: &[(u32, u32)], k: u32) -> Tree {
    let mut t = Tree {
        order: Vec::with_capacity(members.len()),
        parents: Vec::with_capacity(members.len()),
        fan_in: k,
    };
    grow(&mut t, members.to_vec(), None, k as usize);
    t
}

/// Add `members` under `parent`: their centre becomes the subtree's root, the rest split
/// into `k` spatially compact pieces (sorted along the longer side of their bounding box,
/// cut into runs of equal size), each a subtree of its own.
fn grow(t: &mut Tree, members: Vec<(u32, u32)>, parent: Option<usize>, k: usize) {
    if members.is_empty() {
        return;
    }
    let root = centre(&members);
    let me = t.order.len();
    t.order.push(root);
    t.parents.push(parent);
    let mut rest: Vec<(u32, u32)> = members.into_iter().filter(|&m| m != root).collect();
    if rest.is_empty() {
        return;
    }
    let span = |f: fn(&(u32, u32)) -> u32| {
        let lo = rest.iter().map(f).min().unwrap_or(0);
        let hi = rest.iter().map(f).max().unwrap_or(0);
        hi - lo
    };
    if span(|m| m.0) >= span(|m| m.1) {
        rest.sort_by_key(|&(x, y)| (x, y));
    } else {
        rest.sort_by_key(|&(x, y)| (y, x));
    }
    let pieces = k.min(rest.len());
    let per = rest.len().div_ceil(pieces);
    let chunks: Vec<Vec<(u32, u32)>> = rest.chunks(per).map(<[_]>::to_vec).collect();
    for c in chunks {
        grow(t, c, Some(me), k);
    }
}

/// The hardware barrier over `t`, all members arriving at 0: ps until the last GRANT lands.
pub fn tree_ps(d: &Dojo, t: &Tree) -> u64 {
    let n = t.order.len();
    // ARM: children have higher indices than their parent, so go from the back.
    let mut armed = vec![0u64; n];
    for i in (0..n).rev() {
        armed[i] += ROUTER_PS;
        if let Some(p) = t.parent(i) {
            let at = armed[i] + route_ps(d, t.order[i], t.order[p]);
            armed[p] = armed[p].max(at);
        }
    }
    // GRANT from the root, once armed.
    let mut granted = vec![0u64; n];
    granted[0] = armed[0];
    let mut last = granted[0];
    for i in 1..n {
        let p = t.parent(i).expect("not the root");
        granted[i] = granted[p] + route_ps(d, t.order[p], t.order[i]) + ROUTER_PS;
        last = last.max(granted[i]);
    }
    last
}

/// The software dissemination barrier over `members` (in the given order): (ps, rounds).
pub fn dissemination_ps(d: &Dojo, members: &[(u32, u32)]) -> (u64, u32) {
    let m = members.len();
    let mut t = vec![0u64; m];
    let mut next = vec![0u64; m];
    let mut dist = 1usize;
    let mut rounds = 0;
    while dist < m {
        for (i, ni) in next.iter_mut().enumerate() {
            let from = (i + m - dist) % m;
            let lat = route_ps(d, members[from], members[i]) + SOFTWARE_ROUND_NS * 1000;
            *ni = t[i].max(t[from] + lat);
        }
        std::mem::swap(&mut t, &mut next);
        dist *= 2;
        rounds += 1;
    }
    (t.iter().copied().max().unwrap_or(0), rounds)
}

/// Check the domains against the mesh and the four-tree limit, then time each one's barrier.
pub fn barriers(
    d: &Dojo,
    domains: &[Domain],
    fan_in: u32,
) -> Result<Vec<DomainResult>, BarrierTreeError> {
    if fan_in < 2 {
        return Err(BarrierTreeError::FanIn(fan_in));
    }
    let members: u64 = domains.iter().map(|d| d.members.len() as u64).sum();
    let estimate = u128::from(members) * u128::from(BYTES_PER_MEMBER);
    let limit = podsim_system::machine::memory_limit();
    if estimate > u128::from(limit) {
        return Err(BarrierTreeError::Memory {
            members,
            estimate: podsim_units::Bytes(u64::try_from(estimate).unwrap_or(u64::MAX)),
            limit: podsim_units::Bytes(limit),
        });
    }
    let (w, h) = (d.width(), d.height());
    let mut trees_of: BTreeMap<(u32, u32), Vec<&str>> = BTreeMap::new();
    for dom in domains {
        if dom.members.is_empty() {
            return Err(BarrierTreeError::Members(
                dom.name.clone(),
                "no members".into(),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for &(x, y) in &dom.members {
            if x >= w || y >= h {
                return Err(BarrierTreeError::OffMesh {
                    domain: dom.name.clone(),
                    x,
                    y,
                    w,
                    h,
                });
            }
            if !seen.insert((x, y)) {
                return Err(BarrierTreeError::Members(
                    dom.name.clone(),
                    format!("({x}, {y}) is listed twice"),
                ));
            }
            trees_of.entry((x, y)).or_default().push(&dom.name);
        }
    }
    if let Some(((x, y), names)) = trees_of.iter().find(|(_, v)| v.len() > MAX_TREES_PER_NODE) {
        return Err(BarrierTreeError::TooManyTrees {
            x: *x,
            y: *y,
            count: names.len(),
            domains: names.join(", "),
        });
    }
    Ok(domains
        .iter()
        .map(|dom| {
            let t = build_tree(&dom.members, fan_in);
            let mut by_id = dom.members.clone();
            by_id.sort_by_key(|&(x, y)| d.router(x, y));
            let (sw, rounds) = dissemination_ps(d, &by_id);
            DomainResult {
                name: dom.name.clone(),
                members: dom.members.len(),
                depth: t.depth(),
                latency_s: tree_ps(d, &t) as f64 * 1e-12,
                software_latency_s: sw as f64 * 1e-12,
                rounds,
            }
        })
        .collect())
}

/// Every router of `d` as one domain (`name`).
pub fn whole(d: &Dojo, name: &str) -> Domain {
    let members = (0..d.height())
        .flat_map(|y| (0..d.width()).map(move |x| (x, y)))
        .collect();
    Domain {
        name: name.into(),
        members,
    }
}

/// Router ids of a domain (for callers that work in ids).
pub fn ids(d: &Dojo, dom: &Domain) -> Vec<NodeId> {
    dom.members.iter().map(|&(x, y)| d.router(x, y)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use podsim_topology::DojoSpec;

    fn die() -> Dojo {
        Dojo::new(DojoSpec::die()).unwrap()
    }

    /// A line of three nodes (0,0) (1,0) (2,0), fan-in 2: the root is the middle one, the
    /// others its children one hop away. ARM: each leaf handles its BARM (0.5 ns), crosses one
    /// hop (0.5 ns); the root handles (0.5 ns) once both are in: armed at 1.5 ns; GRANT: one
    /// hop and a handling, 1 ns more: 2.5 ns. Dissemination over three: two rounds of one or
    /// two hops plus 10 ns: round 1 (1 -> 2 etc.: worst 2 -> 0 two hops) 11 ns, round 2 11 ns:
    /// 22 ns.
    #[test]
    fn three_in_a_row_by_hand() {
        let d = die();
        let dom = Domain {
            name: "line".into(),
            members: vec![(0, 0), (1, 0), (2, 0)],
        };
        let r = barriers(&d, &[dom], 2).unwrap();
        assert_eq!(r[0].depth, 1);
        assert!(
            (r[0].latency_s - 2.5e-9).abs() < 1e-15,
            "{}",
            r[0].latency_s
        );
        assert_eq!(r[0].rounds, 2);
        assert!(
            (r[0].software_latency_s - 22e-9).abs() < 1e-15,
            "{}",
            r[0].software_latency_s
        );
    }

    /// The whole die (360 routers): a higher fan-in makes a shallower tree; the hardware tree
    /// beats the software dissemination barrier (9 rounds of at least 10 ns: over 90 ns).
    #[test]
    fn fan_in_and_software() {
        let d = die();
        let dom = whole(&d, "die");
        let r2 = barriers(&d, std::slice::from_ref(&dom), 2).unwrap();
        let r8 = barriers(&d, &[dom], 8).unwrap();
        assert!(r8[0].depth < r2[0].depth);
        assert_eq!(r2[0].rounds, 9);
        assert!(r2[0].software_latency_s > 90e-9);
        assert!(r2[0].latency_s < r2[0].software_latency_s);
        assert!(r8[0].latency_s < r8[0].software_latency_s);
    }

    /// Figure 7: two overlapping domains, nodes in both take part in two trees; a node in five
    /// is refused, naming the node and the domains.
    #[test]
    fn overlapping_domains_and_the_fifth_tree() {
        let d = die();
        let rect = |name: &str, x0: u32, x1: u32| Domain {
            name: name.into(),
            members: (0..4)
                .flat_map(|y| (x0..=x1).map(move |x| (x, y)))
                .collect(),
        };
        let r = barriers(&d, &[rect("blue", 0, 5), rect("yellow", 4, 9)], 2).unwrap();
        assert_eq!(r.len(), 2);
        assert!(r.iter().all(|x| x.members == 24));
        let five: Vec<Domain> = (0..5).map(|i| rect(&format!("d{i}"), 0, 1)).collect();
        let e = barriers(&d, &five, 2).unwrap_err().to_string();
        assert!(
            e.contains("node (0, 0) would belong to 5 barrier trees"),
            "{e}"
        );
        assert!(barriers(&d, &five[..4], 2).is_ok());
        assert!(barriers(&d, &[rect("x", 0, 1)], 1).is_err());
    }

    /// Across dies: a domain of the four corner routers of a tile crosses dies, each crossing
    /// ~100 ns; the tree pays at least two crossings up and two down.
    #[test]
    fn across_dies() {
        let d = Dojo::new(DojoSpec::tile()).unwrap();
        let (w, h) = (d.width() - 1, d.height() - 1);
        let dom = Domain {
            name: "corners".into(),
            members: vec![(0, 0), (w, 0), (0, h), (w, h)],
        };
        let r = barriers(&d, &[dom], 4).unwrap();
        assert!(r[0].latency_s > 4.0 * 100e-9, "{}", r[0].latency_s);
    }
}
