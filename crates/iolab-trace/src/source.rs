//! The streaming reader interface and the generic line-oriented reader behind most formats.

use std::io::Read;

use crate::error::{Result, TraceError};
use crate::lines::{Line, Lines, MAX_LINE};
use crate::record::TraceRecord;

/// Anything that yields trace records one at a time, in file order.
pub trait RecordSource: Send {
    /// The next record; `Ok(None)` at the end of the input.
    fn next_record(&mut self) -> Result<Option<TraceRecord>>;
    /// How many bad lines (or binary records) were counted and skipped so far
    /// (only non-zero with `skip_bad`).
    fn bad_records(&self) -> u64;
    /// The 1-based line (for binary traces: record) read last, for messages.
    fn position(&self) -> u64;
}

/// Parses one text line of a format. Parsers may keep state (fio file names, blktrace
/// issue/complete pairing) and may hold records back until they are complete.
pub(crate) trait LineParser: Send {
    /// Parses one line. `Ok(None)` means the line carries no record (a header, another
    /// event type, or a record that [`LineParser::take_ready`] will hand out later).
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String>;

    /// A record held back earlier that is now complete; at `eof` everything held is flushed.
    fn take_ready(&mut self, _eof: bool) -> Option<TraceRecord> {
        None
    }

    /// At the end of the input: why what was read cannot be this format, if it cannot.
    fn finish(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Drives a [`LineParser`] over a byte stream, adding file/line context to errors.
pub(crate) struct LineReader<R, P> {
    lines: Lines<R>,
    parser: P,
    file: String,
    format: &'static str,
    skip_bad: bool,
    bad: u64,
    done: bool,
}

impl<R: Read + Send, P: LineParser> LineReader<R, P> {
    pub(crate) fn new(
        inner: R,
        parser: P,
        file: &str,
        format: &'static str,
        skip_bad: bool,
    ) -> Self {
        LineReader {
            lines: Lines::new(inner),
            parser,
            file: file.to_string(),
            format,
            skip_bad,
            bad: 0,
            done: false,
        }
    }

    fn bad_line(&mut self, msg: String) -> Result<()> {
        if self.skip_bad {
            self.bad += 1;
            Ok(())
        } else {
            Err(TraceError::BadLine {
                file: self.file.clone(),
                line: self.lines.line_no(),
                format: self.format,
                msg,
            })
        }
    }
}

impl<R: Read + Send, P: LineParser> RecordSource for LineReader<R, P> {
    fn next_record(&mut self) -> Result<Option<TraceRecord>> {
        loop {
            if let Some(r) = self.parser.take_ready(self.done) {
                match r.check_len() {
                    Ok(()) => return Ok(Some(r)),
                    Err(msg) => {
                        self.bad_line(msg)?;
                        continue;
                    }
                }
            }
            if self.done {
                return Ok(None);
            }
            let parsed = match self.lines.next_line() {
                Err(e) => return Err(TraceError::io(&self.file, e)),
                Ok(None) => {
                    self.done = true;
                    if let Err(msg) = self.parser.finish() {
                        self.bad_line(msg)?;
                    }
                    continue;
                }
                // Fatal even with --skip-bad: no text trace has such a line, and skipping would
                // read an endless input (/dev/zero) for ever.
                Ok(Some(Line::TooLong)) => {
                    return Err(TraceError::NotText {
                        file: self.file.clone(),
                        line: self.lines.line_no(),
                        format: self.format,
                        mib: MAX_LINE >> 20,
                    })
                }
                Ok(Some(Line::Text(line))) => self.parser.parse(line),
            };
            match parsed.and_then(|r| match r {
                Some(r) => r.check_len().map(|()| Some(r)),
                None => Ok(None),
            }) {
                Ok(Some(r)) => return Ok(Some(r)),
                Ok(None) => {}
                Err(msg) => self.bad_line(msg)?,
            }
        }
    }

    fn bad_records(&self) -> u64 {
        self.bad
    }

    fn position(&self) -> u64 {
        self.lines.line_no()
    }
}
