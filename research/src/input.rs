//! Checks of a returns matrix before any statistic is taken: its shape (2-D, at least 2 columns)
//! and its values (finite, within +-[`MAX_ABS`]), each refusal naming the value and where it is.

use crate::error::ResearchError;

/// The largest magnitude a return may have: sums of squares of up to 2^40 such values stay far
/// from overflow (percentage-point returns are nowhere near it).
pub const MAX_ABS: f64 = 1e100;

/// Checks a matrix shape (as numpy or a `.npy` header gives it) and returns `(bars, combos)`:
/// it must be 2-D with at least 2 columns.
pub fn check_shape(shape: &[usize]) -> Result<(usize, usize), ResearchError> {
    match *shape {
        [bars, columns] if columns < 2 => Err(ResearchError::TooFewColumns { bars, columns }),
        [bars, columns] => Ok((bars, columns)),
        _ => Err(ResearchError::NotTwoD {
            shape: shape.to_vec(),
        }),
    }
}

/// Checks one value of row `row`, column `column`.
pub fn check_value(row: usize, column: usize, value: f64) -> Result<(), ResearchError> {
    if !value.is_finite() {
        Err(ResearchError::NonFinite { row, column, value })
    } else if value.abs() > MAX_ABS {
        Err(ResearchError::TooLarge {
            row,
            column,
            value,
            limit: MAX_ABS,
        })
    } else {
        Ok(())
    }
}

/// Checks whole rows of `combos` values, the first being row `first_row`; the error names the
/// first bad value in row-major order. One branch-free scan finds whether there is one.
pub(crate) fn check_rows(
    first_row: usize,
    combos: usize,
    rows: &[f64],
) -> Result<(), ResearchError> {
    // A value is good when `|x| <= MAX_ABS`, which is false for NaN too.
    let good = rows
        .iter()
        .fold(true, |good, x| good & (x.abs() <= MAX_ABS));
    if good {
        return Ok(());
    }
    for (i, &x) in rows.iter().enumerate() {
        check_value(first_row + i / combos, i % combos, x)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_named() {
        assert_eq!(check_shape(&[10, 3]), Ok((10, 3)));
        let e = check_shape(&[10]).unwrap_err().to_string();
        assert!(e.contains("2-D") && e.contains("[10]"), "{e}");
        let e = check_shape(&[2, 3, 4]).unwrap_err().to_string();
        assert!(e.contains("[2, 3, 4]"), "{e}");
        let e = check_shape(&[10, 1]).unwrap_err().to_string();
        assert!(e.contains("got 1") && e.contains("10 x 1"), "{e}");
    }

    #[test]
    fn the_first_bad_value_is_named_with_its_row_and_column() {
        let rows = [0.0, 1.0, 2.0, f64::INFINITY, f64::NAN, 0.0];
        let e = check_rows(5, 3, &rows).unwrap_err();
        assert_eq!(
            e.to_string(),
            "row 6, column 0 holds inf: returns must be finite"
        );
        let e = check_rows(0, 2, &[0.0, f64::NAN]).unwrap_err().to_string();
        assert_eq!(e, "row 0, column 1 holds NaN: returns must be finite");
        let e = check_rows(0, 2, &[-2e100, 0.0]).unwrap_err().to_string();
        assert!(e.contains("row 0, column 0 holds -2e100"), "{e}");
        assert!(check_rows(0, 2, &[MAX_ABS, -MAX_ABS]).is_ok());
    }
}
