//! `podsim tofu`: TofuD's node-level mechanisms (tofu-interconnect-d.txt sections IV-V).

use std::process::ExitCode;

use clap::{Args, Subcommand};
use podsim_tofu::study::{self, barrier, put::Row};

use crate::Failure;
use crate::args::{listed, print};

/// The arguments of `podsim tofu`.
#[derive(Args)]
pub struct TofuArgs {
    #[command(subcommand)]
    what: TofuCommand,
}

#[derive(Subcommand)]
enum TofuCommand {
    /// TofuD's routing header (Fig. 4): encode fields into the 64-bit header or decode one,
    /// and the bytes a frame of that length takes on the two lanes, split and duplicated.
    /// Field widths (the text gives only PAT's 3 bits; podsim's choices, most significant
    /// first): marker 1, LEN 6, DABC1 4, DX 8, DY 8, DZ 8, DABC2 4, DI 3, B 1, S 1, reserved 0
    /// 1, VC 2, PAT 3, STAT 2, SEQ 12 (crates/machines/tofu/src/frame.rs).
    Frame(FrameArgs),
    /// A one-way 8-byte put between nearest neighbours and where its time goes (Table III,
    /// Fig. 7): sender, packet transfer (one link and two switches), receiver and, on TofuD,
    /// the far-CMG penalty; checked against the same put run on the flow model.
    Put(PutArgs),
    /// The Tofu barrier on a TofuD node (section V.E, Table VI, Fig. 8): how the points get
    /// BCHs and BGs (reduce-broadcast trees inside a TNI, recursive doubling between TNIs),
    /// the stages, and the latency timed gate by gate: serialized (each TNI processes its
    /// BCHs' 0.29 us and its relays' 0.13 us one after another, what the paper's evaluation
    /// matched) and minimum (every gate in parallel). With --nodes, the same barrier across a
    /// whole machine, against a software dissemination barrier of puts on the same network.
    Barrier(BarrierArgs),
    /// Dynamic packet slicing on one TofuD link (section IV.E): frames split over the two
    /// lanes or duplicated on both, chosen per frame from the receiver's STAT; bit errors, a
    /// lane that fails and recovers, FCS errors answered by go-back-N retransmission. Every
    /// frame is built, sliced, checked and merged; the receiver checks each delivered TLP.
    Slicing(SlicingArgs),
    /// An RDMA put, get or atomic read-modify-write between nearest neighbours, its latency
    /// broken into components built from Table III's row (a get: sender, request transfer,
    /// target read, response transfer, initiator; the paper measures only puts, so get and
    /// atomic are predictions), and the same packet transfers run on the flow and packet
    /// models.
    Rdma(RdmaArgs),
    /// Place processes on a node's communication resources (Table II): each process on a CMG
    /// (round-robin unless given), its CQs round-robin over the TNIs, its BCHs from different
    /// TNIs; running out of a resource is an error naming it.
    Node(NodeArgs),
}

#[derive(Args)]
struct NodeArgs {
    /// tofu (the K computer's), tofu2 or tofud.
    #[arg(long, value_name = "GEN", value_parser = listed(["tofu", "tofu2", "tofud"]))]
    generation: String,
    /// Processes on the node.
    #[arg(long, value_name = "N", default_value_t = 1)]
    processes: u32,
    /// CQs each process asks for.
    #[arg(long, value_name = "N", default_value_t = 1)]
    cqs: u32,
    /// BCHs each process asks for (each from a different TNI).
    #[arg(long, value_name = "N", default_value_t = 0)]
    bchs: u32,
    /// The CMG of each process, a comma list (default: round-robin over the CMGs).
    #[arg(long, value_name = "C[,C...]", value_delimiter = ',')]
    cmgs: Vec<u32>,
    /// Print one JSON object (keys: generation, resources (cores, cmgs, far_cmgs, tnis,
    /// cqs_per_tni, system_cqs_per_tni, bchs, bgs), processes (cmg, far, cqs and bchs as
    /// [TNI, index] pairs)).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct RdmaArgs {
    /// put, get or atomic (Tofu2 and TofuD).
    #[arg(long, value_name = "OP", value_parser = listed(["put", "get", "atomic"]))]
    op: String,
    #[command(flatten)]
    row: RowArgs,
    /// Print one JSON object (keys: op, generation, setting, latency_s, breakdown (named
    /// components in seconds), flow_model_latency_s, packet_model_latency_s).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct SlicingArgs {
    /// Bit error rate of both lanes (0 to 1e-2).
    #[arg(long, value_name = "RATE")]
    ber: f64,
    /// When lane 1 fails, e.g. "100 us" (never, if not given).
    #[arg(long, value_name = "TIME")]
    lane_fault_at: Option<String>,
    /// When the failed lane recovers, e.g. "200 us" (never, if not given).
    #[arg(long, value_name = "TIME")]
    lane_recover_at: Option<String>,
    /// auto (TofuD: split while STAT is good, duplicate otherwise), split, duplicate, or
    /// degrade (Tofu2's link degradation: one lane for ever after the first error).
    #[arg(
        long,
        value_name = "MODE",
        default_value = "auto",
        value_parser = listed(["auto", "split", "duplicate", "degrade"]),
    )]
    mode: String,
    /// Frames to send, back to back.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    packets: u64,
    /// TLP bytes per frame (32 to 2048 in steps of 32).
    #[arg(long, value_name = "B", default_value_t = 2048)]
    bytes: usize,
    /// Seed of the bit-error stream.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Print one JSON object (keys: latency_s, throughput_bytes_per_s, packets_sent,
    /// packets_delivered, packets_lost, retransmissions, unloaded_latency_s, fcs_errors,
    /// slices_lost, duplicates_discarded, corrupted_deliveries, split_transmissions,
    /// duplicate_transmissions, single_lane_transmissions, time_s, mode).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct BarrierArgs {
    /// tofud (the paper measures the barrier's components on TofuD only).
    #[arg(long, value_name = "GEN", default_value = "tofud", value_parser = listed(["tofud"]))]
    generation: String,
    /// Start-and-end points (processes) per node; a comma list prints one row each (Table
    /// VI: 1,4,8,16,48).
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', required = true)]
    points: Vec<u32>,
    /// test: the paper's test programs (several BCHs per TNI past six points, Table VI);
    /// mpi: the rule section V.E recommends (one BCH per process from different TNIs up to
    /// six; past six, six groups each sharing a BCH through memory).
    #[arg(
        long,
        value_name = "RULE",
        default_value = "test",
        value_parser = listed(["test", "mpi"]),
    )]
    allocation: String,
    /// A TofuD machine to run the barrier across, e.g. tofu:fugaku or tofud:4x4x4 (every node
    /// carries the same points).
    #[arg(long, value_name = "SPEC")]
    nodes: Option<String>,
    /// Run a one-element all-reduce through the BGs instead of a bare barrier: sum, max, min,
    /// and, or (integers), fsum, fmax, fmin (floating point). Point p gives (p + 1)(e + 1) in
    /// element e; a sum keeps the groups a power of two (no point counted twice). One node.
    #[arg(
        long,
        value_name = "OP",
        value_parser = listed([
            "sum", "max", "min", "and", "or", "fsum", "fmax", "fmin",
        ]),
    )]
    allreduce: Option<String>,
    /// Elements of the all-reduce: up to 8 integers or 3 floating point numbers per BG
    /// (section IV.D).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "allreduce")]
    elements: usize,
    /// Draw Fig. 8's curves to an SVG file: latency against the points, serialized and
    /// minimum, and the MPI rule for the same processes.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<std::path::PathBuf>,
    /// Print JSON (keys: latency_s, tnis, bchs_per_tni, bgs_per_tni, stages, minimum_latency_s,
    /// serialized_estimate_s, memory_sync_s, groups_per_node, points, processes, nodes, and
    /// with --nodes software_dissemination_s); one object, or an array for a list of points.
    #[arg(long)]
    json: bool,
}

/// A row of Table III: `tofu put` and `tofu rdma`.
#[derive(Args)]
struct RowArgs {
    /// tofu (the K computer's), tofu2 or tofud.
    #[arg(long, value_name = "GEN", value_parser = listed(["tofu", "tofu2", "tofud"]))]
    generation: String,
    /// The Table III setting: tofu: direct-descriptor or descriptor-on-memory; tofu2:
    /// cache-injection-on or cache-injection-off; tofud: near-cmg or far-cmg [default: the
    /// first of each].
    #[arg(
        long,
        value_name = "NAME",
        value_parser = listed([
            "direct-descriptor", "descriptor-on-memory", "cache-injection-on",
            "cache-injection-off", "near-cmg", "far-cmg",
        ]),
    )]
    setting: Option<String>,
    /// TofuD: both processes on far CMGs (the same as --setting far-cmg).
    #[arg(long)]
    far: bool,
}

#[derive(Args)]
struct PutArgs {
    #[command(flatten)]
    row: RowArgs,
    /// Print one JSON object (keys: generation, setting, latency_s, breakdown (sender,
    /// packet_transfer, receiver, far_cmgs, in seconds), flow_model_latency_s, source).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct FrameArgs {
    /// Fields to encode, e.g. len=63,dx=1,dy=2,dz=3,dabc2=5,di=2,vc=1,seq=7 (names: len,
    /// dabc1, dx, dy, dz, dabc2, di, b, s, vc, pat, stat, seq; a field not given is 0).
    #[arg(long, value_name = "FIELDS", conflicts_with = "decode")]
    encode: Option<String>,
    /// A 64-bit header to decode, in hex (e.g. 8800406020820000: LEN 4, DX 2, DY 3, DZ 1, DI 2, VC 1).
    #[arg(long, value_name = "HEX")]
    decode: Option<String>,
    /// Print one JSON object (keys: header_hex, fields, tlp_bytes, split_wire_bytes,
    /// duplicate_wire_bytes, payload_efficiency).
    #[arg(long)]
    json: bool,
}

/// Run `podsim tofu`.
pub fn tofu_cmd(a: &TofuArgs) -> Result<ExitCode, Failure> {
    match &a.what {
        TofuCommand::Frame(f) => {
            let r = study::frame::frame(f.encode.as_deref(), f.decode.as_deref())?;
            print(f.json, &r, |r| r.text())
        }
        TofuCommand::Put(p) => {
            let (row, net) = row(&p.row)?;
            print(p.json, &study::put::put(&row, &net)?, |r| r.text())
        }
        TofuCommand::Barrier(b) => barrier_cmd(b),
        TofuCommand::Slicing(x) => {
            let r = study::slicing::slicing(&study::slicing::SlicingOptions {
                ber: x.ber,
                lane_fault_at: x.lane_fault_at.as_deref(),
                lane_recover_at: x.lane_recover_at.as_deref(),
                mode: &x.mode,
                packets: x.packets,
                bytes: x.bytes,
                seed: x.seed,
            })?;
            print(x.json, &r, |r| r.text())
        }
        TofuCommand::Rdma(r) => {
            let op = study::put::rdma_op(&r.op)?;
            let (row, net) = row(&r.row)?;
            print(r.json, &study::put::rdma_study(op, &row, &net)?, |r| {
                r.text()
            })
        }
        TofuCommand::Node(n) => {
            let r = study::node::node(&study::node::NodeOptions {
                generation: &n.generation,
                processes: n.processes,
                cqs: n.cqs,
                bchs: n.bchs,
                cmgs: &n.cmgs,
            })?;
            print(n.json, &r, |r| r.text())
        }
    }
}

/// The Table III row of `tofu put` and `tofu rdma`, and the small network of its generation
/// the model runs use.
fn row(a: &RowArgs) -> Result<(Row<'_>, podsim_topology::Network), Failure> {
    let row = Row::parse(&a.generation, a.setting.as_deref(), a.far)?;
    let spec = podsim_config::system_from_cli(row.shorthand, None, None, None)?;
    let net = spec.build().map_err(|e| Failure::runtime(e.why))?;
    Ok((row, net))
}

fn barrier_cmd(a: &BarrierArgs) -> Result<ExitCode, Failure> {
    let allocation = barrier::allocation(&a.generation, &a.allocation)?;
    let machine = match &a.nodes {
        None => None,
        Some(spec) => {
            let s = podsim_config::system_from_cli(spec, None, None, None)?;
            let net = s.build().map_err(|e| Failure::runtime(e.why))?;
            Some(barrier::machine(spec, net)?)
        }
    };
    let allreduce = a.allreduce.as_deref().map(barrier::reduce_op).transpose()?;
    let options = barrier::BarrierOptions {
        allocation,
        points: &a.points,
        allreduce,
        elements: a.elements,
        memory_limit: crate::memory_limit(),
    };
    let r = barrier::barrier(&options, machine.as_ref())?;
    if let Some(path) = &a.plot {
        r.plot(path)?;
    }
    if a.json {
        crate::one_or_many(r.rows.iter().map(podsim_report::to_json).collect());
    } else {
        out!("{}", r.text());
    }
    Ok(ExitCode::SUCCESS)
}
