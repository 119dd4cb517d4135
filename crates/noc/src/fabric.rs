//! The fabric: a topology turned into numbered channels between routers and network interfaces,
//! and the routes packets follow over them.
//!
//! Channels are numbered network links first (in [`LinkTable`] order), then one injection
//! channel per interface (endpoint-major), then one ejection channel per interface. A channel
//! is both the output port of its upstream router (or interface) and the input port of its
//! downstream router (or interface), so "output port o" and "input port c" are channel ids.

use std::collections::HashMap;

use podsim_net::{LinkTable, paths};
use podsim_routing::{Routing, past_dateline};
use podsim_topology::{Direction, Network, Noc, NodeId};
use podsim_units::SimDuration;

use crate::config::{ConfigError, RouterConfig};

/// Where a path word keeps its VC class (channel ids stay below 2^31).
pub(crate) const CLASS_SHIFT: u32 = 31;

/// Networks with at most this many endpoints keep their routes in a dense table.
const DENSE_ROUTES: usize = 1024;

/// What a channel joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// A network link between two routers.
    Link,
    /// From an endpoint's network interface into its router.
    Injection,
    /// From a router out to an endpoint's network interface.
    Ejection,
}

/// A routing algorithm of the packet-level model; every one takes its paths from the routing
/// layer (`podsim-routing`, `podsim-net::paths`, the Tenstorrent grid's NoC walks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NocRouting {
    /// Dimension order, ascending, ties to Plus, dateline classes (k-ary n-cubes).
    DimensionOrder,
    /// Minimal routing, twisted tori included, dateline classes (k-ary n-cubes).
    Minimal,
    /// Tenstorrent NoC 0: right (+x) first, then down (+y), both rings one-way.
    Noc0,
    /// Tenstorrent NoC 1: up (-y) first, then left (-x).
    Noc1,
    /// The network's own route tables: minimal dimension-ordered on cubes, X-then-Y on DOJO
    /// planes (its per-die routing tables' default), up/down with every equal-cost path on fat
    /// trees (a packet takes path `packet number mod paths`).
    Table,
}

impl NocRouting {
    /// Every routing, by name.
    pub const ALL: [(&'static str, NocRouting); 5] = [
        ("dor", NocRouting::DimensionOrder),
        ("minimal", NocRouting::Minimal),
        ("noc0", NocRouting::Noc0),
        ("noc1", NocRouting::Noc1),
        ("table", NocRouting::Table),
    ];

    /// The routing called `name`.
    pub fn parse(name: &str) -> Result<Self, ConfigError> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, r)| r)
            .ok_or_else(|| {
                ConfigError::new(
                    "routing",
                    format!(
                        "unknown routing `{name}`; expected one of {}",
                        Self::ALL.map(|(n, _)| n).join(", ")
                    ),
                )
            })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, r)| *r == self)
            .map_or("?", |(n, _)| n)
    }

    /// The routing a network uses when none is named: dimension order on cubes (NoC 0 on a
    /// Tenstorrent grid), the route tables otherwise.
    pub fn default_for(net: &Network) -> Self {
        match net {
            Network::Tenstorrent(_) => NocRouting::Noc0,
            Network::Cube(_) | Network::Tofu(_) => NocRouting::DimensionOrder,
            Network::FatTree(_) | Network::Dojo(_) | Network::Hybrid(_) | Network::Graph(_) => {
                NocRouting::Table
            }
        }
    }
}

/// Every equal-cost path of a route, each its hops' links and VC classes.
pub(crate) type Paths = Vec<Vec<(u32, u8)>>;

/// A route found ahead of its packet by [`Fabric::find`].
#[derive(Debug)]
pub(crate) enum Found {
    /// The route was cached.
    Cached(RouteRef),
    /// It was not: its paths, or why there are none.
    Paths(Result<Paths, String>),
}

/// One route: its network links and the VC class of each hop.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RouteRef {
    /// Offset of the first path in the arenas.
    pub start: u32,
    /// Hops per path.
    pub len: u16,
    /// Equal-cost paths stored one after another.
    pub count: u16,
}

/// The channels of a network and its routes.
#[derive(Debug, Clone)]
pub struct Fabric {
    pub(crate) net: Network,
    pub(crate) routing: NocRouting,
    pub(crate) nodes: usize,
    pub(crate) endpoints: usize,
    pub(crate) ifaces: usize,
    pub(crate) links: usize,
    pub(crate) vcs: usize,
    /// VC classes (2 with dateline classes on a network with wrap links, else 1).
    pub(crate) classes: usize,
    pub(crate) ch_src: Vec<u32>,
    pub(crate) ch_dst: Vec<u32>,
    pub(crate) ch_latency: Vec<u32>,
    pub(crate) ch_period: Vec<u32>,
    /// Channel's position among its downstream router's inputs.
    pub(crate) ch_in_local: Vec<u32>,
    pub(crate) in_off: Vec<u32>,
    pub(crate) in_list: Vec<u32>,
    pub(crate) cycle: SimDuration,
    table: LinkTable,
    link_dateline: Vec<LinkDim>,
    cache: HashMap<(u32, u32), RouteRef>,
    /// Routes by `src * endpoints + dst` when that table is small (`count` 0: not computed).
    dense: Vec<RouteRef>,
    /// Every cached path's hops, one word each: the channel, with the VC class in the top bit.
    pub(crate) arena: Vec<u32>,
}

/// What the dateline rule needs to know about a link: its dimension (255 when not a cube
/// link), direction, the coordinate in that dimension where it starts, the dimension's size,
/// whether the dimension has wrap-around links and whether this link is one.
#[derive(Debug, Clone, Copy)]
struct LinkDim {
    dim: u8,
    plus: bool,
    from: u32,
    k: u32,
    wraps: bool,
    wrap_link: bool,
}

fn dateline_of(net: &Network, n: NodeId, i: usize) -> LinkDim {
    let none = LinkDim {
        dim: u8::MAX,
        plus: true,
        from: 0,
        k: 0,
        wraps: false,
        wrap_link: false,
    };
    let Some(c) = net.cube() else {
        return none;
    };
    let Some(p) = c.ports(n).get(i).copied() else {
        return none;
    };
    let k = c.dims()[p.dim];
    let x = c.coord(n, p.dim);
    let wraps = c.has_wrap_link(p.dim);
    LinkDim {
        dim: p.dim as u8,
        plus: p.dir == Direction::Plus,
        from: x,
        k,
        wraps,
        wrap_link: wraps
            && match p.dir {
                Direction::Plus => x == k - 1,
                Direction::Minus => x == 0,
            },
    }
}

impl Fabric {
    /// The channels of `net` for `cfg`, routed by `routing`.
    pub fn new(
        net: &Network,
        routing: NocRouting,
        cfg: &RouterConfig,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        check_routing(net, routing)?;
        let table = LinkTable::new(net);
        let nodes = usize::try_from(net.node_count())
            .map_err(|_| ConfigError::new("topology", "too many nodes"))?;
        let endpoints = net.endpoints() as usize;
        let ifaces = net.interfaces().max(1) as usize;
        let links = table.len();
        let channels = links + 2 * endpoints * ifaces;
        if channels >= u32::MAX as usize / 64 {
            return Err(ConfigError::new(
                "topology",
                format!("{channels} channels is more than the packet level handles"),
            ));
        }
        let base = net.link().bandwidth.bytes_per_s() as f64;
        let fastest = (0..links)
            .map(|l| table.spec(l).bandwidth.bytes_per_s() as f64)
            .fold(base, f64::max);
        let cycle_s = cfg.flit_bytes as f64 / fastest;
        let cycle = SimDuration::from_ps((cycle_s * 1e12).round().max(1.0) as u64);
        let too_long = |what: String| {
            ConfigError::new(
                "flit_bytes",
                format!(
                    "{what} with {}-byte flits (a {} cycle); the packet level counts at most \
                     65,535 cycles per link: use larger flits",
                    cfg.flit_bytes, cycle
                ),
            )
        };
        let latency_cycles = |spec: podsim_topology::LinkSpec| -> Result<u32, ConfigError> {
            match cfg.link_cycles.get(spec.kind) {
                Some(c) => Ok(c),
                None => {
                    let c = spec.latency.as_ps().div_ceil(cycle.as_ps().max(1)).max(1);
                    u16::try_from(c).map(u32::from).map_err(|_| {
                        too_long(format!("a {} link latency is {c} cycles", spec.latency))
                    })
                }
            }
        };
        let period = |bw: f64| -> Result<u32, ConfigError> {
            let p = (fastest / bw - 1e-9).ceil().max(1.0);
            if p > 65_535.0 {
                Err(too_long(format!(
                    "a link {p} times slower than the fastest"
                )))
            } else {
                Ok(p as u32)
            }
        };
        let mut ch_src = Vec::with_capacity(channels);
        let mut ch_dst = Vec::with_capacity(channels);
        let mut ch_latency = Vec::with_capacity(channels);
        let mut ch_period = Vec::with_capacity(channels);
        let mut link_dateline = Vec::with_capacity(links);
        for u in 0..nodes {
            let mut i = 0;
            while let Some(l) = table.out_link(NodeId(u as u64), i) {
                let spec = table.spec(l);
                ch_src.push(u as u32);
                ch_dst.push(table.target(l).0 as u32);
                ch_latency.push(latency_cycles(spec)?);
                ch_period.push(period(spec.bandwidth.bytes_per_s() as f64)?);
                link_dateline.push(dateline_of(net, NodeId(u as u64), i));
                i += 1;
            }
        }
        let ni = net.link();
        for _kind in 0..2 {
            for e in 0..endpoints {
                for _ in 0..ifaces {
                    ch_src.push(e as u32);
                    ch_dst.push(e as u32);
                    // The interface's own channel: one cycle, at the interface's link rate.
                    ch_latency.push(1);
                    ch_period.push(period(ni.bandwidth.bytes_per_s() as f64)?);
                }
            }
        }
        // Inputs of each router: its incoming links, then its injection channels.
        let mut ins: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        for l in 0..links {
            ins[ch_dst[l] as usize].push(l as u32);
        }
        for (e, list) in ins.iter_mut().enumerate().take(endpoints) {
            for i in 0..ifaces {
                list.push((links + e * ifaces + i) as u32);
            }
        }
        if let Some((r, list)) = ins.iter().enumerate().find(|(_, l)| l.len() > 64) {
            return Err(ConfigError::new(
                "topology",
                format!(
                    "router n{r} has {} input ports; the packet level handles up to 64",
                    list.len()
                ),
            ));
        }
        let mut in_off = Vec::with_capacity(nodes + 1);
        let mut in_list = Vec::with_capacity(links + endpoints * ifaces);
        let mut ch_in_local = vec![0u32; channels];
        in_off.push(0);
        for list in &ins {
            for (j, &c) in list.iter().enumerate() {
                ch_in_local[c as usize] = j as u32;
                in_list.push(c);
            }
            in_off.push(in_list.len() as u32);
        }
        let wraps = link_dateline.iter().any(|l| l.wrap_link);
        let classes = if cfg.dateline && wraps { 2 } else { 1 };
        let vcs = cfg.vcs as usize;
        if vcs < classes {
            return Err(ConfigError::new(
                "vcs",
                format!(
                    "{} has wrap-around links: dateline routing needs at least 2 virtual channels \
                     (one per class), got {vcs}",
                    net.shorthand()
                ),
            ));
        }
        Ok(Fabric {
            net: net.clone(),
            routing,
            nodes,
            endpoints,
            ifaces,
            links,
            vcs,
            classes,
            ch_src,
            ch_dst,
            ch_latency,
            ch_period,
            ch_in_local,
            in_off,
            in_list,
            cycle,
            table,
            link_dateline,
            cache: HashMap::new(),
            dense: if endpoints <= DENSE_ROUTES {
                vec![RouteRef::default(); endpoints * endpoints]
            } else {
                Vec::new()
            },
            arena: Vec::new(),
        })
    }

    /// Channels in all.
    pub fn channels(&self) -> usize {
        self.ch_src.len()
    }
    /// Network links (channels `0..links()`).
    pub fn links(&self) -> usize {
        self.links
    }
    /// Endpoints (nodes `0..endpoints()` have network interfaces).
    pub fn endpoints(&self) -> usize {
        self.endpoints
    }
    /// Network interfaces per endpoint.
    pub fn interfaces(&self) -> usize {
        self.ifaces
    }
    /// Virtual-channel classes in use (2 with dateline classes, else 1).
    pub fn classes(&self) -> usize {
        self.classes
    }
    /// The length of one cycle: a flit's time on the fastest link.
    pub fn cycle(&self) -> SimDuration {
        self.cycle
    }
    /// The topology.
    pub fn network(&self) -> &Network {
        &self.net
    }
    /// The routing in use.
    pub fn routing(&self) -> NocRouting {
        self.routing
    }
    /// What channel `c` joins.
    pub fn kind(&self, c: usize) -> ChannelKind {
        if c < self.links {
            ChannelKind::Link
        } else if c < self.links + self.endpoints * self.ifaces {
            ChannelKind::Injection
        } else {
            ChannelKind::Ejection
        }
    }
    /// The nodes at the two ends of channel `c` (an interface's node for its own channels).
    pub fn ends(&self, c: usize) -> (NodeId, NodeId) {
        (
            NodeId(u64::from(self.ch_src[c])),
            NodeId(u64::from(self.ch_dst[c])),
        )
    }
    /// Latency of channel `c` in cycles.
    pub fn latency(&self, c: usize) -> u32 {
        self.ch_latency[c]
    }
    /// The injection channel of interface `i` of endpoint `e`.
    pub fn injection(&self, e: usize, i: usize) -> usize {
        self.links + e * self.ifaces + i
    }
    /// The ejection channel of interface `i` of endpoint `e`.
    pub fn ejection(&self, e: usize, i: usize) -> usize {
        self.links + (self.endpoints + e) * self.ifaces + i
    }
    /// The VCs packets of `class` may use on channel `c`: all of them on interface channels,
    /// the class's half on network links.
    pub(crate) fn class_range(&self, c: usize, class: u8) -> (usize, usize) {
        if c >= self.links || self.classes == 1 {
            (0, self.vcs)
        } else {
            let per = self.vcs / self.classes;
            let k = usize::from(class);
            (
                k * per,
                if k + 1 == self.classes {
                    self.vcs
                } else {
                    (k + 1) * per
                },
            )
        }
    }
    /// A short name of channel `c`'s VC `v` for reports: `n3<-n2.vc1`, `n3<-inj0.vc0`.
    pub fn buffer_name(&self, c: usize, v: usize) -> String {
        let (a, b) = self.ends(c);
        match self.kind(c) {
            ChannelKind::Link => format!("{b}<-{a}.vc{v}"),
            ChannelKind::Injection => format!("{b}<-inj{}.vc{v}", (c - self.links) % self.ifaces),
            ChannelKind::Ejection => format!("ej{}<-{a}.vc{v}", (c - self.links) % self.ifaces),
        }
    }

    /// Bytes per directed link of the fabric's link table (target, spec, dateline facts and
    /// offsets: 8 + 24 + 12 + 8, rounded up).
    pub const LINK_TABLE_BYTES: u64 = 56;

    /// Bytes of the dense route table (networks of at most 1024 endpoints).
    pub(crate) fn dense_bytes(&self) -> u64 {
        (self.dense.len() * std::mem::size_of::<RouteRef>()) as u64
    }

    /// About the bytes `pairs` cached routes of `hops` hops each take: the hops (4 bytes
    /// each) and a hash-table entry of the pair (24 bytes, doubled for the table's slack).
    pub fn route_bytes(pairs: u64, hops: f64) -> u64 {
        let per = 4.0 * hops.max(1.0) + 48.0;
        (pairs as f64 * per).min(u64::MAX as f64) as u64
    }

    /// The route from endpoint `src` to `dst` as [`Fabric::route_found`] will give it, found
    /// ahead without changing the cache: the cached route (which never changes once
    /// cached), else its paths.
    pub(crate) fn find(&self, src: u32, dst: u32) -> Found {
        let slot = src as usize * self.endpoints + dst as usize;
        match self.dense.get(slot).filter(|r| r.count > 0) {
            Some(r) => Found::Cached(*r),
            None => match self.cache.get(&(src, dst)) {
                Some(r) => Found::Cached(*r),
                None => Found::Paths(self.compute(NodeId(u64::from(src)), NodeId(u64::from(dst)))),
            },
        }
    }

    /// The route from endpoint `src` to `dst`, computed once and cached; where `found` holds
    /// what [`Fabric::find`] gave for it, the cached route it found, or the paths it found
    /// (used if the route is not cached yet).
    pub(crate) fn route_found(
        &mut self,
        src: u32,
        dst: u32,
        found: Option<&Found>,
    ) -> Result<RouteRef, String> {
        let found = match found {
            Some(Found::Cached(r)) => return Ok(*r),
            Some(Found::Paths(p)) => Some(p.as_ref().map_err(Clone::clone)),
            None => None,
        };
        let slot = src as usize * self.endpoints + dst as usize;
        if let Some(r) = self.dense.get(slot).filter(|r| r.count > 0) {
            return Ok(*r);
        }
        if let Some(r) = self.cache.get(&(src, dst)) {
            return Ok(*r);
        }
        // Paths found ahead are read here and dropped where they were found (the thread
        // that allocated them frees them, off the cycle's own thread).
        let computed;
        let found = match found {
            Some(found) => found?,
            None => {
                computed = self.compute(NodeId(u64::from(src)), NodeId(u64::from(dst)))?;
                &computed
            }
        };
        let len = found.first().map_or(0, Vec::len);
        if found.iter().any(|p| p.len() != len) || len > u16::MAX as usize {
            return Err(format!("paths from n{src} to n{dst} differ in length"));
        }
        let start = u32::try_from(self.arena.len() + found.len() * len)
            .map(|_| self.arena.len() as u32)
            .map_err(|_| {
                format!(
                    "the route cache holds {} hops, more than the packet level addresses (2^32); \
                     use fewer endpoints or a shorter run",
                    self.arena.len()
                )
            })?;
        let r = RouteRef {
            start,
            len: len as u16,
            count: found.len().clamp(1, u16::MAX as usize) as u16,
        };
        for p in found.iter().take(r.count as usize) {
            for &(l, k) in p {
                self.arena.push(l | u32::from(k) << CLASS_SHIFT);
            }
        }
        match self.dense.get_mut(slot) {
            Some(d) => *d = r,
            None => {
                self.cache.insert((src, dst), r);
            }
        }
        Ok(r)
    }

    /// Every path (links and classes) from `src` to `dst`.
    fn compute(&self, src: NodeId, dst: NodeId) -> Result<Paths, String> {
        if src == dst {
            return Ok(vec![Vec::new()]);
        }
        let no_route = || format!("no route from {src} to {dst}");
        let on_cube = |r: Routing| -> Result<Vec<Vec<(u32, u8)>>, String> {
            let c = self.net.cube().ok_or_else(no_route)?;
            let mut out = Vec::new();
            for h in r.route(c, src, dst) {
                let i = c.port_index(h.from, h.port);
                let l = i
                    .and_then(|i| self.table.out_link(h.from, i))
                    .ok_or_else(no_route)?;
                out.push((l as u32, h.vc.0.min(self.classes as u8 - 1)));
            }
            Ok(vec![out])
        };
        let by_nodes = |nodes: &[NodeId]| -> Result<Vec<u32>, String> {
            let mut at = src;
            let mut out = Vec::with_capacity(nodes.len());
            for &v in nodes {
                out.push(self.table.link_between(at, v).ok_or_else(no_route)? as u32);
                at = v;
            }
            Ok(out)
        };
        match self.routing {
            NocRouting::DimensionOrder => {
                let n = self.net.cube().map_or(0, |c| c.dims().len());
                on_cube(Routing::dimension_order(n))
            }
            NocRouting::Minimal => on_cube(Routing::Minimal),
            NocRouting::Noc0 | NocRouting::Noc1 => {
                let Network::Tenstorrent(g) = &self.net else {
                    return Err(no_route());
                };
                let c = g.cube();
                let xy = |n: NodeId| (c.coord(n, 0), c.coord(n, 1));
                let noc = if self.routing == NocRouting::Noc0 {
                    Noc::Noc0
                } else {
                    Noc::Noc1
                };
                let nodes: Vec<NodeId> = g
                    .noc_path(noc, xy(src), xy(dst))
                    .into_iter()
                    .map(|(x, y)| g.tile(x, y))
                    .collect();
                Ok(vec![self.with_dateline(&by_nodes(&nodes)?)])
            }
            NocRouting::Table => {
                let found = paths(&self.net, &self.table, src, dst);
                if found.is_empty() {
                    return Err(no_route());
                }
                Ok(found
                    .iter()
                    .map(|p| {
                        let p: Vec<u32> = p.iter().map(|&l| l as u32).collect();
                        self.with_dateline(&p)
                    })
                    .collect())
            }
        }
    }

    /// Classes for a path by the dateline rule of `podsim-routing` ([`past_dateline`]): the
    /// path enters a dimension at the coordinate of its first hop in it, counts its hops along
    /// it, and each hop's class is whether it is past that dimension's dateline.
    pub(crate) fn with_dateline(&self, path: &[u32]) -> Vec<(u32, u8)> {
        let mut dim = u8::MAX;
        let (mut entered, mut steps) = (0u32, 0u64);
        path.iter()
            .map(|&l| {
                let h = self.link_dateline[l as usize];
                if h.dim != dim {
                    dim = h.dim;
                    entered = h.from;
                    steps = 0;
                }
                steps += 1;
                let dir = if h.plus {
                    Direction::Plus
                } else {
                    Direction::Minus
                };
                let past = h.dim != u8::MAX && past_dateline(h.wraps, dir, h.k, entered, steps);
                (l, u8::from(past && self.classes > 1))
            })
            .collect()
    }
}

/// Whether `routing` can run on `net`.
fn check_routing(net: &Network, routing: NocRouting) -> Result<(), ConfigError> {
    let ok = match routing {
        NocRouting::DimensionOrder | NocRouting::Minimal => net.cube().is_some(),
        NocRouting::Noc0 | NocRouting::Noc1 => matches!(net, Network::Tenstorrent(_)),
        NocRouting::Table => true,
    };
    if ok {
        Ok(())
    } else {
        Err(ConfigError::new(
            "routing",
            format!(
                "`{}` cannot route {}: {}",
                routing.name(),
                net.shorthand(),
                match routing {
                    NocRouting::Noc0 | NocRouting::Noc1 => "it needs a Tenstorrent grid",
                    _ => "it needs a k-ary n-cube (use `table`)",
                }
            ),
        ))
    }
}
