//! `podsim tofu put` and `podsim tofu rdma`: a row of Table III, its components, and the same
//! packet transfers run on the flow (and packet) models of a small network of the generation.

use std::collections::BTreeMap;

use podsim_collective::{Micro, MicroResult, ModelKind};
use podsim_report::render;
use podsim_topology::{Network, TofuGeneration};

use super::{StudyError, setting, us_ns};
use crate::rdma::{RdmaError, RdmaOp, rdma};

/// A row of Table III as the options name it: the generation, the small network of it the
/// model runs use, and the setting (`None`: the generation's first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row<'a> {
    /// The generation.
    pub generation: TofuGeneration,
    /// A 2 x 2 x 2 network of it, as a shorthand (`tofud:2x2x2`).
    pub shorthand: &'static str,
    /// The Table III setting asked for.
    pub setting: Option<&'a str>,
}

impl<'a> Row<'a> {
    /// `--generation`, `--setting` and `--far`.
    pub fn parse(
        generation: &str,
        setting_name: Option<&'a str>,
        far: bool,
    ) -> Result<Row<'a>, StudyError> {
        let (generation, shorthand) = match generation {
            "tofu" => (TofuGeneration::Tofu, "tofu1:2x2x2"),
            "tofu2" => (TofuGeneration::Tofu2, "tofu2:2x2x2"),
            "tofud" => (TofuGeneration::TofuD, "tofud:2x2x2"),
            other => {
                return Err(setting(
                    "--generation",
                    format!("`{other}` is not tofu, tofu2 or tofud"),
                ));
            }
        };
        let setting_name = match (far, setting_name, generation) {
            (true, None | Some("far-cmg"), TofuGeneration::TofuD) => Some("far-cmg"),
            (true, Some(_), TofuGeneration::TofuD) => {
                return Err(setting(
                    "--far",
                    "--far is --setting far-cmg; give one of the two",
                ));
            }
            (true, _, _) => {
                return Err(setting("--far", "only TofuD has far CMGs (section V.B)"));
            }
            (false, s, _) => s,
        };
        Ok(Row {
            generation,
            shorthand,
            setting: setting_name,
        })
    }
}

/// A put of 8 bytes between neighbours of `net` with `setting`'s endpoint overhead, on
/// `model`.
fn model_put(net: &Network, setting: &str, model: ModelKind) -> Result<MicroResult, StudyError> {
    let models = podsim_system::Models {
        endpoint: Some(setting.to_string()),
        record: None,
    };
    podsim_system::microbench(
        net,
        Micro::PutLatency,
        8,
        model,
        podsim_net::Packetization::NONE,
        u64::MAX,
        &models,
    )
    .map_err(|e| StudyError::Run(e.to_string()))
}

/// A put's components, s.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PutComponents {
    /// Software, descriptor and TNI at the initiator.
    pub sender: f64,
    /// One link and two switches.
    pub packet_transfer: f64,
    /// TNI, memory or cache and the target's read.
    pub receiver: f64,
    /// TofuD's far-CMG penalty.
    pub far_cmgs: f64,
}

/// `podsim tofu put`'s result, as its `--json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PutOutput {
    /// The generation's name.
    pub generation: &'static str,
    /// The Table III setting.
    pub setting: &'static str,
    /// The whole put, s.
    pub latency_s: f64,
    /// Its components.
    pub breakdown: PutComponents,
    /// The same put on the flow model, s.
    pub flow_model_latency_s: f64,
    /// Table III's row, and how the overhead follows from it.
    pub source: &'static str,
    /// The row, ns, for the text.
    #[serde(skip)]
    row: podsim_system::presets::PutBreakdown,
    /// The network the flow model ran on.
    #[serde(skip)]
    shorthand: &'static str,
}

/// The put of `row`, and the same put on the flow model of `net` (the network
/// [`Row::shorthand`] names, with the setting's endpoint overhead: one hop, 8 bytes at the
/// link rate).
pub fn put(row: &Row<'_>, net: &Network) -> Result<PutOutput, StudyError> {
    let b = podsim_system::presets::tofu_put(row.generation, row.setting)
        .map_err(|e| setting("--setting", e))?;
    let m = model_put(net, b.setting, ModelKind::Flow)?;
    let s = |ns: u64| ns as f64 / 1e9;
    Ok(PutOutput {
        generation: row.generation.name(),
        setting: b.setting,
        latency_s: s(b.total_ns()),
        breakdown: PutComponents {
            sender: s(b.sender_ns),
            packet_transfer: s(b.packet_ns),
            receiver: s(b.receiver_ns),
            far_cmgs: s(b.far_ns),
        },
        flow_model_latency_s: m.time_s,
        source: b.source,
        row: b,
        shorthand: row.shorthand,
    })
}

impl PutOutput {
    /// The text `podsim tofu put` prints.
    pub fn text(&self) -> String {
        let b = &self.row;
        let rows = vec![
            (
                "put".to_string(),
                vec![format!(
                    "{} {}, 8 bytes to a nearest neighbour",
                    self.generation, b.setting
                )],
            ),
            (
                "  sender".into(),
                vec![format!(
                    "{} (software, descriptor, TNI; half the fitted endpoint sum, by assumption)",
                    us_ns(b.sender_ns)
                )],
            ),
            (
                "  packet transfer".into(),
                vec![format!(
                    "{} (one link, two switches: section IV.E)",
                    us_ns(b.packet_ns)
                )],
            ),
            (
                "  receiver".into(),
                vec![format!(
                    "{} (TNI, memory or cache, target read; the other half)",
                    us_ns(b.receiver_ns)
                )],
            ),
            (
                "  far CMGs".into(),
                vec![format!("{} (section V.B)", us_ns(b.far_ns))],
            ),
            ("total".into(), vec![us_ns(b.total_ns())]),
            (
                "flow model".into(),
                vec![format!(
                    "{:.3} us (the same put on {}: the hop, 8 B at the link rate, the overhead)",
                    self.flow_model_latency_s * 1e6,
                    self.shorthand
                )],
            ),
            ("source".into(), vec![b.source.to_string()]),
        ];
        render(&rows)
    }
}

/// `podsim tofu rdma`'s result, as its `--json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RdmaOutput {
    /// put, get or atomic.
    pub op: &'static str,
    /// The generation's name.
    pub generation: &'static str,
    /// The Table III setting.
    pub setting: &'static str,
    /// The whole operation, s.
    pub latency_s: f64,
    /// Its named components, s.
    pub breakdown: BTreeMap<&'static str, f64>,
    /// The packet transfers on the flow model, with the endpoints' time, s.
    pub flow_model_latency_s: f64,
    /// The packet transfers on the packet model, with the endpoints' time, s.
    pub packet_model_latency_s: f64,
    /// The components in order, ns, for the text.
    #[serde(skip)]
    components: Vec<(&'static str, u64)>,
    /// The whole operation, ns.
    #[serde(skip)]
    total_ns: u64,
    /// The network the models ran on.
    #[serde(skip)]
    shorthand: &'static str,
    /// Table III's row.
    #[serde(skip)]
    source: &'static str,
}

/// The operation `--op` names.
pub fn rdma_op(op: &str) -> Result<RdmaOp, StudyError> {
    RdmaOp::parse(op).ok_or_else(|| setting("--op", format!("`{op}` is not put, get or atomic")))
}

/// `op` on `row`, its packet transfers run on the flow and packet models of `net` (the
/// network [`Row::shorthand`] names).
pub fn rdma_study(op: RdmaOp, row: &Row<'_>, net: &Network) -> Result<RdmaOutput, StudyError> {
    let r = rdma(op, row.generation, row.setting).map_err(|e| match e {
        RdmaError::NoAtomics => setting("--op", e),
        e => setting("--setting", e),
    })?;
    // Each crossing on a model: its put time less the endpoint overhead it charges.
    let on = |model| -> Result<f64, StudyError> {
        let m = model_put(net, r.row.setting, model)?;
        let crossing = m.time_s - r.row.overhead_ns() as f64 * 1e-9;
        Ok(r.endpoint_ns() as f64 * 1e-9 + crossing * op.crossings() as f64)
    };
    let flow = on(ModelKind::Flow)?;
    let packet = on(ModelKind::Packet)?;
    let s = |ns: u64| ns as f64 / 1e9;
    Ok(RdmaOutput {
        op: op.name(),
        generation: row.generation.name(),
        setting: r.row.setting,
        latency_s: s(r.total_ns()),
        breakdown: r.components.iter().map(|(k, v)| (*k, s(*v))).collect(),
        flow_model_latency_s: flow,
        packet_model_latency_s: packet,
        components: r.components.clone(),
        total_ns: r.total_ns(),
        shorthand: row.shorthand,
        source: r.row.source,
    })
}

impl RdmaOutput {
    /// The text `podsim tofu rdma` prints.
    pub fn text(&self) -> String {
        let mut rows = vec![(
            self.op.to_string(),
            vec![format!(
                "{} {}, 8 bytes between nearest neighbours",
                self.generation, self.setting
            )],
        )];
        for (k, v) in &self.components {
            rows.push((format!("  {}", k.replace('_', " ")), vec![us_ns(*v)]));
        }
        rows.push(("total".into(), vec![us_ns(self.total_ns)]));
        rows.push((
            "flow model".into(),
            vec![format!(
                "{:.3} us (the packet transfers on {})",
                self.flow_model_latency_s * 1e6,
                self.shorthand
            )],
        ));
        rows.push((
            "packet model".into(),
            vec![format!(
                "{:.3} us (64-byte flits through cycle-level routers)",
                self.packet_model_latency_s * 1e6
            )],
        ));
        rows.push(("source".into(), vec![self.source.to_string()]));
        let mut text = render(&rows);
        if self.op != RdmaOp::Put.name() {
            text.push_str(&format!(
                "the paper measures puts only: the {} is predicted from the put's components (the target's read costs the put's receiver side, an assumption)\n",
                self.op
            ));
        }
        text
    }
}
