//! `podsim tofu slicing`: dynamic packet slicing on one TofuD link ([`crate::slicing`]).

use podsim_report::render;

use super::{StudyError, setting};
use crate::slicing::{self as tofu_slicing, SliceMode, SlicingResult, SlicingRun};

/// The settings of a slicing run as the options give them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlicingOptions<'a> {
    /// Bit error rate of both lanes.
    pub ber: f64,
    /// When lane 1 fails, a time such as `100 us`.
    pub lane_fault_at: Option<&'a str>,
    /// When the failed lane recovers.
    pub lane_recover_at: Option<&'a str>,
    /// auto, split, duplicate or degrade.
    pub mode: &'a str,
    /// Frames to send.
    pub packets: u64,
    /// TLP bytes per frame.
    pub bytes: usize,
    /// Seed of the bit-error stream.
    pub seed: u64,
}

/// A slicing run as `podsim tofu slicing --json` prints it: the mode and what the run did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SlicingOutput {
    /// The mode's name.
    pub mode: &'static str,
    /// What the run did.
    #[serde(flatten)]
    pub result: SlicingResult,
    /// TLP bytes per frame.
    #[serde(skip)]
    bytes: usize,
    /// The bit error rate.
    #[serde(skip)]
    ber: f64,
}

/// A time option (`"100 us"`) in ns.
fn time(key: &'static str, v: Option<&str>) -> Result<Option<u64>, StudyError> {
    v.map(|s| {
        s.parse::<podsim_units::SimDuration>()
            .map(|d| d.as_ps() / 1000)
            .map_err(|e| {
                setting(
                    key,
                    format!("`{s}`: {e}; expected a time such as \"100 us\""),
                )
            })
    })
    .transpose()
}

/// Run the link as `o` sets it.
pub fn slicing(o: &SlicingOptions<'_>) -> Result<SlicingOutput, StudyError> {
    let mode = SliceMode::parse(o.mode).ok_or_else(|| {
        setting(
            "--mode",
            format!("`{}` is not auto, split, duplicate or degrade", o.mode),
        )
    })?;
    let run = SlicingRun {
        packets: o.packets,
        bytes: o.bytes,
        ber: o.ber,
        fault_at_ns: time("--lane-fault-at", o.lane_fault_at)?,
        recover_at_ns: time("--lane-recover-at", o.lane_recover_at)?,
        mode,
        seed: o.seed,
    };
    let result = tofu_slicing::run(&run).map_err(|e| match e {
        tofu_slicing::SlicingError::Setting { key, why } => StudyError::Input { flag: key, why },
    })?;
    Ok(SlicingOutput {
        mode: mode.name(),
        result,
        bytes: o.bytes,
        ber: o.ber,
    })
}

impl SlicingOutput {
    /// The text `podsim tofu slicing` prints.
    pub fn text(&self) -> String {
        let r = &self.result;
        let rows = vec![
            (
                "link".to_string(),
                vec![format!(
                    "TofuD, 2 lanes x 28.05 Gb/s (64b/66b), {} frames of {} B TLP, BER {:e}, mode {}",
                    r.packets_sent, self.bytes, self.ber, self.mode
                )],
            ),
            (
                "latency".into(),
                vec![match r.latency_s {
                    Some(l) => format!(
                        "{:.3} us mean from first transmission to delivery ({:.3} us for a lone clean frame)",
                        l * 1e6,
                        r.unloaded_latency_s * 1e6
                    ),
                    None => format!(
                        "- (no frame delivered; {:.3} us for a lone clean frame)",
                        r.unloaded_latency_s * 1e6
                    ),
                }],
            ),
            (
                "throughput".into(),
                vec![format!(
                    "{:.3} GB/s of TLP over {:.3} us",
                    r.throughput_bytes_per_s / 1e9,
                    r.time_s * 1e6
                )],
            ),
            (
                "packets".into(),
                vec![format!(
                    "{} sent, {} delivered, {} lost, {} discarded as duplicates, {} corrupted",
                    r.packets_sent,
                    r.packets_delivered,
                    r.packets_lost,
                    r.duplicates_discarded,
                    r.corrupted_deliveries
                )],
            ),
            (
                "errors".into(),
                vec![format!(
                    "{} FCS errors, {} slices lost with the lane, {} retransmissions",
                    r.fcs_errors, r.slices_lost, r.retransmissions
                )],
            ),
            (
                "transmissions".into(),
                vec![format!(
                    "{} split, {} duplicated, {} on one lane",
                    r.split_transmissions, r.duplicate_transmissions, r.single_lane_transmissions
                )],
            ),
        ];
        render(&rows)
    }
}
