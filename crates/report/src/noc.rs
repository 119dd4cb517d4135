//! Packet-level results: JSON, the latency-throughput curve as CSV and as an SVG plot.

use std::path::Path;

use plotters::prelude::*;
use podsim_noc::NocResult;
use serde_json::{Value, json};

use crate::ReportError;

/// The result as JSON; with `links`, every network link's counters over the `window` measured
/// cycles too.
pub fn noc_result_json(
    r: &NocResult,
    net: &podsim_topology::Network,
    links: bool,
    window: u64,
) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("topology".into(), Value::String(net.shorthand()));
    }
    if links && let Value::Object(m) = &mut v {
        m.insert(
            "links".into(),
            Value::Array(
                r.links
                    .iter()
                    .map(|l| {
                        json!({"from": l.from.0, "to": l.to.0, "flits": l.flits,
                               "utilization": l.flits as f64 / window.max(1) as f64,
                               "blocked_cycles": l.blocked_cycles})
                    })
                    .collect(),
            ),
        );
    }
    v
}

/// The columns of a latency-throughput curve's CSV, one row per load.
pub const NOC_CSV_HEADER: &str = "offered_flits_per_node_cycle,generated_flits_per_node_cycle,\
accepted_flits_per_node_cycle,average_latency_cycles,p50_latency_cycles,p99_latency_cycles,\
max_latency_cycles,average_queueing_cycles,average_network_cycles,average_hops,saturated,\
simulated_cycles,flit_hops,measured_packets,warmup_cycles,cycle_ps";

/// One load's CSV row (the columns of [`NOC_CSV_HEADER`], no newline).
pub fn noc_csv_row(r: &NocResult) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        r.offered_flits_per_node_cycle,
        r.generated_flits_per_node_cycle,
        r.accepted_flits_per_node_cycle,
        r.average_latency_cycles,
        r.p50_latency_cycles,
        r.p99_latency_cycles,
        r.max_latency_cycles,
        r.average_queueing_cycles,
        r.average_network_cycles,
        r.average_hops,
        r.saturated,
        r.simulated_cycles,
        r.flit_hops,
        r.measured_packets,
        r.warmup_cycles,
        r.cycle_ps
    )
}

/// A load's result back from its CSV row (the link counters are not in the file: empty).
/// None when a field does not parse.
pub fn noc_result_from_csv(f: &[String]) -> Option<NocResult> {
    let x = |i: usize| f.get(i)?.parse::<f64>().ok();
    let n = |i: usize| f.get(i)?.parse::<u64>().ok();
    Some(NocResult {
        offered_flits_per_node_cycle: x(0)?,
        generated_flits_per_node_cycle: x(1)?,
        accepted_flits_per_node_cycle: x(2)?,
        average_latency_cycles: x(3)?,
        p50_latency_cycles: n(4)?,
        p99_latency_cycles: n(5)?,
        max_latency_cycles: n(6)?,
        average_queueing_cycles: x(7)?,
        average_network_cycles: x(8)?,
        average_hops: x(9)?,
        saturated: f.get(10)?.parse().ok()?,
        simulated_cycles: n(11)?,
        flit_hops: n(12)?,
        measured_packets: n(13)?,
        warmup_cycles: n(14)?,
        cycle_ps: n(15)?,
        links: Vec::new(),
    })
}

/// Average latency against offered load as an SVG file, one point per rate, the saturated one
/// marked.
pub fn noc_curve_svg(path: &Path, title: &str, curve: &[NocResult]) -> Result<(), ReportError> {
    let fail = crate::draw_failed(path);
    let xmax = curve
        .iter()
        .map(|r| r.offered_flits_per_node_cycle)
        .fold(0.0, f64::max)
        * 1.05;
    let ymax = curve
        .iter()
        .map(|r| r.average_latency_cycles)
        .fold(1.0, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..xmax.max(0.01), 0.0..ymax)
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc("offered load (flits/node/cycle)")
        .y_desc("average latency (cycles)")
        .draw()
        .map_err(|e| fail(&e))?;
    let pts: Vec<(f64, f64)> = curve
        .iter()
        .map(|r| (r.offered_flits_per_node_cycle, r.average_latency_cycles))
        .collect();
    chart
        .draw_series(LineSeries::new(pts.clone(), &BLUE))
        .map_err(|e| fail(&e))?;
    chart
        .draw_series(
            curve
                .iter()
                .zip(&pts)
                .map(|(r, &p)| Circle::new(p, 3, if r.saturated { &RED } else { &BLUE })),
        )
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
