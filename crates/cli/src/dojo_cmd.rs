//! `podsim dojo`: the DOJO node and its mechanisms (dojo-microarchitecture.txt).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use podsim_dojo::dojo_node;
use podsim_report::render;
use serde_json::json;

use crate::{Failure, read};

/// The arguments of `podsim dojo`.
#[derive(Args)]
pub struct DojoArgs {
    #[command(subcommand)]
    what: DojoCommand,
}

#[derive(Subcommand)]
enum DojoCommand {
    /// A kernel through the node's funnel pipeline (throughput model): eight-wide decode (two
    /// threads a cycle; loops, counters and list predication retire there), four-wide scalar,
    /// two-wide vector, SRAM ports (two 64-B loads and one store a cycle to the datapath, one
    /// of each to the network), up to four SMT threads. Prints the cycles, each stage's
    /// utilisation and the stage that binds.
    Node(NodeArgs),
    /// Hardware barrier trees (ARM up, GRANT down, handled in the routers) over
    /// synchronisation domains, against a software dissemination barrier on the same mesh:
    /// latency against fan-in and placement; a node in more than four trees is refused.
    Barrier(BarrierArgs),
    /// A push, pull, block or die broadcast on the mesh, packet by packet: 64-byte packets,
    /// one a cycle from the interface, each link first come first served; a stream leaving
    /// its die spreads over neighbouring die-to-die links and may be retried, so packets
    /// arrive out of order; the receiver counts commits on a semaphore and reads the block
    /// when the count is reached (the data is checked).
    Transfer(TransferArgs),
    /// Z-plane shortcuts under sustained mixed load, on the flow model: every router streams
    /// to its neighbour, a fraction also streams across the plane; with shortcuts the die
    /// routing tables send far streams through the DIPs and the Ethernet switch. Shows the
    /// local traffic's throughput (max-min fair rates) with and without, the time a global
    /// transfer of --bytes takes at its rate, and the mesh links a global stream occupies.
    Shortcuts(ShortcutArgs),
    /// A DMA descriptor on an interface processor's engine: contiguous or strided (up to four
    /// dimensions) between the DIP's HBM (32 GB, 800 GB/s) and one node's SRAM; HBM read in
    /// 64-byte bursts, the data packed into 64-byte packets over the mesh (flow model).
    /// Prints the time, the HBM and network stages, and how much of what HBM read was used.
    Dma(DmaArgs),
    /// A host writes into its DIPs' HBM over their PCIe Gen4 x16 links (32 GB/s each, up to
    /// five DIPs per host: 160 GB/s), on the flow model.
    Host(HostArgs),
}

#[derive(Args)]
struct DmaArgs {
    /// The node, as x,y on the mesh.
    #[arg(long, value_name = "X,Y")]
    to: String,
    /// The interface processor (default: the one nearest the node).
    #[arg(long, value_name = "N")]
    dip: Option<u32>,
    /// Elements per dimension, innermost first (1 to 4 dimensions), e.g. 64,32.
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', required = true)]
    shape: Vec<u64>,
    /// Bytes between consecutive elements of each dimension in HBM, innermost first (default:
    /// dense, one region).
    #[arg(long, value_name = "B[,B...]", value_delimiter = ',')]
    stride: Vec<u64>,
    /// Bytes per element.
    #[arg(long, value_name = "B", default_value_t = 4)]
    element_bytes: u64,
    /// The region's first byte in HBM.
    #[arg(long, value_name = "B", default_value_t = 0)]
    offset: u64,
    /// SRAM to HBM (scatter) instead of HBM to SRAM (gather).
    #[arg(long)]
    write: bool,
    /// A DOJO plane with its DIPs: dojo:tile (as dojo:system=1x1) or dojo:system=RxC.
    #[arg(long, value_name = "SPEC", default_value = "dojo:tile")]
    topology: String,
    /// Print one JSON object (keys: dip, time_s, bytes, runs, hbm_bursts, hbm_time_s,
    /// network_time_s, packets, hbm_efficiency).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct HostArgs {
    /// Bytes in all, e.g. 16GiB (an equal share to each DIP).
    #[arg(long, value_name = "SIZE")]
    bytes: String,
    /// How many of the host's DIPs take a share (1 to 5).
    #[arg(long, value_name = "N", default_value_t = 5)]
    dips: u32,
    /// The host.
    #[arg(long, value_name = "N", default_value_t = 0)]
    host: u32,
    /// A DOJO plane with its DIPs: dojo:tile (as dojo:system=1x1) or dojo:system=RxC.
    #[arg(long, value_name = "SPEC", default_value = "dojo:tile")]
    topology: String,
    /// Print one JSON object (keys: host, dips, bytes, time_s, bandwidth_bytes_per_s).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ShortcutArgs {
    /// dojo:tile (one tile with its DIPs, as dojo:system=1x1), dojo:plane (5 x 5 tiles, as
    /// dojo:system=5x5) or dojo:system=RxC.
    #[arg(long, value_name = "SPEC", default_value = "dojo:tile")]
    topology: String,
    /// The fraction of routers that also send a global transfer (0 to 1).
    #[arg(long, value_name = "F")]
    global_fraction: f64,
    /// Keep every transfer in the mesh (no shortcuts).
    #[arg(long)]
    off: bool,
    /// The transfer whose time is reported (global_latency_s, local_last_s).
    #[arg(long, value_name = "SIZE", default_value = "1MiB")]
    bytes: String,
    /// Print one JSON object for the chosen mode (keys: local_throughput_bytes_per_s,
    /// global_latency_s, max_link_utilization, local_last_s, local_transfers,
    /// global_transfers, shortcut_transfers, global_mesh_links, shortcuts).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct TransferArgs {
    /// push, pull (a request per packet), block (one pull, the block pushed back) or
    /// broadcast (to every node of the source's die).
    #[arg(value_name = "OP")]
    op: String,
    /// The source (push, broadcast) or the puller (pull, block), as x,y on the mesh.
    #[arg(long, value_name = "X,Y")]
    from: String,
    /// The destination (push) or the node read from (pull, block); not for a broadcast.
    #[arg(long, value_name = "X,Y")]
    to: Option<String>,
    /// Bytes to move, e.g. 64KiB (whole 64-byte packets).
    #[arg(long, value_name = "SIZE")]
    bytes: String,
    /// dojo:die or dojo:tile (any DOJO shorthand).
    #[arg(long, value_name = "SPEC", default_value = "dojo:die")]
    topology: String,
    /// Probability that a die-to-die crossing is retried by the link's recovery protocol.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    retry: f64,
    /// The receiver's semaphore (0-31).
    #[arg(long, value_name = "S", default_value_t = 0)]
    semaphore: usize,
    /// Seed of the retry stream.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// A failed mesh link between two neighbouring routers, x,y-x,y: packets route around it.
    #[arg(long, value_name = "X,Y-X,Y")]
    fail_link: Option<String>,
    /// packet (64-byte packets, link by link: order, retries, failed links) or flow (one
    /// max-min fair flow: the time only; out_of_order_packets is null).
    #[arg(long, value_name = "MODEL", default_value = "packet")]
    model: String,
    /// Print one JSON object (keys: op, time_s, packets, out_of_order_packets,
    /// missed_by_last_packet_receiver, destinations, data_correct, retries; with --model flow:
    /// op, model, time_s, packets, out_of_order_packets).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct BarrierArgs {
    /// dojo:die or dojo:tile (any DOJO shorthand).
    #[arg(long, value_name = "SPEC", default_value = "dojo:die")]
    topology: String,
    /// Children per tree node; a comma list prints one row each.
    #[arg(
        long,
        value_name = "K[,K...]",
        value_delimiter = ',',
        default_value = "4"
    )]
    fan_in: Vec<u32>,
    /// Synchronisation domains (TOML: [[domain]] name, rect = [x0, y0, x1, y1] and/or nodes =
    /// [[x, y], ...]); each gets its own tree. Default: one domain of every router.
    #[arg(long, value_name = "FILE")]
    domains: Option<PathBuf>,
    /// Report the software dissemination barrier as latency_s instead of the trees.
    #[arg(long)]
    software: bool,
    /// Print JSON (keys: topology, fan_in, latency_s (the slowest domain), domains (name,
    /// members, depth, latency_s, software_latency_s, rounds)); an array for a list of fan-ins.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct NodeArgs {
    /// A kernel file (TOML: name, then [[thread]] tables with iterations and a body = {class
    /// = count, ...} or ops = [class, ...]; classes: loop, counter, predicate, scalar, branch,
    /// agen, sync, load, store, push, matmul, simd, net_commit), e.g.
    /// examples/dojo/matmul.toml.
    #[arg(long, value_name = "FILE")]
    kernel: PathBuf,
    /// Print one JSON object (keys: kernel, cycles, binding_stage, utilization (per stage, 0
    /// to 1), instructions, ipc, flops, time_s).
    #[arg(long)]
    json: bool,
}

/// Run `podsim dojo`.
pub fn dojo_cmd(a: &DojoArgs) -> Result<ExitCode, Failure> {
    match &a.what {
        DojoCommand::Node(n) => node_cmd(n),
        DojoCommand::Barrier(b) => barrier_cmd(b),
        DojoCommand::Transfer(t) => transfer_cmd(t),
        DojoCommand::Shortcuts(x) => shortcuts_cmd(x),
        DojoCommand::Dma(x) => dma_cmd(x),
        DojoCommand::Host(x) => host_cmd(x),
    }
}

fn node_cmd(a: &NodeArgs) -> Result<ExitCode, Failure> {
    let file = a.kernel.display().to_string();
    let k = podsim_config::parse_kernel(&file, &read(&a.kernel)?)?;
    let r = dojo_node::run(&k).map_err(|e| Failure::usage(format!("{file}: {e}")))?;
    if a.json {
        let util: serde_json::Map<String, serde_json::Value> = r
            .utilization
            .iter()
            .map(|(s, u)| (s.name().to_string(), json!(u)))
            .collect();
        outln!(
            "{}",
            json!({
                "kernel": k.name,
                "cycles": r.cycles,
                "binding_stage": r.binding.name(),
                "utilization": util,
                "instructions": r.instructions,
                "ipc": r.ipc,
                "flops": r.flops,
                "time_s": r.time_s,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![(
        "stage".to_string(),
        vec!["width".to_string(), "utilization".into()],
    )];
    for (s, u) in &r.utilization {
        rows.push((
            s.name().to_string(),
            vec![
                format!("{}/cycle", s.width()),
                format!(
                    "{:.1}%{}",
                    u * 100.0,
                    if *s == r.binding { "  <- binds" } else { "" }
                ),
            ],
        ));
    }
    out!("{}", render(&rows));
    outln!(
        "{}: {} thread{}, {} instructions in {} cycles ({:.2} IPC, {:.3} us at 2 GHz), {} FLOPs ({:.1} per cycle of the node's {}); bound by {}",
        k.name,
        k.threads.len(),
        if k.threads.len() == 1 { "" } else { "s" },
        r.instructions,
        r.cycles,
        r.ipc,
        r.time_s * 1e6,
        r.flops,
        r.flops as f64 / r.cycles as f64,
        dojo_node::matmul_flops_per_cycle(),
        r.binding.name()
    );
    Ok(ExitCode::SUCCESS)
}

fn barrier_cmd(a: &BarrierArgs) -> Result<ExitCode, Failure> {
    use podsim_dojo::barrier::{self as dojo_barrier, barriers, whole};
    let (spec, file) = crate::system_spec("--topology", &a.topology, None, None, None, None)?;
    let net = crate::build(&spec, &file)?;
    let podsim_topology::Network::Dojo(d) = net else {
        return Err(crate::args::flag_err(
            "--topology",
            format!(
                "`{}` is not a DOJO network (dojo:die, dojo:tile)",
                a.topology
            ),
        ));
    };
    let domains = match &a.domains {
        Some(p) => {
            let file = p.display().to_string();
            podsim_config::parse_domains(&file, &read(p)?)?
        }
        None => vec![whole(&d, "all")],
    };
    let mut runs = Vec::new();
    for &k in &a.fan_in {
        let r = barriers(&d, &domains, k).map_err(|e| match (&e, &a.domains) {
            (dojo_barrier::BarrierTreeError::Memory { .. }, _) => {
                Failure::runtime(format!("{}: {e}", a.topology))
            }
            (_, Some(p)) => Failure::usage(format!("{}: {e}", p.display())),
            (_, None) => crate::args::flag_err("--fan-in", e),
        })?;
        runs.push((k, r));
    }
    let pick = |r: &dojo_barrier::DomainResult| {
        if a.software {
            r.software_latency_s
        } else {
            r.latency_s
        }
    };
    if a.json {
        let objs: Vec<serde_json::Value> = runs
            .iter()
            .map(|(k, rs)| {
                json!({
                    "topology": a.topology,
                    "fan_in": k,
                    "software": a.software,
                    "latency_s": rs.iter().map(pick).fold(0.0, f64::max),
                    "domains": rs.iter().map(|r| json!({
                        "name": r.name,
                        "members": r.members,
                        "depth": r.depth,
                        "latency_s": r.latency_s,
                        "software_latency_s": r.software_latency_s,
                        "rounds": r.rounds,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        crate::one_or_many(objs);
        return Ok(ExitCode::SUCCESS);
    }
    let ns = |s: f64| format!("{:.1} ns", s * 1e9);
    let mut rows = vec![(
        "domain".to_string(),
        vec![
            "fan-in".to_string(),
            "members".into(),
            "depth".into(),
            "tree".into(),
            "software".into(),
            "rounds".into(),
        ],
    )];
    for (k, rs) in &runs {
        for r in rs {
            rows.push((
                r.name.clone(),
                vec![
                    k.to_string(),
                    r.members.to_string(),
                    r.depth.to_string(),
                    ns(r.latency_s),
                    ns(r.software_latency_s),
                    r.rounds.to_string(),
                ],
            ));
        }
    }
    out!("{}", render(&rows));
    outln!(
        "{}: ARM up and GRANT down the tree, {} ns per router, the links' latencies along X-then-Y routes; software: dissemination, {} ns per round beyond the route (assumptions)",
        a.topology,
        dojo_barrier::ROUTER_NS,
        dojo_barrier::SOFTWARE_ROUND_NS
    );
    Ok(ExitCode::SUCCESS)
}

fn coords(flag: &str, s: &str) -> Result<(u32, u32), Failure> {
    let bad = || {
        crate::args::flag_err(
            flag,
            format!("`{s}`: expected x,y mesh coordinates such as 3,4"),
        )
    };
    let (x, y) = s.split_once(',').ok_or_else(bad)?;
    Ok((
        x.trim().parse().map_err(|_| bad())?,
        y.trim().parse().map_err(|_| bad())?,
    ))
}

fn transfer_cmd(a: &TransferArgs) -> Result<ExitCode, Failure> {
    use crate::args::flag_err;
    use podsim_dojo::transfer::{Op, TransferSpec, transfer};
    let op = Op::parse(&a.op).ok_or_else(|| {
        flag_err(
            "OP",
            format!("`{}` is not push, pull, block or broadcast", a.op),
        )
    })?;
    let from = coords("--from", &a.from)?;
    let to = match (&a.to, op) {
        (Some(_), Op::Broadcast) => {
            return Err(flag_err(
                "--to",
                "a broadcast goes to every node of the source's die; drop --to",
            ));
        }
        (None, Op::Broadcast) => from,
        (Some(t), _) => coords("--to", t)?,
        (None, _) => return Err(flag_err("--to", "push, pull and block need --to X,Y")),
    };
    let bytes = crate::args::size("--bytes", &a.bytes)?;
    let (spec, file) = crate::system_spec("--topology", &a.topology, None, None, None, None)?;
    let net = crate::build(&spec, &file)?;
    let podsim_topology::Network::Dojo(d) = net else {
        return Err(flag_err(
            "--topology",
            format!(
                "`{}` is not a DOJO network (dojo:die, dojo:tile)",
                a.topology
            ),
        ));
    };
    let failed_link = match &a.fail_link {
        None => None,
        Some(f) => {
            let (p, q) = f.split_once('-').ok_or_else(|| {
                flag_err(
                    "--fail-link",
                    format!("`{f}`: expected two neighbours x,y-x,y such as 3,5-4,5"),
                )
            })?;
            Some((coords("--fail-link", p)?, coords("--fail-link", q)?))
        }
    };
    let spec = TransferSpec {
        op,
        from,
        to,
        bytes,
        retry: a.retry,
        semaphore: a.semaphore,
        seed: a.seed,
        failed_link,
    };
    let flag_of = |e: &podsim_dojo::transfer::TransferError| match e {
        podsim_dojo::transfer::TransferError::Semaphore(_) => "--semaphore",
        podsim_dojo::transfer::TransferError::Retry(_) => "--retry",
        podsim_dojo::transfer::TransferError::Empty
        | podsim_dojo::transfer::TransferError::TooLarge(_) => "--bytes",
        podsim_dojo::transfer::TransferError::FailedLink(_) => "--fail-link",
        podsim_dojo::transfer::TransferError::Flow(_) => "--model",
        _ => "--to",
    };
    match a.model.as_str() {
        "packet" => {}
        "flow" => {
            let t = podsim_dojo::transfer::flow_time(&d, &spec)
                .map_err(|e| flag_err(flag_of(&e), e))?;
            let packets = bytes.div_ceil(podsim_dojo::transfer::PACKET_BYTES);
            if a.json {
                outln!(
                    "{}",
                    json!({
                        "op": a.op,
                        "model": "flow",
                        "time_s": t,
                        "packets": packets,
                        "out_of_order_packets": null,
                    })
                );
            } else {
                outln!(
                    "{} of {packets} packets' worth on the flow model of {}: {:.1} ns to the receiver's wake-up (one flow: no packets, no order)",
                    a.op,
                    a.topology,
                    t * 1e9
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        other => {
            return Err(flag_err(
                "--model",
                format!("`{other}` is not packet or flow"),
            ));
        }
    }
    let r = transfer(&d, &spec).map_err(|e| match e {
        podsim_dojo::transfer::TransferError::Memory { .. } => {
            Failure::runtime(format!("<command line>: {e}"))
        }
        e => flag_err(flag_of(&e), e),
    })?;
    if a.json {
        outln!(
            "{}",
            json!({
                "op": a.op,
                "time_s": r.time_s,
                "packets": r.packets,
                "out_of_order_packets": r.out_of_order_packets,
                "missed_by_last_packet_receiver": r.missed_by_last_packet_receiver,
                "destinations": r.destinations,
                "data_correct": r.data_correct,
                "retries": r.retries,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows = vec![
        (
            "transfer".to_string(),
            vec![format!(
                "{} of {} packets (64 B) from ({}, {}) on {}{}",
                a.op,
                r.packets,
                from.0,
                from.1,
                a.topology,
                if op == Op::Broadcast {
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
                a.semaphore
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
    out!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

/// A DOJO plane with its DIPs from `--topology`: dojo:tile means one tile with its DIPs
/// (dojo:system=1x1), dojo:plane a 5 x 5-tile plane (dojo:system=5x5).
fn plane_with_dips(topology: &str) -> Result<podsim_topology::Dojo, Failure> {
    let shorthand = match topology {
        "dojo:tile" => "dojo:system=1x1",
        t => t,
    };
    let spec = podsim_config::system_from_cli(shorthand, None, None, None)?;
    let net = spec.build().map_err(|e| Failure::runtime(e.why))?;
    let podsim_topology::Network::Dojo(d) = net else {
        return Err(crate::args::flag_err(
            "--topology",
            format!("`{topology}` is not a DOJO network (dojo:tile, dojo:plane, dojo:system=RxC)"),
        ));
    };
    Ok(d)
}

fn dma_cmd(a: &DmaArgs) -> Result<ExitCode, Failure> {
    use crate::args::flag_err;
    use podsim_dojo::dma::{Direction, DmaSpec, dma};
    let d = plane_with_dips(&a.topology)?;
    let node = coords("--to", &a.to)?;
    if node.0 >= d.width() || node.1 >= d.height() {
        return Err(flag_err(
            "--to",
            format!(
                "{},{} is off the {}x{} mesh of {}",
                node.0,
                node.1,
                d.width(),
                d.height(),
                a.topology
            ),
        ));
    }
    let dip = match a.dip {
        Some(i) => i,
        None => d.nearest_dip(d.router(node.0, node.1)).ok_or_else(|| {
            flag_err(
                "--topology",
                format!(
                    "{} has no DIPs (dojo:tile or dojo:system=RxC have them)",
                    a.topology
                ),
            )
        })?,
    };
    let strides = if a.stride.is_empty() {
        let mut st = Vec::with_capacity(a.shape.len());
        let mut ext = Some(a.element_bytes);
        for &n in &a.shape {
            st.push(ext.unwrap_or(u64::MAX));
            ext = ext.and_then(|e| e.checked_mul(n));
        }
        st
    } else {
        a.stride.clone()
    };
    let spec = DmaSpec {
        dip,
        node,
        element_bytes: a.element_bytes,
        shape: a.shape.clone(),
        strides,
        offset: a.offset,
        direction: if a.write {
            Direction::Write
        } else {
            Direction::Read
        },
    };
    let r = dma(&d, &spec).map_err(|e| {
        let flag = if e.0.starts_with("--") {
            e.0.split([' ', ':'])
                .next()
                .unwrap_or("--shape")
                .to_string()
        } else if e.0.contains("DIP") && e.0.contains("HBM") {
            "--offset".into()
        } else {
            "--shape".into()
        };
        let why = e.0.strip_prefix(&format!("{flag}: ")).unwrap_or(&e.0);
        flag_err(&flag, why)
    })?;
    if a.json {
        outln!(
            "{}",
            json!({
                "dip": dip,
                "time_s": r.time_s,
                "bytes": r.bytes,
                "runs": r.runs,
                "hbm_bursts": r.hbm_bursts,
                "hbm_time_s": r.hbm_time_s,
                "network_time_s": r.network_time_s,
                "packets": r.packets,
                "hbm_efficiency": r.hbm_efficiency,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let us = |s: f64| format!("{:.3} us", s * 1e6);
    let rows = vec![
        ("time".to_string(), vec![us(r.time_s)]),
        ("bytes".into(), vec![r.bytes.to_string()]),
        ("contiguous runs".into(), vec![r.runs.to_string()]),
        (
            "HBM".into(),
            vec![format!(
                "{} bursts of 64 B, {} ({:.0}% used)",
                r.hbm_bursts,
                us(r.hbm_time_s),
                r.hbm_efficiency * 100.0
            )],
        ),
        (
            "network".into(),
            vec![format!("{} packets, {}", r.packets, us(r.network_time_s))],
        ),
        (
            "binds".into(),
            vec![if r.hbm_time_s > r.network_time_s {
                "HBM".to_string()
            } else {
                "network".into()
            }],
        ),
    ];
    out!("{}", render(&rows));
    outln!(
        "DIP {dip} {} node {},{} on {}",
        if a.write { "<-" } else { "->" },
        node.0,
        node.1,
        a.topology
    );
    Ok(ExitCode::SUCCESS)
}

fn host_cmd(a: &HostArgs) -> Result<ExitCode, Failure> {
    use crate::args::flag_err;
    let d = plane_with_dips(&a.topology)?;
    let bytes = crate::args::size("--bytes", &a.bytes)?;
    let r = podsim_dojo::dma::host_upload(&d, a.host, bytes, a.dips).map_err(|e| {
        let flag = e.0.split(' ').next().unwrap_or("--bytes").to_string();
        let flag = if flag.starts_with("--") {
            flag
        } else {
            "--topology".into()
        };
        let why = e.0.strip_prefix(&format!("{flag} ")).unwrap_or(&e.0);
        flag_err(&flag, why)
    })?;
    if a.json {
        outln!(
            "{}",
            json!({
                "host": r.host,
                "dips": r.dips,
                "bytes": r.bytes,
                "time_s": r.time_s,
                "bandwidth_bytes_per_s": r.bandwidth_bytes_per_s,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows = vec![
        (
            "time".to_string(),
            vec![format!("{:.3} ms", r.time_s * 1e3)],
        ),
        (
            "bandwidth".into(),
            vec![format!("{:.1} GB/s", r.bandwidth_bytes_per_s / 1e9)],
        ),
    ];
    out!("{}", render(&rows));
    outln!(
        "host {} writes {} over {} DIPs' PCIe Gen4 x16 links on {}",
        a.host,
        a.bytes,
        a.dips,
        a.topology
    );
    Ok(ExitCode::SUCCESS)
}

fn shortcuts_cmd(a: &ShortcutArgs) -> Result<ExitCode, Failure> {
    use crate::args::flag_err;
    use podsim_dojo::shortcuts::{SHORTCUT_BEYOND_HOPS, mixed};
    let d = plane_with_dips(&a.topology)?;
    let bytes = crate::args::size("--bytes", &a.bytes)?;
    let run = |on: bool| {
        mixed(&d, a.global_fraction, on, bytes).map_err(|e| {
            if e.contains("--memory-limit") {
                return Failure::runtime(format!("<command line>: {e}"));
            }
            let flag = if e.contains("fraction") {
                "--global-fraction"
            } else if e.contains("DIPs") {
                "--topology"
            } else {
                "--bytes"
            };
            flag_err(flag, e)
        })
    };
    if a.json {
        let r = run(!a.off)?;
        outln!(
            "{}",
            json!({
                "topology": a.topology,
                "global_fraction": a.global_fraction,
                "shortcuts": !a.off,
                "local_throughput_bytes_per_s": r.local_throughput_bytes_per_s,
                "global_latency_s": r.global_latency_s,
                "max_link_utilization": r.max_link_utilization,
                "local_last_s": r.local_last_s,
                "local_transfers": r.local_transfers,
                "global_transfers": r.global_transfers,
                "shortcut_transfers": r.shortcut_transfers,
                "global_mesh_links": r.global_mesh_links,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let modes: Vec<bool> = if a.off {
        vec![false]
    } else {
        vec![false, true]
    };
    let mut rows = vec![(
        "shortcuts".to_string(),
        vec![
            "local throughput".to_string(),
            "last local".into(),
            "global latency".into(),
            "mesh links/global".into(),
            "via DIPs".into(),
            "max link".into(),
        ],
    )];
    for on in modes {
        let r = run(on)?;
        rows.push((
            if on { "on" } else { "off" }.to_string(),
            vec![
                format!("{:.1} TB/s", r.local_throughput_bytes_per_s / 1e12),
                format!("{:.2} us", r.local_last_s * 1e6),
                format!("{:.1} us", r.global_latency_s * 1e6),
                format!("{:.1}", r.global_mesh_links),
                format!("{}/{}", r.shortcut_transfers, r.global_transfers),
                format!("{:.0}%", r.max_link_utilization * 100.0),
            ],
        ));
    }
    out!("{}", render(&rows));
    outln!(
        "{}: every router streams to its neighbour, one in {:.0} also across the plane, all at once (max-min fair rates; times are {} at a stream's rate plus its route's latency); shortcuts for routes over {} hops through the nearest DIP, the Ethernet switch and the DIP nearest the destination",
        a.topology,
        1.0 / a.global_fraction.max(f64::MIN_POSITIVE),
        a.bytes,
        SHORTCUT_BEYOND_HOPS
    );
    Ok(ExitCode::SUCCESS)
}
