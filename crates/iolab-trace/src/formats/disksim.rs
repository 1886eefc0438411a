//! DiskSim ASCII: `time dev lba size type`, whitespace-separated, in two time units.
//!
//! Classic DiskSim takes the time in ms with a fraction (`0.345000`); MQSim reads the same
//! columns with the time in ns (integers). Nothing in a file tells them apart, so the unit is
//! the format's name (`disksim` or `mqsim`), never a guess. lba and size are 512-byte sectors;
//! type bit 0 set means read (1 = read, 0 = write).

use crate::parse::{push_u64, u32_field, u64_field, Words};
use crate::record::{Op, TraceRecord};

const SECTOR: u64 = 512;

/// The unit of the time column.
#[derive(Clone, Copy)]
pub(crate) enum Unit {
    /// Milliseconds with up to 6 decimals (classic DiskSim); finer digits are dropped.
    Ms,
    /// Nanoseconds (MQSim); a fraction is dropped.
    Ns,
}

pub(crate) struct Parser {
    unit: Unit,
}

impl Parser {
    pub(crate) fn new(unit: Unit) -> Self {
        Parser { unit }
    }
}

/// `whole.fraction` in `unit` as ns; digits finer than a ns are dropped.
fn time_ns(t: &[u8], unit: Unit) -> Result<u64, String> {
    let (whole, frac) = match memchr::memchr(b'.', t) {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, &b""[..]),
    };
    if !frac.iter().all(u8::is_ascii_digit) || (whole.is_empty() && frac.is_empty()) {
        return Err(format!("time is not a number: '{}'", crate::parse::show(t)));
    }
    let whole = if whole.is_empty() {
        0
    } else {
        u64_field(whole, "time")?
    };
    match unit {
        Unit::Ns => Ok(whole),
        Unit::Ms => {
            // Up to 6 decimals of a ms are whole ns.
            let mut frac_ns = 0u64;
            for i in 0..6 {
                frac_ns = frac_ns * 10 + frac.get(i).map_or(0, |d| u64::from(d - b'0'));
            }
            whole
                .checked_mul(1_000_000)
                .and_then(|ns| ns.checked_add(frac_ns))
                .ok_or_else(|| "time is too large (over 584 years in ms)".to_string())
        }
    }
}

impl crate::source::LineParser for Parser {
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String> {
        let mut w = Words::new(line);
        let Some(t) = w.next() else {
            return Ok(None);
        };
        let time_ns = time_ns(t, self.unit)?;
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

pub(crate) struct Formatter {
    unit: Unit,
}

impl Formatter {
    pub(crate) fn new(unit: Unit) -> Self {
        Formatter { unit }
    }
}

impl crate::formats::Formatter for Formatter {
    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        let ty = match r.op {
            Op::Read => b'1',
            Op::Write => b'0',
            Op::Trim | Op::Flush => return Ok(false),
        };
        match self.unit {
            Unit::Ns => push_u64(out, r.time_ns),
            Unit::Ms => {
                // ms with 6 decimals: every ns kept, as DiskSim's own traces print times.
                push_u64(out, r.time_ns / 1_000_000);
                out.push(b'.');
                let frac = r.time_ns % 1_000_000;
                out.extend_from_slice(format!("{frac:06}").as_bytes());
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_column_is_read_in_the_formats_unit() {
        assert_eq!(time_ns(b"12.345678", Unit::Ms), Ok(12_345_678));
        assert_eq!(time_ns(b"12.3456789", Unit::Ms), Ok(12_345_678));
        assert_eq!(time_ns(b"0.5", Unit::Ms), Ok(500_000));
        assert_eq!(time_ns(b"7", Unit::Ms), Ok(7_000_000));
        assert_eq!(time_ns(b".25", Unit::Ms), Ok(250_000));
        assert_eq!(time_ns(b"12345", Unit::Ns), Ok(12345));
        assert_eq!(time_ns(b"12345.9", Unit::Ns), Ok(12345));
        assert!(time_ns(b".", Unit::Ms).is_err());
        assert!(time_ns(b"1.2.3", Unit::Ms).is_err());
        assert!(time_ns(b"99999999999999999", Unit::Ms).is_err());
    }
}
