//! The router configuration: every knob of the packet-level model, with defaults and checks.

use serde::{Deserialize, Serialize};

use podsim_topology::LinkKind;

/// How an allocator picks among requests competing for the same resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// Round-robin: the request after the last winner goes first.
    #[default]
    RoundRobin,
    /// First come, first served: the packet that entered the network first (its head left its
    /// source interface earliest) goes first, in VC and in switch allocation (ties by
    /// round-robin), so traffic already in the network keeps going ahead of packets that
    /// enter after it. Within one virtual channel this is how a Tenstorrent NoC serves readers
    /// (tenstorrent-dram-bandwidth.txt: one VC serves requests first-come first-served, so one
    /// reader can get all its requests sent out while another waits for it to finish).
    Fcfs,
}

impl Arbitration {
    /// The name used on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            Arbitration::RoundRobin => "round-robin",
            Arbitration::Fcfs => "fcfs",
        }
    }
}

/// Which router model the packet level runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouterMode {
    /// podsim's own input-queued router (`pipeline_stages`, `link_cycles`, `arbitration`; see
    /// the crate docs).
    #[default]
    Podsim,
    /// BookSim 2's `iq` router, stage by stage (`routing_delay`, `vc_alloc_delay`,
    /// `sw_alloc_delay`, `st_prepare_delay`, `st_final_delay`, `credit_delay`,
    /// `channel_latency`, `allocator`, `alloc_iters`), with BookSim's injection process and
    /// measurement protocol; k-ary n-cubes with dimension-order routing.
    Booksim,
}

impl RouterMode {
    /// Every mode, by name.
    pub const ALL: [(&'static str, RouterMode); 2] = [
        ("podsim", RouterMode::Podsim),
        ("booksim", RouterMode::Booksim),
    ];

    /// The name used on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            RouterMode::Podsim => "podsim",
            RouterMode::Booksim => "booksim",
        }
    }

    /// The mode called `name`.
    pub fn parse(name: &str) -> Result<Self, ConfigError> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, m)| m)
            .ok_or_else(|| {
                ConfigError::new(
                    "router",
                    format!("unknown router `{name}`; expected podsim or booksim"),
                )
            })
    }
}

/// The VC and switch allocators of the BookSim router mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocator {
    /// iSLIP (BookSim's default `islip`): `alloc_iters` rounds of grant (round-robin over the
    /// inputs requesting an output) and accept (round-robin over the outputs granting an input);
    /// pointers move only on a grant accepted in the first round.
    #[default]
    Islip,
    /// Separable input-first (BookSim's `separable_input_first` with `round_robin` arbiters):
    /// each input picks one of its requests round-robin, each output one of the picks.
    #[serde(alias = "separable_input_first")]
    SeparableInputFirst,
    /// Separable output-first (BookSim's `separable_output_first` with `round_robin`
    /// arbiters): each output picks one of the inputs requesting it round-robin, each input one
    /// of the outputs that picked it; the two arbiters' pointers move past a match. With equal
    /// priorities (BookSim's default `priority = none`) this decides as one round of iSLIP, and
    /// it runs as that; like BookSim, it takes no `alloc_iters`.
    #[serde(alias = "separable_output_first")]
    SeparableOutputFirst,
}

impl Allocator {
    /// The name used in files.
    pub fn name(self) -> &'static str {
        match self {
            Allocator::Islip => "islip",
            Allocator::SeparableInputFirst => "separable-input-first",
            Allocator::SeparableOutputFirst => "separable-output-first",
        }
    }
}

/// Link latency in cycles for each kind of link; `None` derives it from the link's latency in
/// the topology (rounded up to whole cycles, at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCycles {
    /// Wires on one die.
    #[serde(rename = "on-chip", default)]
    pub on_chip: Option<u32>,
    /// Copper between packages, boards or racks.
    #[serde(default)]
    pub electrical: Option<u32>,
    /// Fibre.
    #[serde(default)]
    pub optical: Option<u32>,
}

impl LinkCycles {
    /// Every kind `cycles` long.
    pub const fn all(cycles: u32) -> Self {
        LinkCycles {
            on_chip: Some(cycles),
            electrical: Some(cycles),
            optical: Some(cycles),
        }
    }

    /// The setting for `kind`.
    pub fn get(&self, kind: LinkKind) -> Option<u32> {
        match kind {
            LinkKind::OnChip => self.on_chip,
            LinkKind::Electrical => self.electrical,
            LinkKind::Optical => self.optical,
        }
    }
}

/// The router and network-interface configuration (see the crate docs for the model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RouterConfig {
    /// Virtual channels per port (1..=32). On a network with wrap-around links and
    /// `dateline = true` they are split into two equal classes, so at least 2 are needed.
    pub vcs: u32,
    /// Buffer depth of each virtual channel, in flits (1..=65535).
    pub buffer_flits: u32,
    /// Bytes one flit carries; with the link bandwidth this sets the cycle time (one flit per
    /// cycle on the fastest link).
    pub flit_bytes: u64,
    /// Flits per packet (1..=65535), head and tail included.
    pub packet_flits: u32,
    /// Router pipeline stages (route computation, VC allocation, switch allocation, switch
    /// traversal folded into this many cycles, at least 1): a flit that arrives at cycle t
    /// can cross the switch at cycle t + stages - 1 at the earliest.
    pub pipeline_stages: u32,
    /// Link latency in cycles per kind of link.
    pub link_cycles: LinkCycles,
    /// Arbitration of the VC and switch allocators.
    pub arbitration: Arbitration,
    /// Dateline virtual-channel classes on wrapped dimensions (turn off only to watch a torus
    /// deadlock).
    pub dateline: bool,
    /// Cycles without any flit moving, while flits are in flight, before the run stops with a
    /// deadlock error.
    pub watchdog_cycles: u64,
    /// Give each channel's VCs at least 2L + S flits (L its latency, S the pipeline), so a long
    /// link is not throttled by credits returning late, as long links are built. Off, every
    /// VC has `buffer_flits`.
    pub cover_round_trip: bool,
    /// The router model: `podsim` (default) or `booksim` (BookSim 2's `iq` router; the keys
    /// below up to `output_speedup` are its knobs and only it reads them).
    #[serde(skip_serializing_if = "is_default")]
    pub router: RouterMode,
    /// BookSim mode: cycles of route computation (BookSim `routing_delay`, default 1; 0 is
    /// lookahead routing, the route computed one router ahead).
    #[serde(skip_serializing_if = "is_one")]
    pub routing_delay: u32,
    /// BookSim mode: cycles of VC allocation (`vc_alloc_delay`, default 1, at least 1).
    #[serde(skip_serializing_if = "is_one")]
    pub vc_alloc_delay: u32,
    /// BookSim mode: cycles of switch allocation (`sw_alloc_delay`, default 1, at least 1).
    #[serde(skip_serializing_if = "is_one")]
    pub sw_alloc_delay: u32,
    /// BookSim mode: cycles preparing switch traversal (`st_prepare_delay`, default 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub st_prepare_delay: u32,
    /// BookSim mode: cycles of switch traversal (`st_final_delay`, default 1); the crossbar
    /// takes `st_prepare_delay + st_final_delay` cycles, at least 1.
    #[serde(skip_serializing_if = "is_one")]
    pub st_final_delay: u32,
    /// BookSim mode: cycles a router takes to process a credit it received (`credit_delay`,
    /// default 0), on top of the credit channel's latency.
    #[serde(skip_serializing_if = "is_zero")]
    pub credit_delay: u32,
    /// BookSim mode: latency of router-to-router channels (flits and credits) in cycles;
    /// unset, BookSim's `use_noc_latency = 1`: 1 on a mesh, 2 on a network with wrap-around
    /// links. Injection and ejection channels always take 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_latency: Option<u32>,
    /// BookSim mode: the VC and switch allocators (`islip`, default,
    /// `separable-input-first` or `separable-output-first`), with round-robin arbiters.
    #[serde(skip_serializing_if = "is_default")]
    pub allocator: Allocator,
    /// BookSim mode: iSLIP iterations per allocation (`alloc_iters`, default 1).
    #[serde(skip_serializing_if = "is_one")]
    pub alloc_iters: u32,
    /// BookSim mode: crossbar inputs per router input port (`input_speedup`, default 1): input
    /// VC `c` of a port crosses the switch on its input `c % input_speedup`, so a port may send
    /// that many flits a cycle from VCs on different inputs.
    #[serde(skip_serializing_if = "is_one")]
    pub input_speedup: u32,
    /// BookSim mode: crossbar outputs per router output port (`output_speedup`, default 1):
    /// input port `p` reaches an output on its crossbar output `p % output_speedup`, so that
    /// many flits may cross to one output port in a cycle; they wait in the output's queue
    /// (BookSim's `output_buffer_size = -1`: unbounded) and leave on its channel one a cycle.
    #[serde(skip_serializing_if = "is_one")]
    pub output_speedup: u32,
    /// The most memory, in bytes, a simulation built to this configuration may hold: it is
    /// refused up front, naming its estimate, when the estimate is larger. Not a key of
    /// configuration files (the command line's `--memory-limit` sets it); default: no limit.
    #[serde(skip)]
    pub memory_limit: u64,
}

impl Default for RouterConfig {
    /// 4 VCs x 8 flits, 16-byte flits, 1-flit packets, a single-cycle router and 1-cycle links:
    /// DOJO's "a single cycle to move data between two neighboring nodes"
    /// (dojo-microarchitecture.txt, Network Interface) is the shortest the seeds' networks imply.
    fn default() -> Self {
        RouterConfig {
            vcs: 4,
            buffer_flits: 8,
            flit_bytes: 16,
            packet_flits: 1,
            pipeline_stages: 1,
            link_cycles: LinkCycles::all(1),
            arbitration: Arbitration::RoundRobin,
            dateline: true,
            watchdog_cycles: 10_000,
            cover_round_trip: false,
            router: RouterMode::Podsim,
            routing_delay: 1,
            vc_alloc_delay: 1,
            sw_alloc_delay: 1,
            st_prepare_delay: 0,
            st_final_delay: 1,
            credit_delay: 0,
            channel_latency: None,
            allocator: Allocator::Islip,
            alloc_iters: 1,
            input_speedup: 1,
            output_speedup: 1,
            memory_limit: u64::MAX,
        }
    }
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
fn is_one(v: &u32) -> bool {
    *v == 1
}
fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// A configuration value that cannot be used: the key and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}`: {why}")]
pub struct ConfigError {
    /// The key at fault (`vcs`, `buffer_flits`, ...).
    pub key: String,
    /// What was expected instead.
    pub why: String,
}

impl ConfigError {
    /// An error for `key`.
    pub fn new(key: impl Into<String>, why: impl Into<String>) -> Self {
        ConfigError {
            key: key.into(),
            why: why.into(),
        }
    }
}

impl RouterConfig {
    /// Check every value's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let range = |key: &str, v: u64, lo: u64, hi: u64| {
            if v < lo || v > hi {
                Err(ConfigError::new(
                    key,
                    format!("expected a whole number from {lo} to {hi}, got {v}"),
                ))
            } else {
                Ok(())
            }
        };
        range("vcs", u64::from(self.vcs), 1, 32)?;
        range("buffer_flits", u64::from(self.buffer_flits), 1, 65_535)?;
        range("packet_flits", u64::from(self.packet_flits), 1, 65_535)?;
        range("pipeline_stages", u64::from(self.pipeline_stages), 1, 1_000)?;
        range("flit_bytes", self.flit_bytes, 1, 1 << 20)?;
        range("watchdog_cycles", self.watchdog_cycles, 1, u64::MAX)?;
        for kind in LinkKind::ALL {
            if let Some(c) = self.link_cycles.get(kind) {
                range(
                    &format!("link_cycles.{}", kind.name()),
                    u64::from(c),
                    1,
                    65_535,
                )?;
            }
        }
        range("routing_delay", u64::from(self.routing_delay), 0, 1_000)?;
        range("vc_alloc_delay", u64::from(self.vc_alloc_delay), 1, 1_000)?;
        range("sw_alloc_delay", u64::from(self.sw_alloc_delay), 1, 1_000)?;
        range(
            "st_prepare_delay",
            u64::from(self.st_prepare_delay),
            0,
            1_000,
        )?;
        range("st_final_delay", u64::from(self.st_final_delay), 0, 1_000)?;
        if self.st_prepare_delay + self.st_final_delay == 0 {
            return Err(ConfigError::new(
                "st_final_delay",
                "the crossbar needs at least one cycle: st_prepare_delay + st_final_delay must \
                 be at least 1, got 0",
            ));
        }
        range("credit_delay", u64::from(self.credit_delay), 0, 1_000)?;
        if let Some(l) = self.channel_latency {
            range("channel_latency", u64::from(l), 1, 65_535)?;
        }
        range("alloc_iters", u64::from(self.alloc_iters), 1, 64)?;
        range("input_speedup", u64::from(self.input_speedup), 1, 8)?;
        range("output_speedup", u64::from(self.output_speedup), 1, 8)?;
        if self.router != RouterMode::Booksim {
            for (key, v) in [
                ("input_speedup", self.input_speedup),
                ("output_speedup", self.output_speedup),
            ] {
                if v != 1 {
                    return Err(ConfigError::new(
                        key,
                        format!(
                            "sets BookSim's iq router, which the podsim router does not run \
                             (got {v}); drop it, or set router = \"booksim\""
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
