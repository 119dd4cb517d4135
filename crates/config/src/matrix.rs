//! Integer matrices as CSV (`podsim systolic --a/--b`): one row a line, values separated by
//! commas, each an int8; blank lines skipped.

/// Why a matrix file cannot be used: the file, the 1-based line when known, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {why}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct MatrixError {
    /// The file.
    pub file: String,
    /// The 1-based line of the row at fault (blank lines not counted).
    pub line: Option<usize>,
    /// What was wrong and what was expected.
    pub why: String,
}

/// The `rows` x `cols` int8 matrix in `text` (read from `file`), row-major.
pub fn parse_int8_matrix(
    file: &str,
    text: &str,
    rows: usize,
    cols: usize,
) -> Result<Vec<i64>, MatrixError> {
    let err = |line: Option<usize>, why: String| MatrixError {
        file: file.to_string(),
        line,
        why,
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() != rows {
        return Err(err(
            None,
            format!(
                "expected {rows} rows of {cols} values, found {} rows",
                lines.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(rows * cols);
    for (i, line) in lines.iter().enumerate() {
        let vals: Vec<&str> = line.split(',').map(str::trim).collect();
        if vals.len() != cols {
            return Err(err(
                Some(i + 1),
                format!(
                    "expected {cols} comma-separated values, found {}",
                    vals.len()
                ),
            ));
        }
        for (j, v) in vals.iter().enumerate() {
            let x: i64 = v.parse().map_err(|_| {
                err(
                    Some(i + 1),
                    format!("value {} `{v}` is not a whole number", j + 1),
                )
            })?;
            if !(-128..=127).contains(&x) {
                return Err(err(
                    Some(i + 1),
                    format!("value {} is {x}, outside int8 (-128 to 127)", j + 1),
                ));
            }
            out.push(x);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_int8_matrix;

    #[test]
    fn rows_of_int8_values_blank_lines_skipped() {
        let m = parse_int8_matrix("a.csv", "1, -2\n\n127,-128\n", 2, 2);
        assert_eq!(m, Ok(vec![1, -2, 127, -128]));
    }

    #[test]
    fn errors_name_the_file_and_the_line() {
        let e = |text: &str| {
            parse_int8_matrix("b.csv", text, 2, 2)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e("1,2\n"),
            "b.csv: expected 2 rows of 2 values, found 1 rows"
        );
        assert_eq!(
            e("1,2\n3\n"),
            "b.csv:2: expected 2 comma-separated values, found 1"
        );
        assert_eq!(
            e("1,x\n3,4\n"),
            "b.csv:1: value 2 `x` is not a whole number"
        );
        assert_eq!(
            e("1,2\n3,300\n"),
            "b.csv:2: value 2 is 300, outside int8 (-128 to 127)"
        );
    }
}
