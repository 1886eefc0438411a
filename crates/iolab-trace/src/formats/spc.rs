//! SPC / UMass CSV: `ASU,LBA,Size,Opcode,Timestamp[,optional...]`.
//!
//! LBA is in blocks of `block_bytes` (512 for the UMass traces), Size in bytes, Timestamp in
//! seconds from the trace start. `device` is the ASU. Extra fields are ignored, as the spec says.

use crate::formats::read_or_write;
use crate::parse::{decimal_ns, push_seconds, push_u64, u32_field, u64_field, Fields};
use crate::record::{Op, TraceRecord};

pub(crate) struct Parser {
    block: u64,
}

impl Parser {
    pub(crate) fn new(block: u64) -> Self {
        Parser {
            block: block.max(1),
        }
    }
}

impl crate::source::LineParser for Parser {
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String> {
        if line.is_empty() {
            return Ok(None);
        }
        let mut f = Fields::new(line, b',');
        let asu = u32_field(f.need("ASU")?, "ASU")?;
        let lba = u64_field(f.need("LBA")?, "LBA")?;
        let size = u64_field(f.need("Size")?, "Size")?;
        let op = read_or_write(f.need("Opcode")?)?;
        let time_ns = decimal_ns(f.need("Timestamp")?, 1_000_000_000, "Timestamp")?;
        let offset = lba.checked_mul(self.block).ok_or("LBA is too large")?;
        Ok(Some(TraceRecord {
            time_ns,
            device: asu,
            op,
            offset_bytes: offset,
            len_bytes: size,
            completion_ns: None,
        }))
    }
}

pub(crate) struct Formatter {
    block: u64,
}

impl Formatter {
    pub(crate) fn new(block: u64) -> Self {
        Formatter {
            block: block.max(1),
        }
    }
}

impl crate::formats::Formatter for Formatter {
    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        let op = match r.op {
            Op::Read => b'r',
            Op::Write => b'w',
            Op::Trim | Op::Flush => return Ok(false),
        };
        push_u64(out, u64::from(r.device));
        out.push(b',');
        push_u64(out, r.offset_bytes / self.block);
        out.push(b',');
        push_u64(out, r.len_bytes);
        out.push(b',');
        out.push(op);
        out.push(b',');
        push_seconds(out, r.time_ns);
        out.push(b'\n');
        Ok(true)
    }
}
