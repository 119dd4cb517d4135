//! Text tables, as `podsim_report::render` aligns them (this crate stands below the report
//! crate and cannot use it).

/// Align rows into columns: the labels, then each column two spaces after the widest cell of
/// the one before; trailing spaces trimmed.
pub(crate) fn render(rows: &[(String, Vec<String>)]) -> String {
    let label_w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let cols = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.1.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let pad = |line: &mut String, s: &str, w: usize| {
        line.push_str(s);
        line.extend(std::iter::repeat_n(
            ' ',
            w.saturating_sub(s.chars().count()),
        ));
    };
    let mut out = String::new();
    for (label, cells) in rows {
        let mut line = String::new();
        pad(&mut line, label, label_w);
        for (c, cell) in cells.iter().enumerate() {
            line.push_str("  ");
            pad(&mut line, cell, widths[c]);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A row of one cell.
pub(crate) fn row(label: &str, cell: String) -> (String, Vec<String>) {
    (label.to_string(), vec![cell])
}
