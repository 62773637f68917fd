//! Per-combo results as text: a sweep's `(pnl, trades)` or its metric columns (named as
//! docs/kernel.md names them), as CSV or JSON, every float in the form that parses back exactly.

use hullsweep_kernel::{Combo, Metrics, SweepResult, Value, WINDOW_NAMES};

/// One row per combo; `pnl` in Rust's shortest representation that parses back to the same bits.
pub fn sweep_csv(params: &[Combo], r: &SweepResult) -> String {
    let mut s = format!("combo,{},pnl,trades\n", WINDOW_NAMES.join(","));
    for (k, c) in params.iter().enumerate() {
        let windows: Vec<String> = c.iter().map(i64::to_string).collect();
        s += &format!("{k},{},{},{}\n", windows.join(","), r.pnl[k], r.trades[k]);
    }
    s
}

/// The same rows as JSON objects (`combo`, the six windows, `pnl`, `trades`), pretty-printed.
pub fn sweep_json(params: &[Combo], r: &SweepResult) -> String {
    let rows: Vec<serde_json::Value> = params
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let mut row = serde_json::Map::new();
            row.insert("combo".into(), k.into());
            for (name, w) in WINDOW_NAMES.iter().zip(c) {
                row.insert((*name).into(), (*w).into());
            }
            row.insert("pnl".into(), r.pnl[k].into());
            row.insert("trades".into(), r.trades[k].into());
            row.into()
        })
        .collect();
    serde_json::to_string_pretty(&rows).expect("plain values serialise") + "\n"
}

/// A float as Rust prints it (the shortest text that parses back to the same bits; NaN for a
/// metric without trades), a count as an integer.
fn cell(v: Value) -> String {
    match v {
        Value::F64(x) => x.to_string(),
        Value::I64(x) => x.to_string(),
    }
}

/// The columns that follow the kernel's metrics with `--metrics`, computed from the bar returns
/// and the trades (docs/research.md): per combo `[sharpe, win_rate, profit_factor]`, `None`
/// where undefined (no trades; no losing trade).
pub const EXTRA_NAMES: [&str; 3] = ["sharpe", "win_rate", "profit_factor"];

/// One row per combo: `combo`, the six windows, the metrics `names` in order, then
/// [`EXTRA_NAMES`] when `extra` has a row per combo (an undefined value is an empty cell).
pub fn metrics_csv(
    params: &[Combo],
    rows: &[Metrics],
    names: &[&str],
    extra: &[[Option<f64>; 3]],
) -> String {
    let mut header: Vec<&str> = names.to_vec();
    if !extra.is_empty() {
        header.extend(EXTRA_NAMES);
    }
    let mut s = format!("combo,{},{}\n", WINDOW_NAMES.join(","), header.join(","));
    for (k, (c, m)) in params.iter().zip(rows).enumerate() {
        let windows: Vec<String> = c.iter().map(i64::to_string).collect();
        let mut values: Vec<String> = names
            .iter()
            .map(|n| cell(m.get(n).expect("a known metric")))
            .collect();
        if let Some(x) = extra.get(k) {
            values.extend(x.iter().map(|v| v.map_or(String::new(), |v| v.to_string())));
        }
        s += &format!("{k},{},{}\n", windows.join(","), values.join(","));
    }
    s
}

/// The same rows as JSON objects; a NaN (no trades) or an undefined extra is `null`, as JSON
/// has no NaN.
pub fn metrics_json(
    params: &[Combo],
    rows: &[Metrics],
    names: &[&str],
    extra: &[[Option<f64>; 3]],
) -> String {
    let rows: Vec<serde_json::Value> = params
        .iter()
        .zip(rows)
        .enumerate()
        .map(|(k, (c, m))| {
            let mut row = serde_json::Map::new();
            row.insert("combo".into(), k.into());
            for (name, w) in WINDOW_NAMES.iter().zip(c) {
                row.insert((*name).into(), (*w).into());
            }
            for name in names {
                let v = match m.get(name).expect("a known metric") {
                    Value::F64(x) => serde_json::Value::from(x),
                    Value::I64(x) => x.into(),
                };
                row.insert((*name).into(), v);
            }
            if let Some(x) = extra.get(k) {
                for (name, v) in EXTRA_NAMES.iter().zip(x) {
                    row.insert((*name).into(), (*v).into());
                }
            }
            row.into()
        })
        .collect();
    serde_json::to_string_pretty(&rows).expect("plain values serialise") + "\n"
}
