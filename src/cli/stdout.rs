//! A command's output on stdout, where a reader that stops early (`| head`) is not an error:
//! the command ends quietly, as a Unix filter does.

use std::io::Write;

/// Writes a command's whole output to stdout; a broken pipe ends it quietly with success.
pub(crate) fn print_out(text: &str) -> anyhow::Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
