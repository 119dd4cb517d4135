//! `podsim tofu`: TofuD's node-level mechanisms (tofu-interconnect-d.txt sections IV-V).

use std::process::ExitCode;

use clap::{Args, Subcommand};
use podsim_report::render;
use podsim_tofu::frame::{self as tofu_frame, Frame, Pattern, RoutingHeader, Slice};
use serde_json::json;

use crate::Failure;
use crate::args::flag_err;

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
    #[arg(long, value_name = "GEN")]
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
    #[arg(long, value_name = "OP")]
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
    #[arg(long, value_name = "MODE", default_value = "auto")]
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
    #[arg(long, value_name = "GEN", default_value = "tofud")]
    generation: String,
    /// Start-and-end points (processes) per node; a comma list prints one row each (Table
    /// VI: 1,4,8,16,48).
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', required = true)]
    points: Vec<u32>,
    /// test: the paper's test programs (several BCHs per TNI past six points, Table VI);
    /// mpi: the rule section V.E recommends (one BCH per process from different TNIs up to
    /// six; past six, six groups each sharing a BCH through memory).
    #[arg(long, value_name = "RULE", default_value = "test")]
    allocation: String,
    /// A TofuD machine to run the barrier across, e.g. tofu:fugaku or tofud:4x4x4 (every node
    /// carries the same points).
    #[arg(long, value_name = "SPEC")]
    nodes: Option<String>,
    /// Run a one-element all-reduce through the BGs instead of a bare barrier: sum, max, min,
    /// and, or (integers), fsum, fmax, fmin (floating point). Point p gives (p + 1)(e + 1) in
    /// element e; a sum keeps the groups a power of two (no point counted twice). One node.
    #[arg(long, value_name = "OP")]
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
    #[arg(long, value_name = "GEN")]
    generation: String,
    /// The Table III setting: tofu: direct-descriptor or descriptor-on-memory; tofu2:
    /// cache-injection-on or cache-injection-off; tofud: near-cmg or far-cmg [default: the
    /// first of each].
    #[arg(long, value_name = "NAME")]
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
        TofuCommand::Frame(f) => frame_cmd(f),
        TofuCommand::Put(p) => put_cmd(p),
        TofuCommand::Barrier(b) => barrier_cmd(b),
        TofuCommand::Slicing(x) => slicing_cmd(x),
        TofuCommand::Rdma(r) => rdma_cmd(r),
        TofuCommand::Node(n) => node_cmd(n),
    }
}

fn parse_fields(s: &str) -> Result<RoutingHeader, Failure> {
    if s.trim().is_empty() {
        return Err(flag_err(
            "--encode",
            "no fields: give NAME=VALUE pairs, e.g. len=63,dx=1 (unnamed fields are 0)",
        ));
    }
    let mut h = RoutingHeader::default();
    let names = [
        "len", "dabc1", "dx", "dy", "dz", "dabc2", "di", "b", "s", "vc", "pat", "stat", "seq",
    ];
    let mut seen = Vec::new();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| flag_err("--encode", format!("`{part}`: expected NAME=VALUE")))?;
        let k = k.trim().to_ascii_lowercase();
        if seen.contains(&k) {
            return Err(flag_err("--encode", format!("`{k}` is given twice")));
        }
        let v: u64 = v.trim().parse().map_err(|_| {
            flag_err(
                "--encode",
                format!("`{k}`: `{}` is not a whole number", v.trim()),
            )
        })?;
        let small = |max: u64| -> Result<u64, Failure> {
            if v > max {
                Err(flag_err(
                    "--encode",
                    format!("`{k}` = {v} does not fit (at most {max})"),
                ))
            } else {
                Ok(v)
            }
        };
        match k.as_str() {
            "len" => h.len = small(255)? as u8,
            "dabc1" => h.dabc1 = small(255)? as u8,
            "dx" => h.dx = small(255)? as u8,
            "dy" => h.dy = small(255)? as u8,
            "dz" => h.dz = small(255)? as u8,
            "dabc2" => h.dabc2 = small(255)? as u8,
            "di" => h.di = small(255)? as u8,
            "b" => h.b = small(1)? == 1,
            "s" => h.s = small(1)? == 1,
            "vc" => h.vc = small(255)? as u8,
            "pat" => {
                h.pat = match small(7)? {
                    0 => Pattern::Whole,
                    1 => Pattern::SplitLane0,
                    2 => Pattern::SplitLane1,
                    p => {
                        return Err(flag_err(
                            "--encode",
                            format!("`pat` = {p} is reserved (0 undivided, 1 and 2 split)"),
                        ));
                    }
                }
            }
            "stat" => h.stat = small(255)? as u8,
            "seq" => h.seq = small(65535)? as u16,
            other => {
                return Err(flag_err(
                    "--encode",
                    format!(
                        "`{other}` is not a field; the nearest is `{}` (fields: {})",
                        podsim_units::nearest(other, &names).unwrap_or(""),
                        names.join(", ")
                    ),
                ));
            }
        }
        seen.push(k);
    }
    Ok(h)
}

fn frame_cmd(a: &FrameArgs) -> Result<ExitCode, Failure> {
    let (h, word) = match (&a.encode, &a.decode) {
        (Some(f), None) => {
            let h = parse_fields(f)?;
            let w = h.encode().map_err(|e| flag_err("--encode", e))?;
            (h, w)
        }
        (None, Some(x)) => {
            let t = x.trim().trim_start_matches("0x");
            let w = u64::from_str_radix(t, 16).map_err(|_| {
                flag_err(
                    "--decode",
                    format!("`{x}` is not a 64-bit hexadecimal number"),
                )
            })?;
            (
                RoutingHeader::decode(w).map_err(|e| flag_err("--decode", e))?,
                w,
            )
        }
        _ => {
            return Err(flag_err("--encode", "give --encode FIELDS or --decode HEX"));
        }
    };
    let frame = Frame {
        header: RoutingHeader {
            pat: Pattern::Whole,
            ..h
        },
        tlp: vec![0; h.tlp_bytes()],
        dllp: [0; 16],
        control: [0; 8],
    };
    let wire = |split| -> Result<u64, Failure> {
        Ok(tofu_frame::slice(&frame, split)
            .map_err(|e| Failure::runtime(e.to_string()))?
            .iter()
            .map(Slice::wire_bytes)
            .sum())
    };
    let (split, dup) = (wire(true)?, wire(false)?);
    // The TLP's own 32-byte transport header (validation/tofud-frame.toml) is not payload.
    let payload = h.tlp_bytes().saturating_sub(32) as f64;
    let pat = match h.pat {
        Pattern::Whole => 0,
        Pattern::SplitLane0 => 1,
        Pattern::SplitLane1 => 2,
    };
    if a.json {
        outln!(
            "{}",
            json!({
                "header_hex": format!("{word:016x}"),
                "fields": {
                    "len": h.len, "dabc1": h.dabc1, "dx": h.dx, "dy": h.dy, "dz": h.dz,
                    "dabc2": h.dabc2, "di": h.di, "b": u8::from(h.b), "s": u8::from(h.s),
                    "vc": h.vc, "pat": pat, "stat": h.stat, "seq": h.seq,
                },
                "tlp_bytes": h.tlp_bytes(),
                "split_wire_bytes": split,
                "duplicate_wire_bytes": dup,
                "payload_efficiency": payload / split as f64,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows = vec![
        ("header".to_string(), vec![format!("{word:016x}")]),
        (
            "fields".into(),
            vec![format!(
                "LEN {} DABC1 {} DX {} DY {} DZ {} DABC2 {} DI {} B {} S {} VC {} PAT {} STAT {} SEQ {}",
                h.len,
                h.dabc1,
                h.dx,
                h.dy,
                h.dz,
                h.dabc2,
                h.di,
                u8::from(h.b),
                u8::from(h.s),
                h.vc,
                pat,
                h.stat,
                h.seq
            )],
        ),
        ("TLP".into(), vec![format!("{} B", h.tlp_bytes())]),
        (
            "on the wire".into(),
            vec![format!(
                "{split} B split over two lanes, {dup} B duplicated (preamble, header, link block and gap on each lane)"
            )],
        ),
        (
            "efficiency".into(),
            vec![format!(
                "{:.2}% of the split frame is payload (TLP less its 32-byte header)",
                100.0 * payload / split as f64
            )],
        ),
    ];
    out!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

/// `--generation`, `--setting` and `--far` of `tofu put` and `tofu rdma`: the generation, a
/// small network of it for the model runs, and the Table III setting.
fn generation_setting(
    row: &RowArgs,
) -> Result<(podsim_topology::TofuGeneration, &'static str, Option<&str>), Failure> {
    use podsim_topology::TofuGeneration;
    let (generation, setting, far) = (row.generation.as_str(), row.setting.as_deref(), row.far);
    let (generation, shorthand) = match generation {
        "tofu" => (TofuGeneration::Tofu, "tofu1:2x2x2"),
        "tofu2" => (TofuGeneration::Tofu2, "tofu2:2x2x2"),
        "tofud" => (TofuGeneration::TofuD, "tofud:2x2x2"),
        other => {
            return Err(flag_err(
                "--generation",
                format!("`{other}` is not tofu, tofu2 or tofud"),
            ));
        }
    };
    let setting = match (far, setting, generation) {
        (true, None | Some("far-cmg"), TofuGeneration::TofuD) => Some("far-cmg"),
        (true, Some(_), TofuGeneration::TofuD) => {
            return Err(flag_err(
                "--far",
                "--far is --setting far-cmg; give one of the two",
            ));
        }
        (true, _, _) => {
            return Err(flag_err("--far", "only TofuD has far CMGs (section V.B)"));
        }
        (false, s, _) => s,
    };
    Ok((generation, shorthand, setting))
}

/// A put of 8 bytes between neighbours of `shorthand` with `setting`'s endpoint overhead, on
/// `model`.
fn model_put(
    shorthand: &str,
    setting: &str,
    model: podsim_collective::ModelKind,
) -> Result<podsim_collective::MicroResult, Failure> {
    let spec = podsim_config::system_from_cli(shorthand, None, None, None)?;
    let net = spec.build().map_err(|e| Failure::runtime(e.why))?;
    let models = podsim_system::Models {
        endpoint: Some(setting.to_string()),
        record: None,
    };
    podsim_system::microbench(
        &net,
        podsim_collective::Micro::PutLatency,
        8,
        model,
        podsim_net::Packetization::NONE,
        u64::MAX,
        &models,
    )
    .map_err(|e| Failure::runtime(e.to_string()))
}

fn put_cmd(a: &PutArgs) -> Result<ExitCode, Failure> {
    let (generation, shorthand, setting) = generation_setting(&a.row)?;
    let b = podsim_system::presets::tofu_put(generation, setting)
        .map_err(|e| flag_err("--setting", e))?;
    // The same put on the flow model of a small network of that generation, with the
    // setting's endpoint overhead: one hop, 8 bytes at the link rate.
    let m = model_put(shorthand, b.setting, podsim_collective::ModelKind::Flow)?;
    let s = |ns: u64| ns as f64 / 1e9;
    if a.json {
        outln!(
            "{}",
            json!({
                "generation": generation.name(),
                "setting": b.setting,
                "latency_s": s(b.total_ns()),
                "breakdown": {
                    "sender": s(b.sender_ns),
                    "packet_transfer": s(b.packet_ns),
                    "receiver": s(b.receiver_ns),
                    "far_cmgs": s(b.far_ns),
                },
                "flow_model_latency_s": m.time_s,
                "source": b.source,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let us = |ns: u64| format!("{:.3} us", ns as f64 / 1000.0);
    let rows = vec![
        (
            "put".to_string(),
            vec![format!(
                "{} {}, 8 bytes to a nearest neighbour",
                generation.name(),
                b.setting
            )],
        ),
        (
            "  sender".into(),
            vec![format!(
                "{} (software, descriptor, TNI; half the fitted endpoint sum, by assumption)",
                us(b.sender_ns)
            )],
        ),
        (
            "  packet transfer".into(),
            vec![format!(
                "{} (one link, two switches: section IV.E)",
                us(b.packet_ns)
            )],
        ),
        (
            "  receiver".into(),
            vec![format!(
                "{} (TNI, memory or cache, target read; the other half)",
                us(b.receiver_ns)
            )],
        ),
        (
            "  far CMGs".into(),
            vec![format!("{} (section V.B)", us(b.far_ns))],
        ),
        ("total".into(), vec![us(b.total_ns())]),
        (
            "flow model".into(),
            vec![format!(
                "{:.3} us (the same put on {shorthand}: the hop, 8 B at the link rate, the overhead)",
                m.time_s * 1e6
            )],
        ),
        ("source".into(), vec![b.source.to_string()]),
    ];
    out!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

fn barrier_cmd(a: &BarrierArgs) -> Result<ExitCode, Failure> {
    use podsim_tofu::barrier::{self as tofu_barrier, Allocation};
    if a.generation != "tofud" {
        return Err(flag_err(
            "--generation",
            format!(
                "`{}`: the barrier is timed for tofud only (the paper measures its components on TofuD, section V.E)",
                a.generation
            ),
        ));
    }
    let alloc = Allocation::parse(&a.allocation).ok_or_else(|| {
        flag_err(
            "--allocation",
            format!("`{}` is not test or mpi", a.allocation),
        )
    })?;
    let net = match &a.nodes {
        None => None,
        Some(spec) => {
            let s = podsim_config::system_from_cli(spec, None, None, None)?;
            match s.build().map_err(|e| Failure::runtime(e.why))? {
                podsim_topology::Network::Tofu(t) => Some(t),
                _ => {
                    return Err(flag_err(
                        "--nodes",
                        format!("`{spec}` is not a Tofu network (tofu:fugaku, tofud:XxYxZ)"),
                    ));
                }
            }
        }
    };
    let op = match a.allreduce.as_deref() {
        None => None,
        Some(o) => Some(tofu_barrier::ReduceOp::parse(o).ok_or_else(|| {
            flag_err(
                "--allreduce",
                format!("`{o}` is not sum, max, min, and, or, fsum, fmax or fmin"),
            )
        })?),
    };
    if op.is_some() && net.is_some() {
        return Err(flag_err(
            "--allreduce",
            "the all-reduce runs on one node; drop --nodes",
        ));
    }
    let mut rows = Vec::new();
    let mut reduced: Vec<serde_json::Value> = Vec::new();
    for &p in &a.points {
        if let Some(op) = op {
            let bchs =
                podsim_tofu::node::NodeResources::of(podsim_topology::TofuGeneration::TofuD).bchs;
            if p > bchs {
                return Err(flag_err(
                    "--points",
                    format!(
                        "{p} points: an all-reduce through the BGs takes at most {bchs}, a TofuD node's BCHs (Table II)"
                    ),
                ));
            }
            let value = |i: u64, e: u64| -> u64 {
                let v = (i + 1) * (e + 1);
                if op.is_float() {
                    (v as f64).to_bits()
                } else {
                    v
                }
            };
            let inputs: Vec<Vec<u64>> = (0..u64::from(p))
                .map(|i| (0..a.elements as u64).map(|e| value(i, e)).collect())
                .collect();
            let (r, out) = tofu_barrier::node_allreduce(alloc, op, &inputs)
                .map_err(|e| flag_err("--allreduce", e))?;
            // The same reduction folded directly, point by point: what every point must hold.
            let expected: Vec<u64> = (0..a.elements)
                .map(|e| {
                    inputs
                        .iter()
                        .map(|v| v[e])
                        .reduce(|x, y| op.combine(x, y))
                        .expect("at least one point")
                })
                .collect();
            let show = |v: &[u64]| -> Vec<serde_json::Value> {
                v.iter()
                    .map(|&x| {
                        if op.is_float() {
                            json!(f64::from_bits(x))
                        } else {
                            json!(x as i64)
                        }
                    })
                    .collect()
            };
            reduced.push(json!({
                "op": a.allreduce,
                "elements": a.elements,
                "result": show(&out[0]),
                "expected": show(&expected),
                "all_points_agree": out.iter().all(|v| *v == expected),
            }));
            rows.push((r, None));
            continue;
        }
        let (r, sw) = match &net {
            None => (tofu_barrier::node_barrier(p, alloc), None),
            Some(t) => match tofu_barrier::machine_barrier(t, p, alloc, crate::memory_limit()) {
                Ok((r, sw)) => (Ok(r), Some(sw)),
                Err(e) => (Err(e), None),
            },
        };
        let r = r.map_err(|e| match e {
            tofu_barrier::BarrierError::Memory { .. } => Failure::runtime(e.to_string()),
            tofu_barrier::BarrierError::TooManyNodes(_) | tofu_barrier::BarrierError::NoNodes => {
                flag_err("--nodes", e)
            }
            e => flag_err("--points", e),
        })?;
        rows.push((r, sw));
    }
    if let Some(path) = &a.plot {
        let curve = |f: &dyn Fn(&tofu_barrier::BarrierResult) -> f64| -> Vec<(f64, f64)> {
            rows.iter()
                .map(|(r, _)| (f64::from(r.processes), f(r) * 1e6))
                .collect()
        };
        let mut series = vec![
            podsim_report::Series {
                name: format!(
                    "{} allocation, serialized (each TNI one server)",
                    a.allocation
                ),
                points: curve(&|r| r.latency_s),
                second: false,
            },
            podsim_report::Series {
                name: format!(
                    "{} allocation, minimum (every gate in parallel)",
                    a.allocation
                ),
                points: curve(&|r| r.minimum_latency_s),
                second: false,
            },
        ];
        if alloc == Allocation::Test && net.is_none() {
            let mpi: Result<Vec<(f64, f64)>, Failure> = a
                .points
                .iter()
                .map(|&p| {
                    tofu_barrier::node_barrier(p, Allocation::Mpi)
                        .map(|r| (f64::from(p), r.latency_s * 1e6))
                        .map_err(|e| flag_err("--points", e))
                })
                .collect();
            series.push(podsim_report::Series {
                name: "MPI rule (one BCH per TNI, groups through memory)".into(),
                points: mpi?,
                second: false,
            });
        }
        let ymax = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0, f64::max)
            * 1.15;
        podsim_report::lines_svg(
            path,
            "Tofu barrier on a TofuD node (Table VI, Fig. 8)",
            "start-and-end points (processes) per node",
            "latency (us)",
            &series,
            ymax,
        )
        .map_err(|e| Failure::runtime(e.to_string()))?;
    }
    if a.json {
        let objs: Vec<serde_json::Value> = rows
            .iter()
            .map(|(r, sw)| {
                let mut o = json!({
                    "points": r.points,
                    "processes": r.processes,
                    "nodes": r.nodes,
                    "tnis": r.tnis,
                    "bchs_per_tni": r.bchs_per_tni,
                    "bgs_per_tni": r.bgs_per_tni,
                    "stages": r.stages,
                    "groups_per_node": r.groups_per_node,
                    "latency_s": r.latency_s,
                    "minimum_latency_s": r.minimum_latency_s,
                    "serialized_estimate_s": r.serialized_estimate_s,
                    "memory_sync_s": r.memory_sync_s,
                });
                if let Some(sw) = sw {
                    o["software_dissemination_s"] = json!(sw);
                }
                o
            })
            .collect();
        let objs: Vec<serde_json::Value> = objs
            .into_iter()
            .enumerate()
            .map(|(i, mut o)| {
                if let Some(x) = reduced.get(i) {
                    o["allreduce"] = x.clone();
                }
                o
            })
            .collect();
        crate::one_or_many(objs);
        return Ok(ExitCode::SUCCESS);
    }
    let us = |s: f64| format!("{:.3} us", s * 1e6);
    let mut table = vec![(
        "points".to_string(),
        vec![
            "TNIs".to_string(),
            "groups".into(),
            "BCHs/TNI".into(),
            "BGs/TNI".into(),
            "stages".into(),
            "serialized".into(),
            "minimum".into(),
        ],
    )];
    if net.is_some() {
        table[0].1.push("software".into());
    }
    for (r, sw) in &rows {
        let label = if r.processes == r.points {
            r.points.to_string()
        } else {
            format!("{} ({} processes)", r.points, r.processes)
        };
        let mut cells = vec![
            r.tnis.to_string(),
            r.groups_per_node.to_string(),
            r.bchs_per_tni.to_string(),
            r.bgs_per_tni.to_string(),
            r.stages.to_string(),
            us(r.latency_s),
            us(r.minimum_latency_s),
        ];
        if let Some(sw) = sw {
            cells.push(us(*sw));
        }
        table.push((label, cells));
    }
    out!("{}", render(&table));
    let mut notes = vec![format!(
        "allocation: {}; each group reduces its points to one BG, the groups run recursive doubling, and the last round broadcasts back",
        a.allocation
    ), "components: BCH + start-and-end BG 0.48 us (0.19 us overlapped between BCHs of a TNI, 0.29 us serialized), relay BG 0.13 us (section V.E)".to_string()];
    if let Some(t) = &net {
        notes.push(format!(
            "{} nodes of {}: rounds across nodes pay the hops x 0.1 us; software: a put per round (0.41 us at the ends + hops), a 0.1 us memory flag on one node",
            rows[0].0.nodes,
            t.label()
        ));
    }
    for (x, (r, _)) in reduced.iter().zip(&rows) {
        notes.push(format!(
            "all-reduce {} of {} element(s) over {} points: {} at every point: {} (folded directly: {})",
            x["op"].as_str().unwrap_or(""),
            x["elements"],
            r.points,
            x["result"],
            if x["all_points_agree"] == json!(true) { "yes" } else { "NO" },
            x["expected"]
        ));
    }
    if rows.iter().any(|(r, _)| r.memory_sync_s > 0.0) {
        notes.push("processes sharing a BCH meet in memory first and are released after: (log2 q + 1) flags of 0.1 us (an assumption)".into());
    }
    for n in notes {
        outln!("{n}");
    }
    Ok(ExitCode::SUCCESS)
}

fn slicing_cmd(a: &SlicingArgs) -> Result<ExitCode, Failure> {
    use podsim_tofu::slicing::{self as tofu_slicing, SliceMode, SlicingRun};
    let mode = SliceMode::parse(&a.mode).ok_or_else(|| {
        flag_err(
            "--mode",
            format!("`{}` is not auto, split, duplicate or degrade", a.mode),
        )
    })?;
    let time = |flag: &str, v: &Option<String>| -> Result<Option<u64>, Failure> {
        v.as_deref()
            .map(|s| {
                s.parse::<podsim_units::SimDuration>()
                    .map(|d| d.as_ps() / 1000)
                    .map_err(|e| {
                        flag_err(
                            flag,
                            format!("`{s}`: {e}; expected a time such as \"100 us\""),
                        )
                    })
            })
            .transpose()
    };
    let run = SlicingRun {
        packets: a.packets,
        bytes: a.bytes,
        ber: a.ber,
        fault_at_ns: time("--lane-fault-at", &a.lane_fault_at)?,
        recover_at_ns: time("--lane-recover-at", &a.lane_recover_at)?,
        mode,
        seed: a.seed,
    };
    let r = tofu_slicing::run(&run).map_err(|e| match e {
        tofu_slicing::SlicingError::Setting { key, why } => flag_err(key, why),
    })?;
    if a.json {
        outln!(
            "{}",
            json!({
                "mode": mode.name(),
                "latency_s": r.latency_s,
                "unloaded_latency_s": r.unloaded_latency_s,
                "throughput_bytes_per_s": r.throughput_bytes_per_s,
                "packets_sent": r.packets_sent,
                "packets_delivered": r.packets_delivered,
                "packets_lost": r.packets_lost,
                "retransmissions": r.retransmissions,
                "fcs_errors": r.fcs_errors,
                "slices_lost": r.slices_lost,
                "duplicates_discarded": r.duplicates_discarded,
                "corrupted_deliveries": r.corrupted_deliveries,
                "split_transmissions": r.split_transmissions,
                "duplicate_transmissions": r.duplicate_transmissions,
                "single_lane_transmissions": r.single_lane_transmissions,
                "time_s": r.time_s,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows = vec![
        (
            "link".to_string(),
            vec![format!(
                "TofuD, 2 lanes x 28.05 Gb/s (64b/66b), {} frames of {} B TLP, BER {:e}, mode {}",
                r.packets_sent,
                a.bytes,
                a.ber,
                mode.name()
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
    out!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

fn rdma_cmd(a: &RdmaArgs) -> Result<ExitCode, Failure> {
    use podsim_collective::ModelKind;
    use podsim_tofu::rdma::{RdmaOp, rdma};
    let op = RdmaOp::parse(&a.op)
        .ok_or_else(|| flag_err("--op", format!("`{}` is not put, get or atomic", a.op)))?;
    let (generation, shorthand, setting) = generation_setting(&a.row)?;
    let r = rdma(op, generation, setting).map_err(|e| match e {
        podsim_tofu::rdma::RdmaError::NoAtomics => flag_err("--op", e),
        e => flag_err("--setting", e),
    })?;
    // Each crossing on a model: its put time less the endpoint overhead it charges.
    let on = |model| -> Result<f64, Failure> {
        let m = model_put(shorthand, r.row.setting, model)?;
        let crossing = m.time_s - r.row.overhead_ns() as f64 * 1e-9;
        Ok(r.endpoint_ns() as f64 * 1e-9 + crossing * op.crossings() as f64)
    };
    let flow = on(ModelKind::Flow)?;
    let packet = on(ModelKind::Packet)?;
    let s = |ns: u64| ns as f64 / 1e9;
    if a.json {
        let breakdown: serde_json::Map<String, serde_json::Value> = r
            .components
            .iter()
            .map(|(k, v)| (k.to_string(), json!(s(*v))))
            .collect();
        outln!(
            "{}",
            json!({
                "op": op.name(),
                "generation": generation.name(),
                "setting": r.row.setting,
                "latency_s": s(r.total_ns()),
                "breakdown": breakdown,
                "flow_model_latency_s": flow,
                "packet_model_latency_s": packet,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let us = |ns: u64| format!("{:.3} us", ns as f64 / 1000.0);
    let mut rows = vec![(
        op.name().to_string(),
        vec![format!(
            "{} {}, 8 bytes between nearest neighbours",
            generation.name(),
            r.row.setting
        )],
    )];
    for (k, v) in &r.components {
        rows.push((format!("  {}", k.replace('_', " ")), vec![us(*v)]));
    }
    rows.push(("total".into(), vec![us(r.total_ns())]));
    rows.push((
        "flow model".into(),
        vec![format!(
            "{:.3} us (the packet transfers on {shorthand})",
            flow * 1e6
        )],
    ));
    rows.push((
        "packet model".into(),
        vec![format!(
            "{:.3} us (64-byte flits through cycle-level routers)",
            packet * 1e6
        )],
    ));
    rows.push(("source".into(), vec![r.row.source.to_string()]));
    out!("{}", render(&rows));
    if op != RdmaOp::Put {
        outln!(
            "the paper measures puts only: the {} is predicted from the put's components (the target's read costs the put's receiver side, an assumption)",
            op.name()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn node_cmd(a: &NodeArgs) -> Result<ExitCode, Failure> {
    use podsim_tofu::node::{NodeResources, ProcessRequest, place};
    let (generation, _, _) = generation_setting(&RowArgs {
        generation: a.generation.clone(),
        setting: None,
        far: false,
    })?;
    let res = NodeResources::of(generation);
    if a.processes == 0 {
        return Err(flag_err(
            "--processes",
            "0 processes: nothing to place; give at least 1 (the node's resources print with every placement)",
        ));
    }
    if a.cqs == 0 && a.bchs == 0 {
        return Err(flag_err(
            "--cqs",
            "0 CQs and 0 BCHs: each process asks for nothing to place; give a CQ (to put or get) or a BCH (a barrier-only process)",
        ));
    }
    if !a.cmgs.is_empty() && a.cmgs.len() != a.processes as usize {
        return Err(flag_err(
            "--cmgs",
            format!(
                "{} CMGs for {} processes: give one per process or none",
                a.cmgs.len(),
                a.processes
            ),
        ));
    }
    let requests: Vec<ProcessRequest> = (0..a.processes)
        .map(|p| ProcessRequest {
            cmg: a.cmgs.get(p as usize).copied().unwrap_or(p % res.cmgs),
            cqs: a.cqs,
            bchs: a.bchs,
        })
        .collect();
    let placed = place(generation, &requests).map_err(|e| flag_err("--processes", e))?;
    if a.json {
        let procs: Vec<serde_json::Value> = placed
            .iter()
            .map(|p| json!({"cmg": p.cmg, "far": p.far, "cqs": p.cqs, "bchs": p.bchs}))
            .collect();
        outln!(
            "{}",
            json!({
                "generation": generation.name(),
                "resources": {
                    "cores": res.cores,
                    "cmgs": res.cmgs,
                    "far_cmgs": res.far_cmgs,
                    "tnis": res.tnis,
                    "cqs_per_tni": res.cqs_per_tni,
                    "system_cqs_per_tni": res.system_cqs_per_tni,
                    "bchs": res.bchs,
                    "bgs": res.bgs,
                },
                "processes": procs,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let pairs = |v: &[(u32, u32)]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter()
                .map(|(t, i)| format!("TNI{t}.{i}"))
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    let mut rows = vec![(
        "process".to_string(),
        vec!["CMG".to_string(), "CQs".into(), "BCHs".into()],
    )];
    for (i, p) in placed.iter().enumerate() {
        rows.push((
            i.to_string(),
            vec![
                format!("{}{}", p.cmg, if p.far { " (far)" } else { "" }),
                pairs(&p.cqs),
                pairs(&p.bchs),
            ],
        ));
    }
    out!("{}", render(&rows));
    outln!(
        "{}: {} cores, {} CMGs ({} far), {} TNIs x {} CQs{}, {} BCHs, {} BGs (Table II)",
        generation.name(),
        res.cores,
        res.cmgs,
        res.far_cmgs,
        res.tnis,
        res.cqs_per_tni,
        if res.system_cqs_per_tni > 0 {
            format!(" ({} for the system)", res.system_cqs_per_tni)
        } else {
            String::new()
        },
        res.bchs,
        res.bgs
    );
    Ok(ExitCode::SUCCESS)
}
