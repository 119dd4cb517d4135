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
