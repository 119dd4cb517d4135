//! `podsim dojo`: the DOJO node and its mechanisms (dojo-microarchitecture.txt).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use podsim_report::render;
use podsim_system::dojo_node;
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
    /// examples/dojo/dot-product.toml.
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
    use podsim_system::dojo_barrier::{self, barriers, whole};
    let spec = podsim_config::system_from_cli(&a.topology, None, None, None)?;
    let net = spec.build().map_err(|e| Failure::runtime(e.why))?;
    let podsim_topology::Network::Dojo(d) = net else {
        return Err(crate::collective_cmd::flag_err(
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
        let r = barriers(&d, &domains, k).map_err(|e| match &a.domains {
            Some(p) => Failure::usage(format!("{}: {e}", p.display())),
            None => crate::collective_cmd::flag_err("--fan-in", e),
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
        if objs.len() == 1 {
            outln!("{}", objs[0]);
        } else {
            outln!("{}", serde_json::Value::Array(objs));
        }
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
