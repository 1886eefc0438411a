//! Byte-level field parsing shared by the text readers (no `str` conversion, no allocation).

/// Splits a line on one separator byte, trimming spaces and tabs around each field.
pub(crate) struct Fields<'a> {
    rest: Option<&'a [u8]>,
    sep: u8,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(line: &'a [u8], sep: u8) -> Self {
        Fields {
            rest: Some(line),
            sep,
        }
    }

    /// The next field, or an error naming which field is missing.
    pub(crate) fn need(&mut self, what: &str) -> Result<&'a [u8], String> {
        self.next().ok_or_else(|| format!("missing field '{what}'"))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        match memchr::memchr(self.sep, rest) {
            Some(i) => {
                self.rest = Some(&rest[i + 1..]);
                Some(trim(&rest[..i]))
            }
            None => {
                self.rest = None;
                Some(trim(rest))
            }
        }
    }
}

/// Reads separated fields in one pass, parsing integers as it scans (the hot path of the
/// CSV readers: no separate search for the separator, no second pass over the digits).
pub(crate) struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
    sep: u8,
    done: bool,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(s: &'a [u8], sep: u8) -> Self {
        Cursor {
            s,
            i: 0,
            sep,
            done: false,
        }
    }

    #[inline]
    fn skip_blanks(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t') {
            self.i += 1;
        }
    }

    /// Consumes the separator after a field, or notes the end of the line.
    #[inline]
    fn end_field(&mut self, start: usize, what: &str) -> Result<(), String> {
        self.skip_blanks();
        if self.i == self.s.len() {
            self.done = true;
            Ok(())
        } else if self.s[self.i] == self.sep {
            self.i += 1;
            Ok(())
        } else {
            let end =
                memchr::memchr(self.sep, &self.s[start..]).map_or(self.s.len(), |e| start + e);
            Err(format!(
                "field '{what}' is not an unsigned integer: '{}'",
                show(trim(&self.s[start..end]))
            ))
        }
    }

    /// The next field as an unsigned integer.
    #[inline]
    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, String> {
        // Fast path: digits straight up to the separator or the end of the line, no blanks.
        if !self.done {
            let (s, start) = (self.s, self.i);
            let mut i = start;
            let mut v: u64 = 0;
            while let Some(chunk) = s.get(i..i + 8) {
                let mut word = [0u8; 8];
                word.copy_from_slice(chunk);
                let Some(eight) = eight_digits(u64::from_le_bytes(word)) else {
                    break;
                };
                v = v.wrapping_mul(100_000_000).wrapping_add(u64::from(eight));
                i += 8;
            }
            while let Some(&b) = s.get(i) {
                let d = b.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                v = v.wrapping_mul(10).wrapping_add(u64::from(d));
                i += 1;
            }
            if i > start && i - start <= 19 {
                if i == s.len() {
                    self.i = i;
                    self.done = true;
                    return Ok(v);
                }
                if s[i] == self.sep {
                    self.i = i + 1;
                    return Ok(v);
                }
            }
        }
        self.u64_slow(what)
    }

    /// [`Cursor::u64`] for everything off the fast path: blanks, overflow, errors.
    #[cold]
    fn u64_slow(&mut self, what: &str) -> Result<u64, String> {
        if self.done {
            return Err(format!("missing field '{what}'"));
        }
        self.skip_blanks();
        let start = self.i;
        let mut v: u64 = 0;
        // Eight digits at a time while they last (timestamps have 18).
        while let Some(chunk) = self.s.get(self.i..self.i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let Some(eight) = eight_digits(u64::from_le_bytes(word)) else {
                break;
            };
            v = v.wrapping_mul(100_000_000).wrapping_add(u64::from(eight));
            self.i += 8;
        }
        while self.i < self.s.len() {
            let d = self.s[self.i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            self.i += 1;
        }
        let digits = self.i - start;
        if digits == 0 {
            self.end_field(start, what)?;
            return Err(format!("empty field '{what}'"));
        }
        if digits > 19 {
            // May have wrapped: redo with overflow checks.
            v = u64_field(&self.s[start..self.i], what)?;
        }
        self.end_field(start, what)?;
        Ok(v)
    }

    /// The next field as an unsigned 32-bit integer.
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, String> {
        let v = self.u64(what)?;
        u32::try_from(v).map_err(|_| format!("field '{what}' does not fit in 32 bits: {v}"))
    }

    /// The next field as raw bytes (trimmed).
    #[inline]
    pub(crate) fn field(&mut self, what: &str) -> Result<&'a [u8], String> {
        if self.done {
            return Err(format!("missing field '{what}'"));
        }
        let rest = &self.s[self.i..];
        // Fields read as bytes are short (an opcode, a host name): a plain scan beats
        // memchr's setup.
        match rest.iter().position(|&b| b == self.sep) {
            Some(e) => {
                self.i += e + 1;
                Ok(trim(&rest[..e]))
            }
            None => {
                self.i = self.s.len();
                self.done = true;
                Ok(trim(rest))
            }
        }
    }

    /// True when every field has been read.
    pub(crate) fn at_end(&self) -> bool {
        self.done
    }
}

/// The value of eight ASCII digits packed little-endian in `w`, or `None` if any byte is
/// not a digit (SWAR: a handful of multiplies instead of eight dependent steps).
#[inline]
fn eight_digits(w: u64) -> Option<u32> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let below = w.wrapping_sub(ZEROS);
    let above = w.wrapping_add(0x4646_4646_4646_4646);
    if (below | above) & 0x8080_8080_8080_8080 != 0 {
        return None;
    }
    let mut v = below;
    v = v.wrapping_mul(10).wrapping_add(v >> 8);
    v = ((v & 0x0000_00FF_0000_00FF)
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32))))
        >> 32;
    Some(v as u32)
}

/// Splits a line on runs of spaces and tabs.
pub(crate) struct Words<'a> {
    rest: &'a [u8],
}

impl<'a> Words<'a> {
    pub(crate) fn new(line: &'a [u8]) -> Self {
        Words { rest: line }
    }

    /// The next word, or an error naming which word is missing.
    pub(crate) fn need(&mut self, what: &str) -> Result<&'a [u8], String> {
        self.next().ok_or_else(|| format!("missing field '{what}'"))
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|&b| b != b' ' && b != b'\t')?;
        let rest = &self.rest[start..];
        let len = rest
            .iter()
            .position(|&b| b == b' ' || b == b'\t')
            .unwrap_or(rest.len());
        self.rest = &rest[len..];
        Some(&rest[..len])
    }
}

/// Strips spaces and tabs at both ends.
pub(crate) fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Shows a field in an error message, shortened so a binary blob cannot flood the terminal.
pub(crate) fn show(s: &[u8]) -> String {
    let cut = &s[..s.len().min(40)];
    let mut text = iolab_core::text::escape_bytes(cut);
    if s.len() > cut.len() {
        text.push('…');
    }
    text
}

/// Parses an unsigned decimal integer.
pub(crate) fn u64_field(s: &[u8], what: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err(format!("empty field '{what}'"));
    }
    // Up to 19 digits cannot overflow a u64: skip the checked arithmetic (the hot path).
    if s.len() <= 19 {
        let mut v: u64 = 0;
        for &b in s {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return Err(format!(
                    "field '{what}' is not an unsigned integer: '{}'",
                    show(s)
                ));
            }
            v = v * 10 + u64::from(d);
        }
        return Ok(v);
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(format!(
                "field '{what}' is not an unsigned integer: '{}'",
                show(s)
            ));
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or_else(|| format!("field '{what}' is too large: '{}'", show(s)))?;
    }
    Ok(v)
}

/// Parses an unsigned integer that must fit in 32 bits.
pub(crate) fn u32_field(s: &[u8], what: &str) -> Result<u32, String> {
    let v = u64_field(s, what)?;
    u32::try_from(v).map_err(|_| format!("field '{what}' does not fit in 32 bits: {v}"))
}

/// Parses a non-negative decimal number of `unit_ns`-long units (`12.5` with 1e9 = 12.5 s)
/// into ns. Digits finer than 1 ns are dropped; exponents are refused.
pub(crate) fn decimal_ns(s: &[u8], unit_ns: u64, what: &str) -> Result<u64, String> {
    let (whole, frac) = match memchr::memchr(b'.', s) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &s[s.len()..]),
    };
    if whole.is_empty() && frac.is_empty() {
        return Err(format!("empty field '{what}'"));
    }
    let w = if whole.is_empty() {
        0
    } else {
        u64_field(whole, what)?
    };
    let mut ns = w
        .checked_mul(unit_ns)
        .ok_or_else(|| format!("field '{what}' is too large: '{}'", show(s)))?;
    // Walk the fraction digit by digit, scaling the unit down by ten each step.
    let mut scale = unit_ns;
    for &b in frac {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(format!(
                "field '{what}' is not a decimal number: '{}'",
                show(s)
            ));
        }
        scale /= 10;
        ns = ns
            .checked_add(u64::from(d) * scale)
            .ok_or_else(|| format!("field '{what}' is too large: '{}'", show(s)))?;
    }
    Ok(ns)
}

/// Appends a decimal integer without going through `fmt`.
pub(crate) fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Appends `ns` as seconds with a 6-digit fraction when it is a whole number of µs
/// (how SPC and SYSTOR files look) and a 9-digit one otherwise (so nothing is lost).
pub(crate) fn push_seconds(out: &mut Vec<u8>, ns: u64) {
    push_u64(out, ns / 1_000_000_000);
    out.push(b'.');
    let frac = ns % 1_000_000_000;
    let (v, digits) = if frac % 1000 == 0 {
        (frac / 1000, 6)
    } else {
        (frac, 9)
    };
    push_padded(out, v, digits);
}

/// Appends `v` zero-padded to `digits` digits.
pub(crate) fn push_padded(out: &mut Vec<u8>, v: u64, digits: usize) {
    let mut tmp = Vec::with_capacity(20);
    push_u64(&mut tmp, v);
    for _ in tmp.len()..digits {
        out.push(b'0');
    }
    out.extend_from_slice(&tmp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        assert_eq!(decimal_ns(b"0.551706", 1_000_000_000, "t"), Ok(551_706_000));
        assert_eq!(decimal_ns(b"12", 1_000_000_000, "t"), Ok(12_000_000_000));
        assert_eq!(
            decimal_ns(b"1.0000000019", 1_000_000_000, "t"),
            Ok(1_000_000_001)
        );
        assert!(decimal_ns(b"1e5", 1_000_000_000, "t").is_err());
        assert!(decimal_ns(b".", 1_000_000_000, "t").is_err());
        assert!(u64_field(b"99999999999999999999", "x").is_err());
        assert_eq!(u64_field(b"18446744073709551615", "x"), Ok(u64::MAX));
        assert_eq!(
            u64_field(b"9999999999999999999", "x"),
            Ok(9_999_999_999_999_999_999)
        );
    }

    #[test]
    fn seconds_print_round_trip() {
        for ns in [0u64, 1, 999, 1000, 1_500_000_000, 123_456_789_012] {
            let mut v = Vec::new();
            push_seconds(&mut v, ns);
            assert_eq!(decimal_ns(&v, 1_000_000_000, "t"), Ok(ns));
        }
    }

    #[test]
    fn eight_digit_swar_matches_naive() {
        let mut rng = crate::Rng::new(3);
        for _ in 0..100_000 {
            let n = rng.below(100_000_000);
            let text = format!("{n:08}");
            let w = u64::from_le_bytes(text.as_bytes().try_into().unwrap());
            assert_eq!(eight_digits(w), Some(n as u32), "{text}");
        }
        for bad in [
            &b"1234567a"[..],
            b"/2345678",
            b"12:45678",
            b"1234 678",
            b"\xff2345678",
        ] {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bad[..8]);
            assert_eq!(eight_digits(u64::from_le_bytes(word)), None, "{bad:?}");
        }
        let mut c = Cursor::new(
            b"128166385295514663,18446744073709551615,18446744073709551616",
            b',',
        );
        assert_eq!(c.u64("a"), Ok(128_166_385_295_514_663));
        assert_eq!(c.u64("b"), Ok(u64::MAX));
        assert!(c.u64("c").is_err());
    }

    #[test]
    fn cursor() {
        let mut c = Cursor::new(b"12, 34 ,x,99999999999999999999,5", b',');
        assert_eq!(c.u64("a"), Ok(12));
        assert_eq!(c.u64("b"), Ok(34));
        assert_eq!(c.field("c"), Ok(&b"x"[..]));
        assert!(c.u64("d").unwrap_err().contains("too large"));
        let mut c = Cursor::new(b"1,2x,3", b',');
        assert_eq!(c.u64("a"), Ok(1));
        assert!(c.u64("b").unwrap_err().contains("'2x'"));
        let mut c = Cursor::new(b"1,,3", b',');
        assert_eq!(c.u64("a"), Ok(1));
        assert!(c.u64("b").unwrap_err().contains("empty"));
        let mut c = Cursor::new(b"7", b',');
        assert_eq!(c.u64("a"), Ok(7));
        assert!(c.at_end());
        assert!(c.u64("b").unwrap_err().contains("missing"));
    }

    #[test]
    fn fields_and_words() {
        let f: Vec<_> = Fields::new(b"a, b ,c", b',').collect();
        assert_eq!(f, vec![&b"a"[..], b"b", b"c"]);
        let w: Vec<_> = Words::new(b"  8,16   5  Q").collect();
        assert_eq!(w, vec![&b"8,16"[..], b"5", b"Q"]);
    }
}
