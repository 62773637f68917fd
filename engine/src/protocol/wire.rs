//! The little-endian array codecs every opcode shares: views of aligned bytes, bulk copies
//! otherwise, so a parse never costs more than one pass over the arrays.

use crate::protocol::layout::COMBO_BYTES;
use hullsweep_kernel::Combo;
use std::borrow::Cow;

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Little-endian `f64`s: a view of the bytes when aligned, else one bulk copy.
pub fn f64s_from_le(bytes: &[u8]) -> Cow<'_, [f64]> {
    if cfg!(target_endian = "little")
        && let Ok(view) = bytemuck::try_cast_slice::<u8, f64>(bytes)
    {
        return Cow::Borrowed(view);
    }
    Cow::Owned(
        bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect(),
    )
}

/// Little-endian rows of six `i64`: a view when aligned, else one bulk copy.
pub fn combos_from_le(bytes: &[u8]) -> Cow<'_, [Combo]> {
    if cfg!(target_endian = "little")
        && let Ok(view) = bytemuck::try_cast_slice::<u8, Combo>(bytes)
    {
        return Cow::Borrowed(view);
    }
    Cow::Owned(
        bytes
            .chunks_exact(COMBO_BYTES)
            .map(|row| {
                let mut c = [0i64; 6];
                for (v, b) in c.iter_mut().zip(row.chunks_exact(8)) {
                    *v = i64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
                }
                c
            })
            .collect(),
    )
}

/// Appends `f64`s as little-endian bytes (a plain byte copy on little-endian machines).
pub fn put_f64s(out: &mut Vec<u8>, values: &[f64]) {
    if cfg!(target_endian = "little") {
        out.extend_from_slice(bytemuck::cast_slice(values));
    } else {
        values
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    }
}

/// Appends `i64`s as little-endian bytes.
pub fn put_i64s(out: &mut Vec<u8>, values: &[i64]) {
    if cfg!(target_endian = "little") {
        out.extend_from_slice(bytemuck::cast_slice(values));
    } else {
        values
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn misaligned_bytes_fall_back_to_a_copy() {
        let words = [0u64; 5];
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        // Offset 0 is aligned (a view), offset 3 is not (a copy); both read the same values.
        assert!(matches!(f64s_from_le(&bytes[..32]), Cow::Borrowed(_)));
        let copied = f64s_from_le(&bytes[3..35]);
        assert!(matches!(copied, Cow::Owned(_)));
        assert_eq!(&*copied, &[0.0; 4]);
    }
}
