//! Building a machine's network at the fidelity a user chose, and the measurements that run on
//! it: the one place every command, scenario, validation case and workload gets its network
//! model from.

use podsim_collective::{
    BuildModel, CollectiveError, Measurement, Micro, MicroResult, ModelKind, Setup,
};
use podsim_net::{Endpoints, FlowModel, NetError, NetworkModel, Packetization};
use podsim_routing::Shortcut;
use podsim_topology::{Dojo, Network};
use podsim_units::{Bytes, SimDuration};

/// Why a network model could not be built.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// The packet level could not be built (memory, a route).
    #[error(transparent)]
    Noc(#[from] podsim_noc::NocError),
    /// The model refused the run.
    #[error(transparent)]
    Net(#[from] NetError),
    /// The endpoint setting does not exist.
    #[error(transparent)]
    Endpoint(#[from] crate::presets::EndpointError),
    /// The model's own tables, before any transfer, would not fit the memory limit.
    #[error(
        "the {model} model of {network} ({links} directed links) needs about {} before any transfer, more than the memory limit of {} (--memory-limit)",
        Bytes(u64::try_from(*estimate).unwrap_or(u64::MAX)),
        Bytes(*limit)
    )]
    Memory {
        /// The model's name.
        model: &'static str,
        /// The network's shorthand.
        network: String,
        /// Directed links.
        links: u128,
        /// The estimate, bytes.
        estimate: u128,
        /// The limit, bytes.
        limit: u64,
    },
}

/// The most memory a model may hold, bytes, for every model built in this process
/// ([`set_memory_limit`]; unlimited until set). The CLI sets it from `--memory-limit` before it
/// runs a command, so every command that builds a network model is held to it here, where
/// every model is built.
static MEMORY_LIMIT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Set the memory limit models are built under (see [`memory_limit`]).
pub fn set_memory_limit(bytes: u64) {
    MEMORY_LIMIT.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

/// The memory limit models are built under, bytes.
pub fn memory_limit() -> u64 {
    MEMORY_LIMIT.load(std::sync::atomic::Ordering::Relaxed)
}

/// The default `--memory-limit`: the least of MemAvailable, three quarters of the process's
/// address-space limit (`ulimit -v`: the rest is the program, its threads' stacks and the
/// allocator's slack) and the memory limit of its cgroup (v2 `memory.max`, v1
/// `memory.limit_in_bytes`); unlimited where none is known.
pub fn default_memory_limit() -> u64 {
    [
        available_memory(),
        address_space_limit(),
        cgroup_memory_limit(),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(u64::MAX)
}

/// Three quarters of the soft address-space limit from /proc/self/limits, bytes.
fn address_space_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(soft / 4 * 3)
}

/// The memory limit of the process's cgroup, bytes (cgroup v2, else v1).
fn cgroup_memory_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read =
        |path: String| -> Option<u64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let limit = if id == "0" && controllers.is_empty() {
            read(format!("/sys/fs/cgroup{path}/memory.max"))
        } else if controllers.split(',').any(|c| c == "memory") {
            read(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"))
        } else {
            None
        };
        if limit.is_some() {
            return limit;
        }
    }
    None
}

/// MemAvailable from /proc/meminfo, in bytes (None where there is no such file).
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Bytes a model's link tables and per-link state take on `net` before any transfer: about
/// 128 bytes a directed link (the link table's target and spec, the flow model's load, share,
/// list of the flows on it and bookkeeping; measured: `microbench put-latency` on
/// torus:64x64x64, 1,572,864 directed links, peaks at 187 MB, 119 bytes a directed link with
/// the program's own) and 24 a node. The packet level adds its routers' buffers, which it
/// estimates itself.
pub fn model_base_bytes(net: &Network) -> (u128, u128) {
    let links = u128::from(net.metrics().links) * 2;
    (links, links * 128 + u128::from(net.node_count()) * 24)
}

/// The flit size of the packet level when it runs collectives, microbenchmarks and workloads,
/// in bytes (a 64-byte flit, 16 flits to a packet: an assumption, not a seed figure).
pub const PACKET_FLIT_BYTES: u64 = 64;

/// Flits in a packet at the packet level (an assumption, with [`PACKET_FLIT_BYTES`]).
pub const PACKET_FLITS: u32 = 16;

/// The network model `model` names, on `net`, with these packet overheads (`ecmp`: split flows
/// over equal-cost paths, flow model only) and the machine's default endpoint overhead
/// ([`crate::presets::endpoints`]).
pub fn new_model(
    net: &Network,
    model: ModelKind,
    packets: Packetization,
    ecmp: bool,
) -> Result<Box<dyn NetworkModel>, MachineError> {
    let endpoint = crate::presets::endpoint(net, None)?;
    new_model_at(net, model, packets, ecmp, endpoint.map(|e| e.overhead))
}

/// As [`new_model`], with the endpoint overhead given (`None`: none).
pub fn new_model_at(
    net: &Network,
    model: ModelKind,
    packets: Packetization,
    ecmp: bool,
    overhead: Option<SimDuration>,
) -> Result<Box<dyn NetworkModel>, MachineError> {
    let bare = bare_model(net, model, packets, ecmp)?;
    Ok(match overhead {
        Some(o) if o > SimDuration::ZERO => Box::new(Endpoints::new(bare).with_overhead(o)),
        _ => bare,
    })
}

fn bare_model(
    net: &Network,
    model: ModelKind,
    packets: Packetization,
    ecmp: bool,
) -> Result<Box<dyn NetworkModel>, MachineError> {
    let (links, estimate) = model_base_bytes(net);
    let limit = memory_limit();
    if estimate > u128::from(limit) {
        return Err(MachineError::Memory {
            model: model.name(),
            network: net.shorthand(),
            links,
            estimate,
            limit,
        });
    }
    Ok(match model {
        ModelKind::Analytic => Box::new(podsim_net::AnalyticModel::new(net.clone(), packets)),
        ModelKind::Flow => Box::new(FlowModel::new(net.clone(), packets, ecmp)),
        ModelKind::Packet => {
            let cfg = podsim_noc::RouterConfig {
                flit_bytes: PACKET_FLIT_BYTES,
                packet_flits: PACKET_FLITS,
                link_cycles: podsim_noc::LinkCycles::default(),
                cover_round_trip: true,
                memory_limit: memory_limit(),
                ..podsim_noc::RouterConfig::default()
            };
            let routing = podsim_noc::NocRouting::default_for(net);
            Box::new(podsim_noc::PacketModel::new(net, routing, &cfg, packets)?)
        }
    })
}

/// The flow model of `net` with no packet overheads and the machine's default endpoint
/// overhead, its error as text (what training steps and searches run their layers on).
pub fn flow_model(net: &Network) -> Result<Box<dyn NetworkModel>, String> {
    new_model(net, ModelKind::Flow, Packetization::NONE, false).map_err(|e| e.to_string())
}

/// The flow model of the DOJO plane `d` as the DOJO studies time their flows on it (`podsim
/// dojo dma`, `transfer`, `shortcuts`): no packet overheads, no ECMP, no endpoint overhead, and
/// the die routing tables' Z-plane shortcut policy `shortcut` ([`Shortcut::Never`]: every
/// transfer X then Y; [`podsim_net::FlowModel::with_dojo_shortcut`]). The concrete type, for
/// the studies that read its rates and link loads. The memory limit is not checked here: the
/// shortcut study bounds its run, this model's tables included ([`model_base_bytes`]), itself.
pub fn dojo_flow_model(d: &Dojo, shortcut: Shortcut) -> FlowModel {
    FlowModel::new(Network::Dojo(d.clone()), Packetization::NONE, false)
        .with_dojo_shortcut(shortcut)
}

/// Flit-hops the packet level moves a second on one core, for the up-front estimate (measured:
/// a 64 MiB all-reduce on torus:4x4, 3.9 x 10^7 flit-hops in 4.1 s).
pub const PACKET_FLIT_HOPS_PER_S: f64 = 1e7;

/// Say, before a packet-level run of `flits` flits on `net` starts, how long it will take
/// (each flit crossing the network's average distance; [`podsim_engine::watch::estimate`]).
pub fn announce_packet_run(net: &Network, flits: u128) {
    let hops = net.metrics().average_distance.max(1.0);
    let flit_hops = flits as f64 * hops;
    podsim_engine::watch::estimate(
        &format!("about {flit_hops:.1e} flit-hops at the packet level"),
        flit_hops / PACKET_FLIT_HOPS_PER_S,
    );
}

/// The models of every fidelity, for collectives and microbenchmarks: [`new_model_at`] with the
/// endpoint setting chosen (`None`: the machine's default), and the packet level refuses up
/// front a run of more than [`podsim_noc::PACKET_FLIT_LIMIT`] flits (which it would otherwise
/// refuse at its last sends, hours in).
#[derive(Debug, Clone, Default)]
pub struct Models {
    /// The endpoint setting (`--endpoint`), by name.
    pub endpoint: Option<String>,
    /// Where to record the transfers of the runs, for a trace (`None`: not recorded).
    pub record: Option<podsim_net::RecordingHandle>,
}

impl BuildModel for Models {
    fn build(
        &self,
        net: &Network,
        model: ModelKind,
        packets: Packetization,
        ecmp: bool,
        wire_bytes: u128,
    ) -> Result<Box<dyn NetworkModel>, Box<dyn std::error::Error + Send + Sync>> {
        if model == ModelKind::Packet {
            let flits = wire_bytes.div_ceil(u128::from(PACKET_FLIT_BYTES));
            if flits > u128::from(podsim_noc::PACKET_FLIT_LIMIT) {
                return Err(Box::new(NetError::TooMuchWork {
                    flits,
                    limit: podsim_noc::PACKET_FLIT_LIMIT,
                }));
            }
        }
        let endpoint = crate::presets::endpoint(net, self.endpoint.as_deref())?;
        let m = new_model_at(net, model, packets, ecmp, endpoint.map(|e| e.overhead))?;
        if model == ModelKind::Packet {
            announce_packet_run(net, wire_bytes.div_ceil(u128::from(PACKET_FLIT_BYTES)));
        }
        Ok(match &self.record {
            Some(log) => Box::new(Endpoints::new(m).recording(log.clone())),
            None => m,
        })
    }
}

/// Run the setup's collective over every endpoint of `net` on its model
/// ([`podsim_collective::measure`] with [`Models`]).
pub fn measure(net: &Network, setup: &Setup) -> Result<Measurement, CollectiveError> {
    podsim_collective::measure(net, setup, &Models::default())
}

/// As [`measure`], on the models `models` builds (an endpoint setting chosen).
pub fn measure_with(
    net: &Network,
    setup: &Setup,
    models: &Models,
) -> Result<Measurement, CollectiveError> {
    podsim_collective::measure(net, setup, models)
}

/// Run a microbenchmark on `net` on the models `models` builds
/// ([`podsim_collective::microbench`]).
pub fn microbench(
    net: &Network,
    micro: Micro,
    bytes: u64,
    model: ModelKind,
    packets: Packetization,
    memory_limit: u64,
    models: &Models,
) -> Result<MicroResult, CollectiveError> {
    podsim_collective::microbench(net, micro, bytes, model, packets, memory_limit, models)
}

/// The timing of `net`'s endpoints and links as a run uses them, for reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// The per-hop link latency (the most common link's).
    pub link_latency: SimDuration,
    /// The endpoint setting, if the machine has any.
    pub endpoint: Option<crate::presets::Endpoint>,
}

impl Timing {
    /// Where the link latency of `net` came from when no flag set it: `machine file` for a
    /// machine file's graph, `preset` for a machine whose preset gives its links a latency,
    /// `default` otherwise (the CLI says `--link-latency` when that flag set it).
    pub fn latency_source(&self, net: &Network) -> &'static str {
        if matches!(net, Network::Graph(_)) {
            "machine file"
        } else if self.link_latency > SimDuration::ZERO {
            "preset"
        } else {
            "default"
        }
    }

    /// This timing as table rows (link latency, endpoint), its latency from `source` (see
    /// [`Timing::latency_source`]).
    pub fn rows(&self, source: &str) -> Vec<(String, Vec<String>)> {
        vec![
            (
                "link latency".into(),
                vec![format!("{} per hop ({source})", self.link_latency)],
            ),
            (
                "endpoint".into(),
                vec![match self.endpoint {
                    Some(e) => format!("{} per transfer ({}: {})", e.overhead, e.name, e.source),
                    None => "no overhead".into(),
                }],
            ),
        ]
    }

    /// This timing as a collective's output keys, its latency from `source` (see
    /// [`Timing::latency_source`]).
    pub fn output(&self, source: &'static str) -> podsim_collective::LinkTiming {
        podsim_collective::LinkTiming {
            link_latency_s: self.link_latency.as_secs_f64(),
            link_latency_source: source,
            endpoint: self.endpoint.map(|e| e.name),
            endpoint_overhead_s: self.endpoint.map_or(0.0, |e| e.overhead.as_secs_f64()),
        }
    }
}

impl Models {
    /// The models of `net` with the endpoint setting `name` (`None`: the default); an error
    /// when `net` has no such setting.
    pub fn for_net(
        net: &Network,
        name: Option<&str>,
    ) -> Result<(Models, Timing), crate::presets::EndpointError> {
        let endpoint = crate::presets::endpoint(net, name)?;
        Ok((
            Models {
                endpoint: name.map(str::to_string),
                record: None,
            },
            Timing {
                link_latency: net.link().latency,
                endpoint,
            },
        ))
    }
}
