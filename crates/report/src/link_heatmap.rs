//! Link heatmaps of whole-machine runs (`collective --heatmap`, the HTML report): what each
//! directed link carried over the run, as a fraction of what it could have carried in that
//! time, drawn on the topology's coordinates. A ring is a row, a 2-D mesh or torus its grid, a
//! 3-D torus its z slices side by side (four to a row), a Tofu network its virtual 3-D torus, each chip's square coloured by its
//! busiest link to another slice (its z links, and a twisted torus's wraparounds that change
//! z: the links a slice cannot show).

use std::collections::BTreeMap;
use std::path::Path;

use crate::{HeatLink, HeatTile, ReportError};
use podsim_net::LinkLoad;
use podsim_topology::{KAryNCube, Network, NodeId};

/// Why a network has no heatmap layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// A Tofu network without a virtual 3-D torus (its shorthand).
    #[error("draws a Tofu network on its virtual 3-D torus; {0} has none")]
    NoVirtualTorus(String),
    /// A network of another shape (its shorthand).
    #[error(
        "draws rings, 2-D and 3-D meshes and tori (ring:N, mesh:XxY, torus:XxYxZ, tpuv4 slices, twisted or not) and Tofu networks (on their virtual 3-D torus); {0} is not one"
    )]
    NotDrawn(String),
}

/// Slices of a 3-D torus drawn side by side before the next row of slices.
const SLICES_PER_ROW: u32 = 4;

/// Where a network's nodes go on the drawing.
pub struct Layout<'a> {
    cube: &'a KAryNCube,
    /// A Tofu network, drawn on its virtual 3-D torus (each node where its virtual
    /// coordinates put it).
    tofu: Option<&'a podsim_topology::Tofu>,
}

impl<'a> Layout<'a> {
    /// The layout of `net`, or why it has none (what the heatmap can draw).
    pub fn of(net: &'a Network) -> Result<Self, LayoutError> {
        match net {
            Network::Cube(c) if (1..=3).contains(&c.dims().len()) => Ok(Layout {
                cube: c,
                tofu: None,
            }),
            Network::Tofu(t) => match t.virtual_torus() {
                Some(v) if (1..=3).contains(&v.dims().len()) => Ok(Layout {
                    cube: v,
                    tofu: Some(t),
                }),
                _ => Err(LayoutError::NoVirtualTorus(net.shorthand())),
            },
            _ => Err(LayoutError::NotDrawn(net.shorthand())),
        }
    }

    fn dims(&self) -> (u32, u32, u32) {
        let d = self.cube.dims();
        (
            d[0],
            d.get(1).copied().unwrap_or(1),
            d.get(2).copied().unwrap_or(1),
        )
    }

    /// The drawing's width and height in squares.
    fn size(&self) -> (u32, u32) {
        let (x, y, z) = self.dims();
        if z == 1 {
            return (x, y);
        }
        let per_row = z.min(SLICES_PER_ROW);
        let rows = z.div_ceil(SLICES_PER_ROW);
        (per_row * (x + 1) - 1, rows * (y + 1) - 1)
    }

    /// A node's (x, y, z).
    fn coords(&self, n: NodeId) -> (u32, u32, u32) {
        let n = match self.tofu {
            Some(t) => t.virtual_of(n).unwrap_or(n),
            None => n,
        };
        let c = self.cube.coords(n).unwrap_or_default();
        (
            c.first().copied().unwrap_or(0),
            c.get(1).copied().unwrap_or(0),
            c.get(2).copied().unwrap_or(0),
        )
    }

    /// A node's square on the drawing.
    fn at(&self, (x, y, z): (u32, u32, u32)) -> (u32, u32) {
        let (dx, dy, _) = self.dims();
        (
            x + (z % SLICES_PER_ROW) * (dx + 1),
            y + (z / SLICES_PER_ROW) * (dy + 1),
        )
    }

    /// The node at a square of the drawing, if one is there.
    fn node_at(&self, px: u32, py: u32) -> Option<(u32, u32, u32)> {
        let (dx, dy, dz) = self.dims();
        let (sx, x) = (px / (dx + 1), px % (dx + 1));
        let (sy, y) = (py / (dy + 1), py % (dy + 1));
        let z = sy * SLICES_PER_ROW + sx;
        (x < dx && y < dy && z < dz && sx < SLICES_PER_ROW).then_some((x, y, z))
    }
}

/// Each directed link's utilisation over `time_s`, parallel links between one pair of nodes
/// taken together: (from, to, carried / (bandwidth x time)).
pub fn utilisation(loads: &[LinkLoad], time_s: f64) -> Vec<(NodeId, NodeId, f64)> {
    let mut pairs: BTreeMap<(u64, u64), (f64, f64)> = BTreeMap::new();
    for l in loads {
        let e = pairs.entry((l.from.0, l.to.0)).or_default();
        e.0 += l.wire_bytes;
        e.1 += l.bandwidth_bytes_per_s;
    }
    pairs
        .into_iter()
        .map(|((a, b), (bytes, bw))| {
            let u = if bw > 0.0 && time_s > 0.0 {
                bytes / (bw * time_s)
            } else {
                0.0
            };
            (NodeId(a), NodeId(b), u)
        })
        .collect()
}

/// Draw the heatmap of a run that took `time_s` on `layout`'s network to `path`.
pub fn draw(
    path: &Path,
    title: &str,
    layout: &Layout,
    loads: &[LinkLoad],
    time_s: f64,
) -> Result<(), ReportError> {
    let (_, _, dz) = layout.dims();
    let mut links: Vec<HeatLink> = Vec::new();
    // Per node (x, y, z): the busiest of its links to another slice.
    let mut z_heat: BTreeMap<(u32, u32, u32), f64> = BTreeMap::new();
    for (a, b, u) in utilisation(loads, time_s) {
        let (ca, cb) = (layout.coords(a), layout.coords(b));
        if ca.2 != cb.2 {
            let h = z_heat.entry(ca).or_default();
            *h = h.max(u);
        } else {
            links.push((layout.at(ca), layout.at(cb), u));
        }
    }
    let (w, h) = layout.size();
    let tile = |px: u32, py: u32| match layout.node_at(px, py) {
        None => HeatTile::Gap,
        Some(c) if dz > 1 => {
            let label = if (c.0, c.1) == (0, 0) {
                format!("z={}", c.2)
            } else {
                String::new()
            };
            HeatTile::Heat(z_heat.get(&c).copied().unwrap_or(0.0), label)
        }
        Some(_) => HeatTile::Plain(String::new()),
    };
    let title = if dz > 1 {
        format!("{title}, squares coloured by their busiest link to another slice")
    } else {
        title.to_string()
    };
    crate::heatmap_svg(path, &title, w, h, &links, &tile)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_of_a_3d_torus_sit_four_to_a_row() {
        // 4x4x8: slices 0-3 in the first row of slices, 4-7 in the second; each slice 4
        // squares wide with a gap: 4 x 5 - 1 = 19 wide, 2 x 5 - 1 = 9 high.
        let net = Network::Cube(
            KAryNCube::new(
                vec![4, 4, 8],
                vec![true; 3],
                podsim_topology::LinkSpec {
                    kind: podsim_topology::LinkKind::Electrical,
                    bandwidth: podsim_units::Bandwidth::from_gbps(1).unwrap(),
                    latency: podsim_units::SimDuration::ZERO,
                },
            )
            .unwrap(),
        );
        let l = Layout::of(&net).unwrap();
        assert_eq!(l.size(), (19, 9));
        // Node (3, 2, 5): slice 5 is the second of the second row: (3 + 5, 2 + 5).
        assert_eq!(l.at((3, 2, 5)), (8, 7));
        assert_eq!(l.node_at(8, 7), Some((3, 2, 5)));
        assert_eq!(l.node_at(4, 0), None);
        assert_eq!(l.node_at(0, 4), None);
    }

    #[test]
    fn parallel_links_are_taken_together() {
        // Two 1 GB/s links 0 -> 1 carrying 1 GB and 0 over 1 s: half busy.
        let one = |bytes| LinkLoad {
            from: NodeId(0),
            to: NodeId(1),
            wire_bytes: bytes,
            bandwidth_bytes_per_s: 1e9,
        };
        assert_eq!(
            utilisation(&[one(1e9), one(0.0)], 1.0),
            vec![(NodeId(0), NodeId(1), 0.5)]
        );
    }
}
