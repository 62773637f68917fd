//! `live`, the pipeline graph shared by every combo: one node per distinct WMA over close, per
//! distinct difference (`2a - b`, `3c - dd - e`) and per distinct WMA over a difference.
//!
//! Each node carries its fast value (a rolling WMA with restarts, `rolling.md` (2)) where some
//! combo takes the fast path, and a cache of its exact values, computed on demand (`exact.rs`).

use super::ring::{Cache, Series};
use std::collections::HashMap;

/// A rolling WMA of window `w`: `s` the window sum, `t` the weighted sum (weights `1..=w`),
/// restarted from a direct sum every `period` bars, so at most `period - 1` steps separate a
/// value from the last restart (`rolling.md`, (2); `live.md`, the schedule).
#[derive(Clone, Debug)]
pub(super) struct Roll {
    s: f64,
    t: f64,
    w: usize,
    wf: f64,
    /// `fl(1 / D(w))`, the normalisation as one multiply.
    inv: f64,
    pub(super) period: usize,
    /// Steps since the last restart; the state before bar 0 (every input 0) is exact, so it
    /// counts as a restart.
    since: usize,
}

impl Roll {
    pub(super) fn new(w: usize, period: usize, phase: usize) -> Self {
        let wf = w as f64;
        Roll {
            s: 0.0,
            t: 0.0,
            w,
            wf,
            inv: 1.0 / (wf * (wf + 1.0) / 2.0),
            period: period.max(1),
            since: phase % period.max(1),
        }
    }

    /// Bar `i`: `x(j)` is the input at bar `j` (0 before the stream, NaN as 0), `new = x(i)`,
    /// `old = x(i - w)`. Either one step of the recurrence or, when the period is up, a restart.
    #[inline(always)]
    pub(super) fn advance(&mut self, i: u64, new: f64, old: f64, x: impl Fn(u64) -> f64) {
        if self.since + 1 < self.period {
            // The weighted sum uses the window sum before it moves: T' = T + (w x_new - S).
            let q = self.wf * new - self.s;
            self.t += q;
            self.s += new - old;
            self.since += 1;
        } else {
            self.restart(i, x);
        }
    }

    /// The direct sums for the window ending at bar `i`, oldest first (`rolling.md`, restart).
    #[cold]
    #[inline(never)]
    fn restart(&mut self, i: u64, x: impl Fn(u64) -> f64) {
        let (mut s, mut t, mut wk) = (0.0, 0.0, 1.0);
        let first = (i + 1).saturating_sub(self.w as u64);
        // Bars before the stream are 0: their terms add exact zeros, so they are skipped.
        wk += (self.w as u64 - (i + 1 - first)) as f64;
        for j in first..=i {
            let v = x(j);
            s += v;
            t += v * wk;
            wk += 1.0;
        }
        self.s = s;
        self.t = t;
        self.since = 0;
    }

    #[inline(always)]
    pub(super) fn value(&self) -> f64 {
        self.t * self.inv
    }
}

/// A WMA of close.
#[derive(Clone, Debug)]
pub(super) struct Level1 {
    pub(super) w: usize,
    pub(super) roll: Option<Roll>,
    /// The fast value at the last bar.
    pub(super) value: f64,
    pub(super) exact: Cache,
}

/// `2 a - b` (`ins = [a, b, _]`, `three == false`) or `3 c - dd - e` (`ins = [c, dd, e]`) of
/// first-level nodes.
#[derive(Clone, Debug)]
pub(super) struct Diff {
    pub(super) ins: [u32; 3],
    pub(super) three: bool,
    /// Fast values by bar (0 before the stream), for the second-level rolls over it.
    pub(super) fast: Option<Series<f64>>,
    pub(super) exact: Cache,
}

impl Diff {
    /// The spec's expression, in its order: `2.0 * a - b`, `3.0 * c - dd - e`.
    #[inline(always)]
    pub(super) fn combine(&self, [a, b, c]: [f64; 3]) -> f64 {
        if self.three {
            3.0 * a - b - c
        } else {
            2.0 * a - b
        }
    }
}

/// A WMA of a difference: `hma` (over a `2a - b`) or `hma3` (over a `3c - dd - e`).
#[derive(Clone, Debug)]
pub(super) struct Level2 {
    pub(super) src: u32,
    pub(super) w: usize,
    pub(super) roll: Option<Roll>,
    pub(super) value: f64,
    pub(super) exact: Cache,
}

/// The deduplicated pipeline of every combo.
#[derive(Clone, Debug, Default)]
pub(super) struct Graph {
    pub(super) l1: Vec<Level1>,
    /// The `2a - b` nodes, then the `3c - dd - e` nodes are in `d3`.
    pub(super) d1: Vec<Diff>,
    pub(super) d3: Vec<Diff>,
    pub(super) h: Vec<Level2>,
    pub(super) h3: Vec<Level2>,
}

/// Where a combo's two indicators are in the graph.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ends {
    pub(super) h: u32,
    pub(super) h3: u32,
}

/// A spread of restart phases: node `k` of a kind restarts first at a pseudo-random point of
/// its period, so no one bar pays for every restart at once (the p99 of a push).
fn phase(kind: u64, k: usize, period: usize) -> usize {
    let x = (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ kind.wrapping_mul(0xD1B5_4A32_D192_ED03);
    ((x >> 17) % period as u64) as usize
}

/// Interns `key` in `map`, pushing a new node made by `make` when it is new.
fn intern<K: std::hash::Hash + Eq, N>(
    map: &mut HashMap<K, u32>,
    nodes: &mut Vec<N>,
    key: K,
    make: impl FnOnce() -> N,
) -> u32 {
    *map.entry(key).or_insert_with(|| {
        nodes.push(make());
        (nodes.len() - 1) as u32
    })
}

/// A combo as the graph builder sees it: windows `[n, h, s, m, h3, t]` and, on the fast path,
/// the longest restart period its bound allows.
pub(super) struct Want {
    pub(super) w: [usize; 6],
    pub(super) period: Option<usize>,
}

impl Graph {
    /// The graph of `combos`, and where each combo's indicators are.
    pub(super) fn build(combos: &[Want]) -> (Graph, Vec<Ends>) {
        let mut g = Graph::default();
        let (mut m1, mut md1, mut md3, mut mh, mut mh3) = Default::default();
        let mut ends = Vec::with_capacity(combos.len());
        // Per node: the most bars of exact values a consumer reads back, the shortest period a
        // fast consumer allows (usize::MAX: no fast consumer).
        let mut l1_need: Vec<(usize, usize)> = Vec::new();
        let mut d_need: [Vec<(usize, usize)>; 2] = Default::default();
        let mut h_need: [Vec<usize>; 2] = Default::default();
        for c in combos {
            let [n, h, s, m, h3, t] = c.w;
            let p = c.period.unwrap_or(usize::MAX);
            let mut l1 = |w: usize, back: usize| {
                let k = intern(&mut m1, &mut g.l1, w, || Level1 {
                    w,
                    roll: None,
                    value: 0.0,
                    exact: Cache::new(1),
                });
                if l1_need.len() <= k as usize {
                    l1_need.push((1, usize::MAX));
                }
                let e = &mut l1_need[k as usize];
                *e = (e.0.max(back), e.1.min(p));
                k
            };
            let ins1 = [l1(h, s), l1(n, s), 0];
            let ins3 = [l1(t, m), l1(h3, m), l1(m, m)];
            let diff = |ins: [u32; 3], three: bool| Diff {
                ins,
                three,
                fast: None,
                exact: Cache::new(1),
            };
            let a = intern(&mut md1, &mut g.d1, ins1, || diff(ins1, false));
            let b = intern(&mut md3, &mut g.d3, ins3, || diff(ins3, true));
            for (j, (k, back)) in [(a, s), (b, m)].into_iter().enumerate() {
                if d_need[j].len() <= k as usize {
                    d_need[j].push((1, usize::MAX));
                }
                let e = &mut d_need[j][k as usize];
                *e = (e.0.max(back), e.1.min(p));
            }
            let level2 = |src: u32, w: usize| Level2 {
                src,
                w,
                roll: None,
                value: 0.0,
                exact: Cache::new(2),
            };
            let hk = intern(&mut mh, &mut g.h, (a, s), || level2(a, s));
            let h3k = intern(&mut mh3, &mut g.h3, (b, m), || level2(b, m));
            for (j, k) in [(0, hk), (1, h3k)] {
                if h_need[j].len() <= k as usize {
                    h_need[j].push(usize::MAX);
                }
                let e = &mut h_need[j][k as usize];
                *e = (*e).min(p);
            }
            ends.push(Ends { h: hk, h3: h3k });
        }
        // Exact caches sized for their readers; rolls where a fast combo reads the node, each
        // restarting at the shortest period any of its fast combos allows.
        for (k, (node, &(back, p))) in g.l1.iter_mut().zip(&l1_need).enumerate() {
            node.exact = Cache::new(back);
            if p != usize::MAX {
                node.roll = Some(Roll::new(node.w, p, phase(1, k, p)));
            }
        }
        for (j, nodes) in [&mut g.d1, &mut g.d3].into_iter().enumerate() {
            for (node, &(back, p)) in nodes.iter_mut().zip(&d_need[j]) {
                node.exact = Cache::new(back);
                if p != usize::MAX {
                    node.fast = Some(Series::new(back.saturating_add(1), 0.0));
                }
            }
        }
        for (j, nodes) in [&mut g.h, &mut g.h3].into_iter().enumerate() {
            for (k, (node, &p)) in nodes.iter_mut().zip(&h_need[j]).enumerate() {
                if p != usize::MAX {
                    node.roll = Some(Roll::new(node.w, p, phase(2 + j as u64, k, p)));
                }
            }
        }
        (g, ends)
    }

    /// The fast values at bar `i` (the bar just pushed to `close`, NaN kept as NaN there): every
    /// roll steps (or restarts), every difference read by a roll is taken.
    pub(super) fn advance(&mut self, i: u64, close: &Series<f64>) {
        let x = |j: u64| {
            let v = close.at(j);
            if v.is_nan() { 0.0 } else { v }
        };
        let new = x(i);
        for node in &mut self.l1 {
            if let Some(r) = &mut node.roll {
                let old = if i >= node.w as u64 {
                    x(i - node.w as u64)
                } else {
                    0.0
                };
                r.advance(i, new, old, x);
                node.value = r.value();
            }
        }
        let l1 = &self.l1;
        for d in self.d1.iter_mut().chain(&mut self.d3) {
            let v = d.combine(d.ins.map(|k| l1[k as usize].value));
            if let Some(ring) = &mut d.fast {
                ring.push(v);
            }
        }
        for (nodes, diffs) in [(&mut self.h, &self.d1), (&mut self.h3, &self.d3)] {
            for node in nodes.iter_mut() {
                if let Some(r) = &mut node.roll {
                    let ring = diffs[node.src as usize]
                        .fast
                        .as_ref()
                        .expect("a roll's input is kept");
                    let y = |j: u64| ring.at(j);
                    let old = if i >= node.w as u64 {
                        y(i - node.w as u64)
                    } else {
                        0.0
                    };
                    r.advance(i, y(i), old, y);
                    node.value = r.value();
                }
            }
        }
    }

    /// Nodes of each kind `[l1, 2a - b, 3c - dd - e, hma, hma3]`.
    pub(super) fn sizes(&self) -> [usize; 5] {
        [
            self.l1.len(),
            self.d1.len(),
            self.d3.len(),
            self.h.len(),
            self.h3.len(),
        ]
    }

    /// Bytes held by the nodes' rings and caches.
    pub(super) fn bytes(&self) -> usize {
        let l1: usize = self.l1.iter().map(|n| n.exact.bytes()).sum();
        let d: usize = self
            .d1
            .iter()
            .chain(&self.d3)
            .map(|n| n.exact.bytes() + n.fast.as_ref().map_or(0, Series::bytes))
            .sum();
        let h: usize = self.h.iter().chain(&self.h3).map(|n| n.exact.bytes()).sum();
        l1 + d + h
    }
}
