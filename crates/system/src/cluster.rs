//! A whole machine as a machine file describes it: its chip, identical nodes of some chips
//! each, link classes with their sources, and tiers of network (a scale-up domain inside a
//! node, a scale-out fabric across nodes), built into one graph of chips, NICs and switches
//! ([`podsim_topology::Graph`]). A GPU cluster (NVSwitch inside a node, a rail-optimised
//! InfiniBand fat tree across) is a file, not Rust.
//!
//! Rank r is chip `r mod chips_per_node` of node `r / chips_per_node`: ranks fill a node
//! before the next, so the algorithms that work one dimension at a time (`dimension`) run
//! inside the nodes first and then across them, on the rails.

use podsim_topology::{
    Graph, GraphLink, GraphNode, GraphNodeKind, KAryNCube, LinkSpec, Network, NodeId, TopologyError,
};
use podsim_units::SimDuration;

/// The most chips a machine file may build (its metrics search from every chip).
pub const MAX_MACHINE_CHIPS: u64 = 16_384;

/// A class of link: what it is, its bandwidth each way and its latency, and where they come
/// from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkClass {
    /// Its name in the file (`nvlink3`, `hdr`).
    pub name: String,
    /// Kind, the bandwidth data moves at per direction (the line rate less each packet's
    /// header), time of flight.
    pub spec: LinkSpec,
    /// Where the figures come from.
    pub source: String,
    /// The line rate per direction, headers included.
    pub line_rate: podsim_units::Bandwidth,
}

/// The chip a machine is built of, as the file states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineChip {
    /// Its name (a preset's, or the file's).
    pub name: String,
    /// Peak dense matrix FLOP/s (BF16).
    pub matrix_flops: podsim_units::FlopRate,
    /// Memory capacity.
    pub memory: podsim_units::Bytes,
    /// Memory bandwidth.
    pub memory_bandwidth: podsim_units::Bandwidth,
    /// Its matrix units, where the file or the preset states them.
    pub matrix_unit: Option<MatrixUnit>,
    /// The fraction of its matrix units' modelled rate a GEMM kernel sustains, where the file
    /// states one (`matrix_efficiency`; none: the tiling model's rate).
    pub matrix_efficiency: Option<Fraction>,
    /// The fraction of its memory bandwidth the work outside GEMMs sustains, where the file
    /// states one (`memory_efficiency`; none: the full bandwidth).
    pub memory_efficiency: Option<Fraction>,
    /// Where the figures come from.
    pub source: String,
}

/// A fraction in (0, 1], finite (so equality is total).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Fraction(f64);

impl Eq for Fraction {}

impl Fraction {
    /// `v` if it is finite, above 0 and at most 1.
    pub fn new(v: f64) -> Option<Fraction> {
        (v.is_finite() && v > 0.0 && v <= 1.0).then_some(Fraction(v))
    }

    /// Its value.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl MachineChip {
    /// The memory bandwidth the chip's kernels sustain: `memory_bandwidth` x
    /// `memory_efficiency` (the full bandwidth where the file states no efficiency).
    pub fn sustained_memory_bandwidth(&self) -> Result<podsim_units::Bandwidth, String> {
        let e = self.memory_efficiency.map_or(1.0, Fraction::get);
        let b = (self.memory_bandwidth.bytes_per_s() as f64 * e).round() as u64;
        podsim_units::Bandwidth::from_bytes_per_s(b).ok_or_else(|| {
            format!(
                "chip `{}`: memory_bandwidth x memory_efficiency is no bandwidth",
                self.name
            )
        })
    }
}

/// A chip's matrix units: `count` arrays of `rows` x `cols` multiply-accumulate cells at
/// `clock` (peak matrix FLOP/s = 2 x count x rows x cols x clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatrixUnit {
    /// Rows of one array.
    pub rows: u32,
    /// Columns of one array.
    pub cols: u32,
    /// Arrays on the chip.
    pub count: u32,
    /// Their clock.
    pub clock: podsim_units::Frequency,
    /// How they share one product.
    pub tiling: podsim_compute::chips::Tiling,
}

impl MatrixUnit {
    /// Peak matrix FLOP/s: two FLOPs per cell per cycle.
    pub fn peak_flops(&self) -> f64 {
        2.0 * f64::from(self.count)
            * f64::from(self.rows)
            * f64::from(self.cols)
            * self.clock.as_hz() as f64
    }
}

/// What joins the chips a tier covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fabric {
    /// One non-blocking switch joining every chip of the scope.
    Switch,
    /// A non-blocking fat tree of `ports`-port switches: leaves with half their ports down to
    /// the chips (or their NICs) and half up, one to each of `ports / 2` spines; past `ports`
    /// leaves, three levels (pods of `ports / 2` leaves and spines under `(ports / 2)²` cores). `rails`: chip i of every node goes to the leaves of rail i (a rail-optimised
    /// fabric, as NVIDIA's DGX SuperPOD), so the same chip of every node is one leaf apart.
    FatTree {
        /// Ports per switch (even, at least 2).
        ports: u32,
        /// Whether the leaves are per rail.
        rails: bool,
    },
    /// A preset network (a TPU v4 slice, a Tofu system, a DOJO tile, a Tenstorrent grid, ...)
    /// as its shorthand names it: the machine's only tier, which fixes its chips and links.
    Preset {
        /// The preset.
        topology: Box<crate::TopoSpec>,
        /// Its links, as the preset sets them.
        link: LinkSpec,
    },
    /// Chips linked directly as a ring, mesh or torus of these sizes and wrap flags (the
    /// chips forward traffic); its product is the chips of the scope.
    Cube {
        /// Sizes.
        dims: Vec<u32>,
        /// Wrap flags.
        wrap: Vec<bool>,
    },
}

/// Whether a tier is built once a node or once across the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One instance in every node, joining that node's chips.
    Node,
    /// One instance joining every chip of the machine.
    Machine,
}

impl Scope {
    /// Its name in files.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Node => "node",
            Scope::Machine => "machine",
        }
    }
}

/// One tier of network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tier {
    /// Its name (`nvswitch`, `infiniband`).
    pub name: String,
    /// Per node or across the machine.
    pub scope: Scope,
    /// What joins the chips.
    pub fabric: Fabric,
    /// The class of its links (index into [`MachineSpec::links`]; `None` for a preset, which
    /// sets its own).
    pub link: Option<usize>,
    /// A NIC per chip between the chip and the fabric, joined to the chip by links of this
    /// class (index into [`MachineSpec::links`]); `None`: the chip's own port.
    pub nic_link: Option<usize>,
    /// The time a transfer spends crossing one of its switches.
    pub switch_latency: SimDuration,
}

/// A machine file, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineSpec {
    /// Its name in reports.
    pub name: String,
    /// The chip.
    pub chip: MachineChip,
    /// Chips in a node.
    pub chips_per_node: u32,
    /// Nodes (the file's count, or `--nodes`).
    pub nodes: u32,
    /// The link classes.
    pub links: Vec<LinkClass>,
    /// The tiers, in the file's order.
    pub tiers: Vec<Tier>,
    /// What a one-way transfer pays outside the network (software and NIC, sender plus
    /// receiver).
    pub endpoint_overhead: SimDuration,
}

impl MachineSpec {
    /// Chips in the machine.
    pub fn chips(&self) -> u64 {
        u64::from(self.chips_per_node) * u64::from(self.nodes)
    }

    /// The fastest link class's spec (what reports call the machine's link); `None` without
    /// link classes.
    pub fn link(&self) -> Option<LinkSpec> {
        self.links
            .iter()
            .map(|l| l.spec)
            .max_by_key(|s| (s.bandwidth, std::cmp::Reverse(s.latency)))
    }

    /// The preset network the machine's only tier names, if it does, as a system of the
    /// machine's name.
    pub fn preset(&self) -> Option<crate::SystemSpec> {
        match self.tiers.as_slice() {
            [
                Tier {
                    fabric: Fabric::Preset { topology, link },
                    ..
                },
            ] => Some(crate::SystemSpec {
                name: self.name.clone(),
                topology: (**topology).clone(),
                link: *link,
                blocks: None,
                interfaces: None,
            }),
            _ => None,
        }
    }

    /// The graph of chips, NICs and switches (see the module docs), or the preset network.
    pub fn build(&self) -> Result<Network, TopologyError> {
        if let Some(preset) = self.preset() {
            return preset.build();
        }
        if self.tiers.is_empty() {
            return Err(TopologyError {
                key: "tier",
                why: format!(
                    "{} is one chip and no network (no [[tier]]): there is nothing to route; `podsim gemm --system` runs on its chip",
                    self.name
                ),
            });
        }
        let chips = self.chips();
        if chips > MAX_MACHINE_CHIPS {
            return Err(TopologyError {
                key: "nodes",
                why: format!(
                    "{} nodes of {} chips is {chips} chips, more than the {MAX_MACHINE_CHIPS} a machine file may build",
                    self.nodes, self.chips_per_node
                ),
            });
        }
        let mut b = Builder {
            chips,
            others: Vec::new(),
            links: Vec::new(),
            forward: false,
        };
        for t in &self.tiers {
            let Some(link) = t.link.and_then(|l| self.links.get(l)).map(|l| l.spec) else {
                return Err(TopologyError {
                    key: "tier.link",
                    why: format!(
                        "tier `{}` names no link class (only a preset sets its own links, as the machine's only tier)",
                        t.name
                    ),
                });
            };
            let groups: Vec<Vec<u64>> = match t.scope {
                Scope::Node => (0..u64::from(self.nodes))
                    .map(|n| {
                        let per = u64::from(self.chips_per_node);
                        (n * per..(n + 1) * per).collect()
                    })
                    .collect(),
                Scope::Machine => vec![(0..chips).collect()],
            };
            for (gi, members) in groups.iter().enumerate() {
                let instance = match t.scope {
                    Scope::Node => format!("{}.node{gi}", t.name),
                    Scope::Machine => t.name.clone(),
                };
                // Where the chips meet the fabric: their NICs, or themselves.
                let attach: Vec<u64> = match t.nic_link {
                    Some(nl) => members
                        .iter()
                        .map(|&c| {
                            let nic = b.add(
                                GraphNodeKind::Nic,
                                format!("{}.nic{c}", t.name),
                                SimDuration::ZERO,
                            );
                            b.link(c, nic, self.links[nl].spec);
                            nic
                        })
                        .collect(),
                    None => members.clone(),
                };
                match &t.fabric {
                    Fabric::Preset { .. } => {
                        return Err(TopologyError {
                            key: "tier.fabric",
                            why: format!(
                                "tier `{}` names a preset network, which must be the machine's only tier",
                                t.name
                            ),
                        });
                    }
                    Fabric::Switch => {
                        let s = b.add(GraphNodeKind::Switch, instance, t.switch_latency);
                        for &a in &attach {
                            b.link(a, s, link);
                        }
                    }
                    Fabric::FatTree { ports, rails } => {
                        let rails_of = if *rails { self.chips_per_node } else { 1 };
                        if *rails && t.scope == Scope::Node {
                            return Err(TopologyError {
                                key: "tier.rails",
                                why: format!(
                                    "tier `{}`: rails join the same chip of every node, so a railed fat tree spans the machine (scope = \"machine\")",
                                    t.name
                                ),
                            });
                        }
                        let per_rail: Vec<Vec<u64>> = (0..u64::from(rails_of))
                            .map(|r| {
                                attach
                                    .iter()
                                    .enumerate()
                                    .filter(|(i, _)| *i as u64 % u64::from(rails_of) == r)
                                    .map(|(_, &a)| a)
                                    .collect()
                            })
                            .collect();
                        b.fat_tree(&instance, *ports, &per_rail, link, t.switch_latency)?;
                    }
                    Fabric::Cube { dims, wrap } => {
                        b.forward = true;
                        let cube = KAryNCube::new(dims.clone(), wrap.clone(), link)?;
                        if cube.node_count() != members.len() as u64 {
                            return Err(TopologyError {
                                key: "tier.topology",
                                why: format!(
                                    "tier `{}`: a {} has {} chips, but its scope holds {}",
                                    t.name,
                                    cube.shorthand(),
                                    cube.node_count(),
                                    members.len()
                                ),
                            });
                        }
                        for u in 0..cube.node_count() {
                            for p in cube.ports(NodeId(u)) {
                                if let Some(v) = cube.neighbor(NodeId(u), p)
                                    && u < v.0
                                {
                                    b.link(attach[u as usize], attach[v.0 as usize], link);
                                }
                            }
                        }
                    }
                }
            }
        }
        let grid = if self.nodes > 1 && self.chips_per_node > 1 {
            vec![self.chips_per_node, self.nodes]
        } else {
            Vec::new()
        };
        let links = b.merged();
        Graph::new(&self.name, chips, b.others, links, b.forward, grid)
            .map(|g| Network::Graph(g.with_endpoint_overhead(self.endpoint_overhead)))
    }
}

struct Builder {
    chips: u64,
    others: Vec<GraphNode>,
    links: Vec<GraphLink>,
    forward: bool,
}

impl Builder {
    fn add(&mut self, kind: GraphNodeKind, name: String, latency: SimDuration) -> u64 {
        self.others.push(GraphNode {
            kind,
            name,
            latency,
        });
        self.chips + self.others.len() as u64 - 1
    }

    fn link(&mut self, a: u64, b: u64, spec: LinkSpec) {
        self.links.push(GraphLink {
            a: NodeId(a),
            b: NodeId(b),
            spec,
        });
    }

    /// Parallel links between the same two nodes (a ring of two, a torus of side two) as one
    /// link of their summed bandwidth.
    fn merged(&self) -> Vec<GraphLink> {
        let mut out: Vec<GraphLink> = Vec::with_capacity(self.links.len());
        let mut at = std::collections::HashMap::new();
        for l in &self.links {
            let key = (l.a.min(l.b), l.a.max(l.b));
            match at.get(&key) {
                Some(&i) => {
                    let o: &mut GraphLink = &mut out[i];
                    let sum = o
                        .spec
                        .bandwidth
                        .bytes_per_s()
                        .saturating_add(l.spec.bandwidth.bytes_per_s());
                    o.spec.bandwidth =
                        podsim_units::Bandwidth::from_bytes_per_s(sum).unwrap_or(o.spec.bandwidth);
                }
                None => {
                    at.insert(key, out.len());
                    out.push(*l);
                }
            }
        }
        out
    }

    /// Leaves for each rail's attachments (`ports / 2` down each), then, when there is more
    /// than one leaf, `ports / 2` spines each linked once to every leaf, or, past `ports`
    /// leaves, pods of spines under core switches.
    fn fat_tree(
        &mut self,
        name: &str,
        ports: u32,
        rails: &[Vec<u64>],
        link: LinkSpec,
        latency: SimDuration,
    ) -> Result<(), TopologyError> {
        let down = u64::from(ports / 2);
        let mut leaves = Vec::new();
        for (r, attach) in rails.iter().enumerate() {
            for (i, group) in attach.chunks(down as usize).enumerate() {
                let leaf_name = if rails.len() > 1 {
                    format!("{name}.rail{r}.leaf{i}")
                } else {
                    format!("{name}.leaf{i}")
                };
                let leaf = self.add(GraphNodeKind::Switch, leaf_name, latency);
                for &a in group {
                    self.link(a, leaf, link);
                }
                leaves.push(leaf);
            }
        }
        if leaves.len() < 2 {
            return Ok(());
        }
        if leaves.len() as u64 <= u64::from(ports) {
            // Two levels: every leaf linked once to each of ports / 2 spines.
            for s in 0..down {
                let spine = self.add(GraphNodeKind::Switch, format!("{name}.spine{s}"), latency);
                for &leaf in &leaves {
                    self.link(leaf, spine, link);
                }
            }
            return Ok(());
        }
        // Three levels (Al-Fares et al.'s k-ary fat tree): pods of ports / 2 leaves, each pod
        // with ports / 2 spines linked to each of its leaves; spine i of every pod linked to
        // cores i x ports/2 .. (i + 1) x ports/2 - 1; a core has one port per pod.
        let pods = (leaves.len() as u64).div_ceil(down);
        if pods > u64::from(ports) {
            return Err(TopologyError {
                key: "tier.switch_ports",
                why: format!(
                    "`{name}` needs {} leaf switches in {pods} pods, more than the {ports} pods a three-level fat tree of {ports}-port switches joins (use switches of more ports, or fewer nodes)",
                    leaves.len()
                ),
            });
        }
        let cores: Vec<u64> = (0..down * down)
            .map(|c| self.add(GraphNodeKind::Switch, format!("{name}.core{c}"), latency))
            .collect();
        for (p, pod) in leaves.chunks(down as usize).enumerate() {
            for s in 0..down {
                let spine = self.add(
                    GraphNodeKind::Switch,
                    format!("{name}.pod{p}.spine{s}"),
                    latency,
                );
                for &leaf in pod {
                    self.link(leaf, spine, link);
                }
                for c in 0..down {
                    self.link(spine, cores[(s * down + c) as usize], link);
                }
            }
        }
        Ok(())
    }
}
