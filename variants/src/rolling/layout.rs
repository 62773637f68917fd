//! The lane layout every stage of `rolling` shares: [`LANES`] stretches of the series side by
//! side, and `V`, one `f64` per lane (a row of a transposed buffer).

/// Stretches of the series computed side by side (one per lane of an AVX-512 vector; AVX2,
/// SSE2 and NEON run the same code as 2 or 4 vectors).
pub const LANES: usize = 8;
pub(super) type V = [f64; LANES];
