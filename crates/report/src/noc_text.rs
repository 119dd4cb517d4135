//! The packet level's text: a run's heading, one load's table, a sweep's curve, the links a
//! heatmap draws and a run's trace.

use std::path::Path;

use podsim_noc::{
    LinkStat, NocResult, NocRouting, PacketLog, RouterConfig, RouterMode, SeedSummary,
};
use podsim_topology::{Network, NodeId};
use serde_json::Value;

use crate::{HeatLink, Trace, render};

/// The heading of a run of `traffic` on `net`: traffic, network, routing and the routers'
/// settings (BookSim's delays and allocators when `cfg` runs BookSim's router).
pub fn noc_title(traffic: &str, net: &Network, routing: NocRouting, cfg: &RouterConfig) -> String {
    if cfg.router == RouterMode::Booksim {
        let speedup = if (cfg.input_speedup, cfg.output_speedup) == (1, 1) {
            String::new()
        } else {
            format!(
                ", speedup {} in, {} out",
                cfg.input_speedup, cfg.output_speedup
            )
        };
        format!(
            "{} on {}, {} routing; BookSim iq routers, {} VCs x {} flits, {}-flit packets, \
             delays {}/{}/{}/{}+{} (route/VA/SA/crossbar), {} allocators{}",
            traffic,
            net.shorthand(),
            routing.name(),
            cfg.vcs,
            cfg.buffer_flits,
            cfg.packet_flits,
            cfg.routing_delay,
            cfg.vc_alloc_delay,
            cfg.sw_alloc_delay,
            cfg.st_prepare_delay,
            cfg.st_final_delay,
            cfg.allocator.name(),
            speedup
        )
    } else {
        format!(
            "{} on {}, {} routing; {} VCs x {} flits, {}-flit packets, {}-stage routers, {}",
            traffic,
            net.shorthand(),
            routing.name(),
            cfg.vcs,
            cfg.buffer_flits,
            cfg.packet_flits,
            cfg.pipeline_stages,
            cfg.arbitration.name()
        )
    }
}

/// One load as `podsim noc` prints it: the heading `title`, then the table of `r` (run for
/// `cycles` measured cycles, with BookSim's router if `booksim`), with the ten busiest links
/// if `links`.
pub fn noc_load_text(
    title: &str,
    r: &NocResult,
    booksim: bool,
    cycles: u64,
    links: bool,
) -> String {
    let row = |k: &str, v: String| (k.to_string(), vec![v]);
    let mut rows = vec![
        row(
            "offered",
            format!(
                "{:.4} flits/node/cycle (generated {:.4})",
                r.offered_flits_per_node_cycle, r.generated_flits_per_node_cycle
            ),
        ),
        row(
            "accepted",
            format!("{:.4} flits/node/cycle", r.accepted_flits_per_node_cycle),
        ),
        row(
            "latency",
            format!(
                "avg {:.2}, p50 {}, p99 {}, max {} cycles",
                r.average_latency_cycles,
                r.p50_latency_cycles,
                r.p99_latency_cycles,
                r.max_latency_cycles
            ),
        ),
        row(
            "  split",
            format!(
                "queueing {:.2} + network {:.2} cycles",
                r.average_queueing_cycles, r.average_network_cycles
            ),
        ),
        row("hops", format!("{:.3} average", r.average_hops)),
        row("saturated", if r.saturated { "yes" } else { "no" }.into()),
        row(
            "cycles",
            if booksim {
                format!(
                    "{} (warm-up {}, then {}-cycle sample periods until converged, then drain), \
                     {} measured packets, {} flit-hops",
                    r.simulated_cycles,
                    r.warmup_cycles,
                    cycles / 10,
                    r.measured_packets,
                    r.flit_hops
                )
            } else {
                format!(
                    "{} (warm-up {}, window {}, then drain), {} measured packets, {} flit-hops",
                    r.simulated_cycles, r.warmup_cycles, cycles, r.measured_packets, r.flit_hops
                )
            },
        ),
    ];
    if links {
        let mut busiest: Vec<&LinkStat> = r.links.iter().collect();
        busiest.sort_by_key(|l| std::cmp::Reverse((l.flits, l.channel)));
        for l in busiest.iter().take(10) {
            rows.push(row(
                &format!("link {}->{}", l.from, l.to),
                format!(
                    "{} flits, utilisation {:.3}, blocked on credits {} cycles",
                    l.flits,
                    l.flits as f64 / r.window_cycles.max(1) as f64,
                    l.blocked_cycles
                ),
            ));
        }
    }
    format!("{title}\n{}", render(&rows))
}

/// A sweep's curve as `podsim noc --sweep` prints it: the heading `title`, a row per load,
/// where the curve was written, and the loads that failed.
pub fn noc_curve_text(
    title: &str,
    curve: &[NocResult],
    csv: &Path,
    svg: &Path,
    failures: &[String],
) -> String {
    let mut rows = vec![(
        "offered".to_string(),
        [
            "accepted",
            "avg lat",
            "p50",
            "p99",
            "max",
            "queue",
            "hops",
            "saturated",
        ]
        .map(String::from)
        .to_vec(),
    )];
    for r in curve {
        rows.push((
            format!("{:.3}", r.offered_flits_per_node_cycle),
            vec![
                format!("{:.3}", r.accepted_flits_per_node_cycle),
                format!("{:.1}", r.average_latency_cycles),
                r.p50_latency_cycles.to_string(),
                r.p99_latency_cycles.to_string(),
                r.max_latency_cycles.to_string(),
                format!("{:.1}", r.average_queueing_cycles),
                format!("{:.2}", r.average_hops),
                if r.saturated { "yes" } else { "no" }.to_string(),
            ],
        ));
    }
    let mut out = format!("{title}\n{}", render(&rows));
    out.push_str(&format!(
        "curve written to {} and {}\n",
        csv.display(),
        svg.display()
    ));
    for f in failures {
        out.push_str(&format!("failed: {f}\n"));
    }
    out
}

/// Several seeds of each load as `podsim noc --seeds` prints them: the heading `title`, a row
/// per load with the mean, sample standard deviation and range over the seeds of the average
/// latency and the accepted throughput, and how many seeds saturated.
pub fn noc_seeds_text(title: &str, loads: &[SeedSummary]) -> String {
    let mut rows = vec![(
        "offered".to_string(),
        [
            "seeds",
            "lat mean",
            "lat sd",
            "lat min-max",
            "acc mean",
            "acc sd",
            "acc min-max",
            "saturated",
        ]
        .map(String::from)
        .to_vec(),
    )];
    for s in loads {
        rows.push((
            format!("{:.3}", s.offered_flits_per_node_cycle),
            vec![
                format!("{} from {}", s.seeds, s.first_seed),
                format!("{:.2}", s.latency_mean),
                format!("{:.2}", s.latency_stddev),
                format!("{:.1}-{:.1}", s.latency_min, s.latency_max),
                format!("{:.4}", s.accepted_mean),
                format!("{:.4}", s.accepted_stddev),
                format!("{:.4}-{:.4}", s.accepted_min, s.accepted_max),
                s.saturated_runs.to_string(),
            ],
        ));
    }
    format!(
        "{title}\n{}sd: sample standard deviation over the seeds (n - 1); lat: average latency, \
         cycles; acc: accepted flits per node per cycle\n",
        render(&rows)
    )
}

/// A sweep's curve as `podsim noc --sweep --json` prints it: each load's JSON, that of a run
/// now as given, that of a load kept from the CSV ([`crate::NocOutput`], `resumed`) from its
/// result on `net` (with the link counters if `links`).
pub fn noc_curve_json(curve: &[(NocResult, Option<Value>)], net: &Network, links: bool) -> Value {
    Value::Array(
        curve
            .iter()
            .map(|(r, fresh)| match fresh {
                Some(v) => v.clone(),
                None => crate::to_json(&crate::NocOutput {
                    resumed: true,
                    ..crate::NocOutput::new(r, net, links)
                }),
            })
            .collect(),
    )
}

/// The CSV row of a load that failed with `why`: the rate, empty columns and the reason
/// (commas and newlines made semicolons), under [`crate::NOC_CSV_HEADER`] and an `error`
/// column; with the reason as recorded.
pub fn noc_failed_row(rate: f64, why: &str) -> (String, String) {
    let why = why.replace([',', '\n'], ";");
    let mut row = rate.to_string();
    row.push_str(&",".repeat(15));
    row.push(',');
    row.push_str(&why);
    (row, why)
}

/// Draw the links of `r`, a run at `rate` flits per node per cycle headed `title`, on a grid
/// of `width` x `height` routers, coloured by utilisation over the window (SVG at `path`).
pub fn noc_heatmap_svg(
    path: &Path,
    title: &str,
    rate: f64,
    r: &NocResult,
    (width, height): (u32, u32),
) -> Result<(), crate::ReportError> {
    crate::heatmap_svg(
        path,
        &format!("{title}: link utilisation at {rate} flits/node/cycle"),
        width,
        height,
        &noc_heat_links(r, width),
        &|_, _| crate::HeatTile::Plain(String::new()),
    )
}

/// The network links of `r` on a grid `width` routers wide, as a heatmap draws them: each
/// link's ends as (x, y) and its flits per cycle of the window.
pub fn noc_heat_links(r: &NocResult, width: u32) -> Vec<HeatLink> {
    let at = |n: NodeId| {
        (
            (n.0 % u64::from(width)) as u32,
            (n.0 / u64::from(width)) as u32,
        )
    };
    r.links
        .iter()
        .filter(|l| l.kind == podsim_noc::ChannelKind::Link)
        .map(|l| {
            (
                at(l.from),
                at(l.to),
                l.flits as f64 / r.window_cycles.max(1) as f64,
            )
        })
        .collect()
}

/// A packet-level run as a trace: a process per source router with two threads (source queue,
/// network), a complete event per packet phase, and a counter per network link with its
/// utilisation over the window; `about` its context, at most `limit` events.
pub fn noc_trace(log: &PacketLog, r: &NocResult, about: &[(&str, Value)], limit: usize) -> Trace {
    use podsim_units::{SimDuration, SimTime};
    let window = r.window_cycles;
    let mut t = Trace::new(limit);
    for (k, v) in about {
        t.about(*k, v.clone());
    }
    t.about("cycle_ps", serde_json::json!(r.cycle_ps));
    let at = |cycle: u64| SimTime::from_ps(cycle.saturating_mul(r.cycle_ps));
    let span =
        |a: u64, b: u64| SimDuration::from_ps(b.saturating_sub(a).saturating_mul(r.cycle_ps));
    for d in &log.kept {
        let pid = d.src.0;
        t.process(pid, format!("router {pid}"));
        t.thread(pid, 0, "source queue");
        t.thread(pid, 1, "network");
        let args = serde_json::json!({"dst": d.dst.0, "flits": d.flits, "hops": d.hops});
        if d.injected > d.created {
            t.complete(
                pid,
                0,
                &format!("to {}", d.dst.0),
                at(d.created),
                span(d.created, d.injected),
                args.clone(),
            );
        }
        t.complete(
            pid,
            1,
            &format!("to {}", d.dst.0),
            at(d.injected),
            span(d.injected, d.delivered + 1),
            args,
        );
    }
    t.add_cut(log.cut);
    // Link utilisation over the window, as one counter sample per link at the window's start.
    let links_pid = u64::MAX >> 12;
    t.process(links_pid, "links (utilisation over the window)");
    for l in &r.links {
        t.counter(
            links_pid,
            &format!("link {} -> {}", l.from.0, l.to.0),
            at(r.warmup_cycles),
            &[("utilisation", l.flits as f64 / window.max(1) as f64)],
        );
    }
    t
}

/// The grid a heatmap lays `net`'s routers on, (width, height): 2-D meshes and tori and
/// Tenstorrent grids; `None` for other networks.
pub fn noc_grid(net: &Network) -> Option<(u32, u32)> {
    match net {
        Network::Cube(c) if c.dims().len() == 2 => Some((c.dims()[0], c.dims()[1])),
        Network::Tenstorrent(g) => Some((g.width(), g.cube().dims()[1])),
        _ => None,
    }
}
