//! Errors of the probe and of trimcheck. Each message says what went wrong, where, and what to
//! do about it.

use std::io;
use std::path::PathBuf;

/// Why a probe could not run at all. Missing sysfs facts are never errors (they are `None`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// The target could not be examined.
    #[error("cannot examine '{path}': {cause}; check the path exists and is readable")]
    Target {
        /// The target.
        path: PathBuf,
        /// The cause (in the message, not a `source()`, so chains do not repeat it).
        cause: io::Error,
    },
    /// The target is neither a file, a directory nor a block device.
    #[error("'{path}' is a {what}, not storage; give a file, a directory or a block device")]
    NotStorage {
        /// The target.
        path: PathBuf,
        /// What it is instead.
        what: &'static str,
    },
    /// The mount table could not be read.
    #[error("cannot read the mount table '{path}': {cause}; is /proc mounted?")]
    MountTable {
        /// Where we looked.
        path: PathBuf,
        /// The cause (in the message, not a `source()`).
        cause: io::Error,
    },
}

/// Why trimcheck refused or failed. A refusal is never a verdict: the method cannot tell.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrimError {
    /// Probing the path failed.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The filesystem cannot be checked with this method.
    #[error("cannot check TRIM on '{path}': {reason}")]
    Unsupported {
        /// The path given.
        path: PathBuf,
        /// Why, with what to do instead.
        reason: String,
    },
    /// The file's physical location cannot be trusted.
    #[error("cannot locate the test block of '{path}' on the device: {reason}")]
    Unmappable {
        /// The test file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A step failed with an I/O error.
    // The cause is part of the message and deliberately not a `source()`, so `{:#}` chains do
    // not print it twice.
    #[error("{step} '{path}': {cause}{hint}")]
    Io {
        /// What we were doing.
        step: &'static str,
        /// On what.
        path: PathBuf,
        /// The cause.
        cause: io::Error,
        /// What to do about it (may be empty).
        hint: String,
    },
}

impl TrimError {
    pub(crate) fn io(step: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        let hint = match source.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => {
                "; trimcheck needs root (it trims the filesystem and reads the raw device)"
            }
            Some(libc::EINVAL) if step.contains("O_DIRECT") => {
                "; the filesystem or device refused direct I/O"
            }
            _ => "",
        };
        TrimError::Io {
            step,
            path: path.into(),
            cause: source,
            hint: hint.to_string(),
        }
    }
}
