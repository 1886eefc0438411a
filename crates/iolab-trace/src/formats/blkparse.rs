//! blkparse default text output (`%D %2c %8s %5T.%9t %5p %2a %3d` then the payload).
//!
//! Only lines of the chosen event become records: Q (queued), D (issued; paired with C for
//! completion times) or C (completed). Lines that do not start with `major,minor` (the
//! column header, per-CPU summaries, the trailer) are skipped, as blkparse readers must.
//! Remap (A) lines are informational: the Q that follows already names the target device.
//! `device` is `major << 20 | minor`, like the kernel's `dev_t` in blktrace records.

use crate::format::Event;
use crate::formats::pairing::Pairer;
use crate::parse::{decimal_ns, push_padded, push_u64, show, u64_field, Words};
use crate::record::{Op, TraceRecord};

const SECTOR: u64 = 512;

pub(crate) struct Parser {
    event: Event,
    pairer: Pairer,
    /// Lines that began with a device (`maj,min`): blkparse's event lines.
    event_lines: u64,
    /// Lines read at all.
    lines: u64,
}

impl Parser {
    pub(crate) fn new(event: Event) -> Self {
        Parser {
            event,
            pairer: Pairer::default(),
            event_lines: 0,
            lines: 0,
        }
    }
}

/// `major,minor` → `dev_t`-style number; `None` when the word is not a device.
fn device(word: &[u8]) -> Option<Result<u32, String>> {
    let comma = memchr::memchr(b',', word)?;
    let (maj, min) = (&word[..comma], &word[comma + 1..]);
    if maj.is_empty() || !maj.iter().all(u8::is_ascii_digit) || !min.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    Some((|| {
        let maj = u64_field(maj, "major")?;
        let min = if min.is_empty() {
            0
        } else {
            u64_field(min, "minor")?
        };
        if maj >= 1 << 12 || min >= 1 << 20 {
            return Err(format!(
                "device {maj},{min} does not fit dev_t (12-bit major, 20-bit minor)"
            ));
        }
        Ok(((maj << 20) | min) as u32)
    })())
}

/// Decodes RWBS (`[F](D|W|R|N)[F][A][S][M]`) into an operation; `None` for requests that
/// move no data and flush nothing.
pub(crate) fn rwbs_op(rwbs: &[u8], len: u64) -> Result<Option<Op>, String> {
    let (preflush, rest) = match rwbs {
        [b'F', rest @ ..] if !rest.is_empty() => (true, rest),
        _ => (false, rwbs),
    };
    let op = match rest.first() {
        Some(b'D') => Some(Op::Trim),
        // A write that carries no data is a flush: `FWS 0 [0]` before one, and the
        // completions after one (`C WFS <sector> [0]`), which name no length.
        Some(b'W') if len == 0 => Some(Op::Flush),
        Some(b'W') => Some(Op::Write),
        Some(b'R') => Some(Op::Read),
        Some(b'N') if preflush => Some(Op::Flush),
        Some(b'N') => None,
        _ => return Err(format!("bad RWBS field '{}'", show(rwbs))),
    };
    if rest[1..]
        .iter()
        .any(|b| !matches!(b, b'F' | b'A' | b'S' | b'M' | b'E'))
    {
        return Err(format!("bad RWBS field '{}'", show(rwbs)));
    }
    Ok(op)
}

impl crate::source::LineParser for Parser {
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String> {
        let mut w = Words::new(line);
        let Some(first) = w.next() else {
            return Ok(None);
        };
        self.lines += 1;
        let Some(dev) = device(first) else {
            return Ok(None);
        };
        self.event_lines += 1;
        let dev = dev?;
        let _cpu = w.need("cpu")?;
        let _seq = w.need("sequence")?;
        let time = w.need("time")?;
        let _pid = w.need("pid")?;
        let action = w.need("action")?;
        let wanted = match (self.event, action) {
            (Event::Q, b"Q") | (Event::D, b"D") | (Event::C, b"C") => true,
            (Event::D, b"C") => false,
            _ => return Ok(None),
        };
        let time_ns = decimal_ns(time, 1_000_000_000, "time")?;
        let rwbs = w.need("RWBS")?;
        // Payload: `sector + n [cmd]`, or `[cmd]` for flushes, or `0 [0]` for a flush's C.
        let (sector, nblocks) = match w.next() {
            None => (0, 0),
            Some(t) if t.starts_with(b"[") => (0, 0),
            Some(t) => {
                let sector = u64_field(t, "sector")?;
                match w.next() {
                    Some(b"+") => (sector, u64_field(w.need("blocks")?, "blocks")?),
                    _ => (sector, 0),
                }
            }
        };
        let offset = sector.checked_mul(SECTOR).ok_or("sector is too large")?;
        let len = nblocks
            .checked_mul(SECTOR)
            .ok_or("block count is too large")?;
        let Some(op) = rwbs_op(rwbs, len)? else {
            return Ok(None);
        };
        if !wanted {
            self.pairer.complete(dev, offset, time_ns);
            return Ok(None);
        }
        let rec = TraceRecord {
            time_ns,
            device: dev,
            op,
            offset_bytes: offset,
            len_bytes: len,
            completion_ns: None,
        };
        if self.event == Event::D {
            self.pairer.issue(rec);
            Ok(None)
        } else {
            Ok(Some(rec))
        }
    }

    fn finish(&self) -> Result<(), String> {
        // Every other line may be skipped (headers, summaries), but a file none of whose
        // lines is an event is another format, not an empty trace.
        if self.lines > 0 && self.event_lines == 0 {
            return Err(format!(
                "none of its {} lines is a blkparse event (`maj,min cpu seq time pid action \
                 RWBS ...`); is it another format? Leave out --format to detect it",
                self.lines
            ));
        }
        Ok(())
    }

    fn take_ready(&mut self, eof: bool) -> Option<TraceRecord> {
        self.pairer.take_ready(eof)
    }
}

pub(crate) struct Formatter {
    event: Event,
    seq: u64,
}

impl Formatter {
    pub(crate) fn new(event: Event) -> Self {
        Formatter { event, seq: 0 }
    }

    fn line(&mut self, out: &mut Vec<u8>, r: &TraceRecord, action: u8, time_ns: u64) {
        self.seq += 1;
        let (maj, min) = (r.device >> 20, r.device & 0xfffff);
        let head = format!("{maj:3},{min:<3} {:2} {:8} ", 0, self.seq);
        out.extend_from_slice(head.as_bytes());
        let secs = format!("{:5}.", time_ns / 1_000_000_000);
        out.extend_from_slice(secs.as_bytes());
        push_padded(out, time_ns % 1_000_000_000, 9);
        let rwbs: &[u8] = match r.op {
            Op::Read => b"R",
            Op::Write => b"W",
            Op::Trim => b"D",
            Op::Flush => b"FN",
        };
        out.extend_from_slice(
            format!(
                " {:5}  {} {:>3} ",
                0,
                action as char,
                String::from_utf8_lossy(rwbs)
            )
            .as_bytes(),
        );
        if r.op == Op::Flush && r.len_bytes == 0 {
            if action == b'C' {
                // blkparse prints a flush's completion as sector 0.
                out.extend_from_slice(b"0 [0]\n");
            } else {
                out.extend_from_slice(b"[iolab]\n");
            }
            return;
        }
        // The sectors the request touches: a request not on sector bounds grows to them
        // (a 100-byte write is one sector, not zero), as the DiskSim writer rounds up.
        let first = r.offset_bytes / SECTOR;
        let end = r.end_bytes().div_ceil(SECTOR);
        push_u64(out, first);
        out.extend_from_slice(b" + ");
        push_u64(out, end - first);
        out.extend_from_slice(if action == b'C' {
            b" [0]\n"
        } else {
            b" [iolab]\n"
        });
    }
}

impl crate::formats::Formatter for Formatter {
    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        if r.device >> 20 >= 1 << 12 {
            return Err(format!("device {} does not fit dev_t", r.device));
        }
        match self.event {
            Event::Q => self.line(out, r, b'Q', r.time_ns),
            Event::C => self.line(out, r, b'C', r.time_ns),
            Event::D => {
                self.line(out, r, b'D', r.time_ns);
                if let Some(c) = r.completion_ns {
                    self.line(out, r, b'C', c);
                }
            }
        }
        Ok(true)
    }
}
