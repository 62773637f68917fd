//! Placeholder.
//! Placeholder.
pub fn command(_: bool, _: &str) -> Result<(), String> {
    Ok(())
}
