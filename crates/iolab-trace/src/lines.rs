//! Fast line splitting over any `Read`: one big buffer, no allocation per line.
//!
//! `BufRead::read_line` would allocate or copy each line; at millions of lines per
//! second that dominates, so lines are handed out as slices of one reusable buffer.

use std::io::{self, Read};

/// Bytes read per refill: large enough that syscalls stay rare (under 1 % of the time at
/// 50-byte lines), small enough that opening many small inputs (tests, fuzzing) is cheap.
/// The buffer grows for longer lines, up to [`MAX_LINE`].
const CHUNK: usize = 1 << 17;
/// The UTF-8 byte-order mark some editors and Windows tools put at the start of a text file.
pub(crate) const BOM: &[u8] = b"\xef\xbb\xbf";
/// A line longer than this is refused rather than growing the buffer without bound.
pub(crate) const MAX_LINE: usize = 16 << 20;

/// Yields the lines of a byte stream (without `\n` or a trailing `\r`).
pub(crate) struct Lines<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    line_no: u64,
    /// Dropping the rest of a line longer than [`MAX_LINE`] that was already reported.
    discarding: bool,
}

/// One step of [`Lines::next_line`].
pub(crate) enum Line<'a> {
    /// A complete line.
    Text(&'a [u8]),
    /// A line longer than [`MAX_LINE`]; the rest of it is skipped if reading goes on.
    TooLong,
}

impl<R: Read> Lines<R> {
    pub(crate) fn new(inner: R) -> Self {
        Lines {
            inner,
            buf: vec![0; CHUNK],
            pos: 0,
            end: 0,
            eof: false,
            line_no: 0,
            discarding: false,
        }
    }

    /// 1-based number of the line last returned.
    pub(crate) fn line_no(&self) -> u64 {
        self.line_no
    }

    /// The next line, `None` at end of input. A line reaching [`MAX_LINE`] bytes is reported
    /// as soon as that many have arrived (an endless line, `/dev/zero` or a decompression bomb,
    /// is not read to its end first); its rest is skipped if reading goes on.
    pub(crate) fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        let (start, stop) = loop {
            if self.discarding {
                // The rest of an over-long line already reported: drop it up to its newline.
                match memchr::memchr(b'\n', &self.buf[self.pos..self.end]) {
                    Some(i) => {
                        self.pos += i + 1;
                        self.discarding = false;
                    }
                    None => {
                        self.pos = 0;
                        self.end = 0;
                        if self.eof {
                            return Ok(None);
                        }
                    }
                }
            }
            if !self.discarding {
                if let Some(i) = memchr::memchr(b'\n', &self.buf[self.pos..self.end]) {
                    let start = self.pos;
                    self.pos += i + 1;
                    break (start, start + i);
                }
                if self.eof {
                    if self.pos < self.end {
                        let start = self.pos;
                        self.pos = self.end;
                        break (start, self.end);
                    }
                    return Ok(None);
                }
                if self.pos > 0 {
                    self.buf.copy_within(self.pos..self.end, 0);
                    self.end -= self.pos;
                    self.pos = 0;
                }
                if self.end == self.buf.len() {
                    if self.buf.len() >= MAX_LINE {
                        self.discarding = true;
                        self.pos = 0;
                        self.end = 0;
                        self.line_no += 1;
                        return Ok(Some(Line::TooLong));
                    }
                    self.buf.resize(self.buf.len() * 2, 0);
                }
            }
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        self.line_no += 1;
        let mut line = &self.buf[start..stop];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        // A UTF-8 byte-order mark (as Windows tools write) is not part of the first line.
        if self.line_no == 1 {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        Ok(Some(Line::Text(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(data: &[u8]) -> Vec<Vec<u8>> {
        let mut l = Lines::new(data);
        let mut out = Vec::new();
        while let Some(line) = l.next_line().unwrap() {
            match line {
                Line::Text(t) => out.push(t.to_vec()),
                Line::TooLong => out.push(b"<long>".to_vec()),
            }
        }
        out
    }

    #[test]
    fn splits_lines_with_and_without_final_newline() {
        assert_eq!(
            collect(b"a\nb\r\nc"),
            vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
        );
        assert_eq!(collect(b"a\n\n"), vec![b"a".to_vec(), b"".to_vec()]);
        assert!(collect(b"").is_empty());
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_line() {
        assert_eq!(
            collect(b"\xef\xbb\xbfa\n\xef\xbb\xbfb\n"),
            vec![b"a".to_vec(), b"\xef\xbb\xbfb".to_vec()]
        );
        assert_eq!(collect(b"\xef\xbb\xbf"), vec![b"".to_vec()]);
    }

    #[test]
    fn lines_longer_than_the_first_chunk_are_whole() {
        let mut data = vec![b'x'; CHUNK + 10];
        data.push(b'\n');
        data.extend_from_slice(b"y\n");
        let lines = collect(&data);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), CHUNK + 10);
        assert_eq!(lines[1], b"y");
    }

    #[test]
    fn an_endless_line_is_reported_once_the_cap_has_arrived() {
        // An input that never ends and has no newline (as /dev/zero): the over-long line is
        // reported after MAX_LINE bytes, not when (never) its end arrives.
        let endless = std::io::repeat(0);
        let mut l = Lines::new(endless);
        assert!(matches!(l.next_line().unwrap(), Some(Line::TooLong)));
        assert_eq!(l.line_no(), 1);
    }

    #[test]
    fn the_rest_of_an_over_long_line_is_skipped_then_reading_goes_on() {
        let mut data = vec![b'x'; MAX_LINE + 5];
        data.extend_from_slice(b"\nnext\n");
        assert_eq!(collect(&data), vec![b"<long>".to_vec(), b"next".to_vec()]);
    }
}
