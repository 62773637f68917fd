//! The access token a client presents in its hello: checked for length when made, compared in
//! constant time, never printed.

use crate::protocol;
use crate::server::error::{EngineError, io_err};
use std::fmt;
use std::fs;
use std::path::Path;

/// The secret a client presents in a hello (opcode 7). Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(Vec<u8>);

impl Token {
    /// The shortest token accepted: anything shorter is guessable.
    pub const MIN_LEN: usize = 16;

    /// A token of these exact bytes. Fails with [`EngineError::Config`] unless its length is in
    /// [`MIN_LEN`](Token::MIN_LEN)`..=`[`MAX_TOKEN`](protocol::MAX_TOKEN) bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Token, EngineError> {
        let bytes = bytes.into();
        Token::check(bytes.len()).map_err(EngineError::Config)?;
        Ok(Token(bytes))
    }

    /// The file's contents with surrounding whitespace (a trailing newline) removed.
    pub fn from_file(path: &Path) -> Result<Token, EngineError> {
        let raw = fs::read(path).map_err(io_err(format!("reading {}", path.display())))?;
        let bytes = raw.trim_ascii();
        Token::check(bytes.len())
            .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))?;
        Ok(Token(bytes.to_vec()))
    }

    fn check(len: usize) -> Result<(), String> {
        if (Self::MIN_LEN..=protocol::MAX_TOKEN).contains(&len) {
            return Ok(());
        }
        Err(format!(
            "access token of {len} bytes: it must be {}..={} bytes \
             (e.g. `head -c 32 /dev/urandom | base64 > token`)",
            Self::MIN_LEN,
            protocol::MAX_TOKEN
        ))
    }

    /// Whether `given` is this token. The time taken depends on the lengths only, never on
    /// where the bytes first differ.
    pub fn matches(&self, given: &[u8]) -> bool {
        use subtle::ConstantTimeEq;
        let mut same = (given.len() as u64).ct_eq(&(self.0.len() as u64));
        for (i, want) in self.0.iter().enumerate() {
            same &= given.get(i).copied().unwrap_or(0).ct_eq(want);
        }
        same.into()
    }

    /// The token's bytes, for a client that presents it.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token(<{} bytes, redacted>)", self.0.len())
    }
}
