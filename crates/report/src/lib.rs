//! Reports: results the models computed, turned into text tables, JSON, CSV and SVG.
//!
//! Architecture invariant: this crate never runs a model and never decides anything; it
//! formats values it is given. Every figure it prints was computed elsewhere.

mod collective;
mod html;
pub mod link_heatmap;
mod metrics;
mod noc;
mod noc_text;
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
    noc_load_text, noc_title, noc_trace,
};
pub use podsim_units::table::render;
pub use roofline::{
    HeatLink, HeatTile, Roof, Series, bars_svg, heatmap_svg, lines_svg, roofline_svg,
};
pub use scenario::{CollectiveRun, CollectiveRunRow, add_result_trace, result_json, result_text};
pub use trace::{Trace, check_nesting};
pub use workload::add_workload;

/// A command's typed result as the JSON value its `--json` prints and the Python bindings
/// return: the struct's fields as keys, in the order a JSON object prints them (sorted, as
/// `serde_json` keeps maps), nested structs as objects, numbers that are not finite as null.
/// The CLI and `python/src/` both serialize through here, so their keys are the struct's.
pub fn to_json(result: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(result)
        .unwrap_or_else(|e| serde_json::Value::String(format!("cannot serialize the result: {e}")))
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

pub(crate) fn draw_failed(
    path: &std::path::Path,
) -> impl Fn(&dyn std::fmt::Display) -> ReportError + '_ {
    move |e| ReportError::Draw {
        path: path.display().to_string(),
        why: e.to_string(),
    }
}
