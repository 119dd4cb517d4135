//! Roofline plots (Williams, Waterman and Patterson 2009; tpu-v4-isca2023.txt Fig. 16): one
//! line per chip, attainable FLOP/s against operational intensity on log-log axes.

use std::path::Path;

use plotters::prelude::*;

use crate::ReportError;

/// One chip's roofline: its name, peak FLOP/s and memory bandwidth (bytes/s).
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    /// The chip.
    pub name: String,
    /// Peak FLOP/s.
    pub peak: f64,
    /// Memory bandwidth, bytes/s.
    pub bandwidth: f64,
}

/// Draw `roofs` to `path` as an SVG, log-log, intensity from 1 to 10,000 FLOPs per byte, with a
/// legend and each ridge point marked; `mark`, if given, is an intensity drawn as a vertical
/// line.
pub fn roofline_svg(path: &Path, roofs: &[Roof], mark: Option<f64>) -> Result<(), ReportError> {
    let fail = crate::draw_failed(path);
    let (xmin, xmax) = (1.0, 10_000.0);
    let ymax = roofs.iter().map(|r| r.peak).fold(1.0, f64::max) * 2.0;
    let ymin = roofs.iter().map(|r| r.bandwidth).fold(f64::MAX, f64::min) * xmin / 2.0;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("Roofline", ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d((xmin..xmax).log_scale(), (ymin..ymax).log_scale())
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc("operational intensity (FLOPs per byte of memory traffic)")
        .y_desc("attainable TFLOP/s")
        .y_label_formatter(&|v| format!("{}", v / 1e12))
        .x_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| fail(&e))?;
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    for (i, r) in roofs.iter().enumerate() {
        let color = colors[i % colors.len()];
        let ridge = r.peak / r.bandwidth;
        let pts = vec![(xmin, xmin * r.bandwidth), (ridge, r.peak), (xmax, r.peak)];
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| fail(&e))?
            .label(format!(
                "{}: {:.0} TFLOP/s, {:.0} GB/s, ridge {:.0} FLOP/B",
                r.name,
                r.peak / 1e12,
                r.bandwidth / 1e9,
                ridge
            ))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(std::iter::once(Circle::new(
                (ridge, r.peak),
                4,
                color.filled(),
            )))
            .map_err(|e| fail(&e))?;
    }
    if let Some(x) = mark.filter(|x| (xmin..=xmax).contains(x)) {
        chart
            .draw_series(LineSeries::new(
                vec![(x, ymin), (x, ymax)],
                BLACK.mix(0.4).stroke_width(1),
            ))
            .map_err(|e| fail(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

/// A named series of points for [`lines_svg`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend entry.
    pub name: String,
    /// The points, x ascending.
    pub points: Vec<(f64, f64)>,
    /// Drawn in the second family of colours (magenta, cyan, black instead of blue, red,
    /// green), to tell two groups of lines apart.
    pub second: bool,
}

/// Draw `series` to `path` as an SVG line chart with a legend: x on a log scale, y from 0 to
/// `ymax`.
pub fn lines_svg(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    ymax: f64,
) -> Result<(), ReportError> {
    let fail = crate::draw_failed(path);
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let xmin = xs.clone().fold(f64::MAX, f64::min).max(f64::MIN_POSITIVE);
    let xmax = xs.fold(0.0, f64::max).max(xmin * 2.0);
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d((xmin..xmax).log_scale(), 0.0..ymax)
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(8)
        .x_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| fail(&e))?;
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    for (i, s) in series.iter().enumerate() {
        let color = colors[i % 3 + if s.second { 3 } else { 0 }];
        let style = color.stroke_width(2);
        chart
            .draw_series(LineSeries::new(s.points.clone(), style))
            .map_err(|e| fail(&e))?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| fail(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .label_font(("sans-serif", 15))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

/// Draw `bars` (a label and a value each) to `path` as an SVG bar chart, y from 0 to `ymax`,
/// with `line`, if given, as a dashed horizontal reference (its label in the legend).
pub fn bars_svg(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    bars: &[(String, f64)],
    line: Option<(&str, f64)>,
    ymax: f64,
) -> Result<(), ReportError> {
    let fail = crate::draw_failed(path);
    let n = bars.len().max(1) as f64;
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..n, 0.0..ymax)
        .map_err(|e| fail(&e))?;
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(bars.len() * 2 + 1)
        .x_label_formatter(&|v| {
            let i = (v - 0.5).round();
            if (v - 0.5 - i).abs() < 1e-6 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| fail(&e))?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, b)| {
            let x = i as f64;
            Rectangle::new([(x + 0.15, 0.0), (x + 0.85, b.1)], BLUE.mix(0.7).filled())
        }))
        .map_err(|e| fail(&e))?;
    if let Some((name, y)) = line {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0.0, y), (n, y)],
                8,
                6,
                RED.stroke_width(2),
            ))
            .map_err(|e| fail(&e))?
            .label(name)
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(("sans-serif", 15))
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}
