//! Reading LLVM's aarch64 assembly for section 5b: one function's instructions and branch
//! targets, its hot WMA loop, the bounds checks it branches to, and the loop body's shape.

use std::collections::HashMap;

/// One function of LLVM's aarch64 assembly text: its instructions, branch targets resolved, and
/// the blocks that end in a bounds-check panic (index out of range; asserts are not counted).
pub(super) struct Func {
    pub(super) insns: Vec<(String, Option<usize>)>,
    panic_blocks: Vec<(usize, usize)>,
}

/// The function whose symbol starts with `prefix`, from `llc`-style assembly.
pub(super) fn function(text: &str, prefix: &str) -> Option<Func> {
    let mut lines = text
        .lines()
        .skip_while(|l| !(l.starts_with(prefix) && l.ends_with(':')));
    lines.next()?;
    let mut labels = HashMap::new();
    let mut raw: Vec<String> = Vec::new();
    let mut block_starts = vec![0];
    for line in lines {
        let t = line.trim();
        if t.starts_with(".Lfunc_end") || (!line.starts_with(['\t', ' ', '.']) && t.ends_with(':'))
        {
            break;
        }
        if let Some(l) = t.strip_suffix(':') {
            labels.insert(l.to_string(), raw.len());
            block_starts.push(raw.len());
            continue;
        }
        if t.is_empty() || t.starts_with('.') || t.starts_with("//") {
            continue;
        }
        raw.push(t.split("//").next().unwrap_or(t).trim().replace('\t', " "));
    }
    let is_branch =
        |m: &str| matches!(m, "b" | "cbz" | "cbnz" | "tbz" | "tbnz") || m.starts_with("b.");
    let insns: Vec<(String, Option<usize>)> = raw
        .iter()
        .map(|t| {
            let m = t.split_whitespace().next().unwrap_or("");
            let target = is_branch(m)
                .then(|| {
                    t.rsplit([' ', ','])
                        .next()
                        .and_then(|l| labels.get(l).copied())
                })
                .flatten();
            (t.clone(), target)
        })
        .collect();
    let panic_blocks = insns
        .iter()
        .enumerate()
        .filter(|(_, (t, _))| {
            t.starts_with("bl ") && (t.contains("panic_bounds_check") || t.contains("slice_index"))
        })
        .map(|(i, _)| {
            let start = block_starts
                .iter()
                .copied()
                .filter(|&s| s <= i)
                .max()
                .unwrap_or(0);
            (start, i)
        })
        .collect();
    Some(Func {
        insns,
        panic_blocks,
    })
}

impl Func {
    pub(super) fn branches_to_panic(&self, range: std::ops::RangeInclusive<usize>) -> bool {
        self.insns[range].iter().any(|(_, t)| {
            t.is_some_and(|t| self.panic_blocks.iter().any(|&(a, b)| a <= t && t <= b))
        })
    }

    /// The innermost loop with the most FP adds (the unrolled WMA body).
    pub(super) fn hot_loop(&self) -> Option<(usize, usize)> {
        let loops: Vec<(usize, usize)> = self
            .insns
            .iter()
            .enumerate()
            .filter_map(|(i, (_, t))| t.filter(|&t| t <= i).map(|t| (t, i)))
            .collect();
        loops
            .iter()
            .copied()
            .filter(|&(a, b)| {
                !loops
                    .iter()
                    .any(|&(c, d)| (c, d) != (a, b) && a <= c && d <= b)
            })
            .max_by_key(|&(a, b)| {
                self.insns[a..=b]
                    .iter()
                    .filter(|(t, _)| t.starts_with("fadd "))
                    .count()
            })
    }
}

fn operands(t: &str) -> Vec<&str> {
    t.split_once(' ')
        .map(|(_, ops)| ops.split(',').map(str::trim).collect())
        .unwrap_or_default()
}

/// Elements per iteration, the serial part of the add chain, and the weight conversion.
pub(super) fn shape(body: &[String]) -> (usize, usize, String) {
    let (mut elements, mut chain) = (0, 0);
    for t in body.iter().filter(|t| t.starts_with("fadd ")) {
        let ops = operands(t);
        let lanes = if ops.first().is_some_and(|o| o.ends_with(".2d")) {
            2
        } else {
            1
        };
        elements += lanes;
        // `fadd d6, d6, x`: the destination is a source, so each waits for the previous one.
        if ops.len() == 3 && (ops[0] == ops[1] || ops[0] == ops[2]) {
            chain += 1;
        }
    }
    let mut conv = Vec::new();
    for m in ["ucvtf", "scvtf"] {
        let (vector, scalar): (Vec<&String>, Vec<&String>) = body
            .iter()
            .filter(|t| t.starts_with(&format!("{m} ")))
            .partition(|t| t.contains(".2d"));
        if !vector.is_empty() {
            conv.push(format!("{}x `{m}` .2d (2 weights each)", vector.len()));
        }
        if !scalar.is_empty() {
            conv.push(format!("{}x `{m}` scalar", scalar.len()));
        }
    }
    if conv.is_empty() {
        conv.push("none in the loop (weights loaded or counted in FP)".into());
    }
    (elements, chain, conv.join(", "))
}
