//! The sweep family's reply (opcodes 0, 3, 5, 6): every combo's pnl, then its trade count,
//! then the kernel seconds for the timed opcodes.

use crate::protocol::wire::{f64s_from_le, put_f64s, put_i64s};
use hullsweep_kernel::SweepResult;

/// A sweep reply frame: `[pnl...][trades...]`, then the kernel seconds for a timed sweep.
pub fn encode_sweep_reply(result: &SweepResult, seconds: Option<f64>) -> Vec<u8> {
    let body = 16 * result.len() + if seconds.is_some() { 8 } else { 0 };
    let mut out = Vec::with_capacity(4 + body);
    out.extend_from_slice(&(body as u32).to_le_bytes());
    put_f64s(&mut out, &result.pnl);
    put_i64s(&mut out, &result.trades);
    if let Some(s) = seconds {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

/// Decodes a sweep reply body of `n_combos` results (plus the kernel seconds when `timed`).
pub fn decode_sweep_reply(
    body: &[u8],
    n_combos: usize,
    timed: bool,
) -> Result<(SweepResult, Option<f64>), String> {
    let want = 16 * n_combos + if timed { 8 } else { 0 };
    if body.len() != want {
        return Err(format!(
            "sweep reply of {} bytes, expected {want} for {n_combos} combos",
            body.len()
        ));
    }
    let pnl = f64s_from_le(&body[..8 * n_combos]).into_owned();
    let trades = body[8 * n_combos..16 * n_combos]
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let seconds =
        timed.then(|| f64::from_le_bytes(body[16 * n_combos..].try_into().unwrap_or([0; 8])));
    Ok((SweepResult { pnl, trades }, seconds))
}
