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
//! receiver, main-memory and far-CMG components in [`TOFU_PUTS`]. Four parameters are fitted,
//! each to one row, and one is typed in from the text; TofuD's near-CMG row is predicted from
//! Tofu2's fitted endpoints (section V.B: "the part of the one-way Put latency other than the
//! packet transfer was almost the same as Tofu2"). See [`PutBreakdown`] and
//! `validation/tofu-put-latency.toml`.

use podsim_topology::{Network, TofuGeneration};
use podsim_units::SimDuration;

/// Per-hop latency of a TPU v4 ICI link, electrical or through an OCS: 0.3 us, a stated
/// assumption. The TPU v4 paper gives no ICI latency; 0.3 us is what Tofu2's link and two
/// switches take with a PCS derived from 100 Gb Ethernet (tofu-interconnect-d.txt, section
/// IV.B), the same class of SerDes as ICI's 50 GB/s links. The OCS is a mirror: no electronic
/// delay of its own.
pub const ICI_HOP_LATENCY: SimDuration = SimDuration::from_ns(300);

/// TPU v4's CMEM bandwidth to the TensorCores: an assumption, 4x HBM (4.8 TB/s). The paper
/// gives no figure; on-chip SRAM of this size delivers several times HBM, and Fig. 13's 2x for
/// RNN1 (small weights, small batch: weight-bandwidth bound) needs at least 2x. The chip
/// presets' on-chip memory level (`workload::ChipSpec::preset`) and training steps use it.
pub const CMEM_BYTES_PER_S: f64 = 4.8e12;

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

/// Tofu's endpoints with direct descriptors, sender plus receiver: 0.81 us, FITTED to Table
/// III's Tofu direct-descriptor row (0.91 us less the 0.1 us packet transfer).
pub const TOFU_ENDPOINTS_NS: u64 = 810;
/// Tofu's descriptor fetch from main memory: 0.24 us, FITTED to Table III's Tofu
/// descriptor-on-main-memory row (1.15 - 0.91 us; the text: "more than 0.2 us").
pub const TOFU_DESCRIPTOR_FETCH_NS: u64 = 240;
/// Tofu2's endpoints with cache injection, sender plus receiver: 0.41 us, FITTED to Table
/// III's Tofu2 cache-injection-ON row (0.71 us less the 0.3 us packet transfer).
pub const TOFU2_ENDPOINTS_NS: u64 = 410;
/// Tofu2's write of the data to main memory and the target's read of it, which cache
/// injection bypasses: 0.16 us, FITTED to Table III's Tofu2 cache-injection-OFF row
/// (0.87 - 0.71 us; the text: "nearly 0.2 us").
pub const TOFU2_MEMORY_ROUND_NS: u64 = 160;
/// TofuD's penalty when both processes run on far CMGs: 0.05 us, typed in from section V.B
/// ("approximately 0.05 us"), so the far-CMG row is calibrated by it.
pub const TOFUD_FAR_CMG_NS: u64 = 50;

/// One row of Table III as podsim breaks it down (the components of Fig. 7): a one-way
/// 8-byte put between nearest neighbours on one board.
///
/// * `packet_ns`: the packet transfer through one link and two switches, cited (section IV.E
///   and V.B: about 0.1 us on Tofu and TofuD, about 0.3 us on Tofu2); it is the preset's
///   per-hop latency ([`tofu_hop_latency`]).
/// * `sender_ns` and `receiver_ns`: the initiator's software, descriptor and TNI processing,
///   and the target's TNI processing, memory or cache write and read. Fig. 7 draws them, the
///   text gives no values: each generation's fastest setting fixes their sum
///   ([`TOFU_ENDPOINTS_NS`], [`TOFU2_ENDPOINTS_NS`], fitted), split equally between the two
///   sides (an assumption). TofuD's sum is Tofu2's, not fitted: section V.B says the part
///   other than the packet transfer "was almost the same as Tofu2", so TofuD's near-CMG row
///   is a prediction (0.205 + 0.1 + 0.205 = 0.51 us against the paper's 0.49).
/// * The slower settings add what the text says they add: a descriptor read from main memory
///   costs Tofu's sender [`TOFU_DESCRIPTOR_FETCH_NS`]; no cache injection costs Tofu2's
///   receiver [`TOFU2_MEMORY_ROUND_NS`] (both fitted, one row each).
/// * `far_ns`: TofuD's far-CMG penalty, [`TOFUD_FAR_CMG_NS`] (typed in from the text).
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
        sender_ns: TOFU2_ENDPOINTS_NS / 2,
        packet_ns: 100,
        receiver_ns: TOFU2_ENDPOINTS_NS / 2,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, TofuD to/from near CMGs (0.49 us): predicted, Tofu2's fitted endpoints (section V.B: almost the same as Tofu2) + the 0.1 us packet transfer of Fig. 7",
    },
    PutBreakdown {
        generation: TofuGeneration::TofuD,
        setting: "far-cmg",
        sender_ns: TOFU2_ENDPOINTS_NS / 2,
        packet_ns: 100,
        receiver_ns: TOFU2_ENDPOINTS_NS / 2,
        far_ns: TOFUD_FAR_CMG_NS,
        source: "tofu-interconnect-d.txt Table III, TofuD to/from far CMGs (0.54 us): the predicted near-CMG put + the 0.05 us far-CMG penalty of section V.B (typed in)",
    },
    PutBreakdown {
        generation: TofuGeneration::Tofu2,
        setting: "cache-injection-on",
        sender_ns: TOFU2_ENDPOINTS_NS / 2,
        packet_ns: 300,
        receiver_ns: TOFU2_ENDPOINTS_NS / 2,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, Tofu2 with cache injection: 0.71 us less the 0.3 us packet transfer of Fig. 7 (fitted: TOFU2_ENDPOINTS_NS)",
    },
    PutBreakdown {
        generation: TofuGeneration::Tofu2,
        setting: "cache-injection-off",
        sender_ns: TOFU2_ENDPOINTS_NS / 2,
        packet_ns: 300,
        receiver_ns: TOFU2_ENDPOINTS_NS / 2 + TOFU2_MEMORY_ROUND_NS,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, Tofu2 without cache injection: the cache-injection row + the main-memory write and read (fitted: TOFU2_MEMORY_ROUND_NS = 0.87 - 0.71 us)",
    },
    PutBreakdown {
        generation: TofuGeneration::Tofu,
        setting: "direct-descriptor",
        sender_ns: TOFU_ENDPOINTS_NS / 2,
        packet_ns: 100,
        receiver_ns: TOFU_ENDPOINTS_NS / 2,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, Tofu with direct descriptors: 0.91 us less the 0.1 us packet transfer of Fig. 7 (fitted: TOFU_ENDPOINTS_NS)",
    },
    PutBreakdown {
        generation: TofuGeneration::Tofu,
        setting: "descriptor-on-memory",
        sender_ns: TOFU_ENDPOINTS_NS / 2 + TOFU_DESCRIPTOR_FETCH_NS,
        packet_ns: 100,
        receiver_ns: TOFU_ENDPOINTS_NS / 2,
        far_ns: 0,
        source: "tofu-interconnect-d.txt Table III, Tofu with descriptors in main memory: the direct-descriptor row + the descriptor fetch (fitted: TOFU_DESCRIPTOR_FETCH_NS = 1.15 - 0.91 us)",
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
        | Network::Hybrid(_)
        | Network::Graph(_) => &[],
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
    if let (Network::Graph(g), None) = (net, name) {
        return Ok(
            (g.endpoint_overhead() > SimDuration::ZERO).then_some(Endpoint {
                name: "machine-file",
                overhead: g.endpoint_overhead(),
                source: "the machine file's endpoint_overhead",
            }),
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_iii_fitted_rows_are_the_table_and_tofud_is_predicted() {
        // Fitted rows reproduce Table III by construction: Tofu 1.15 and 0.91 us, Tofu2 0.87
        // and 0.71 us. TofuD by hand from section V.B: Tofu2's endpoints (0.71 - 0.3 = 0.41 us)
        // + TofuD's 0.1 us packet transfer = 0.51 us near (paper 0.49, +4.1%), + 0.05 us far =
        // 0.56 us (paper 0.54, +3.7%).
        let total = |g, s| tofu_put(g, Some(s)).unwrap().total_ns();
        assert_eq!(total(TofuGeneration::Tofu, "descriptor-on-memory"), 1150);
        assert_eq!(total(TofuGeneration::Tofu, "direct-descriptor"), 910);
        assert_eq!(total(TofuGeneration::Tofu2, "cache-injection-off"), 870);
        assert_eq!(total(TofuGeneration::Tofu2, "cache-injection-on"), 710);
        assert_eq!(total(TofuGeneration::TofuD, "near-cmg"), 510);
        assert_eq!(total(TofuGeneration::TofuD, "far-cmg"), 560);
        // The predicted rows are within Table III's 5% of the paper.
        assert!((510.0_f64 / 490.0 - 1.0).abs() < 0.05);
        assert!((560.0_f64 / 540.0 - 1.0).abs() < 0.05);
        // The default of each generation is its fastest setting.
        assert_eq!(
            tofu_put(TofuGeneration::TofuD, None).unwrap().setting,
            "near-cmg"
        );
        assert!(tofu_put(TofuGeneration::Tofu, Some("near-cmg")).is_err());
    }
}
