//! blktrace binary: a stream of 48-byte `struct blk_io_trace` headers, each followed by
//! `pdu_len` payload bytes, in the byte order of the machine that traced (detected from
//! the magic of the first record).
//!
//! Notify records (process names), remaps (whose payload is big-endian) and driver data are
//! skipped: the queue event on the target device already carries the remapped sector.
//! `device` is the raw `dev_t` (`major << 20 | minor`) and `time_ns` the kernel clock.

use std::io::{self, Read};

use crate::error::{Result, TraceError};
use crate::format::Event;
use crate::formats::pairing::Pairer;
use crate::record::{Op, TraceRecord};
use crate::source::RecordSource;

/// Magic with the version byte masked out.
pub(crate) const MAGIC_BASE: u32 = 0x6561_7400;
/// The only record version in use.
const VERSION: u32 = 0x07;
const HEADER: usize = 48;
const SECTOR: u64 = 512;

const TA_QUEUE: u32 = 1;
const TA_ISSUE: u32 = 7;
const TA_COMPLETE: u32 = 8;

const TC_READ: u32 = 1 << 16;
const TC_WRITE: u32 = 2 << 16;
const TC_FLUSH: u32 = 4 << 16;
const TC_QUEUE: u32 = 0x10 << 16;
const TC_ISSUE: u32 = 0x40 << 16;
const TC_COMPLETE: u32 = 0x80 << 16;
const TC_FS: u32 = 0x100 << 16;
const TC_NOTIFY: u32 = 0x400 << 16;
const TC_DISCARD: u32 = 0x2000 << 16;
const TC_DRV_DATA: u32 = 0x4000 << 16;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Order {
    Little,
    Big,
}

impl Order {
    fn u16(self, b: &[u8]) -> u16 {
        let a = [b[0], b[1]];
        match self {
            Order::Little => u16::from_le_bytes(a),
            Order::Big => u16::from_be_bytes(a),
        }
    }
    fn u32(self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        match self {
            Order::Little => u32::from_le_bytes(a),
            Order::Big => u32::from_be_bytes(a),
        }
    }
    fn u64(self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        match self {
            Order::Little => u64::from_le_bytes(a),
            Order::Big => u64::from_be_bytes(a),
        }
    }
    fn magic_of(b: &[u8]) -> Option<Order> {
        let ok = |m: u32| (m & 0xffff_ff00) == MAGIC_BASE && (m & 0xff) == VERSION;
        if ok(Order::Little.u32(b)) {
            Some(Order::Little)
        } else if ok(Order::Big.u32(b)) {
            Some(Order::Big)
        } else {
            None
        }
    }
}

/// Streaming reader of binary blktrace records.
pub(crate) struct Reader<R> {
    input: R,
    name: String,
    event: Event,
    skip_bad: bool,
    order: Option<Order>,
    pairer: Pairer,
    record_no: u64,
    offset: u64,
    bad: u64,
    done: bool,
    scratch: Vec<u8>,
}

impl<R: Read + Send> Reader<R> {
    pub(crate) fn new(input: R, name: &str, event: Event, skip_bad: bool) -> Self {
        Reader {
            input,
            name: name.to_string(),
            event,
            skip_bad,
            order: None,
            pairer: Pairer::default(),
            record_no: 0,
            offset: 0,
            bad: 0,
            done: false,
            scratch: Vec::new(),
        }
    }

    fn bad(&mut self, msg: String) -> Result<()> {
        if self.skip_bad {
            self.bad += 1;
            Ok(())
        } else {
            Err(TraceError::BadLine {
                file: self.name.clone(),
                line: self.record_no,
                format: "blktrace",
                msg,
            })
        }
    }

    /// Reads up to `buf.len()` bytes; returns how many (short only at end of input).
    fn fill(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.offset += got as u64;
        Ok(got)
    }

    /// After a bad magic: finds the next magic of the known byte order and leaves a whole
    /// header starting with it in `hdr`; `false` at end of input.
    fn resync(&mut self, hdr: &mut [u8; HEADER], order: Order) -> io::Result<bool> {
        let mut from = 1;
        loop {
            if let Some(p) =
                (from..=HEADER - 4).find(|&p| Order::magic_of(&hdr[p..p + 4]) == Some(order))
            {
                hdr.copy_within(p.., 0);
                let got = self.fill(&mut hdr[HEADER - p..])?;
                return Ok(got == p);
            }
            hdr.copy_within(HEADER - 3.., 0);
            if self.fill(&mut hdr[3..])? < HEADER - 3 {
                return Ok(false);
            }
            from = 0;
        }
    }

    /// Reads one record; `Ok(None)` at the end.
    fn read_one(&mut self) -> Result<Step> {
        let mut hdr = [0u8; HEADER];
        let got = self
            .fill(&mut hdr)
            .map_err(|e| TraceError::io(&self.name, e))?;
        if got == 0 {
            return Ok(Step::End);
        }
        self.record_no += 1;
        if got < HEADER {
            self.bad(format!(
                "truncated record: {got} of {HEADER} bytes at the end"
            ))?;
            return Ok(Step::End);
        }
        let order = match (Order::magic_of(&hdr[..4]), self.order) {
            (Some(o), None) => {
                self.order = Some(o);
                o
            }
            (Some(o), Some(known)) if o == known => o,
            (_, known) => {
                let at = self.offset - HEADER as u64;
                self.bad(format!(
                    "bad magic {:#010x} at byte {at} (expected 0x65617407)",
                    u32::from_le_bytes([hdr[0], hdr[1], hdr[2], hdr[3]])
                ))?;
                // Without a first good record the byte order is unknown: give up.
                let Some(k) = known else {
                    return Ok(Step::End);
                };
                if !self
                    .resync(&mut hdr, k)
                    .map_err(|e| TraceError::io(&self.name, e))?
                {
                    return Ok(Step::End);
                }
                k
            }
        };
        let time = order.u64(&hdr[8..]);
        let sector = order.u64(&hdr[16..]);
        let bytes = order.u32(&hdr[24..]);
        let action = order.u32(&hdr[28..]);
        let device = order.u32(&hdr[36..]);
        let pdu_len = order.u16(&hdr[46..]) as usize;
        if pdu_len > 0 {
            self.scratch.resize(pdu_len, 0);
            let mut pdu = std::mem::take(&mut self.scratch);
            let got = self
                .fill(&mut pdu)
                .map_err(|e| TraceError::io(&self.name, e))?;
            self.scratch = pdu;
            if got < pdu_len {
                self.bad(format!(
                    "truncated payload: {got} of {pdu_len} bytes at the end"
                ))?;
                return Ok(Step::End);
            }
        }
        if action & (TC_NOTIFY | TC_DRV_DATA) != 0 {
            return Ok(Step::Skip);
        }
        let act = action & 0xffff;
        let len = u64::from(bytes);
        let op = if action & TC_DISCARD != 0 {
            Op::Trim
        } else if action & TC_WRITE != 0 {
            if action & TC_FLUSH != 0 && len == 0 {
                Op::Flush
            } else {
                Op::Write
            }
        } else if len > 0 {
            Op::Read
        } else if action & TC_FLUSH != 0 {
            Op::Flush
        } else {
            return Ok(Step::Skip);
        };
        let offset = sector.saturating_mul(SECTOR);
        let wanted = match self.event {
            Event::Q => act == TA_QUEUE,
            Event::D => act == TA_ISSUE,
            Event::C => act == TA_COMPLETE,
        };
        if self.event == Event::D && act == TA_COMPLETE {
            self.pairer.complete(device, offset, time);
            return Ok(Step::Skip);
        }
        if !wanted {
            return Ok(Step::Skip);
        }
        Ok(Step::Rec(TraceRecord {
            time_ns: time,
            device,
            op,
            offset_bytes: offset,
            len_bytes: len,
            completion_ns: None,
        }))
    }
}

/// What reading one binary record gave.
enum Step {
    End,
    Skip,
    Rec(TraceRecord),
}

impl<R: Read + Send> RecordSource for Reader<R> {
    fn next_record(&mut self) -> Result<Option<TraceRecord>> {
        loop {
            if let Some(r) = self.pairer.take_ready(self.done) {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            match self.read_one()? {
                Step::End => self.done = true,
                Step::Skip => {}
                Step::Rec(r) => {
                    if let Err(msg) = r.check_len() {
                        self.bad(msg)?;
                    } else if self.event == Event::D {
                        self.pairer.issue(r);
                    } else {
                        return Ok(Some(r));
                    }
                }
            }
        }
    }

    fn bad_records(&self) -> u64 {
        self.bad
    }

    fn position(&self) -> u64 {
        self.record_no
    }
}

/// Writes `struct blk_io_trace` records (no payload).
pub(crate) struct Formatter {
    event: Event,
    order: Order,
    seq: u32,
}

impl Formatter {
    pub(crate) fn new(event: Event, big_endian: bool) -> Self {
        Formatter {
            event,
            order: if big_endian {
                Order::Big
            } else {
                Order::Little
            },
            seq: 0,
        }
    }

    fn put(
        &mut self,
        out: &mut Vec<u8>,
        r: &TraceRecord,
        act: u32,
        time: u64,
    ) -> Result<(), String> {
        let bytes = u32::try_from(r.len_bytes)
            .map_err(|_| format!("length {} does not fit the 32-bit bytes field", r.len_bytes))?;
        let cat_act = match act {
            TA_QUEUE => TC_QUEUE,
            TA_ISSUE => TC_ISSUE,
            _ => TC_COMPLETE,
        };
        let cat_op = match r.op {
            Op::Read => TC_READ,
            Op::Write => TC_WRITE,
            Op::Trim => TC_DISCARD | TC_WRITE,
            Op::Flush => TC_FLUSH | TC_WRITE,
        };
        self.seq = self.seq.wrapping_add(1);
        let action = act | cat_act | cat_op | TC_FS;
        let o = self.order;
        let put32 = |out: &mut Vec<u8>, v: u32| match o {
            Order::Little => out.extend_from_slice(&v.to_le_bytes()),
            Order::Big => out.extend_from_slice(&v.to_be_bytes()),
        };
        put32(out, MAGIC_BASE | VERSION);
        put32(out, self.seq);
        let put64 = |out: &mut Vec<u8>, v: u64| match o {
            Order::Little => out.extend_from_slice(&v.to_le_bytes()),
            Order::Big => out.extend_from_slice(&v.to_be_bytes()),
        };
        put64(out, time);
        put64(out, r.offset_bytes / SECTOR);
        put32(out, bytes);
        put32(out, action);
        put32(out, 0); // pid
        put32(out, r.device);
        put32(out, 0); // cpu
        out.extend_from_slice(&[0, 0, 0, 0]); // error, pdu_len
        Ok(())
    }
}

impl crate::formats::Formatter for Formatter {
    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        match self.event {
            Event::Q => self.put(out, r, TA_QUEUE, r.time_ns)?,
            Event::C => self.put(out, r, TA_COMPLETE, r.time_ns)?,
            Event::D => {
                self.put(out, r, TA_ISSUE, r.time_ns)?;
                if let Some(c) = r.completion_ns {
                    self.put(out, r, TA_COMPLETE, c)?;
                }
            }
        }
        Ok(true)
    }
}
