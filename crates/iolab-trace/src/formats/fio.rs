//! fio iolog, versions 2 and 3.
//!
//! v2: `fio version 2 iolog`, then `file action [offset length]`; time only advances
//! through `file wait <µs> 0` lines (read as cumulative; fio ignores waits under 100 µs
//! at replay, this reader keeps them). v3: every line starts with a µs timestamp and
//! `wait` is refused. `device` numbers files in the order they first appear.

use crate::parse::{push_u64, show, u64_field, Words};
use crate::record::{Op, TraceRecord};

pub(crate) struct Parser {
    version: u8,
    header_seen: bool,
    files: Files,
    /// v2 clock in µs, advanced by `wait`.
    now_us: u64,
}

impl Parser {
    pub(crate) fn new(version: u8) -> Self {
        Parser {
            version,
            header_seen: false,
            files: Files::default(),
            now_us: 0,
        }
    }
}

/// Longest file name accepted (Linux allows 4,095-byte paths); with the cap on distinct
/// names it bounds the reader's memory whatever the input.
const MAX_NAME: usize = 4096;

/// File name → device number, assigned in order of first appearance.
#[derive(Default)]
struct Files {
    ids: std::collections::HashMap<Vec<u8>, u32>,
    last: Option<(Vec<u8>, u32)>,
}

impl Files {
    fn id(&mut self, name: &[u8]) -> Result<u32, String> {
        // Traces usually name one file over and over: check the last hit first.
        if let Some((n, id)) = &self.last {
            if n == name {
                return Ok(*id);
            }
        }
        if name.len() > MAX_NAME {
            return Err(format!("file name longer than {MAX_NAME} bytes"));
        }
        let id = match self.ids.get(name) {
            Some(&id) => id,
            None => {
                if self.ids.len() >= 1 << 16 {
                    return Err("more than 65,536 distinct file names".to_string());
                }
                let id = self.ids.len() as u32;
                self.ids.insert(name.to_vec(), id);
                id
            }
        };
        self.last = Some((name.to_vec(), id));
        Ok(id)
    }
}

impl crate::source::LineParser for Parser {
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, String> {
        if !self.header_seen {
            let want = if self.version == 2 {
                &b"fio version 2 iolog"[..]
            } else {
                b"fio version 3 iolog"
            };
            if crate::parse::trim(line) != want {
                return Err(format!(
                    "the first line must be '{}', found '{}'",
                    String::from_utf8_lossy(want),
                    show(line)
                ));
            }
            self.header_seen = true;
            return Ok(None);
        }
        let mut w = Words::new(line);
        let time_us = if self.version == 3 {
            match w.next() {
                None => return Ok(None),
                Some(t) => Some(u64_field(t, "timestamp")?),
            }
        } else {
            None
        };
        let Some(file) = w.next() else {
            return if time_us.is_some() {
                Err("missing file name".to_string())
            } else {
                Ok(None)
            };
        };
        let action = w.need("action")?;
        let device = self.files.id(file)?;
        let op = match action {
            b"add" | b"open" | b"close" => return Ok(None),
            b"read" => Op::Read,
            b"write" => Op::Write,
            b"trim" => Op::Trim,
            b"sync" | b"datasync" => Op::Flush,
            b"wait" => {
                if self.version == 3 {
                    return Err("'wait' is not allowed in a version 3 iolog".to_string());
                }
                let us = u64_field(w.need("delay")?, "delay")?;
                self.now_us = self.now_us.saturating_add(us);
                return Ok(None);
            }
            other => {
                return Err(format!(
                    "unknown action '{}' (expected add, open, close, read, write, trim, sync, datasync, wait)",
                    show(other)
                ))
            }
        };
        // sync lines may come without offset and length.
        let (offset, len) = match w.next() {
            Some(o) => (
                u64_field(o, "offset")?,
                u64_field(w.need("length")?, "length")?,
            ),
            None if op == Op::Flush => (0, 0),
            None => return Err("missing field 'offset'".to_string()),
        };
        if w.next().is_some() {
            return Err("too many fields".to_string());
        }
        let us = time_us.unwrap_or(self.now_us);
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

pub(crate) struct Formatter {
    version: u8,
    /// Devices whose file has been added and opened, in first-seen order (closed in it).
    seen: Vec<u32>,
    now_us: u64,
}

impl Formatter {
    pub(crate) fn new(version: u8) -> Self {
        Formatter {
            version,
            seen: Vec::new(),
            now_us: 0,
        }
    }

    fn prefix(&self, out: &mut Vec<u8>, us: u64, device: u32) {
        if self.version == 3 {
            push_u64(out, us);
            out.push(b' ');
        }
        file_name(out, device);
        out.push(b' ');
    }
}

/// fio needs a file name; `/dev/iolabN` is replaced with `replay_redirect` at replay.
fn file_name(out: &mut Vec<u8>, device: u32) {
    out.extend_from_slice(b"/dev/iolab");
    push_u64(out, u64::from(device));
}

impl crate::formats::Formatter for Formatter {
    fn header(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(if self.version == 2 {
            b"fio version 2 iolog\n"
        } else {
            b"fio version 3 iolog\n"
        });
    }

    fn record(&mut self, r: &TraceRecord, out: &mut Vec<u8>) -> Result<bool, String> {
        let us = r.time_ns / 1000;
        // A linear scan: iologs name a handful of files.
        if !self.seen.contains(&r.device) {
            if self.seen.len() >= 1 << 16 {
                return Err("more than 65,536 devices for one iolog".to_string());
            }
            self.seen.push(r.device);
            for action in [&b"add"[..], b"open"] {
                self.prefix(out, us, r.device);
                out.extend_from_slice(action);
                out.push(b'\n');
            }
        }
        if self.version == 2 && us > self.now_us {
            self.prefix(out, us, r.device);
            out.extend_from_slice(b"wait ");
            push_u64(out, us - self.now_us);
            out.extend_from_slice(b" 0\n");
        }
        self.now_us = self.now_us.max(us);
        let action: &[u8] = match r.op {
            Op::Read => b"read",
            Op::Write => b"write",
            Op::Trim => b"trim",
            Op::Flush => b"sync",
        };
        self.prefix(out, us, r.device);
        out.extend_from_slice(action);
        out.push(b' ');
        push_u64(out, r.offset_bytes);
        out.push(b' ');
        push_u64(out, r.len_bytes);
        out.push(b'\n');
        Ok(true)
    }

    fn trailer(&mut self, out: &mut Vec<u8>) {
        for &dev in &self.seen {
            self.prefix(out, self.now_us, dev);
            out.extend_from_slice(b"close\n");
        }
    }
}
