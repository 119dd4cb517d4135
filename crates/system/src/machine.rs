//! Building a machine's network at the fidelity a user chose, and the measurements that run on
//! it: the one place every command, scenario, validation case and workload gets its network
//! model from.

use podsim_collective::{BuildModel, Measurement, Micro, MicroResult, ModelKind, Setup};
use podsim_net::{NetError, NetworkModel, Packetization};
use podsim_topology::Network;

/// The flit size of the packet level when it runs collectives, microbenchmarks and workloads,
/// in bytes (a 64-byte flit, 16 flits to a packet: an assumption, not a seed figure).
pub const PACKET_FLIT_BYTES: u64 = 64;

/// Flits in a packet at the packet level (an assumption, with [`PACKET_FLIT_BYTES`]).
pub const PACKET_FLITS: u32 = 16;

/// The network model `model` names, on `net`, with these packet overheads (`ecmp`: split flows
/// over equal-cost paths, flow model only).
pub fn new_model(
    net: &Network,
    model: ModelKind,
    packets: Packetization,
    ecmp: bool,
) -> Result<Box<dyn NetworkModel>, String> {
    Ok(match model {
        ModelKind::Analytic => Box::new(podsim_net::AnalyticModel::new(net.clone(), packets)),
        ModelKind::Flow => Box::new(podsim_net::FlowModel::new(net.clone(), packets, ecmp)),
        ModelKind::Packet => {
            let cfg = podsim_noc::RouterConfig {
                flit_bytes: PACKET_FLIT_BYTES,
                packet_flits: PACKET_FLITS,
                link_cycles: podsim_noc::LinkCycles::default(),
                cover_round_trip: true,
                ..podsim_noc::RouterConfig::default()
            };
            let routing = podsim_noc::NocRouting::default_for(net);
            Box::new(
                podsim_noc::PacketModel::new(net, routing, &cfg, packets)
                    .map_err(|e| e.to_string())?,
            )
        }
    })
}

/// The models of every fidelity, for collectives and microbenchmarks: [`new_model`], and the
/// packet level refuses up front a run of more than [`podsim_noc::PACKET_FLIT_LIMIT`] flits
/// (which it would otherwise refuse at its last sends, hours in).
#[derive(Debug, Clone, Copy, Default)]
pub struct Models;

impl BuildModel for Models {
    fn build(
        &self,
        net: &Network,
        model: ModelKind,
        packets: Packetization,
        ecmp: bool,
        wire_bytes: u128,
    ) -> Result<Box<dyn NetworkModel>, String> {
        if model == ModelKind::Packet {
            let flits = wire_bytes.div_ceil(u128::from(PACKET_FLIT_BYTES));
            if flits > u128::from(podsim_noc::PACKET_FLIT_LIMIT) {
                return Err(NetError::TooMuchWork {
                    flits,
                    limit: podsim_noc::PACKET_FLIT_LIMIT,
                }
                .to_string());
            }
        }
        new_model(net, model, packets, ecmp)
    }
}

/// Run the setup's collective over every endpoint of `net` on its model
/// ([`podsim_collective::measure`] with [`Models`]).
pub fn measure(net: &Network, setup: &Setup) -> Result<Measurement, String> {
    podsim_collective::measure(net, setup, &Models)
}

/// Run a microbenchmark on `net` ([`podsim_collective::microbench`] with [`Models`]).
pub fn microbench(
    net: &Network,
    micro: Micro,
    bytes: u64,
    model: ModelKind,
    packets: Packetization,
    memory_limit: u64,
) -> Result<MicroResult, String> {
    podsim_collective::microbench(net, micro, bytes, model, packets, memory_limit, &Models)
}
