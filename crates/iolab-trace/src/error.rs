//! Errors of the trace library; every one names the file and, for bad input, the line.

use std::io;

/// Result alias of this crate.
pub type Result<T, E = TraceError> = std::result::Result<T, E>;

/// What went wrong while reading, writing, analysing or synthesising a trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A line (or binary record) could not be parsed.
    #[error(
        "{file}:{line}: {msg} (format {format}); fix the line, pass --format if the format \
         was guessed wrong, or pass --skip-bad to count bad lines and go on",
        file = esc(file),
        msg = esc(msg)
    )]
    BadLine {
        /// File name as given by the caller.
        file: String,
        /// 1-based line number (for binary traces: 1-based record number).
        line: u64,
        /// Format the reader was parsing.
        format: &'static str,
        /// What is wrong with it.
        msg: String,
    },
    /// A line longer than any text trace has: the input is not text. Fatal even with
    /// `skip_bad`, which would otherwise read an endless input (`/dev/zero`) for ever.
    #[error(
        "{file}:{line}: line longer than {mib} MiB without a newline: this is not a {format} \
         text trace (binary data, or a compression iolab does not undo); pass --format if the \
         format was guessed wrong",
        file = esc(file)
    )]
    NotText {
        /// File name as given by the caller.
        file: String,
        /// 1-based line number.
        line: u64,
        /// Format the reader was parsing.
        format: &'static str,
        /// The cap, in MiB.
        mib: usize,
    },
    /// With `skip_bad`, not one line was a valid record: what was read is not this format.
    #[error(
        "{file}: no valid {format} record: all {bad} lines were bad and skipped (--skip-bad); \
         check the format (pass --format NAME if it was guessed wrong) and the file",
        file = esc(file)
    )]
    NothingValid {
        /// File name as given by the caller.
        file: String,
        /// Format the reader was parsing.
        format: &'static str,
        /// Bad lines (or binary records) skipped.
        bad: u64,
    },
    /// Reading or writing failed at the operating-system level.
    // The cause is part of the message and deliberately not a `source()`, so `{:#}` chains do
    // not print it twice.
    #[error("{file}: {cause}", file = esc(file), cause = esc(&cause.to_string()))]
    Io {
        /// File name as given by the caller.
        file: String,
        /// The underlying error.
        cause: io::Error,
    },
    /// The format could not be recognised from the first lines.
    #[error(
        "{file}: cannot tell the trace format ({why}); name it with --format (one of: {known})",
        file = esc(file),
        why = esc(why)
    )]
    UnknownFormat {
        /// File name as given by the caller.
        file: String,
        /// Why detection failed.
        why: String,
        /// The accepted format names.
        known: String,
    },
    /// A format name was not recognised.
    #[error("unknown trace format '{name}'; use one of: {known}", name = esc(.0), known = crate::Format::names())]
    UnknownFormatName(String),
    /// A record cannot be expressed in the output format.
    #[error("{file}: cannot write record at {time_ns} ns as {format}: {msg}", file = esc(file))]
    Unwritable {
        /// Output file name.
        file: String,
        /// Output format name.
        format: &'static str,
        /// Time of the offending record.
        time_ns: u64,
        /// What the format cannot hold.
        msg: String,
    },
    /// Replay settings that cannot work together (a span smaller than the alignment, a
    /// time scale of zero, …); the message says which setting to change.
    #[error("replay: {0}")]
    Replay(String),
    /// A synthesis profile is invalid.
    #[error("profile {name}: {msg}", name = esc(name), msg = esc(msg))]
    Profile {
        /// Profile name or path.
        name: String,
        /// What is wrong and how to fix it.
        msg: String,
    },
}

/// Input-derived text (file names, quoted fields, reasons built from them) with control bytes
/// shown as escapes, so no message copies an ESC sequence to the terminal.
fn esc(s: &str) -> std::borrow::Cow<'_, str> {
    iolab_core::text::escape_control_keep_lines(s)
}

impl TraceError {
    /// Wraps an I/O error with the file it happened on.
    pub fn io(file: &str, cause: io::Error) -> Self {
        TraceError::Io {
            file: file.to_string(),
            cause,
        }
    }
}
