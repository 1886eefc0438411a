//! Tencent CBS CSV: `Timestamp,Offset,Size,IOType,VolumeID`.
//!
//! Timestamp is Unix seconds; Offset and Size are 512-byte sectors; IOType 0 is a read and
//! 1 a write. Rows are not sorted by time: use [`crate::Reorder`] or [`crate::sort_all`].

use crate::parse::{push_u64, Cursor};
use crate::record::{Op, TraceRecord};

const SECTOR: u64 = 512;

pub(crate) struct Parser;

impl crate::source::LineParser for Parser {
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String> {
        if line.is_empty() || crate::formats::is_header(line, b"Timestamp") {
            return Ok(None);
        }
        let mut f = Cursor::new(line, b',');
        let secs = f.u64("Timestamp")?;
        let off = f.u64("Offset")?;
        let size = f.u64("Size")?;
        let op = match f.field("IOType")? {
            b"0" => Op::Read,
            b"1" => Op::Write,
            other => {
                return Err(format!(
                    "IOType must be 0 (read) or 1 (write), found '{}'",
                    crate::parse::show(other)
                ))
            }
        };
        let vol = f.u32("VolumeID")?;
        if !f.at_end() {
            return Err("more than 5 fields".to_string());
        }
        Ok(Some(TraceRecord {
            time_ns: secs
                .checked_mul(1_000_000_000)
                .ok_or("Timestamp is too large")?,
            device: vol,
            op,
            offset_bytes: off.checked_mul(SECTOR).ok_or("Offset is too large")?,
            len_bytes: size.checked_mul(SECTOR).ok_or("Size is too large")?,
            completion_ns: None,
        }))
    }
}

pub(crate) struct Formatter;

impl crate::formats::Formatter for Formatter {
    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        let op = match r.op {
            Op::Read => b'0',
            Op::Write => b'1',
            Op::Trim | Op::Flush => return Ok(false),
        };
        push_u64(out, r.time_ns / 1_000_000_000);
        out.push(b',');
        push_u64(out, r.offset_bytes / SECTOR);
        out.push(b',');
        push_u64(out, r.len_bytes.div_ceil(SECTOR));
        out.push(b',');
        out.push(op);
        out.push(b',');
        push_u64(out, u64::from(r.device));
        out.push(b'\n');
        Ok(true)
    }
}
