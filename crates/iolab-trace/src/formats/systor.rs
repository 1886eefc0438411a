//! SYSTOR'17 VDI CSV: header `Timestamp,Response,IOType,LUN,Offset,Size`.
//!
//! Timestamp is epoch seconds with a fraction, Response is seconds, Offset and Size are
//! bytes; `device` is the LUN. Rows are not sorted by time.

use crate::formats::read_or_write;
use crate::parse::{decimal_ns, push_seconds, push_u64, u32_field, u64_field, Fields};
use crate::record::{Op, TraceRecord};

const HEADER: &[u8] = b"Timestamp,Response,IOType,LUN,Offset,Size";

pub(crate) struct Parser;

impl crate::source::LineParser for Parser {
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String> {
        if line.is_empty() || crate::formats::is_header(line, b"Timestamp") {
            return Ok(None);
        }
        let mut f = Fields::new(line, b',');
        let time_ns = decimal_ns(f.need("Timestamp")?, 1_000_000_000, "Timestamp")?;
        let resp = decimal_ns(f.need("Response")?, 1_000_000_000, "Response")?;
        let op = read_or_write(f.need("IOType")?)?;
        let lun = u32_field(f.need("LUN")?, "LUN")?;
        let offset = u64_field(f.need("Offset")?, "Offset")?;
        let size = u64_field(f.need("Size")?, "Size")?;
        if f.next().is_some() {
            return Err("more than 6 fields".to_string());
        }
        Ok(Some(TraceRecord {
            time_ns,
            device: lun,
            op,
            offset_bytes: offset,
            len_bytes: size,
            completion_ns: Some(time_ns.checked_add(resp).ok_or("Response is too large")?),
        }))
    }
}

pub(crate) struct Formatter;

impl crate::formats::Formatter for Formatter {
    fn header(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(HEADER);
        out.push(b'\n');
    }

    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        let op = match r.op {
            Op::Read => b'R',
            Op::Write => b'W',
            Op::Trim | Op::Flush => return Ok(false),
        };
        push_seconds(out, r.time_ns);
        out.push(b',');
        push_seconds(out, r.latency_ns().unwrap_or(0));
        out.push(b',');
        out.push(op);
        out.push(b',');
        push_u64(out, u64::from(r.device));
        out.push(b',');
        push_u64(out, r.offset_bytes);
        out.push(b',');
        push_u64(out, r.len_bytes);
        out.push(b'\n');
        Ok(true)
    }
}
