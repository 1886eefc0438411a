//! DiskSim ASCII as MQSim reads it: `time dev lba size type`, whitespace-separated.
//!
//! MQSim takes the time as ns (classic DiskSim used ms); lba and size are 512-byte sectors;
//! type bit 0 set means read (1 = read, 0 = write). A fraction on the time is dropped.

use crate::parse::{push_u64, u32_field, u64_field, Words};
use crate::record::{Op, TraceRecord};

const SECTOR: u64 = 512;

pub(crate) struct Parser;

impl crate::source::LineParser for Parser {
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String> {
        let mut w = Words::new(line);
        let Some(t) = w.next() else {
            return Ok(None);
        };
        // MQSim writes integers; accept and drop a fraction of a ns.
        let whole = match memchr::memchr(b'.', t) {
            Some(i) if t[i + 1..].iter().all(u8::is_ascii_digit) => &t[..i],
            Some(_) => return Err(format!("time is not a number: '{}'", crate::parse::show(t))),
            None => t,
        };
        let time_ns = u64_field(whole, "time")?;
        let dev = u32_field(w.need("dev")?, "dev")?;
        let lba = u64_field(w.need("lba")?, "lba")?;
        let size = u64_field(w.need("size")?, "size")?;
        let ty = u64_field(w.need("type")?, "type")?;
        if w.next().is_some() {
            return Err("more than 5 fields".to_string());
        }
        Ok(Some(TraceRecord {
            time_ns,
            device: dev,
            op: if ty & 1 == 1 { Op::Read } else { Op::Write },
            offset_bytes: lba.checked_mul(SECTOR).ok_or("lba is too large")?,
            len_bytes: size.checked_mul(SECTOR).ok_or("size is too large")?,
            completion_ns: None,
        }))
    }
}

pub(crate) struct Formatter;

impl crate::formats::Formatter for Formatter {
    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        let ty = match r.op {
            Op::Read => b'1',
            Op::Write => b'0',
            Op::Trim | Op::Flush => return Ok(false),
        };
        push_u64(out, r.time_ns);
        out.push(b' ');
        push_u64(out, u64::from(r.device));
        out.push(b' ');
        push_u64(out, r.offset_bytes / SECTOR);
        out.push(b' ');
        push_u64(out, r.len_bytes.div_ceil(SECTOR));
        out.push(b' ');
        out.push(ty);
        out.push(b'\n');
        Ok(true)
    }
}
