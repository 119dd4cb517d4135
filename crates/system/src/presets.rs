//! The timing of the seed machines: per-hop latencies and endpoint overheads, each with its
//! source. A preset's link latency is one hop: the link and the router or switch it enters. The
//! endpoint overhead is what a one-way transfer pays outside the network: software, descriptor
//! and NIC processing at the sender and delivery at the receiver; every model adds it to every
//! transfer (see [`crate::machine::new_model`]).
//!
//! The Tofu figures follow tofu-interconnect-d.txt, Table III (one-way 8-byte put between
//! nearest neighbours) and the text of Fig. 7 (the packet transfer through one link and two
//! switches takes about 0.1 us on Tofu and TofuD and about 0.3 us on Tofu2): the hop is that
//! packet transfer, and the endpoint overhead is the rest of the row, broken down into sender,
//! receiver and far-CMG components in [`TOFU_PUTS`]. The overheads are therefore calibrated,
//! one per Table III row, and the put latency between neighbours reproduces the table by
//! construction; what the model predicts is everything else (more hops, larger puts,
//! collectives).

use podsim_topology::{Network, TofuGeneration};
use podsim_units::SimDuration;

/// Per-hop latency of a TPU v4 ICI link, electrical or through an OCS: 0.3 us, a stated
/// assumption. The TPU v4 paper gives no ICI latency; 0.3 us is what Tofu2's link and two
/// switches take with a PCS derived from 100 Gb Ethernet (tofu-interconnect-d.txt, section
/// IV.B), the same class of SerDes as ICI's 50 GB/s links. The OCS is a mirror: no electronic
/// delay of its own.
pub const ICI_HOP_LATENCY: SimDuration = SimDuration::from_ns(300);

/// Per-hop latency of the hybrid's InfiniBand fat tree: 0.13 us, the port-to-port latency of
/// an HDR InfiniBand switch (NVIDIA Quantum QM8700 data sheet: 130 ns), cable flight
/// neglected.
pub const IB_HOP_LATENCY: SimDuration = SimDuration::from_ns(130);

/// The per-hop latency of a Tofu generation: the packet transfer through one link and two
/// switches of Fig. 7 (tofu-interconnect-d.txt, section V.B: about 0.1 us on Tofu and TofuD,
/// about 0.3 us on Tofu2 because of its 100GbE-derived PCS).
pub fn tofu_hop_latency(generation: TofuGeneration) -> SimDuration {
    match generation {
        TofuGeneration::Tofu | TofuGeneration::TofuD => SimDuration::from_ns(100),
        TofuGeneration::Tofu2 => SimDuration::from_ns(300),
    }
}

/// An endpoint setting of a machine: a row of Table III for the Tofu family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// Its name on the command line (`--endpoint`).
    pub name: &'static str,
    /// What a one-way transfer pays outside the network.
    pub overhead: SimDuration,
    /// Where the figure comes from.
    pub source: &'static str,
}

/// One row of Table III as podsim breaks it down (the components of Fig. 7): a one-way
/// 8-byte put between nearest neighbours on one board.
///
/// * `packet_ns`: the packet transfer through one link and two switches, cited (section IV.E
///   and V.B: about 0.1 us on Tofu and TofuD, about 0.3 us on Tofu2); it is the preset's
///   per-hop latency ([`tofu_hop_latency`]).
/// * `sender_ns` and `receiver_ns`: the initiator's software, descriptor and TNI processing,
///   and the target's TNI processing, memory or cache write and read. Fig. 7 draws them, the
///   text gives no values: podsim splits each generation's fastest row equally between the
///   two sides (an assumption), and puts the text's differences where the text says they
///   arise: a descriptor read from main memory costs the sender 0.24 us on Tofu (1.15 - 0.91,
///   "bypassing the main memory"), no cache injection costs the receiver 0.16 us on Tofu2
///   (0.87 - 0.71).
/// * `far_ns`: TofuD's penalty when both processes run on far CMGs, 0.05 us (section V.B).
///
/// Each row's total is Table III's figure by construction: these are calibrated parameters,
/// declared here once; what podsim predicts is everything built on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PutBreakdown {
    /// The generation.
    pub generation: TofuGeneration,
    /// The setting's name (`--endpoint`, `podsim tofu put --setting`).
    pub setting: &'static str,
    /// Initiator side, ns.
    pub sender_ns: u64,
    /// One link and two switches, ns.
    pub packet_ns: u64,
    /// Target side, ns.
    pub receiver_ns: u64,
    /// Far CMGs at both ends, ns.
    pub far_ns: u64,
    /// Table III's row, and how the overhead follows from it.
    pub source: &'static str,
}

impl PutBreakdown {
    /// The whole put, ns.
    pub const fn total_ns(&self) -> u64 {
        self.sender_ns + self.packet_ns + self.receiver_ns + self.far_ns
    }
    /// What the endpoints add to the packet transfer, ns.
    pub const fn overhead_ns(&self) -> u64 {
        self.sender_ns + self.receiver_ns + self.far_ns
    }
}

/// Table III, row by row, the default setting of each generation first.
pub const TOFU_PUTS: [PutBreakdown; 6] = [
    PutBreakdown {
        generation: TofuGeneration::TofuD,
        setting: "near-cmg",
        sender_ns: 195,
        packet_ns: 100,
        receiver_ns: 195,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, TofuD to/from near CMGs: 0.49 us less the 0.1 us packet transfer of Fig. 7 (calibrated)",
    },
    PutBreakdown {
        generation: TofuGeneration::TofuD,
        setting: "far-cmg",
        sender_ns: 195,
        packet_ns: 100,
        receiver_ns: 195,
        far_ns: 50,
        source: "tofu-interconnect-d.txt Table III, TofuD to/from far CMGs: 0.54 us less the 0.1 us packet transfer of Fig. 7 (calibrated)",
    },
    PutBreakdown {
        generation: TofuGeneration::Tofu2,
        setting: "cache-injection-on",
        sender_ns: 205,
        packet_ns: 300,
        receiver_ns: 205,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, Tofu2 with cache injection: 0.71 us less the 0.3 us packet transfer of Fig. 7 (calibrated)",
    },
    PutBreakdown {
        generation: TofuGeneration::Tofu2,
        setting: "cache-injection-off",
        sender_ns: 205,
        packet_ns: 300,
        receiver_ns: 365,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, Tofu2 without cache injection: 0.87 us less the 0.3 us packet transfer of Fig. 7 (calibrated)",
    },
    PutBreakdown {
        generation: TofuGeneration::Tofu,
        setting: "direct-descriptor",
        sender_ns: 405,
        packet_ns: 100,
        receiver_ns: 405,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, Tofu with direct descriptors: 0.91 us less the 0.1 us packet transfer of Fig. 7 (calibrated)",
    },
    PutBreakdown {
        generation: TofuGeneration::Tofu,
        setting: "descriptor-on-memory",
        sender_ns: 645,
        packet_ns: 100,
        receiver_ns: 405,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, Tofu with descriptors in main memory: 1.15 us less the 0.1 us packet transfer of Fig. 7 (calibrated)",
    },
];

/// The endpoint setting a Table III row makes.
const fn tofu_endpoint(i: usize) -> Endpoint {
    Endpoint {
        name: TOFU_PUTS[i].setting,
        overhead: SimDuration::from_ns(TOFU_PUTS[i].overhead_ns()),
        source: TOFU_PUTS[i].source,
    }
}

const TOFU_D: [Endpoint; 2] = [tofu_endpoint(0), tofu_endpoint(1)];
const TOFU_2: [Endpoint; 2] = [tofu_endpoint(2), tofu_endpoint(3)];
const TOFU_1: [Endpoint; 2] = [tofu_endpoint(4), tofu_endpoint(5)];

/// The put breakdown of `generation` at `setting` (`None`: its default, near CMGs, cache
/// injection on, direct descriptors); an error lists the settings.
pub fn tofu_put(
    generation: TofuGeneration,
    setting: Option<&str>,
) -> Result<PutBreakdown, EndpointError> {
    let rows: Vec<&PutBreakdown> = TOFU_PUTS
        .iter()
        .filter(|p| p.generation == generation)
        .collect();
    match setting {
        None => Ok(*rows[0]),
        Some(n) => rows
            .iter()
            .find(|p| p.setting == n)
            .map(|p| **p)
            .ok_or_else(|| EndpointError::Unknown {
                got: n.to_string(),
                topology: generation.name().to_string(),
                choices: rows
                    .iter()
                    .map(|p| p.setting)
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
    }
}

/// The endpoint settings of `net`, the default first; empty for a machine whose endpoints cost
/// nothing beyond their links (meshes, tori and fat trees given by shape, and the presets whose
/// seeds state no endpoint overhead: TPU v4, DOJO, Tenstorrent).
pub fn endpoints(net: &Network) -> &'static [Endpoint] {
    match net {
        Network::Tofu(t) => match t.generation() {
            TofuGeneration::TofuD => &TOFU_D,
            TofuGeneration::Tofu2 => &TOFU_2,
            TofuGeneration::Tofu => &TOFU_1,
        },
        Network::Cube(_)
        | Network::FatTree(_)
        | Network::Dojo(_)
        | Network::Tenstorrent(_)
        | Network::Hybrid(_) => &[],
    }
}

/// An endpoint setting a machine does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// The machine has no endpoint settings at all.
    #[error(
        "{topology} has no endpoint settings (its endpoints cost nothing beyond their links); drop --endpoint"
    )]
    NoSettings {
        /// The network.
        topology: String,
    },
    /// Not one of the machine's settings.
    #[error("`{got}` is not an endpoint setting of {topology} (settings: {choices})")]
    Unknown {
        /// What was given.
        got: String,
        /// The network.
        topology: String,
        /// Its settings.
        choices: String,
    },
}

/// The endpoint setting `name` of `net` (`None`: its default); an error lists the settings.
pub fn endpoint(net: &Network, name: Option<&str>) -> Result<Option<Endpoint>, EndpointError> {
    let all = endpoints(net);
    match name {
        None => Ok(all.first().copied()),
        Some(n) => all
            .iter()
            .find(|e| e.name == n)
            .copied()
            .map(Some)
            .ok_or_else(|| {
                if all.is_empty() {
                    EndpointError::NoSettings {
                        topology: net.shorthand(),
                    }
                } else {
                    let names: Vec<&str> = all.iter().map(|e| e.name).collect();
                    EndpointError::Unknown {
                        got: n.to_string(),
                        topology: net.shorthand(),
                        choices: names.join(", "),
                    }
                }
            }),
    }
}
