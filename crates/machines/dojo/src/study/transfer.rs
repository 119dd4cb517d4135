//! `podsim dojo transfer`: a push, pull, block or die broadcast on the mesh, packet by packet
//! or as one flow ([`crate::transfer`]).

use podsim_report::render;
use podsim_topology::Dojo;

use super::{StudyError, coords, setting};
use crate::transfer::{self as dojo_transfer, Op, TransferError, TransferResult, TransferSpec};

/// The operation and its two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ends {
    /// The operation.
    pub op: Op,
    /// Its name.
    pub name: &'static str,
    /// The source (push, broadcast) or the puller (pull, block).
    pub from: (u32, u32),
    /// The destination or the node read from (a broadcast: the source).
    pub to: (u32, u32),
}

impl Ends {
    /// `OP`, `--from` and `--to` (none for a broadcast, required otherwise).
    pub fn parse(op: &str, from: &str, to: Option<&str>) -> Result<Ends, StudyError> {
        let (name, op) = Op::ALL
            .iter()
            .find(|(n, _)| *n == op)
            .copied()
            .ok_or_else(|| {
                setting(
                    "OP",
                    format!("`{op}` is not push, pull, block or broadcast"),
                )
            })?;
        let from = coords("--from", from)?;
        let to = match (to, op) {
            (Some(_), Op::Broadcast) => {
                return Err(setting(
                    "--to",
                    "a broadcast goes to every node of the source's die; drop --to",
                ));
            }
            (None, Op::Broadcast) => from,
            (Some(t), _) => coords("--to", t)?,
            (None, _) => return Err(setting("--to", "push, pull and block need --to X,Y")),
        };
        Ok(Ends { op, name, from, to })
    }
}

/// The rest of a transfer's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferOptions<'a> {
    /// The topology as given, for the text.
    pub topology: &'a str,
    /// Bytes to move.
    pub bytes: u64,
    /// Probability that a die-to-die crossing is retried.
    pub retry: f64,
    /// The receiver's semaphore.
    pub semaphore: usize,
    /// Seed of the retry stream.
    pub seed: u64,
    /// A failed mesh link, `x,y-x,y`.
    pub fail_link: Option<&'a str>,
    /// packet or flow.
    pub model: &'a str,
}

/// A transfer on the flow model, as `--json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FlowOutput {
    /// The operation.
    pub op: &'static str,
    /// `flow`.
    pub model: &'static str,
    /// To the receiver's wake-up, s.
    pub time_s: f64,
    /// Packets' worth of bytes.
    pub packets: u64,
    /// Always null: one flow has no order.
    pub out_of_order_packets: Option<u64>,
    /// The topology as given.
    #[serde(skip)]
    topology: String,
}

/// A transfer at the packet level, as `--json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PacketOutput {
    /// The operation.
    pub op: &'static str,
    /// What the transfer did.
    #[serde(flatten)]
    pub result: TransferResult,
    /// The operation and its ends.
    #[serde(skip)]
    ends: Ends,
    /// The topology as given.
    #[serde(skip)]
    topology: String,
    /// The receiver's semaphore.
    #[serde(skip)]
    semaphore: usize,
}

/// A transfer on either model.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum TransferOutput {
    /// On the flow model.
    Flow(FlowOutput),
    /// Packet by packet.
    Packet(PacketOutput),
}

/// The option a transfer's error comes from.
fn key_of(e: &TransferError) -> &'static str {
    match e {
        TransferError::Semaphore(_) => "--semaphore",
        TransferError::Retry(_) => "--retry",
        TransferError::Empty | TransferError::TooLarge(_) => "--bytes",
        TransferError::FailedLink(_) => "--fail-link",
        TransferError::Flow(_) => "--model",
        _ => "--to",
    }
}

/// Run the transfer between `ends` on `d`.
pub fn transfer(
    d: &Dojo,
    ends: &Ends,
    o: &TransferOptions<'_>,
) -> Result<TransferOutput, StudyError> {
    let failed_link = match o.fail_link {
        None => None,
        Some(f) => {
            let (p, q) = f.split_once('-').ok_or_else(|| {
                setting(
                    "--fail-link",
                    format!("`{f}`: expected two neighbours x,y-x,y such as 3,5-4,5"),
                )
            })?;
            Some((coords("--fail-link", p)?, coords("--fail-link", q)?))
        }
    };
    let spec = TransferSpec {
        op: ends.op,
        from: ends.from,
        to: ends.to,
        bytes: o.bytes,
        retry: o.retry,
        semaphore: o.semaphore,
        seed: o.seed,
        failed_link,
    };
    match o.model {
        "packet" => {}
        "flow" => {
            let t = dojo_transfer::flow_time(d, &spec).map_err(|e| setting(key_of(&e), e))?;
            return Ok(TransferOutput::Flow(FlowOutput {
                op: ends.name,
                model: "flow",
                time_s: t,
                packets: o.bytes.div_ceil(dojo_transfer::PACKET_BYTES),
                out_of_order_packets: None,
                topology: o.topology.to_string(),
            }));
        }
        other => {
            return Err(setting(
                "--model",
                format!("`{other}` is not packet or flow"),
            ));
        }
    }
    let r = dojo_transfer::transfer(d, &spec).map_err(|e| match e {
        TransferError::Memory { .. } => StudyError::Run(format!("<command line>: {e}")),
        e => setting(key_of(&e), e),
    })?;
    Ok(TransferOutput::Packet(PacketOutput {
        op: ends.name,
        result: r,
        ends: *ends,
        topology: o.topology.to_string(),
        semaphore: o.semaphore,
    }))
}

impl TransferOutput {
    /// The text `podsim dojo transfer` prints.
    pub fn text(&self) -> String {
        match self {
            TransferOutput::Flow(f) => format!(
                "{} of {} packets' worth on the flow model of {}: {:.1} ns to the receiver's wake-up (one flow: no packets, no order)\n",
                f.op,
                f.packets,
                f.topology,
                f.time_s * 1e9
            ),
            TransferOutput::Packet(p) => p.text(),
        }
    }
}

impl PacketOutput {
    /// The text of a packet-level transfer.
    fn text(&self) -> String {
        let (r, from, to) = (&self.result, self.ends.from, self.ends.to);
        let rows = vec![
            (
                "transfer".to_string(),
                vec![format!(
                    "{} of {} packets (64 B) from ({}, {}) on {}{}",
                    self.op,
                    r.packets,
                    from.0,
                    from.1,
                    self.topology,
                    if self.ends.op == Op::Broadcast {
                        format!(" to {} nodes of its die", r.destinations)
                    } else {
                        format!(" with ({}, {})", to.0, to.1)
                    }
                )],
            ),
            (
                "time".into(),
                vec![format!(
                    "{:.1} ns to the receiver's wake-up on semaphore {}",
                    r.time_s * 1e9,
                    self.semaphore
                )],
            ),
            (
                "order".into(),
                vec![format!(
                    "{} packets out of order, {} die-to-die retries",
                    r.out_of_order_packets, r.retries
                )],
            ),
            (
                "data".into(),
                vec![format!(
                    "{} (read when the semaphore counted every packet); a receiver starting at the last-numbered packet would miss {}",
                    if r.data_correct { "correct" } else { "WRONG" },
                    r.missed_by_last_packet_receiver
                )],
            ),
        ];
        render(&rows)
    }
}
