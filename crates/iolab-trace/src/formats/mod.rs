//! One module per trace format; each has a line (or record) parser and a formatter.

pub(crate) mod alibaba;
pub(crate) mod blkparse;
pub(crate) mod blktrace;
pub(crate) mod disksim;
pub(crate) mod fio;
pub(crate) mod msr;
pub(crate) mod pairing;
pub(crate) mod spc;
pub(crate) mod systor;
pub(crate) mod tencent;

use std::io::{Read, Write};

use crate::error::{Result, TraceError};
use crate::format::{Format, ReadOptions, RecordWriter, WriteOptions};
use crate::record::TraceRecord;
use crate::source::{LineReader, RecordSource};

/// Builds the reader for `format`.
pub(crate) fn reader<R: Read + Send + 'static>(
    format: Format,
    name: &str,
    input: R,
    o: &ReadOptions,
) -> Box<dyn RecordSource> {
    let n = format.name();
    let s = o.skip_bad;
    match format {
        Format::Blkparse => Box::new(LineReader::new(
            input,
            blkparse::Parser::new(o.event),
            name,
            n,
            s,
        )),
        Format::Blktrace => Box::new(blktrace::Reader::new(input, name, o.event, s)),
        Format::Msr => Box::new(LineReader::new(input, msr::Parser, name, n, s)),
        Format::Spc => Box::new(LineReader::new(
            input,
            spc::Parser::new(o.spc_block_bytes),
            name,
            n,
            s,
        )),
        Format::Fio2 => Box::new(LineReader::new(input, fio::Parser::new(2), name, n, s)),
        Format::Fio3 => Box::new(LineReader::new(input, fio::Parser::new(3), name, n, s)),
        Format::Alibaba => Box::new(LineReader::new(input, alibaba::Parser, name, n, s)),
        Format::Tencent => Box::new(LineReader::new(input, tencent::Parser, name, n, s)),
        Format::Systor => Box::new(LineReader::new(input, systor::Parser, name, n, s)),
        Format::Disksim => Box::new(LineReader::new(
            input,
            disksim::Parser::new(disksim::Unit::Ms),
            name,
            n,
            s,
        )),
        Format::Mqsim => Box::new(LineReader::new(
            input,
            disksim::Parser::new(disksim::Unit::Ns),
            name,
            n,
            s,
        )),
    }
}

/// Builds the writer for `format`.
pub(crate) fn writer(
    format: Format,
    name: &str,
    out: Box<dyn Write>,
    o: &WriteOptions,
) -> Box<dyn RecordWriter> {
    let n = format.name();
    match format {
        Format::Blkparse => Box::new(TextWriter::new(
            out,
            blkparse::Formatter::new(o.event),
            name,
            n,
        )),
        Format::Blktrace => Box::new(TextWriter::new(
            out,
            blktrace::Formatter::new(o.event, o.big_endian),
            name,
            n,
        )),
        Format::Msr => Box::new(TextWriter::new(
            out,
            msr::Formatter::new(&o.hostname),
            name,
            n,
        )),
        Format::Spc => Box::new(TextWriter::new(
            out,
            spc::Formatter::new(o.spc_block_bytes),
            name,
            n,
        )),
        Format::Fio2 => Box::new(TextWriter::new(out, fio::Formatter::new(2), name, n)),
        Format::Fio3 => Box::new(TextWriter::new(out, fio::Formatter::new(3), name, n)),
        Format::Alibaba => Box::new(TextWriter::new(out, alibaba::Formatter, name, n)),
        Format::Tencent => Box::new(TextWriter::new(out, tencent::Formatter, name, n)),
        Format::Systor => Box::new(TextWriter::new(out, systor::Formatter, name, n)),
        Format::Disksim => Box::new(TextWriter::new(
            out,
            disksim::Formatter::new(disksim::Unit::Ms),
            name,
            n,
        )),
        Format::Mqsim => Box::new(TextWriter::new(
            out,
            disksim::Formatter::new(disksim::Unit::Ns),
            name,
            n,
        )),
    }
}

/// Turns records into bytes for one format. Times and offsets are rounded down to the
/// format's units (a writer cannot invent precision the format lacks).
pub(crate) trait Formatter: Send {
    /// Bytes written before the first record.
    fn header(&mut self, _out: &mut Vec<u8>) {}
    /// Appends one record; `Ok(false)` when the format cannot express it (it is skipped).
    fn record(&mut self, rec: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String>;
    /// Bytes written after the last record.
    fn trailer(&mut self, _out: &mut Vec<u8>) {}
}

/// A buffered writer driving a [`Formatter`].
pub(crate) struct TextWriter<F> {
    out: Box<dyn Write>,
    buf: Vec<u8>,
    fmt: F,
    name: String,
    format: &'static str,
    skipped: u64,
    started: bool,
}

impl<F: Formatter> TextWriter<F> {
    pub(crate) fn new(out: Box<dyn Write>, fmt: F, name: &str, format: &'static str) -> Self {
        TextWriter {
            out,
            buf: Vec::with_capacity(1 << 16),
            fmt,
            name: name.to_string(),
            format,
            skipped: 0,
            started: false,
        }
    }

    fn start(&mut self) {
        if !self.started {
            self.started = true;
            self.fmt.header(&mut self.buf);
        }
    }

    fn drain(&mut self) -> Result<()> {
        self.out
            .write_all(&self.buf)
            .map_err(|e| TraceError::io(&self.name, e))?;
        self.buf.clear();
        Ok(())
    }
}

impl<F: Formatter> RecordWriter for TextWriter<F> {
    fn write(&mut self, rec: &TraceRecord) -> Result<()> {
        self.start();
        let mark = self.buf.len();
        match self.fmt.record(rec, &mut self.buf) {
            Ok(true) => {}
            Ok(false) => {
                self.buf.truncate(mark);
                self.skipped += 1;
            }
            Err(msg) => {
                self.buf.truncate(mark);
                return Err(TraceError::Unwritable {
                    file: self.name.clone(),
                    format: self.format,
                    time_ns: rec.time_ns,
                    msg,
                });
            }
        }
        if self.buf.len() >= 1 << 16 {
            self.drain()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.start();
        self.fmt.trailer(&mut self.buf);
        self.drain()?;
        self.out.flush().map_err(|e| TraceError::io(&self.name, e))
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }
}

/// Whether `line` is a header row starting with the column `name`, in any case (detection
/// takes `timestamp,offset,size` for Tencent's `Timestamp,Offset,Size`, so the reader must
/// skip it too).
pub(crate) fn is_header(line: &[u8], name: &[u8]) -> bool {
    line.get(..name.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(name))
}

/// Parses `R`/`W` style opcodes shared by several CSV formats.
pub(crate) fn read_or_write(s: &[u8]) -> Result<crate::record::Op, String> {
    use crate::record::Op;
    match s {
        b"R" | b"r" | b"Read" | b"read" | b"READ" => Ok(Op::Read),
        b"W" | b"w" | b"Write" | b"write" | b"WRITE" => Ok(Op::Write),
        _ => Err(format!(
            "operation must be R or W (Read or Write), found '{}'",
            crate::parse::show(s)
        )),
    }
}
