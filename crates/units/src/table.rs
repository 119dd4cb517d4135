//! Text tables: rows of a label and cells, aligned into columns (every table podsim prints,
//! from the models' crates up to the report).

/// Align rows into columns.
pub fn render(rows: &[(String, Vec<String>)]) -> String {
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
    // Padding by hand: `format!`'s width is limited to 65,535 and panics beyond.
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

/// One row of a label and a single cell.
pub fn row(label: &str, cell: String) -> (String, Vec<String>) {
    (label.to_string(), vec![cell])
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn a_cell_wider_than_65535_characters_is_rendered() {
        // Regression: `format!("{cell:<w$}")` panics for w > 65,535.
        let long = "x".repeat(70_000);
        let rows = vec![
            ("a".to_string(), vec![long.clone(), "b".into()]),
            ("cc".to_string(), vec!["y".into(), "z".into()]),
        ];
        let out = render(&rows);
        let lines: Vec<&str> = out.lines().collect();
        // Label column 2 wide, two spaces, the 70,000-wide column, two spaces, the last cell.
        assert_eq!(lines[0].len(), 2 + 2 + 70_000 + 2 + 1);
        assert_eq!(lines[1], format!("cc  y{}  z", " ".repeat(69_999)));
    }

    #[test]
    fn columns_align_two_spaces_past_the_widest_cell() {
        let rows = [
            super::row("a", "1".into()),
            ("long label".to_string(), vec!["22".into(), "x".into()]),
        ];
        // Labels pad to 10 characters, the first column to 2; trailing spaces trimmed.
        assert_eq!(render(&rows), "a           1\nlong label  22  x\n");
    }
}
