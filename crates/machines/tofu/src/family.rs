//! One packet model for the whole Tofu family (tofu-interconnect-d.txt sections IV.C-IV.E and
//! V.C-V.D, Tables I, IV and V): what a large put and a node's simultaneous puts deliver on
//! Tofu (the K computer and PRIMEHPC FX10), Tofu2 (PRIMEHPC FX100) and TofuD (Fugaku).
//!
//! # The link frame
//! Every generation sends a put as packets whose transport layer packet (TLP) is at most
//! 2048 bytes (LEN is 6 bits of 32-byte units, an assumption shared with
//! `validation/tofud-frame.toml`), of which 32 bytes are the TLP's own header (an assumption,
//! one 32-byte TLP unit), leaving 2016 bytes of payload. Around the TLP each slice of a frame
//! carries the fields of Figs. 4-6: preamble and routing header (8 + 8 bytes), the link block
//! (DLLP, other control, flags and FCS: 32 bytes undivided, 24 in a split slice) and the
//! inter-frame gap (12 bytes, Ethernet's minimum, an assumption). Tofu and Tofu2 predate
//! dynamic packet slicing: their frame is one undivided slice (an assumption: TofuD's frame is
//! described as Tofu2's plus slicing, section IV.E, and Tofu's is taken to be the same).
//!
//! # Alignment (Table V's text)
//! The link moves one datapath word per logic clock: Tofu 16 bytes (a 128-bit datapath at
//! 5.0 GB/s / 16 B = 312.5 MHz), Tofu2 32 bytes (256 bits at 25.78125 GHz / 66 = 390.625 MHz:
//! 12.5 GB/s) and TofuD 16 bytes (128 bits at 425 MHz: 6.8 GB/s, section IV.C). Table V's text
//! gives the alignment: 16 bytes on Tofu and TofuD, 32 on Tofu2. Each field of a slice starts
//! on a new word of the lanes that carry the slice, so it occupies a whole number of words. In
//! TofuD's split mode the 16-byte word is dealt 8 bytes to each lane (Fig. 6: lane 0 carries
//! TLP bytes +0..7, +16..23, ...), so a slice's fields align to 8 bytes.
//!
//! | generation | word per slice | slices | framing per slice (16, block, 12 aligned) | bytes per packet |
//! | --- | --- | --- | --- | --- |
//! | Tofu  | 16 | 1 | 16 + 32 + 16 = 64 | 2048 + 64 = 2112 |
//! | Tofu2 | 32 | 1 | 32 + 32 + 32 = 96 | 2048 + 96 = 2144 |
//! | TofuD |  8 | 2 | 16 + 24 + 16 = 56 | 2048 + 112 = 2160 |
//!
//! # The host bus (Tofu only)
//! Tofu's interconnect controller (ICC) is a chip of its own: every byte a TNI reads crosses
//! the bus between the processor and the ICC, whose packets carry one cache line of data
//! (Table IV's text). The bus's payload rate is its raw rate x line / (line + header): a
//! 128-byte line (the SPARC64 VIIIfx and IXfx cache line, Maruyama et al., IEEE Micro 2010;
//! not checked against a stored copy, so treat it as an assumption) and a 16-byte header (one
//! 128-bit word, an assumption). The raw rate is not public in the sources at hand: podsim
//! takes FX10's bus to carry 20 GB/s raw, the ICC's injection bandwidth (an assumption: a bus
//! sized to the four 5 GB/s TNIs), and has no figure for the K computer's slower bus.
//! Tofu2 and TofuD are on the processor chip: no host bus (section V.C).

use podsim_net::Packetization;
use podsim_topology::TofuGeneration;

/// The largest TLP: 2048 bytes (a 6-bit LEN of 32-byte units; an assumption).
pub const MAX_TLP_BYTES: u64 = 2048;
/// The TLP's own header: 32 bytes (an assumption: one 32-byte TLP unit).
pub const TLP_HEADER_BYTES: u64 = 32;
/// Preamble and routing header of a slice (Fig. 4: one 8-byte row each).
pub const PREAMBLE_AND_ROUTING_BYTES: u64 = 8 + 8;
/// The link block of an undivided slice: DLLP 16, other control 8, flags and FCS (Fig. 5).
pub const WHOLE_BLOCK_BYTES: u64 = 32;
/// The link block of a split slice: half the DLLP, half the control, flags and FCS (Fig. 6).
pub const SPLIT_BLOCK_BYTES: u64 = 24;
/// Inter-frame gap per slice: 12 bytes (an assumption, Ethernet's minimum).
pub const GAP_BYTES: u64 = 12;
/// A host-bus packet's data: one 128-byte cache line (SPARC64 VIIIfx and IXfx; an assumption
/// until checked, see the module notes).
pub const CACHE_LINE_BYTES: u64 = 128;
/// A host-bus packet's header: one 16-byte word (an assumption).
pub const BUS_HEADER_BYTES: u64 = 16;
/// FX10's host bus raw rate: 20 GB/s, the ICC's injection bandwidth (an assumption).
pub const FX10_BUS_RAW_BYTES_PER_S: u64 = 20_000_000_000;

/// A machine of the family: the generation and, for Tofu, the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machine {
    /// Tofu on the K computer (SPARC64 VIIIfx host).
    K,
    /// Tofu on PRIMEHPC FX10 (SPARC64 IXfx host).
    Fx10,
    /// Tofu2 on PRIMEHPC FX100.
    Fx100,
    /// TofuD on Fugaku.
    Fugaku,
}

impl Machine {
    /// Every machine with its name in validation files (`[case.packets] frame`).
    pub const ALL: [(&'static str, Machine); 4] = [
        ("tofu-k", Machine::K),
        ("tofu-fx10", Machine::Fx10),
        ("tofu2", Machine::Fx100),
        ("tofud", Machine::Fugaku),
    ];

    /// From its name.
    pub fn parse(s: &str) -> Option<Machine> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, m)| *m)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("", |(n, _)| n)
    }

    /// Its interconnect generation.
    pub fn generation(self) -> TofuGeneration {
        match self {
            Machine::K | Machine::Fx10 => TofuGeneration::Tofu,
            Machine::Fx100 => TofuGeneration::Tofu2,
            Machine::Fugaku => TofuGeneration::TofuD,
        }
    }

    /// The frame its links carry.
    pub fn frame(self) -> Frame {
        Frame::of(self.generation())
    }

    /// The bus between processor and ICC, if the interconnect is a chip of its own.
    pub fn host_bus(self) -> HostBus {
        match self {
            Machine::Fx10 => HostBus::Known {
                raw_bytes_per_s: FX10_BUS_RAW_BYTES_PER_S,
            },
            Machine::K => HostBus::Unknown,
            Machine::Fx100 | Machine::Fugaku => HostBus::OnChip,
        }
    }
}

/// A generation's link frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// The generation.
    pub generation: TofuGeneration,
    /// Slices per packet: one undivided (Tofu, Tofu2), two in TofuD's split mode (Fig. 6).
    pub slices: u64,
    /// Bytes each field of a slice aligns to (the datapath word dealt to the slice's lanes).
    pub word: u64,
    /// The slice's link block.
    pub block: u64,
}

/// `n` rounded up to a multiple of `word`.
fn align(n: u64, word: u64) -> u64 {
    n.div_ceil(word) * word
}

impl Frame {
    /// The frame of `generation` (see the module notes for each figure's source).
    pub fn of(generation: TofuGeneration) -> Frame {
        match generation {
            TofuGeneration::Tofu => Frame {
                generation,
                slices: 1,
                word: 16,
                block: WHOLE_BLOCK_BYTES,
            },
            TofuGeneration::Tofu2 => Frame {
                generation,
                slices: 1,
                word: 32,
                block: WHOLE_BLOCK_BYTES,
            },
            TofuGeneration::TofuD => Frame {
                generation,
                slices: 2,
                word: 8,
                block: SPLIT_BLOCK_BYTES,
            },
        }
    }

    /// Framing bytes of one slice: each field group aligned to the word.
    pub fn slice_framing_bytes(&self) -> u64 {
        align(PREAMBLE_AND_ROUTING_BYTES, self.word)
            + align(self.block, self.word)
            + align(GAP_BYTES, self.word)
    }

    /// Payload bytes of a full packet: the largest TLP less its (aligned) header.
    pub fn payload_bytes(&self) -> u64 {
        MAX_TLP_BYTES - align(TLP_HEADER_BYTES, self.word)
    }

    /// Bytes a full packet occupies on the link.
    pub fn packet_bytes(&self) -> u64 {
        MAX_TLP_BYTES + self.slices * self.slice_framing_bytes()
    }

    /// The packetization the network models apply: payload, and everything else as header.
    pub fn packetization(&self) -> Packetization {
        let payload = self.payload_bytes();
        Packetization {
            payload,
            header: self.packet_bytes() - payload,
        }
    }

    /// Payload over bytes on the link, for a large put.
    pub fn efficiency(&self) -> f64 {
        self.payload_bytes() as f64 / self.packet_bytes() as f64
    }

    /// What one large put delivers: the link bandwidth (Table I) x the efficiency, bytes/s.
    pub fn put_throughput_bytes_per_s(&self) -> f64 {
        self.generation.link_bandwidth().bytes_per_s() as f64 * self.efficiency()
    }
}

/// The bus between a node's processor and its interconnect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostBus {
    /// The interconnect is on the processor chip: no bus limits injection.
    OnChip,
    /// A separate ICC chip behind a bus of this raw rate.
    Known {
        /// Raw bytes per second across the bus, toward the ICC.
        raw_bytes_per_s: u64,
    },
    /// A separate ICC chip behind a bus whose rate podsim does not know.
    Unknown,
}

/// Why a machine's injection rate cannot be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FamilyError {
    /// The host bus rate is unknown.
    #[error(
        "{0}: the rate of the bus between the processor and the ICC is not in podsim's sources, so the injection rate it limits cannot be given"
    )]
    UnknownBus(&'static str),
}

impl HostBus {
    /// Payload the bus carries per second: raw x line / (line + header); `None` on chip.
    pub fn payload_bytes_per_s(self, machine: Machine) -> Result<Option<f64>, FamilyError> {
        match self {
            HostBus::OnChip => Ok(None),
            HostBus::Known { raw_bytes_per_s } => Ok(Some(
                raw_bytes_per_s as f64 * CACHE_LINE_BYTES as f64
                    / (CACHE_LINE_BYTES + BUS_HEADER_BYTES) as f64,
            )),
            HostBus::Unknown => Err(FamilyError::UnknownBus(machine.name())),
        }
    }
}

/// A node's injection rate when `links_bytes_per_s` is what its TNIs' puts deliver over the
/// links together (the flow model's answer): the smaller of that and the host bus's payload
/// rate, since every byte the TNIs send crosses the bus first.
pub fn injection_limit(machine: Machine, links_bytes_per_s: f64) -> Result<f64, FamilyError> {
    Ok(match machine.host_bus().payload_bytes_per_s(machine)? {
        Some(bus) => links_bytes_per_s.min(bus),
        None => links_bytes_per_s,
    })
}

/// What the model gives for a machine, for reports and tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FamilyRates {
    /// The machine.
    pub machine: Machine,
    /// One large put, bytes/s.
    pub put_bytes_per_s: f64,
    /// Every TNI putting at once, bytes/s (`None`: the host bus is unknown).
    pub injection_bytes_per_s: Option<f64>,
}

/// The model's put throughput and injection rate for `machine`, in closed form.
pub fn rates(machine: Machine) -> FamilyRates {
    let f = machine.frame();
    let put = f.put_throughput_bytes_per_s();
    let links = put * f64::from(machine.generation().tnis());
    FamilyRates {
        machine,
        put_bytes_per_s: put,
        injection_bytes_per_s: injection_limit(machine, links).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gbps(x: f64) -> f64 {
        x / 1e9
    }

    #[test]
    fn frames_by_hand() {
        // Tofu: 16-byte words, one slice: (8 + 8) -> 16, block 32 -> 32, gap 12 -> 16: 64 B of
        // framing; 2048 + 64 = 2112 B a packet for 2048 - 32 = 2016 B of payload.
        let t = Frame::of(TofuGeneration::Tofu);
        assert_eq!((t.payload_bytes(), t.packet_bytes()), (2016, 2112));
        // Tofu2: 32-byte words: 16 -> 32, 32 -> 32, 12 -> 32: 96; 2048 + 96 = 2144.
        let t2 = Frame::of(TofuGeneration::Tofu2);
        assert_eq!((t2.payload_bytes(), t2.packet_bytes()), (2016, 2144));
        // TofuD: two slices of 8-byte words: 16 + 24 + 16 = 56 each; 2048 + 112 = 2160.
        let d = Frame::of(TofuGeneration::TofuD);
        assert_eq!((d.payload_bytes(), d.packet_bytes()), (2016, 2160));
        assert_eq!(
            d.packetization(),
            Packetization {
                payload: 2016,
                header: 144
            }
        );
    }

    #[test]
    fn put_throughputs_against_table_v() {
        // By hand: Tofu 5.0 x 2016 / 2112 = 4.7727 GB/s (Table V: 4.76, 95%);
        // Tofu2 12.5 x 2016 / 2144 = 11.7537 GB/s (Table V: 11.46, 92%: podsim is 2.6% high);
        // TofuD 6.8 x 2016 / 2160 = 6.3467 GB/s (Table V: 6.35, 93%).
        let put = |g| gbps(Frame::of(g).put_throughput_bytes_per_s());
        assert!((put(TofuGeneration::Tofu) - 4.7727).abs() < 1e-4);
        assert!((put(TofuGeneration::Tofu2) - 11.7537).abs() < 1e-4);
        assert!((put(TofuGeneration::TofuD) - 6.3467).abs() < 1e-4);
        // Within 2% of the paper for Tofu and TofuD; Tofu2 is not.
        assert!((put(TofuGeneration::Tofu) / 4.76 - 1.0).abs() < 0.02);
        assert!((put(TofuGeneration::TofuD) / 6.35 - 1.0).abs() < 0.02);
        assert!(put(TofuGeneration::Tofu2) / 11.46 - 1.0 > 0.02);
    }

    #[test]
    fn injection_rates_against_table_iv() {
        // TofuD: 6 x 6.3467 = 38.08 GB/s (Table IV: 38.1). Tofu2: 4 x 11.7537 = 47.01 GB/s
        // (Table IV: 45.8). FX10: the links give 4 x 4.7727 = 19.09 GB/s, the bus 20 x 128 /
        // 144 = 17.78 GB/s (Table IV: 17.6): the bus limits. K: the bus rate is unknown.
        let inj = |m| rates(m).injection_bytes_per_s.map(gbps);
        assert!((inj(Machine::Fugaku).unwrap() - 38.08).abs() < 0.005);
        assert!((inj(Machine::Fx100).unwrap() - 47.015).abs() < 0.005);
        assert!((inj(Machine::Fx10).unwrap() - 17.778).abs() < 0.001);
        assert!((inj(Machine::Fx10).unwrap() / 17.6 - 1.0).abs() < 0.02);
        assert_eq!(inj(Machine::K), None);
        let e = injection_limit(Machine::K, 19e9).unwrap_err();
        assert!(e.to_string().contains("tofu-k: the rate of the bus"), "{e}");
    }

    #[test]
    fn names_round_trip() {
        for (n, m) in Machine::ALL {
            assert_eq!(Machine::parse(n), Some(m));
            assert_eq!(m.name(), n);
        }
        assert_eq!(Machine::parse("tofu3"), None);
    }
}
