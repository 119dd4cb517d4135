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
        // Room for the last tick's label, centred on the axis's end.
        .margin_right(40)
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
    let lines: Vec<Vec<(f64, f64)>> = roofs
        .iter()
        .map(|r| {
            let ridge = r.peak / r.bandwidth;
            [(xmin, xmin * r.bandwidth), (ridge, r.peak), (xmax, r.peak)]
                .iter()
                .map(|&(x, y)| {
                    (
                        crate::unit(x, xmin, xmax, true),
                        crate::unit(y, ymin, ymax, true),
                    )
                })
                .collect()
        })
        .collect();
    let corner = crate::free_corner(
        &lines,
        roofs.len(),
        roofs.iter().map(|r| r.name.len() + 42).max().unwrap_or(0),
        (780.0, 440.0),
        SeriesLabelPosition::LowerRight,
    );
    crate::legend(&mut chart, corner, path)?;
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
        .margin_right(40)
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
    let lines: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .map(|&(x, y)| {
                    (
                        crate::unit(x, xmin, xmax, true),
                        crate::unit(y, 0.0, ymax, false),
                    )
                })
                .collect()
        })
        .collect();
    let corner = crate::free_corner(
        &lines,
        series.len(),
        series.iter().map(|s| s.name.len()).max().unwrap_or(0),
        (780.0, 440.0),
        SeriesLabelPosition::LowerLeft,
    );
    crate::legend(&mut chart, corner, path)?;
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
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    bar_chart(path, (title, x_desc, y_desc), &labels, ymax, 70, |chart| {
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
                .legend(|(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (7, 0)], RED.stroke_width(2))
                        + PathElement::new(vec![(12, 0), (20, 0)], RED.stroke_width(2))
                });
            let u = |v: f64| crate::unit(v, 0.0, ymax, false);
            let mut lines: Vec<Vec<(f64, f64)>> = bars
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let (l, r) = ((i as f64 + 0.15) / n, (i as f64 + 0.85) / n);
                    vec![(l, 0.0), (l, u(b.1)), (r, u(b.1)), (r, 0.0)]
                })
                .collect();
            lines.push(vec![(0.0, u(y)), (1.0, u(y))]);
            let corner = crate::free_corner(
                &lines,
                1,
                name.len(),
                (800.0, 400.0),
                SeriesLabelPosition::LowerRight,
            );
            crate::legend(chart, corner, path)?;
        }
        Ok(())
    })
}

/// A bar chart's drawing context: x and y in plain `f64` ranges.
type BarChart<'a> = ChartContext<
    'a,
    SVGBackend<'a>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// A bar chart to `path` (900 x 520): `title`, the x and y descriptions, one bar a unit wide per
/// label (its label under its middle), y from 0 to `ymax`; `draw` puts in the bars and legend.
fn bar_chart(
    path: &Path,
    (title, x_desc, y_desc): (&str, &str, &str),
    labels: &[String],
    ymax: f64,
    y_label_area: u32,
    draw: impl FnOnce(&mut BarChart<'_>) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let fail = crate::draw_failed(path);
    let n = labels.len().max(1) as f64;
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(y_label_area)
        .build_cartesian_2d(0.0..n, 0.0..ymax)
        .map_err(|e| fail(&e))?;
    let mut mesh = chart.configure_mesh();
    if !x_desc.is_empty() {
        mesh.x_desc(x_desc);
    }
    mesh.disable_x_mesh()
        .y_desc(y_desc)
        .x_labels(labels.len() * 2 + 1)
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
    draw(&mut chart)?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

/// One directed link of a 2-D grid for [`heatmap_svg`]: its ends' (x, y) and its utilisation
/// (0 = idle, 1 = a flit every cycle).
pub type HeatLink = ((u32, u32), (u32, u32), f64);

/// How [`heatmap_svg`] draws one grid position.
#[derive(Debug, Clone, PartialEq)]
pub enum HeatTile {
    /// Nothing there (a gap between slices).
    Gap,
    /// A grey tile with a label (empty for none).
    Plain(String),
    /// A tile filled with the colour of a utilisation, with a label: for links the grid's
    /// two dimensions cannot show (a 3-D torus's third).
    Heat(f64, String),
}

/// The colour of a utilisation: blue (idle) through yellow to red (busy).
fn heat(u: f64) -> RGBColor {
    let u = u.clamp(0.0, 1.0);
    let (r, g, b) = if u < 0.5 {
        let t = u / 0.5;
        (40.0 + 215.0 * t, 90.0 + 150.0 * t, 220.0 - 180.0 * t)
    } else {
        let t = (u - 0.5) / 0.5;
        (255.0, 240.0 - 200.0 * t, 40.0 - 20.0 * t)
    };
    RGBColor(r as u8, g as u8, b as u8)
}

/// Draw a `width` x `height` grid's links to `path` as an SVG heatmap: tiles as grey squares,
/// each direction of a link as its own line beside the other, coloured by utilisation, with a
/// colour scale. A link that wraps round the grid's edge is drawn as two stubs leaving and
/// entering the edge. `tile` says how each grid position is drawn (a labelled grey square, a
/// square coloured by a utilisation of its own, or nothing).
pub fn heatmap_svg(
    path: &Path,
    title: &str,
    width: u32,
    height: u32,
    links: &[HeatLink],
    tile: &dyn Fn(u32, u32) -> HeatTile,
) -> Result<(), ReportError> {
    let fail = crate::draw_failed(path);
    let cell = 60i32;
    let (w, h) = (width.max(1) as i32, height.max(1) as i32);
    let (left, top) = (30i32, 60i32);
    let size = (
        (left * 2 + w * cell + 90) as u32,
        (top + h * cell + 40) as u32,
    );
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    // The title on two lines, split at its last ": ", so a long one fits.
    let (head, tail) = title.rsplit_once(": ").unwrap_or((title, ""));
    for (i, line) in [head, tail].iter().enumerate() {
        root.draw(&Text::new(
            line.to_string(),
            (left, 8 + 22 * i as i32),
            ("sans-serif", 15).into_font(),
        ))
        .map_err(|e| fail(&e))?;
    }
    let centre = |x: u32, y: u32| {
        (
            left + x as i32 * cell + cell / 2,
            top + y as i32 * cell + cell / 2,
        )
    };
    for y in 0..height {
        for x in 0..width {
            let (cx, cy) = centre(x, y);
            let (fill, name) = match tile(x, y) {
                HeatTile::Gap => continue,
                HeatTile::Plain(name) => (RGBColor(225, 225, 225), name),
                HeatTile::Heat(u, name) => (heat(u), name),
            };
            root.draw(&Rectangle::new(
                [(cx - 14, cy - 14), (cx + 14, cy + 14)],
                fill.filled(),
            ))
            .map_err(|e| fail(&e))?;
            if !name.is_empty() {
                root.draw(&Text::new(
                    name,
                    (cx - 13, cy - 6),
                    ("sans-serif", 12).into_font(),
                ))
                .map_err(|e| fail(&e))?;
            }
        }
    }
    for &((x0, y0), (x1, y1), u) in links {
        let color = heat(u);
        let style = color.stroke_width(4);
        let (a, b) = (centre(x0, y0), centre(x1, y1));
        let (dx, dy) = (x1 as i32 - x0 as i32, y1 as i32 - y0 as i32);
        // Each direction 5 px to its own side of the pair's centre line.
        let near = dx.abs() + dy.abs() == 1;
        let (sx, sy) = (dx.signum(), dy.signum());
        let (ox, oy) = (-sy * 5, sx * 5);
        let segments: Vec<((i32, i32), (i32, i32))> = if near {
            vec![(
                (a.0 + sx * 16 + ox, a.1 + sy * 16 + oy),
                (b.0 - sx * 16 + ox, b.1 - sy * 16 + oy),
            )]
        } else {
            // A wrap-around link: out of the edge at one end, in at the other.
            let (ux, uy) = (-sx, -sy);
            let (ox, oy) = (-uy * 5, ux * 5);
            vec![
                (
                    (a.0 + ux * 16 + ox, a.1 + uy * 16 + oy),
                    (a.0 + ux * 30 + ox, a.1 + uy * 30 + oy),
                ),
                (
                    (b.0 - ux * 30 + ox, b.1 - uy * 30 + oy),
                    (b.0 - ux * 16 + ox, b.1 - uy * 16 + oy),
                ),
            ]
        };
        for (p, q) in segments {
            root.draw(&PathElement::new(vec![p, q], style))
                .map_err(|e| fail(&e))?;
        }
    }
    // The colour scale, titled.
    let sx = left * 2 + w * cell;
    root.draw(&Text::new(
        "link busy",
        (sx - 8, top - 20),
        ("sans-serif", 13).into_font(),
    ))
    .map_err(|e| fail(&e))?;
    for i in 0..100 {
        let u = 1.0 - f64::from(i) / 99.0;
        let y = top + i * (h * cell - 20) / 100;
        root.draw(&Rectangle::new(
            [(sx, y), (sx + 16, y + (h * cell - 20) / 100 + 1)],
            heat(u).filled(),
        ))
        .map_err(|e| fail(&e))?;
    }
    for (u, y) in [
        (1.0, top),
        (0.5, top + (h * cell - 20) / 2),
        (0.0, top + h * cell - 24),
    ] {
        root.draw(&Text::new(
            format!("{:.0}%", u * 100.0),
            (sx + 20, y),
            ("sans-serif", 12).into_font(),
        ))
        .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

/// Draw `bars` to `path` as an SVG of stacked bars: each bar a label and one value per part
/// (in `parts`' order, bottom first), the parts coloured alike across bars and named in the
/// legend, y from 0 to a tenth above the tallest bar.
pub fn stacked_bars_svg(
    path: &Path,
    title: &str,
    y_desc: &str,
    parts: &[&str],
    bars: &[(String, Vec<f64>)],
) -> Result<(), ReportError> {
    let fail = crate::draw_failed(path);
    let top = bars
        .iter()
        .map(|b| b.1.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let ymax = if top > 0.0 { top * 1.1 } else { 1.0 };
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    bar_chart(path, (title, "", y_desc), &labels, ymax, 80, |chart| {
        let palette = [BLUE, RED, GREEN, RGBColor(150, 150, 150), MAGENTA, CYAN];
        for (p, name) in parts.iter().enumerate() {
            let colour = palette[p % palette.len()];
            chart
                .draw_series(bars.iter().enumerate().map(|(i, b)| {
                    let below: f64 = b.1.iter().take(p).sum();
                    let v = b.1.get(p).copied().unwrap_or(0.0);
                    let x = i as f64;
                    Rectangle::new(
                        [(x + 0.25, below), (x + 0.75, below + v)],
                        colour.mix(0.75).filled(),
                    )
                }))
                .map_err(|e| fail(&e))?
                .label(*name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 14, y + 6)], colour.mix(0.75).filled())
                });
        }
        crate::legend(chart, SeriesLabelPosition::UpperRight, path)?;
        Ok(())
    })
}

/// Draw a step's energy by component (compute, memory, network, idle), joules per chip of
/// `chips`, as one stacked bar titled after `what`.
pub fn energy_svg(
    path: &Path,
    what: &str,
    chips: u64,
    e: &podsim_system::energy::EnergyOutput,
) -> Result<(), ReportError> {
    let per_chip = 1.0 / chips as f64;
    stacked_bars_svg(
        path,
        &format!("{what}: energy of one step"),
        "joules per chip",
        &["compute", "memory", "network", "idle"],
        &[(
            format!("{:.1} W per chip", e.average_power_w),
            e.energy_breakdown_j
                .parts()
                .iter()
                .map(|(_, j)| j * per_chip)
                .collect(),
        )],
    )
}
