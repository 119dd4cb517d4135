//! Reports: results the models computed, turned into text tables, JSON, CSV and SVG.
//!
//! Architecture invariant: this crate never runs a model and never decides anything; it
//! formats values it is given. Every figure it prints was computed elsewhere.

mod collective;
mod html;
pub mod link_heatmap;
pub mod man;
mod metrics;
mod noc;
mod noc_text;
pub mod progress;
mod roofline;
mod scenario;
pub mod sweep_file;
mod trace;
mod workload;

pub use collective::{add_transfers, busbw_points, transfers_trace};
pub use html::{HtmlError, HtmlReport, esc};
pub use metrics::{
    DojoTopo, TenstorrentTopo, TofuTopo, TopoOutput, VirtualTorus, metrics_json, metrics_table,
};
pub use noc::{
    NOC_CSV_HEADER, NocLinkOutput, NocOutput, busbw_svg, noc_csv_row, noc_curve_svg,
    noc_result_from_csv, noc_result_json,
};
pub use noc_text::{
    noc_curve_json, noc_curve_text, noc_failed_row, noc_grid, noc_heat_links, noc_heatmap_svg,
    noc_load_text, noc_seeds_text, noc_title, noc_trace,
};
pub use podsim_units::table::render;
pub use roofline::{
    HeatLink, HeatTile, Roof, Series, bars_svg, energy_svg, heatmap_svg, lines_svg, roofline_svg,
    stacked_bars_svg,
};
pub use scenario::{
    CollectiveRun, CollectiveRunRow, add_result_trace, energy_applies, result_energy, result_json,
    result_text,
};
pub use trace::{Trace, check_nesting};
pub use workload::{POWER_PID, add_power, add_workload};

/// A command's typed result as the JSON value its `--json` prints and the Python bindings
/// return: the struct's fields as keys, in the order a JSON object prints them (sorted, as
/// `serde_json` keeps maps), nested structs as objects, numbers that are not finite as null.
/// The CLI and `python/src/` both serialize through here, so their keys are the struct's.
pub fn to_json(result: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(result)
        .unwrap_or_else(|e| serde_json::Value::String(format!("cannot serialize the result: {e}")))
}

/// `result`'s JSON object with the keys of `extra`'s added (a result and its energy, say).
pub fn to_json_with(
    result: &impl serde::Serialize,
    extra: Option<&impl serde::Serialize>,
) -> serde_json::Value {
    let mut v = to_json(result);
    if let (Some(obj), Some(serde_json::Value::Object(more))) =
        (v.as_object_mut(), extra.map(to_json))
    {
        obj.extend(more);
    }
    v
}

/// Why a report could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// A plot could not be drawn or saved.
    #[error("{path}: cannot draw: {why}")]
    Draw {
        /// The file.
        path: String,
        /// What the plotting library said.
        why: String,
    },
}

/// An EXAMPLES section in roff from the help's (`# what it does` lines, then `$ podsim ...`
/// lines): each description a paragraph, each command indented and unfilled.
pub fn roff_examples(text: &str) -> String {
    let escape = |s: &str| {
        let s = s.replace('\\', "\\e").replace('-', "\\-");
        if s.starts_with(['.', '\'']) {
            format!("\\&{s}")
        } else {
            s
        }
    };
    let mut out = String::from(".SH EXAMPLES\n");
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(what) = line.strip_prefix("# ") {
            out.push_str(&format!(".PP\n{}\n", escape(what)));
        } else if line.starts_with("$ ") {
            out.push_str(&format!(".RS 4\n.nf\n{}\n.fi\n.RE\n", escape(line)));
        } else if line != "Examples:" {
            out.push_str(&format!(".PP\n{}\n", escape(line)));
        }
    }
    out
}

/// The error for a plot of `path` that the plotting library refused, for `map_err`.
/// Draw a chart's legend (its labelled series) at `pos`, in the style every podsim plot uses:
/// 15-point labels on a white box with a black border, an SVG chart of `path`.
pub(crate) fn legend<'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut plotters::chart::ChartContext<'a, plotters::backend::SVGBackend<'a>, CT>,
    pos: plotters::chart::SeriesLabelPosition,
    path: &std::path::Path,
) -> Result<(), ReportError> {
    use plotters::style::{BLACK, Color, WHITE};
    chart
        .configure_series_labels()
        .position(pos)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| draw_failed(path)(&e))
}

/// Where a legend of `entries` labels, the longest `chars` characters long, covers the least
/// of the data: `lines` are the plotted polylines (and bar edges) in the plot area's unit
/// square (x to the right, y up: log axes taken in logarithms), `plot` the plot area in pixels
/// (about: the chart less its label areas and margins). The corners are tried from `prefer`
/// on; a corner whose box no line crosses wins at once, else the one crossed least.
pub(crate) fn free_corner(
    lines: &[Vec<(f64, f64)>],
    entries: usize,
    chars: usize,
    plot: (f64, f64),
    prefer: plotters::chart::SeriesLabelPosition,
) -> plotters::chart::SeriesLabelPosition {
    use plotters::chart::SeriesLabelPosition as P;
    // A 15-point label is about 8.5 px a character, after a 20 px sample and padding; each
    // entry about 21 px high; the box sits a few pixels in from the corner.
    let w = (chars as f64 * 8.5 + 60.0) / plot.0;
    let h = (entries as f64 * 21.0 + 20.0) / plot.1;
    let corners = [P::LowerRight, P::LowerLeft, P::UpperRight, P::UpperLeft];
    let start = corners
        .iter()
        .position(|c| std::mem::discriminant(c) == std::mem::discriminant(&prefer))
        .unwrap_or(0);
    let inside = |c: &P, (x, y): (f64, f64)| {
        let in_x = match c {
            P::LowerLeft | P::UpperLeft => x <= w,
            _ => x >= 1.0 - w,
        };
        let in_y = match c {
            P::UpperLeft | P::UpperRight => y >= 1.0 - h,
            _ => y <= h,
        };
        in_x && in_y
    };
    // Points along every segment, 40 to a segment.
    let samples: Vec<(f64, f64)> = lines
        .iter()
        .flat_map(|l| {
            let one = l.first().map(|&p| vec![p]).unwrap_or_default();
            let segs = l.windows(2).flat_map(|s| {
                (0..=40).map(move |k| {
                    let t = k as f64 / 40.0;
                    (
                        s[0].0 + (s[1].0 - s[0].0) * t,
                        s[0].1 + (s[1].1 - s[0].1) * t,
                    )
                })
            });
            one.into_iter().chain(segs).collect::<Vec<_>>()
        })
        .collect();
    let mut best = (usize::MAX, prefer);
    for i in 0..corners.len() {
        let c = &corners[(start + i) % corners.len()];
        let n = samples.iter().filter(|&&p| inside(c, p)).count();
        if n < best.0 {
            best = (n, c.clone());
        }
        if n == 0 {
            break;
        }
    }
    best.1
}

/// Where `v` sits on an axis from `lo` to `hi`, 0 to 1 (in logarithms on a log axis).
pub(crate) fn unit(v: f64, lo: f64, hi: f64, log: bool) -> f64 {
    if log {
        (v.max(f64::MIN_POSITIVE).ln() - lo.ln()) / (hi.ln() - lo.ln())
    } else {
        (v - lo) / (hi - lo)
    }
}

pub(crate) fn draw_failed(
    path: &std::path::Path,
) -> impl Fn(&dyn std::fmt::Display) -> ReportError + '_ {
    move |e| ReportError::Draw {
        path: path.display().to_string(),
        why: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use plotters::chart::SeriesLabelPosition as P;

    use super::{free_corner, unit};

    fn same(a: &P, b: &P) -> bool {
        std::mem::discriminant(a) == std::mem::discriminant(b)
    }

    /// A legend goes to the first corner (from the preferred one) that no line crosses: with
    /// nothing drawn, the preferred one; a line along the bottom rules out both lower corners;
    /// bars up to 77% of the height (the Tenstorrent readers) leave the upper ones free for a
    /// one-entry box (41 px of 400: the top 10%).
    #[test]
    fn legends_go_where_no_data_is() {
        let plot = (800.0, 400.0);
        assert!(same(
            &free_corner(&[], 2, 20, plot, P::LowerLeft),
            &P::LowerLeft
        ));
        let bottom = vec![vec![(0.0, 0.05), (1.0, 0.05)]];
        assert!(same(
            &free_corner(&bottom, 2, 20, plot, P::LowerRight),
            &P::UpperRight
        ));
        let bars: Vec<Vec<(f64, f64)>> = (0..12)
            .map(|i| {
                let (l, r) = ((i as f64 + 0.15) / 12.0, (i as f64 + 0.85) / 12.0);
                vec![(l, 0.0), (l, 0.77), (r, 0.77), (r, 0.0)]
            })
            .collect();
        assert!(same(
            &free_corner(&bars, 1, 20, plot, P::LowerRight),
            &P::UpperRight
        ));
        // A diagonal from the lower left and a falling line from the top middle to the lower
        // right: every corner is crossed, the upper left least (at the falling line's first
        // point only).
        let lines = vec![vec![(0.0, 0.0), (1.0, 1.0)], vec![(0.5, 1.0), (1.0, 0.0)]];
        assert!(same(
            &free_corner(&lines, 3, 40, plot, P::LowerRight),
            &P::UpperLeft
        ));
        // On a log axis from 1 to 10,000, 100 sits half way.
        assert!((unit(100.0, 1.0, 10_000.0, true) - 0.5).abs() < 1e-12);
        assert!((unit(25.0, 0.0, 100.0, false) - 0.25).abs() < 1e-12);
    }
}
