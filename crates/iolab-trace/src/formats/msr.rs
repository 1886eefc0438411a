//! MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! Timestamp and ResponseTime are Windows FILETIME units (100 ns); Offset and Size are bytes.
//! `device` is the disk number (the host name is not kept: one file is one host's disk).

use crate::formats::read_or_write;
use crate::parse::{push_u64, Cursor};
use crate::record::{Op, TraceRecord};

const TICK_NS: u64 = 100;

pub(crate) struct Parser;

impl crate::source::LineParser for Parser {
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String> {
        if line.is_empty() {
            return Ok(None);
        }
        let mut f = Cursor::new(line, b',');
        let ts = f.u64("Timestamp")?;
        let _host = f.field("Hostname")?;
        let disk = f.u32("DiskNumber")?;
        let op = read_or_write(f.field("Type")?)?;
        let offset = f.u64("Offset")?;
        let size = f.u64("Size")?;
        let rt = f.u64("ResponseTime")?;
        if !f.at_end() {
            return Err("more than 7 fields".to_string());
        }
        let time_ns = ts
            .checked_mul(TICK_NS)
            .ok_or("Timestamp is too large to express in ns")?;
        let completion = rt
            .checked_mul(TICK_NS)
            .and_then(|r| time_ns.checked_add(r))
            .ok_or("ResponseTime is too large")?;
        Ok(Some(TraceRecord {
            time_ns,
            device: disk,
            op,
            offset_bytes: offset,
            len_bytes: size,
            completion_ns: Some(completion),
        }))
    }
}

pub(crate) struct Formatter {
    host: Vec<u8>,
}

impl Formatter {
    pub(crate) fn new(host: &str) -> Self {
        // A comma in the host name would shift every column; replace it.
        Formatter {
            host: host
                .bytes()
                .map(|b| if b == b',' { b'_' } else { b })
                .collect(),
        }
    }
}

impl crate::formats::Formatter for Formatter {
    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        let kind: &[u8] = match r.op {
            Op::Read => b"Read",
            Op::Write => b"Write",
            Op::Trim | Op::Flush => return Ok(false),
        };
        push_u64(out, r.time_ns / TICK_NS);
        out.push(b',');
        out.extend_from_slice(&self.host);
        out.push(b',');
        push_u64(out, u64::from(r.device));
        out.push(b',');
        out.extend_from_slice(kind);
        out.push(b',');
        push_u64(out, r.offset_bytes);
        out.push(b',');
        push_u64(out, r.len_bytes);
        out.push(b',');
        // No completion known: MSR has no "unknown", so 0 is written (latency 0).
        push_u64(out, r.latency_ns().unwrap_or(0) / TICK_NS);
        out.push(b'\n');
        Ok(true)
    }
}
