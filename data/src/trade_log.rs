//! The trade log as text (docs/kernel.md, "Trades and events"): CSV rows and JSON objects that
//! give every field back bit for bit, shared by `hullsweep trades`, the fixtures and the tests.

use crate::error::DataError;
use hullsweep_kernel::Trade;

/// The CSV header of a trade row.
pub const CSV_HEADER: &str = "combo,side,entry_bar,exit_bar,entry_price,exit_price,pnl";

/// One trade as a CSV row of [`CSV_HEADER`]. Floats in Rust's `{:?}`: the shortest form that
/// parses back to the same bits, with an exponent at extreme scales (`1e-320`, not 320 zeros),
/// `inf` and `-inf` for an infinite PnL (a trade's fields are never NaN).
pub fn csv_row(t: &Trade) -> String {
    format!(
        "{},{},{},{},{:?},{:?},{:?}",
        t.combo, t.side, t.entry_bar, t.exit_bar, t.entry_price, t.exit_price, t.pnl
    )
}

/// Parses a [`csv_row`] back, naming the cell that does not parse.
pub fn parse_csv_row(row: &str) -> Result<Trade, DataError> {
    let bad = |detail: String| DataError::TradeRow {
        row: row.to_string(),
        detail,
    };
    let cells: Vec<&str> = row.split(',').collect();
    if cells.len() != 7 {
        return Err(bad(format!(
            "{} cells, expected 7 ({CSV_HEADER})",
            cells.len()
        )));
    }
    let name = |i: usize| CSV_HEADER.split(',').nth(i).unwrap_or("?");
    let int = |i: usize| -> Result<i64, DataError> {
        cells[i]
            .parse()
            .map_err(|e| bad(format!("{} {:?} is not an integer: {e}", name(i), cells[i])))
    };
    let float = |i: usize| -> Result<f64, DataError> {
        cells[i]
            .parse()
            .map_err(|e| bad(format!("{} {:?} is not a number: {e}", name(i), cells[i])))
    };
    let index = |i: usize| -> Result<u64, DataError> {
        let v = int(i)?;
        u64::try_from(v).map_err(|_| bad(format!("{} {v} is negative", name(i))))
    };
    Ok(Trade {
        combo: index(0)? as usize,
        side: int(1)?,
        entry_bar: index(2)?,
        exit_bar: index(3)?,
        entry_price: float(4)?,
        exit_price: float(5)?,
        pnl: float(6)?,
    })
}

/// `x` as a JSON number (serde_json writes the shortest form that parses back to the same
/// bits), or as the string `"inf"`/`"-inf"` where JSON has no number for it.
pub fn json_number(x: f64) -> serde_json::Value {
    serde_json::Number::from_f64(x)
        .map(serde_json::Value::Number)
        .unwrap_or_else(|| serde_json::Value::String(format!("{x:?}")))
}

/// One trade as a JSON object with the fields of [`CSV_HEADER`], in that order.
pub fn json_row(t: &Trade) -> serde_json::Value {
    serde_json::json!({
        "combo": t.combo,
        "side": t.side,
        "entry_bar": t.entry_bar,
        "exit_bar": t.exit_bar,
        "entry_price": json_number(t.entry_price),
        "exit_price": json_number(t.exit_price),
        "pnl": json_number(t.pnl),
    })
}

/// The trades as CSV: the header, then one [`csv_row`] per trade.
pub fn to_csv(trades: &[Trade]) -> String {
    let mut s = String::with_capacity(64 * (trades.len() + 1));
    s += CSV_HEADER;
    s.push('\n');
    for t in trades {
        s += &csv_row(t);
        s.push('\n');
    }
    s
}

/// The trades as a pretty JSON array of [`json_row`] objects.
pub fn to_json(trades: &[Trade]) -> String {
    let rows: Vec<serde_json::Value> = trades.iter().map(json_row).collect();
    serde_json::to_string_pretty(&rows).expect("plain values serialise") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trade(pnl: f64, price: f64) -> Trade {
        Trade {
            combo: 7,
            side: -1,
            entry_bar: 12,
            exit_bar: 15,
            entry_price: price,
            exit_price: 1.2,
            pnl,
        }
    }

    #[test]
    fn csv_rows_round_trip_every_bit() {
        for pnl in [-0.1 - 0.2, 5e-324, f64::INFINITY, f64::NEG_INFINITY, -0.0] {
            for price in [1.1, 5e-324, f64::MAX, 1e-320] {
                let t = trade(pnl, price);
                let back = parse_csv_row(&csv_row(&t)).unwrap();
                assert!(back.same(&t), "{}", csv_row(&t));
            }
        }
        assert_eq!(csv_row(&trade(0.5, 1e-320)), "7,-1,12,15,1e-320,1.2,0.5");
        let e = parse_csv_row("1,2,3").unwrap_err().to_string();
        assert!(e.contains("3 cells"), "{e}");
        let e = parse_csv_row("1,1,-3,4,1.0,1.0,0.5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("entry_bar -3 is negative"), "{e}");
        let e = parse_csv_row("1,1,3,4,x,1.0,0.5").unwrap_err().to_string();
        assert!(e.contains("entry_price \"x\""), "{e}");
    }

    #[test]
    fn json_rows_keep_the_bits_and_name_infinities() {
        let t = trade(f64::NEG_INFINITY, -0.1 - 0.2);
        let v = json_row(&t);
        assert_eq!(v["pnl"], "-inf");
        let back: f64 = serde_json::from_str(&v["entry_price"].to_string()).unwrap();
        assert_eq!(back.to_bits(), (-0.1f64 - 0.2).to_bits());
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 7);
        assert_eq!(
            keys.iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(","),
            CSV_HEADER
        );
    }
}
