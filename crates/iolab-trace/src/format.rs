//! Format names, options, auto-detection and the entry points that open readers and writers.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::compress::Compression;
use crate::error::{Result, TraceError};
use crate::formats;
use crate::record::TraceRecord;
use crate::source::RecordSource;

/// Every trace format this crate reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// blkparse default text output (choose the event with [`Event`]).
    Blkparse,
    /// blktrace binary `struct blk_io_trace` records, either byte order.
    Blktrace,
    /// MSR Cambridge CSV (FILETIME ticks, bytes).
    Msr,
    /// SPC / UMass CSV (ASU, LBA, size, opcode, seconds).
    Spc,
    /// fio iolog version 2.
    Fio2,
    /// fio iolog version 3 (µs timestamps).
    Fio3,
    /// Alibaba block trace CSV (device, opcode, bytes, µs).
    Alibaba,
    /// Tencent CBS CSV (seconds, sectors, 0/1, volume).
    Tencent,
    /// SYSTOR'17 VDI CSV with header.
    Systor,
    /// Classic DiskSim ASCII (ms with a fraction, device, sectors, 1 = read).
    Disksim,
    /// DiskSim ASCII as MQSim reads it: the same columns with the time in ns.
    Mqsim,
}

/// All formats, in the order help texts list them.
pub const ALL_FORMATS: [Format; 11] = [
    Format::Blkparse,
    Format::Blktrace,
    Format::Msr,
    Format::Spc,
    Format::Fio2,
    Format::Fio3,
    Format::Alibaba,
    Format::Tencent,
    Format::Systor,
    Format::Disksim,
    Format::Mqsim,
];

impl Format {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Blkparse => "blkparse",
            Format::Blktrace => "blktrace",
            Format::Msr => "msr",
            Format::Spc => "spc",
            Format::Fio2 => "fio2",
            Format::Fio3 => "fio3",
            Format::Alibaba => "alibaba",
            Format::Tencent => "tencent",
            Format::Systor => "systor",
            Format::Disksim => "disksim",
            Format::Mqsim => "mqsim",
        }
    }

    /// Whether the format's times are on a calendar clock (MSR's FILETIME since 1601, Unix
    /// time for Alibaba, Tencent and SYSTOR) rather than counted from the trace's start
    /// (blkparse, blktrace, SPC, fio's iologs, DiskSim, MQSim).
    pub fn calendar_clock(self) -> bool {
        matches!(
            self,
            Format::Msr | Format::Alibaba | Format::Tencent | Format::Systor
        )
    }

    /// Whether the format numbers devices by their `dev_t` (`major << 20 | minor`), as blkparse
    /// and blktrace do, rather than by a small index (a disk number, ASU, volume or LUN).
    pub fn dev_t_devices(self) -> bool {
        matches!(self, Format::Blkparse | Format::Blktrace)
    }

    /// All names, comma-separated, for error messages.
    pub fn names() -> String {
        ALL_FORMATS.map(Format::name).join(", ")
    }

    /// Parses a command-line name (a few aliases are accepted).
    pub fn from_name(s: &str) -> Result<Format> {
        let lower = s.to_ascii_lowercase();
        let f = match lower.as_str() {
            "umass" => Format::Spc,
            "fio" | "fio-v3" | "fiov3" | "iolog" => Format::Fio3,
            "fio-v2" | "fiov2" => Format::Fio2,
            "cbs" => Format::Tencent,
            "blktrace-bin" | "bin" => Format::Blktrace,
            other => match ALL_FORMATS.iter().find(|f| f.name() == other) {
                Some(f) => *f,
                None => return Err(TraceError::UnknownFormatName(s.to_string())),
            },
        };
        Ok(f)
    }

    /// True when records come with completion times (so queue depth can be derived);
    /// for blkparse/blktrace only with [`Event::D`].
    pub fn has_completions(self) -> bool {
        matches!(
            self,
            Format::Msr | Format::Systor | Format::Blkparse | Format::Blktrace
        )
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which blktrace event becomes a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Event {
    /// Queued (what fio replays): requests as the file system submitted them, before merging.
    Q,
    /// Issued to the driver (device-level requests, after merging); paired with their
    /// completions so records carry `completion_ns`.
    #[default]
    D,
    /// Completed; `time_ns` is the completion time and no issue time is known.
    C,
}

impl Event {
    /// Parses `Q`, `D` or `C` (either case).
    pub fn from_name(s: &str) -> Option<Event> {
        match s {
            "Q" | "q" => Some(Event::Q),
            "D" | "d" => Some(Event::D),
            "C" | "c" => Some(Event::C),
            _ => None,
        }
    }
}

/// How to read a trace.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// The format; `None` detects it from the first bytes.
    pub format: Option<Format>,
    /// Count bad lines and go on instead of stopping at the first.
    pub skip_bad: bool,
    /// blkparse/blktrace: which event becomes a record.
    pub event: Event,
    /// SPC: bytes per LBA (the UMass traces use 512).
    pub spc_block_bytes: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            skip_bad: false,
            event: Event::D,
            spc_block_bytes: 512,
        }
    }
}

/// How to write a trace.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// blkparse/blktrace: which event the issue record is written as (D also writes completions).
    pub event: Event,
    /// blktrace: write big-endian records (as a big-endian machine would).
    pub big_endian: bool,
    /// MSR: host name column.
    pub hostname: String,
    /// SPC: bytes per LBA.
    pub spc_block_bytes: u64,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            event: Event::D,
            big_endian: false,
            hostname: "iolab".to_string(),
            spc_block_bytes: 512,
        }
    }
}

/// A streaming trace reader: an iterator of records whose memory does not grow with the
/// trace (only with the requests in flight, for formats that pair issue and completion).
pub struct TraceReader {
    inner: Box<dyn RecordSource>,
    format: Format,
    compression: Option<Compression>,
    /// File name for messages.
    name: String,
    /// Records handed out so far.
    records: u64,
}

impl TraceReader {
    /// The format being read.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The compression undone on the way in, if the input was compressed.
    pub fn compression(&self) -> Option<Compression> {
        self.compression
    }

    /// The 1-based line last read (for blktrace's binary records: the record), so a caller
    /// checking a record can name where it is. For formats that pair an issue with its
    /// completion (blkparse and blktrace with event D), a record handed out when its
    /// completion is read gives the completion's line.
    pub fn position(&self) -> u64 {
        self.inner.position()
    }

    /// Bad lines counted and skipped so far (only with `skip_bad`).
    pub fn bad_records(&self) -> u64 {
        self.inner.bad_records()
    }

    /// The next record, `Ok(None)` at the end. With `skip_bad`, an input whose every line was
    /// bad ends in [`TraceError::NothingValid`], not as an empty trace.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>> {
        match self.inner.next_record()? {
            Some(r) => {
                self.records += 1;
                Ok(Some(r))
            }
            None if self.records == 0 && self.inner.bad_records() > 0 => {
                Err(TraceError::NothingValid {
                    file: self.name.clone(),
                    format: self.format.name(),
                    bad: self.inner.bad_records(),
                })
            }
            None => Ok(None),
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// Opens a trace file (detecting the format unless `opts.format` names it).
pub fn open_path(path: &Path, opts: &ReadOptions) -> Result<TraceReader> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| TraceError::io(&name, e))?;
    open_reader(&name, file, opts)
}

/// Reads a trace from any byte stream; `name` is used in error messages.
pub fn open_reader<R: Read + Send + 'static>(
    name: &str,
    input: R,
    opts: &ReadOptions,
) -> Result<TraceReader> {
    // A compressed trace is decompressed as it streams in, whatever the format.
    let (compression, input) =
        crate::compress::decompressing(input).map_err(|e| TraceError::io(name, e))?;
    let (format, input): (Format, Box<dyn Read + Send>) = match opts.format {
        Some(f) => (f, input),
        None => {
            let mut input = input;
            let head = peek(&mut input).map_err(|e| TraceError::io(name, e))?;
            let format = detect(&head).map_err(|why| {
                let why = match crate::compress::unsupported_container(&head) {
                    Some(container) => format!("it is {container}"),
                    None => match compression {
                        Some(c) => format!("after undoing its {} compression, {why}", c.name()),
                        None => why,
                    },
                };
                TraceError::UnknownFormat {
                    file: name.to_string(),
                    why,
                    known: Format::names(),
                }
            })?;
            // What detection read is read again, then the rest.
            (format, Box::new(std::io::Cursor::new(head).chain(input)))
        }
    };
    let input = BufReader::with_capacity(1 << 16, input);
    let inner = formats::reader(format, name, input, opts);
    Ok(TraceReader {
        inner,
        format,
        compression,
        name: name.to_string(),
        records: 0,
    })
}

/// Reads from an in-memory buffer (tests, fuzzing).
pub fn open_bytes(name: &str, data: Vec<u8>, opts: &ReadOptions) -> Result<TraceReader> {
    open_reader(name, std::io::Cursor::new(data), opts)
}

/// How much detection reads at most before deciding on what it has.
const PEEK_MAX: usize = 1 << 16;

/// Reads the first bytes, as many as detection needs: on until the line that decides is
/// whole (the first that is not blank or a comment other than blkparse's `#Maj`), or a
/// blktrace magic number is in, or the input ends, or [`PEEK_MAX`] bytes. A pipe may hand over
/// its first line in pieces (a writer that flushes mid-line); one read could cut it short.
fn peek<R: Read>(input: &mut R) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    while head.len() < PEEK_MAX && !enough_to_detect(&head) {
        let want = chunk.len().min(PEEK_MAX - head.len());
        match input.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(head)
}

/// Whether `head` holds what [`detect`] decides on (see [`peek`]).
fn enough_to_detect(head: &[u8]) -> bool {
    if head.len() >= 4 && detect(&head[..4]) == Ok(Format::Blktrace) {
        return true;
    }
    let head = head.strip_prefix(crate::lines::BOM).unwrap_or(head);
    let Some(last_newline) = head.iter().rposition(|&b| b == b'\n') else {
        return false;
    };
    head[..last_newline].split(|&b| b == b'\n').any(|line| {
        let line = line.trim_ascii();
        !line.is_empty() && (!line.starts_with(b"#") || line.starts_with(b"#Maj"))
    })
}

/// Guesses the format from the first bytes of a trace.
///
/// The rules look at the first non-empty, non-comment line and count its fields, so a
/// header or the first record decides; ambiguous shapes are refused with the reason.
pub fn detect(head: &[u8]) -> std::result::Result<Format, String> {
    if head.len() >= 4 {
        let m = [head[0], head[1], head[2], head[3]];
        let le = u32::from_le_bytes(m);
        let be = u32::from_be_bytes(m);
        if (le & 0xffff_ff00) == formats::blktrace::MAGIC_BASE
            || (be & 0xffff_ff00) == formats::blktrace::MAGIC_BASE
        {
            return Ok(Format::Blktrace);
        }
    }
    // A UTF-8 byte-order mark is not part of the first line (the readers skip it too).
    let head = head.strip_prefix(crate::lines::BOM).unwrap_or(head);
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // The buffer may end inside a multi-byte character; use the valid prefix.
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return Err("the input is empty".to_string());
    };
    if first.starts_with("fio version 2 iolog") {
        return Ok(Format::Fio2);
    }
    if first.starts_with("fio version 3 iolog") {
        return Ok(Format::Fio3);
    }
    if first.starts_with("#Maj") || looks_like_blkparse(first) {
        return Ok(Format::Blkparse);
    }
    let lower = first.to_ascii_lowercase();
    if lower.starts_with("timestamp,response,iotype") {
        return Ok(Format::Systor);
    }
    if lower.starts_with("device_id,") {
        return Ok(Format::Alibaba);
    }
    if lower.starts_with("timestamp,offset,size") {
        return Ok(Format::Tencent);
    }
    // Detection on a data line: look at field shapes.
    let line = if first.starts_with('#') {
        lines.next().unwrap_or(first)
    } else {
        first
    };
    let csv: Vec<&str> = line.split(',').map(str::trim).collect();
    let int = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let dec = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.') && s.contains('.')
    };
    if csv.len() == 7 && matches!(csv[3].to_ascii_lowercase().as_str(), "read" | "write") {
        return Ok(Format::Msr);
    }
    if csv.len() == 6 && dec(csv[0]) && matches!(csv[2], "R" | "W" | "r" | "w" | "Read" | "Write") {
        return Ok(Format::Systor);
    }
    if csv.len() == 5 && int(csv[0]) && matches!(csv[1], "R" | "W") && int(csv[4]) {
        return Ok(Format::Alibaba);
    }
    if csv.len() == 5 && csv.iter().all(|f| int(f)) && matches!(csv[3], "0" | "1") {
        return Ok(Format::Tencent);
    }
    if csv.len() >= 5
        && int(csv[0])
        && int(csv[1])
        && matches!(csv[3], "r" | "R" | "w" | "W")
        && (dec(csv[4]) || int(csv[4]))
    {
        return Ok(Format::Spc);
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() == 5
        && words
            .iter()
            .all(|w| w.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    {
        // The same columns carry ms in classic DiskSim and ns in MQSim: a million times apart,
        // and nothing in the file says which. Guessing would mis-time every request.
        return Err(format!(
            "the first line '{}' is DiskSim ASCII, whose time is in ms for DiskSim and in ns \
             for MQSim; pass --format disksim (ms) or --format mqsim (ns)",
            shorten(line)
        ));
    }
    Err(format!(
        "the first line '{}' matches none of the known shapes",
        shorten(line)
    ))
}

fn looks_like_blkparse(line: &str) -> bool {
    let mut w = line.split_whitespace();
    let dev_ok = w.next().is_some_and(|d| {
        d.split_once(',').is_some_and(|(a, b)| {
            !a.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        })
    });
    let cpu_ok = w
        .next()
        .is_some_and(|c| c.bytes().all(|b| b.is_ascii_digit()));
    let _seq = w.next();
    let time_ok = w.next().is_some_and(|t| t.contains('.'));
    dev_ok && cpu_ok && time_ok
}

/// The start of a line for a message, its control bytes shown as escapes.
fn shorten(s: &str) -> String {
    let start: String = s.chars().take(60).collect();
    iolab_core::text::escape_control(&start).into_owned()
}

/// Writes records in one format. Records a format cannot express (a trim in MSR) are
/// counted in [`RecordWriter::skipped`] rather than failing the whole conversion.
pub trait RecordWriter {
    /// Writes one record.
    fn write(&mut self, rec: &TraceRecord) -> Result<()>;
    /// Writes any trailer and flushes.
    fn finish(&mut self) -> Result<()>;
    /// Records that the format cannot express and that were left out.
    fn skipped(&self) -> u64;
}

/// Creates a writer for `format` over `out`; `name` is used in error messages.
pub fn writer<W: Write + 'static>(
    format: Format,
    name: &str,
    out: W,
    opts: &WriteOptions,
) -> Box<dyn RecordWriter> {
    formats::writer(
        format,
        name,
        Box::new(std::io::BufWriter::with_capacity(1 << 20, out)),
        opts,
    )
}

/// Writes all `records` to an in-memory buffer (tests and small conversions).
pub fn write_to_vec(
    format: Format,
    records: &[TraceRecord],
    opts: &WriteOptions,
) -> Result<Vec<u8>> {
    let shared = SharedVec::default();
    {
        let mut w = writer(format, "<memory>", shared.clone(), opts);
        for r in records {
            w.write(r)?;
        }
        w.finish()?;
    }
    Ok(shared.take())
}

/// A `Vec<u8>` that a boxed writer can own while the caller keeps a handle to it.
#[derive(Clone, Default)]
struct SharedVec(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl SharedVec {
    fn take(&self) -> Vec<u8> {
        match self.0.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        }
    }
}

impl Write for SharedVec {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.lock() {
            Ok(mut g) => g.extend_from_slice(buf),
            Err(p) => p.into_inner().extend_from_slice(buf),
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
