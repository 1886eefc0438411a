//! Alibaba block trace CSV (2020): `device_id,opcode,offset,length,timestamp`.
//!
//! Offsets and lengths are bytes; the timestamp is µs since the epoch. A header row, if
//! present, is skipped.

use crate::formats::read_or_write;
use crate::parse::{push_u64, Cursor};
use crate::record::{Op, TraceRecord};

pub(crate) struct Parser;

impl crate::source::LineParser for Parser {
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String> {
        if line.is_empty() || crate::formats::is_header(line, b"device_id") {
            return Ok(None);
        }
        let mut f = Cursor::new(line, b',');
        let device = f.u32("device_id")?;
        let op = read_or_write(f.field("opcode")?)?;
        let offset = f.u64("offset")?;
        let len = f.u64("length")?;
        let us = f.u64("timestamp")?;
        if !f.at_end() {
            return Err("more than 5 fields".to_string());
        }
        Ok(Some(TraceRecord {
            time_ns: us.checked_mul(1000).ok_or("timestamp is too large")?,
            device,
            op,
            offset_bytes: offset,
            len_bytes: len,
            completion_ns: None,
        }))
    }
}

pub(crate) struct Formatter;

impl crate::formats::Formatter for Formatter {
    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        let op = match r.op {
            Op::Read => b'R',
            Op::Write => b'W',
            Op::Trim | Op::Flush => return Ok(false),
        };
        push_u64(out, u64::from(r.device));
        out.push(b',');
        out.push(op);
        out.push(b',');
        push_u64(out, r.offset_bytes);
        out.push(b',');
        push_u64(out, r.len_bytes);
        out.push(b',');
        push_u64(out, r.time_ns / 1000);
        out.push(b'\n');
        Ok(true)
    }
}
