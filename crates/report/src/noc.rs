//! Packet-level results: JSON, the latency-throughput curve as CSV and as an SVG plot.

use std::path::Path;

use plotters::prelude::*;
use podsim_noc::NocResult;
use serde::Serialize;
use serde_json::Value;

use crate::ReportError;

/// One load at the packet level as `podsim noc --json` prints it and Python's `podsim.noc`
/// returns it: the result's own keys, the topology, and with `links` every network link's
/// counters over the window they cover (`r.window_cycles`: the measured cycles in the podsim
/// mode, BookSim's measurement window in the booksim mode). One struct, so the two cannot
/// drift; serialize it with [`crate::to_json`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NocOutput<'a> {
    /// What the run measured.
    #[serde(flatten)]
    pub result: &'a NocResult,
    /// The topology's shorthand.
    pub topology: String,
    /// Every link's counters, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<NocLinkOutput>>,
    /// Whether a sweep kept this load from its CSV rather than running it (then the keys are
    /// those the file holds); left out when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub resumed: bool,
}

/// One link's counters in [`NocOutput`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NocLinkOutput {
    /// Upstream node.
    pub from: u64,
    /// Downstream node.
    pub to: u64,
    /// Flits it carried over the window.
    pub flits: u64,
    /// Flits per cycle of the window.
    pub utilization: f64,
    /// Cycles in which a flit waiting for it had no credit.
    pub blocked_cycles: u64,
}

impl<'a> NocOutput<'a> {
    /// The result `r` of a run on `net`, with every link's counters if `links`.
    pub fn new(r: &'a NocResult, net: &podsim_topology::Network, links: bool) -> NocOutput<'a> {
        let window = r.window_cycles.max(1) as f64;
        NocOutput {
            result: r,
            topology: net.shorthand(),
            links: links.then(|| {
                r.links
                    .iter()
                    .map(|l| NocLinkOutput {
                        from: l.from.0,
                        to: l.to.0,
                        flits: l.flits,
                        utilization: l.flits as f64 / window,
                        blocked_cycles: l.blocked_cycles,
                    })
                    .collect()
            }),
            resumed: false,
        }
    }
}

/// The result as JSON: [`NocOutput`] serialized.
pub fn noc_result_json(r: &NocResult, net: &podsim_topology::Network, links: bool) -> Value {
    crate::to_json(&NocOutput::new(r, net, links))
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
        window_cycles: 0,
    })
}

/// Latency against offered load as an SVG file: average and p99 latency on a log axis (so the
/// knee shows), one point per rate, a legend, and the first saturated load marked and named.
pub fn noc_curve_svg(path: &Path, title: &str, curve: &[NocResult]) -> Result<(), ReportError> {
    let fail = crate::draw_failed(path);
    let xmax = curve
        .iter()
        .map(|r| r.offered_flits_per_node_cycle)
        .fold(0.0, f64::max)
        * 1.05;
    let lat = |r: &NocResult| r.average_latency_cycles.max(1.0);
    let p99 = |r: &NocResult| (r.p99_latency_cycles as f64).max(1.0);
    let ymin = curve.iter().map(lat).fold(f64::MAX, f64::min).min(1e9) * 0.7;
    let ymax = curve
        .iter()
        .map(|r| lat(r).max(p99(r)))
        .fold(ymin * 2.0, f64::max)
        * 1.6;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 16))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..xmax.max(0.01), (ymin.max(0.5)..ymax).log_scale())
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc("offered load (flits/node/cycle)")
        .y_desc("latency (cycles, log scale)")
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| fail(&e))?;
    for (name, color, value) in [
        ("average latency", BLUE, &lat as &dyn Fn(&NocResult) -> f64),
        ("p99 latency", MAGENTA, &p99),
    ] {
        let pts: Vec<(f64, f64)> = curve
            .iter()
            .map(|r| (r.offered_flits_per_node_cycle, value(r)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| fail(&e))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| fail(&e))?;
    }
    if let Some(r) = curve.iter().find(|r| r.saturated) {
        let p = (r.offered_flits_per_node_cycle, lat(r));
        chart
            .draw_series(std::iter::once(Circle::new(p, 7, RED.stroke_width(3))))
            .map_err(|e| fail(&e))?
            .label(format!(
                "saturated at {} (accepts {:.3})",
                r.offered_flits_per_node_cycle, r.accepted_flits_per_node_cycle
            ))
            .legend(|(x, y)| Circle::new((x + 10, y), 5, RED.stroke_width(3)));
    }
    let (x1, y0) = (xmax.max(0.01), ymin.max(0.5));
    let norm = |value: &dyn Fn(&NocResult) -> f64| -> Vec<(f64, f64)> {
        curve
            .iter()
            .map(|r| {
                (
                    crate::unit(r.offered_flits_per_node_cycle, 0.0, x1, false),
                    crate::unit(value(r), y0, ymax, true),
                )
            })
            .collect()
    };
    let corner = crate::free_corner(
        &[norm(&lat), norm(&p99)],
        2 + usize::from(curve.iter().any(|r| r.saturated)),
        36,
        (800.0, 440.0),
        SeriesLabelPosition::UpperLeft,
    );
    crate::legend(&mut chart, corner, path)?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

/// Bus bandwidth against message size as an SVG file, log-log in the style of nccl-tests'
/// plots, with the physical bound's bus bandwidth (the lower bound on time turned into a
/// bandwidth) dashed when given. Points: (bytes per rank, bus bandwidth in GB/s, bound in
/// GB/s).
pub fn busbw_svg(
    path: &Path,
    title: &str,
    points: &[(f64, f64, Option<f64>)],
) -> Result<(), ReportError> {
    let fail = crate::draw_failed(path);
    let xmin = points.iter().map(|p| p.0).fold(f64::MAX, f64::min).max(1.0);
    let xmax = points
        .iter()
        .map(|p| p.0)
        .fold(0.0, f64::max)
        .max(xmin * 2.0);
    let ys = points
        .iter()
        .flat_map(|p| [Some(p.1), p.2].into_iter().flatten())
        .filter(|y| *y > 0.0);
    let ymin = ys.clone().fold(f64::MAX, f64::min).min(1e12) * 0.5;
    let ymax = ys.fold(0.0, f64::max).max(ymin * 4.0) * 2.0;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (xmin / 1.5..xmax * 1.5).log_scale(),
            (ymin.max(1e-6)..ymax).log_scale(),
        )
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc("bytes per rank")
        .y_desc("bus bandwidth (GB/s)")
        .y_labels(15)
        .x_label_formatter(&|v| podsim_units::Bytes(v.round() as u64).to_string())
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| fail(&e))?;
    let bus: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|p| (p.0, p.1))
        .collect();
    chart
        .draw_series(LineSeries::new(bus.clone(), BLUE.stroke_width(2)))
        .map_err(|e| fail(&e))?
        .label("bus bandwidth")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
    chart
        .draw_series(bus.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))
        .map_err(|e| fail(&e))?;
    // The value each point sits at, above it (a log axis labels few values).
    chart
        .draw_series(bus.iter().map(|&(x, y)| {
            EmptyElement::at((x, y))
                + Text::new(
                    format!("{y:.1}"),
                    (-12, -20),
                    ("sans-serif", 13).into_font(),
                )
        }))
        .map_err(|e| fail(&e))?;
    let bound: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|p| Some((p.0, p.2.filter(|b| *b > 0.0)?)))
        .collect();
    if let Some(&(x, y)) = bound.last() {
        chart
            .draw_series(DashedLineSeries::new(
                bound.clone(),
                8,
                6,
                BLACK.stroke_width(1),
            ))
            .map_err(|e| fail(&e))?
            .label("the physical bound")
            .legend(|(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (7, 0)], BLACK)
                    + PathElement::new(vec![(12, 0), (20, 0)], BLACK)
            });
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x, y))
                    + Text::new(
                        format!("{y:.1}"),
                        (-30, -20),
                        ("sans-serif", 13).into_font(),
                    ),
            ))
            .map_err(|e| fail(&e))?;
    }
    let (x0, x1, y0, y1) = (xmin / 1.5, xmax * 1.5, ymin.max(1e-6), ymax);
    let norm = |l: &[(f64, f64)]| -> Vec<(f64, f64)> {
        l.iter()
            .map(|&(x, y)| (crate::unit(x, x0, x1, true), crate::unit(y, y0, y1, true)))
            .collect()
    };
    let corner = crate::free_corner(
        &[norm(&bus), norm(&bound)],
        1 + usize::from(!bound.is_empty()),
        18,
        (800.0, 440.0),
        SeriesLabelPosition::LowerRight,
    );
    crate::legend(&mut chart, corner, path)?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
