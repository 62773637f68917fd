//! How a long file operation (a streamed sweep, a generated series) reports its progress and
//! learns that its caller wants it to stop, without the library choosing a display or a signal.

/// Progress and cancellation for [`sweep_file`](crate::stream::sweep_file),
/// [`sweep_series`](crate::stream::sweep_series),
/// [`write_gbm`](crate::write::write_gbm) and [`write_atomic`](crate::write::write_atomic).
/// Every method has a default that does nothing, so `&()` means "no display, never stop"; the
/// methods take `&self` so one progress can be shared by a writer and its pieces (a display
/// that keeps state uses interior mutability, as `indicatif`'s bars do).
pub trait Progress {
    /// The work begins: `total` units of it, when known up front. A unit is a bar for a file
    /// read or written, a bar·combo (one combo over one bar) for a sweep, so a big grid over a
    /// short series moves as steadily as a long series does.
    fn start(&self, total: Option<u64>) {
        let _ = total;
    }
    /// `units` more units are done.
    fn advance(&self, units: u64) {
        let _ = units;
    }
    /// True once the caller wants the work to stop (Ctrl-C); polled between chunks, after which
    /// the operation returns an error and writes nothing.
    fn cancelled(&self) -> bool {
        false
    }
}

impl Progress for () {}
