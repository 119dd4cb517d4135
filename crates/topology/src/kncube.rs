//! The general k-ary n-cube: any number of dimensions, a size and a wrap flag per dimension.
//!
//! Rings (`[16]`, wrapped), meshes, tori and mixed shapes such as the K computer's physical
//! 24 x 18 x 16 x 2 x 3 x 2 network (torus, mesh, torus, mesh, torus, mesh) are one type.
//!
//! * Node ids are mixed-radix numbers of the coordinates, dimension 0 varying fastest:
//!   `id = c0 + k0 * (c1 + k1 * (c2 + ...))`.
//! * Each adjacent pair along a dimension is joined by one bidirectional link. A wrapped
//!   dimension adds the link between coordinates k-1 and 0; for k = 2 that is a second, parallel
//!   link between the two nodes (as in Blue Gene/Q's E dimension, whose 2 nodes share 2 links).
//!   A dimension of size 1 has no links.
//! * Optionally the nodes are grouped into blocks (TPU v4: 4 x 4 x 4 chips cabled electrically);
//!   links inside a block use the `link` spec, links that leave a block, wrap-around links
//!   included, use the `block.between` spec (TPU v4: the optical links through the OCSes).

use crate::{LinkKind, LinkSpec, NodeId, TopologyError};

/// Blocks of nodes whose internal links differ from the links between blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocks {
    /// The block's size in each dimension; each must divide the cube's size.
    pub shape: Vec<u32>,
    /// The links between blocks, wrap-around links included.
    pub between: LinkSpec,
}

/// A k-ary n-cube with a size and a wrap flag per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KAryNCube {
    dims: Vec<u32>,
    wrap: Vec<bool>,
    link: LinkSpec,
    blocks: Option<Blocks>,
    interfaces: Option<u32>,
    /// `twist[d][j]`: how far leaving dimension `d` through its Plus wrap-around link moves
    /// coordinate `j` (Minus moves it back). Empty when the cube is not twisted.
    twist: Vec<Vec<u32>>,
    nodes: u64,
    /// `strides[d]`: the product of the sizes of dimensions below `d` (node ids are mixed
    /// radix, dimension 0 fastest). Derived from `dims` once.
    strides: Vec<u64>,
}

/// Direction of travel along one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Towards larger coordinates.
    Plus,
    /// Towards smaller coordinates.
    Minus,
}

/// One end of a link as seen from a node: the dimension and direction of travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Port {
    /// The dimension.
    pub dim: usize,
    /// The direction.
    pub dir: Direction,
}

/// One bidirectional link, named from its lower end (the end whose `Plus` port it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// The node whose `Plus` port the link leaves.
    pub from: NodeId,
    /// The node at the other end.
    pub to: NodeId,
    /// The dimension it runs along.
    pub dim: usize,
    /// Whether it is the wrap-around link of a torus dimension.
    pub wraps: bool,
    /// Its kind, bandwidth per direction and latency.
    pub spec: LinkSpec,
}

/// The largest node count accepted (2^40, about 10^12).
pub const MAX_NODES: u64 = 1 << 40;

impl KAryNCube {
    /// A cube of the given sizes and wrap flags with every link as `link`.
    pub fn new(dims: Vec<u32>, wrap: Vec<bool>, link: LinkSpec) -> Result<Self, TopologyError> {
        if dims.is_empty() {
            return Err(TopologyError::new(
                "dims",
                "at least one dimension is needed",
            ));
        }
        if dims.len() != wrap.len() {
            return Err(TopologyError::new(
                "wrap",
                format!(
                    "{} wrap flags given for {} dimensions",
                    wrap.len(),
                    dims.len()
                ),
            ));
        }
        let mut nodes: u64 = 1;
        for (i, &k) in dims.iter().enumerate() {
            if k == 0 {
                return Err(TopologyError::new(
                    "dims",
                    format!("dimension {i} has size 0; every size must be at least 1"),
                ));
            }
            nodes = nodes
                .checked_mul(u64::from(k))
                .filter(|&n| n <= MAX_NODES)
                .ok_or_else(|| {
                    TopologyError::new("dims", format!("more than {MAX_NODES} nodes"))
                })?;
        }
        let strides = dims
            .iter()
            .scan(1u64, |acc, &k| {
                let s = *acc;
                *acc *= u64::from(k);
                Some(s)
            })
            .collect();
        Ok(KAryNCube {
            dims,
            wrap,
            link,
            blocks: None,
            interfaces: None,
            twist: Vec::new(),
            nodes,
            strides,
        })
    }

    /// Group nodes into blocks; links leaving a block (and wrap-around links) become `between`.
    pub fn with_blocks(mut self, blocks: Blocks) -> Result<Self, TopologyError> {
        if blocks.shape.len() != self.dims.len() {
            return Err(TopologyError::new(
                "blocks.shape",
                format!(
                    "{} block sizes given for {} dimensions",
                    blocks.shape.len(),
                    self.dims.len()
                ),
            ));
        }
        for (i, (&b, &k)) in blocks.shape.iter().zip(&self.dims).enumerate() {
            if b == 0 || k % b != 0 {
                return Err(TopologyError::new(
                    "blocks.shape",
                    format!("block size {b} does not divide dimension {i} of size {k}"),
                ));
            }
        }
        self.blocks = Some(blocks);
        Ok(self)
    }

    /// Twist the wrap-around links: leaving dimension `d` through its Plus wrap-around link also
    /// moves every coordinate `j` forward by `shifts[d][j]` (modulo k_j), and leaving through
    /// the Minus one moves it back. This is the lattice description of twisted tori (Camara et
    /// al.; Camarero, Martinez and Beivide): the wrap vector of dimension d is
    /// `k_d e_d - shifts[d]`. Rules: a shifted or shifting dimension must be wrapped, no
    /// dimension shifts itself, shifts are below the shifted dimension's size, and a
    /// dimension that shifts others is not itself shifted (so the node box stays a fundamental
    /// region of the lattice and every node keeps its coordinates).
    pub fn with_twist(mut self, shifts: Vec<Vec<u32>>) -> Result<Self, TopologyError> {
        let n = self.dims.len();
        if shifts.len() != n || shifts.iter().any(|s| s.len() != n) {
            return Err(TopologyError::new(
                "twist",
                format!("expected {n} shift vectors of {n} entries each"),
            ));
        }
        for d in 0..n {
            for j in 0..n {
                let v = shifts[d][j];
                if v == 0 {
                    continue;
                }
                if d == j {
                    return Err(TopologyError::new(
                        "twist",
                        format!("dimension {d} cannot shift itself"),
                    ));
                }
                if !self.wrap[d] || !self.wrap[j] {
                    return Err(TopologyError::new(
                        "twist",
                        format!(
                            "dimension {d} shifts dimension {j}, but only wrapped dimensions take part in a twist"
                        ),
                    ));
                }
                if v >= self.dims[j] {
                    return Err(TopologyError::new(
                        "twist",
                        format!(
                            "shift {v} of dimension {j} is not below its size {}",
                            self.dims[j]
                        ),
                    ));
                }
                if shifts.iter().any(|s| s[d] != 0) {
                    return Err(TopologyError::new(
                        "twist",
                        format!(
                            "dimension {d} both shifts and is shifted; a twisting dimension must not itself be shifted"
                        ),
                    ));
                }
            }
        }
        let twisted = shifts.iter().flatten().any(|&v| v != 0);
        if twisted && !self.wrap.iter().all(|&w| w) {
            return Err(TopologyError::new(
                "twist",
                "a twisted torus must wrap in every dimension",
            ));
        }
        self.twist = if twisted { shifts } else { Vec::new() };
        Ok(self)
    }

    /// The twist of the named twisted shapes, or `None` if the shape has none:
    /// * `2a x a` (either order): leaving the short dimension through its wrap-around link
    ///   moves the long one by a, the rectangular twisted torus of Camara et al. (2010);
    /// * `k x k x 2k` (any order): each k-dimension's wrap-around link moves the 2k one by k;
    /// * `k x 2k x 2k` (any order): the k-dimension's wrap-around link moves both 2k ones by k.
    ///
    /// The 3-D shapes are the twisted tori TPU v4 offers (tpu-v4-isca2023.txt, section 2.8,
    /// after Camarero, Martinez and Beivide, 2014): lattice graphs of the FCC and BCC kind.
    pub fn named_twist(dims: &[u32]) -> Option<Vec<Vec<u32>>> {
        let n = dims.len();
        let mut s = vec![vec![0u32; n]; n];
        match n {
            2 => {
                let (short, long) = if dims[0] < dims[1] { (0, 1) } else { (1, 0) };
                if dims[long] != 2 * dims[short] {
                    return None;
                }
                s[short][long] = dims[short];
            }
            3 => {
                let min = *dims.iter().min()?;
                let small: Vec<usize> = (0..3).filter(|&d| dims[d] == min).collect();
                let big: Vec<usize> = (0..3).filter(|&d| dims[d] == 2 * min).collect();
                if small.len() + big.len() != 3 || big.is_empty() {
                    return None;
                }
                for &a in &small {
                    for &b in &big {
                        s[a][b] = min;
                    }
                }
            }
            _ => return None,
        }
        Some(s)
    }

    /// Whether any wrap-around link is twisted.
    pub fn is_twisted(&self) -> bool {
        !self.twist.is_empty()
    }

    /// The twist shifts (empty when untwisted); see [`KAryNCube::with_twist`].
    pub fn twist(&self) -> &[Vec<u32>] {
        &self.twist
    }

    /// Set the number of network interfaces per node (each injecting at one link's bandwidth).
    /// Without it, a node can inject on all of its ports at once.
    pub fn with_interfaces(mut self, interfaces: u32) -> Result<Self, TopologyError> {
        if interfaces == 0 {
            return Err(TopologyError::new(
                "interfaces",
                "a node needs at least one network interface",
            ));
        }
        self.interfaces = Some(interfaces);
        Ok(self)
    }

    /// Sizes per dimension.
    pub fn dims(&self) -> &[u32] {
        &self.dims
    }
    /// Wrap flags per dimension.
    pub fn wrap(&self) -> &[bool] {
        &self.wrap
    }
    /// The link spec inside blocks (or of every link when there are no blocks).
    pub fn link(&self) -> LinkSpec {
        self.link
    }
    /// The block grouping, if any.
    pub fn blocks(&self) -> Option<&Blocks> {
        self.blocks.as_ref()
    }
    /// Number of nodes.
    pub fn node_count(&self) -> u64 {
        self.nodes
    }
    /// Network interfaces per node: as set, or one per port of the best-connected node.
    pub fn interfaces(&self) -> u32 {
        self.interfaces.unwrap_or_else(|| self.degree_max())
    }

    /// Whether dimension `d` has a wrap-around link (wrapped and size at least 2).
    pub fn has_wrap_link(&self, d: usize) -> bool {
        self.wrap[d] && self.dims[d] >= 2
    }

    /// A short description such as `torus:4x4x8` or `kncube:24x18x16:wrap=tmt`.
    pub fn shorthand(&self) -> String {
        let sizes = self
            .dims
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join("x");
        let base = if self.dims.len() == 1 && self.wrap[0] {
            format!("ring:{sizes}")
        } else if self.wrap.iter().all(|&w| w) {
            format!("torus:{sizes}")
        } else if self.wrap.iter().all(|&w| !w) {
            format!("mesh:{sizes}")
        } else {
            let w: String = self
                .wrap
                .iter()
                .map(|&w| if w { 't' } else { 'm' })
                .collect();
            format!("kncube:{sizes}:wrap={w}")
        };
        if !self.is_twisted() {
            base
        } else if Self::named_twist(&self.dims).as_deref() == Some(&self.twist[..]) {
            format!("{base}:twisted")
        } else {
            format!("{base} (custom twist)")
        }
    }

    /// The coordinates of `node`, or `None` if there is no such node.
    pub fn coords(&self, node: NodeId) -> Option<Vec<u32>> {
        if node.0 >= self.nodes {
            return None;
        }
        let mut rest = node.0;
        Some(
            self.dims
                .iter()
                .map(|&k| {
                    let c = rest % u64::from(k);
                    rest /= u64::from(k);
                    c as u32
                })
                .collect(),
        )
    }

    /// The node at `coords`, or `None` if they are out of range.
    pub fn node_at(&self, coords: &[u32]) -> Option<NodeId> {
        if coords.len() != self.dims.len() {
            return None;
        }
        let mut id = 0u64;
        for (&c, &k) in coords.iter().zip(&self.dims).rev() {
            if c >= k {
                return None;
            }
            id = id * u64::from(k) + u64::from(c);
        }
        Some(NodeId(id))
    }

    /// The stride of dimension `d` in node ids.
    fn stride(&self, d: usize) -> u64 {
        self.strides[d]
    }

    /// The coordinate of `node` in dimension `d`.
    pub fn coord(&self, node: NodeId, d: usize) -> u32 {
        ((node.0 / self.stride(d)) % u64::from(self.dims[d])) as u32
    }

    /// The neighbour through `port`, if that port has a link.
    pub fn neighbor(&self, node: NodeId, port: Port) -> Option<NodeId> {
        let k = self.dims.get(port.dim).copied()?;
        let c = self.coord(node, port.dim);
        let s = self.stride(port.dim);
        let base = node.0 - u64::from(c) * s;
        let wrap = self.has_wrap_link(port.dim);
        let (to, wrapped) = match port.dir {
            Direction::Plus if c + 1 < k => (c + 1, false),
            Direction::Plus if wrap => (0, true),
            Direction::Minus if c > 0 => (c - 1, false),
            Direction::Minus if wrap => (k - 1, true),
            _ => return None,
        };
        let mut id = base + u64::from(to) * s;
        if wrapped && self.is_twisted() {
            for (j, &shift) in self.twist[port.dim].iter().enumerate() {
                if shift == 0 {
                    continue;
                }
                let kj = self.dims[j];
                let cj = self.coord(NodeId(id), j);
                let moved = match port.dir {
                    Direction::Plus => (cj + shift) % kj,
                    Direction::Minus => (cj + kj - shift) % kj,
                };
                let sj = self.stride(j);
                id = id - u64::from(cj) * sj + u64::from(moved) * sj;
            }
        }
        Some(NodeId(id))
    }

    /// The position of `port` among [`KAryNCube::ports`] of `node` (None if it has no link),
    /// without building the list.
    pub fn port_index(&self, node: NodeId, port: Port) -> Option<usize> {
        // A port has a link when the coordinate has a neighbour that way or the dimension
        // wraps (as `neighbor` decides): (Plus, Minus) of dimension `dim`.
        let linked = |dim: usize| {
            let (c, wrap) = (self.coord(node, dim), self.has_wrap_link(dim));
            (c + 1 < self.dims[dim] || wrap, c > 0 || wrap)
        };
        if port.dim >= self.dims.len() {
            return None;
        }
        let before: usize = (0..port.dim)
            .map(|dim| {
                let (plus, minus) = linked(dim);
                usize::from(plus) + usize::from(minus)
            })
            .sum();
        let (plus, minus) = linked(port.dim);
        match port.dir {
            Direction::Plus => plus.then_some(before),
            Direction::Minus => minus.then_some(before + usize::from(plus)),
        }
    }

    /// The ports of `node` that have links, in (dimension, Plus before Minus) order.
    pub fn ports(&self, node: NodeId) -> Vec<Port> {
        let mut out = Vec::with_capacity(2 * self.dims.len());
        for dim in 0..self.dims.len() {
            for dir in [Direction::Plus, Direction::Minus] {
                let p = Port { dim, dir };
                if self.neighbor(node, p).is_some() {
                    out.push(p);
                }
            }
        }
        out
    }

    /// The spec of the link leaving `node` through its `Plus` port in dimension `d`
    /// (whether it wraps decides its block membership).
    fn spec_of_plus(&self, node: NodeId, d: usize) -> LinkSpec {
        let c = self.coord(node, d);
        let wraps = c + 1 == self.dims[d];
        self.spec_between(d, c, wraps)
    }

    /// The spec of the link along `d` from coordinate `c` to `c + 1` (or the wrap link).
    fn spec_between(&self, d: usize, c: u32, wraps: bool) -> LinkSpec {
        match &self.blocks {
            Some(b) if wraps || (c + 1).is_multiple_of(b.shape[d]) => b.between,
            _ => self.link,
        }
    }

    /// The spec of the link from `node` through `port`, if there is one.
    pub fn link_spec(&self, node: NodeId, port: Port) -> Option<LinkSpec> {
        let to = self.neighbor(node, port)?;
        Some(match port.dir {
            Direction::Plus => self.spec_of_plus(node, port.dim),
            Direction::Minus => self.spec_of_plus(to, port.dim),
        })
    }

    /// Every bidirectional link once, named from the end whose `Plus` port it leaves.
    pub fn links(&self) -> impl Iterator<Item = Link> + '_ {
        (0..self.nodes).flat_map(move |n| {
            let node = NodeId(n);
            (0..self.dims.len()).filter_map(move |dim| {
                let k = self.dims[dim];
                let c = self.coord(node, dim);
                let to = self.neighbor(
                    node,
                    Port {
                        dim,
                        dir: Direction::Plus,
                    },
                )?;
                Some(Link {
                    from: node,
                    to,
                    dim,
                    wraps: c + 1 == k,
                    spec: self.spec_of_plus(node, dim),
                })
            })
        })
    }

    /// Links along dimension `d` in one line of nodes (mesh: k-1, wrapped: k).
    pub fn links_per_line(&self, d: usize) -> u64 {
        let k = u64::from(self.dims[d]);
        if self.has_wrap_link(d) { k } else { k - 1 }
    }

    /// Lines of nodes along dimension `d`: `nodes / k_d`.
    pub fn lines(&self, d: usize) -> u64 {
        self.nodes / u64::from(self.dims[d])
    }

    /// The number of ports of the best-connected node.
    pub fn degree_max(&self) -> u32 {
        self.dims
            .iter()
            .zip(&self.wrap)
            .map(|(&k, &w)| match k {
                1 => 0,
                2 if !w => 1,
                _ => 2,
            })
            .sum()
    }

    /// The number of ports of the least-connected node (a mesh corner).
    pub fn degree_min(&self) -> u32 {
        self.dims
            .iter()
            .zip(&self.wrap)
            .map(|(&k, &w)| match k {
                1 => 0,
                _ if w => 2,
                _ => 1,
            })
            .sum()
    }

    /// The distance between coordinates `a` and `b` along dimension `d` (minimal direction).
    pub fn dim_distance(&self, d: usize, a: u32, b: u32) -> u32 {
        let k = self.dims[d];
        let fwd = if b >= a { b - a } else { b + k - a };
        let direct = a.abs_diff(b);
        if self.has_wrap_link(d) {
            fwd.min(k - fwd)
        } else {
            direct
        }
    }

    /// The hop distance between two nodes: the length of a minimal displacement (untwisted:
    /// the sum of per-dimension distances).
    pub fn distance(&self, a: NodeId, b: NodeId) -> u64 {
        if self.is_twisted() {
            return self
                .displacement(a, b)
                .iter()
                .map(|x| x.unsigned_abs())
                .sum();
        }
        (0..self.dims.len())
            .map(|d| u64::from(self.dim_distance(d, self.coord(a, d), self.coord(b, d))))
            .sum()
    }

    /// A minimal displacement from `from` to `to`: a vector of signed steps per dimension whose
    /// walk (in any order) leads from `from` to `to` in the fewest hops.
    ///
    /// Among minimal displacements the lexicographically largest is chosen (ties go Plus in the
    /// earliest dimension). That choice is consistent: after one step of the first non-zero
    /// dimension, the displacement of the rest of the way is the same vector minus that step,
    /// so routing hop by hop along it follows one dimension-ordered path.
    ///
    /// Twisted tori: the displacements equivalent to the coordinate difference r are
    /// `r + Σ m_d (k_d e_d - shift_d)`. Dimensions that shift others try `m` in -2..=2; every
    /// other dimension is then independent and takes its nearest representative.
    pub fn displacement(&self, from: NodeId, to: NodeId) -> Vec<i64> {
        let n = self.dims.len();
        if !self.is_twisted() {
            // No dimension shifts another: each takes its nearest representative on its own
            // (ties to the positive side), the one candidate the search below would try.
            return (0..n)
                .map(|d| {
                    let x = i64::from(self.coord(to, d)) - i64::from(self.coord(from, d));
                    if !self.has_wrap_link(d) {
                        return x;
                    }
                    let k = i64::from(self.dims[d]);
                    let y = x.rem_euclid(k);
                    if y * 2 > k { y - k } else { y }
                })
                .collect();
        }
        let r: Vec<i64> = (0..n)
            .map(|d| i64::from(self.coord(to, d)) - i64::from(self.coord(from, d)))
            .collect();
        let twisting: Vec<usize> = (0..n)
            .filter(|&d| self.twist.get(d).is_some_and(|s| s.iter().any(|&v| v != 0)))
            .collect();
        let mut best: Option<(u64, Vec<i64>)> = None;
        let combos = 5usize.pow(twisting.len() as u32);
        for c in 0..combos {
            let mut v = r.clone();
            let mut rest = c;
            for &t in &twisting {
                let m = (rest % 5) as i64 - 2;
                rest /= 5;
                v[t] += m * i64::from(self.dims[t]);
                for (j, &sh) in self.twist[t].iter().enumerate() {
                    v[j] -= m * i64::from(sh);
                }
            }
            for (d, x) in v.iter_mut().enumerate() {
                if twisting.contains(&d) || !self.has_wrap_link(d) {
                    continue;
                }
                let k = i64::from(self.dims[d]);
                let mut y = x.rem_euclid(k);
                if y * 2 > k {
                    y -= k;
                }
                *x = y;
            }
            let len: u64 = v.iter().map(|x| x.unsigned_abs()).sum();
            let better = match &best {
                None => true,
                Some((bl, bv)) => len < *bl || (len == *bl && v > *bv),
            };
            if better {
                best = Some((len, v));
            }
        }
        best.map(|b| b.1).unwrap_or(r)
    }

    /// Kind of the links inside blocks and between them (the same without blocks).
    pub fn kinds(&self) -> (LinkKind, Option<LinkKind>) {
        (self.link.kind, self.blocks.as_ref().map(|b| b.between.kind))
    }

    pub(crate) fn spec_mid_cut(&self, d: usize) -> LinkSpec {
        let k = self.dims[d];
        self.spec_between(d, k / 2 - 1, false)
    }

    pub(crate) fn spec_wrap(&self, d: usize) -> LinkSpec {
        self.spec_between(d, self.dims[d] - 1, true)
    }
}
