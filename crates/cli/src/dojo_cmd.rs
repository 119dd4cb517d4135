//! `podsim dojo`: the DOJO node and its mechanisms (dojo-microarchitecture.txt).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use podsim_dojo::study::{self, StudyError};

use crate::args::print;
use crate::args::{flag_err, listed, size};
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
    #[arg(value_name = "OP", value_parser = listed(["push", "pull", "block", "broadcast"]))]
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
    #[arg(
        long,
        value_name = "MODEL",
        default_value = "packet",
        value_parser = listed(["packet", "flow"]),
    )]
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
        DojoCommand::Node(n) => {
            let file = n.kernel.display().to_string();
            let k = podsim_config::parse_kernel(&file, &read(&n.kernel)?)?;
            let r = study::node::node(&k).map_err(|e| Failure::usage(format!("{file}: {e}")))?;
            print(n.json, &r, |r| r.text())
        }
        DojoCommand::Barrier(b) => barrier_cmd(b),
        DojoCommand::Transfer(t) => transfer_cmd(t),
        DojoCommand::Shortcuts(x) => {
            let d = plane_with_dips(&x.topology)?;
            let o = study::shortcuts::ShortcutOptions {
                topology: &x.topology,
                global_fraction: x.global_fraction,
                bytes: size("--bytes", &x.bytes)?,
                bytes_label: &x.bytes,
            };
            if x.json {
                outln!(
                    "{}",
                    podsim_report::to_json(&study::shortcuts::shortcuts(&d, &o, !x.off)?)
                );
            } else {
                out!("{}", study::shortcuts::compare(&d, &o, x.off)?.text());
            }
            Ok(ExitCode::SUCCESS)
        }
        DojoCommand::Dma(x) => {
            let d = plane_with_dips(&x.topology)?;
            let r = study::dma::dma(
                &d,
                &study::dma::DmaOptions {
                    to: &x.to,
                    dip: x.dip,
                    shape: &x.shape,
                    stride: &x.stride,
                    element_bytes: x.element_bytes,
                    offset: x.offset,
                    write: x.write,
                    topology: &x.topology,
                },
            )?;
            print(x.json, &r, |r| r.text())
        }
        DojoCommand::Host(x) => {
            let d = plane_with_dips(&x.topology)?;
            let r = study::dma::host(
                &d,
                &study::dma::HostOptions {
                    bytes: size("--bytes", &x.bytes)?,
                    bytes_label: &x.bytes,
                    dips: x.dips,
                    host: x.host,
                    topology: &x.topology,
                },
            )?;
            print(x.json, &r, |r| r.text())
        }
    }
}

impl From<StudyError> for Failure {
    fn from(e: StudyError) -> Self {
        match e {
            StudyError::Setting { key, why } => flag_err(&key, why),
            e @ StudyError::File { .. } => Failure::usage(e.to_string()),
            StudyError::Run(why) => Failure::runtime(why),
        }
    }
}

/// The DOJO mesh of `--topology` (`barrier`, `transfer`).
fn mesh(topology: &str) -> Result<podsim_topology::Dojo, Failure> {
    let (spec, file) = crate::system_spec("--topology", topology, None, None, None, None)?;
    Ok(study::mesh(topology, crate::build(&spec, &file)?)?)
}

/// A DOJO plane with its DIPs from `--topology` (`shortcuts`, `dma`, `host`).
fn plane_with_dips(topology: &str) -> Result<podsim_topology::Dojo, Failure> {
    let shorthand = study::plane_shorthand(topology);
    let spec = podsim_config::system_from_cli(shorthand, None, None, None)?;
    let net = spec.build().map_err(|e| Failure::runtime(e.why))?;
    Ok(study::plane(topology, net)?)
}

fn barrier_cmd(a: &BarrierArgs) -> Result<ExitCode, Failure> {
    let d = mesh(&a.topology)?;
    let domains = match &a.domains {
        Some(p) => Some(podsim_config::parse_domains(
            &p.display().to_string(),
            &read(p)?,
        )?),
        None => None,
    };
    let file = a.domains.as_ref().map(|p| p.display().to_string());
    let o = study::barrier::BarrierOptions {
        topology: &a.topology,
        fan_in: &a.fan_in,
        domains_file: file.as_deref(),
        software: a.software,
    };
    let r = study::barrier::barrier(&d, domains.as_deref(), &o)?;
    if a.json {
        crate::one_or_many(r.runs.iter().map(podsim_report::to_json).collect());
    } else {
        out!("{}", r.text());
    }
    Ok(ExitCode::SUCCESS)
}

fn transfer_cmd(a: &TransferArgs) -> Result<ExitCode, Failure> {
    let ends = study::transfer::Ends::parse(&a.op, &a.from, a.to.as_deref())?;
    let bytes = size("--bytes", &a.bytes)?;
    let d = mesh(&a.topology)?;
    let r = study::transfer::transfer(
        &d,
        &ends,
        &study::transfer::TransferOptions {
            topology: &a.topology,
            bytes,
            retry: a.retry,
            semaphore: a.semaphore,
            seed: a.seed,
            fail_link: a.fail_link.as_deref(),
            model: &a.model,
        },
    )?;
    print(a.json, &r, |r| r.text())
}
