//! A data pattern as fio's `verify_pattern` writes it: hex (`0xaa555aa5`) and quoted text
//! (`"abcd"`, `'abcd'`), one after another, repeated from the start of every written block.

/// The longest pattern fio takes.
pub const MAX_PATTERN: usize = 512;

/// The bytes of a pattern written as hex and quoted parts (`0xff"ab"`, `0x00 'x'`).
pub fn parse(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if let Some(hex) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let digits = hex
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(hex.len());
            if digits == 0 {
                return Err(format!("'{text}': 0x without hex digits"));
            }
            // An odd count is read as if led by a 0 (0xabc is 0x0abc).
            let padded = format!("{}{}", "0".repeat(digits % 2), &hex[..digits]);
            for pair in padded.as_bytes().chunks(2) {
                let s = std::str::from_utf8(pair).expect("ascii hex digits");
                out.push(u8::from_str_radix(s, 16).expect("hex digits"));
            }
            rest = &hex[digits..];
        } else if let Some(q) = rest.chars().next().filter(|c| matches!(c, '"' | '\'')) {
            let body = &rest[1..];
            let end = body
                .find(q)
                .ok_or_else(|| format!("'{text}': the quote {q} is not closed"))?;
            out.extend_from_slice(&body.as_bytes()[..end]);
            rest = &body[end + 1..];
        } else if rest.starts_with('%') {
            return Err(format!(
                "'{text}': fio's %o (the block's offset inside the pattern) is not supported; \
                 give the pattern in hex or quotes"
            ));
        } else {
            return Err(format!(
                "'{text}': give the pattern in hex (0xaa55) or quotes (\"abc\"); numbers in \
                 decimal are not taken, as their byte width is ambiguous"
            ));
        }
        rest = rest.trim_start_matches([' ', ',', '\t']);
    }
    if out.is_empty() {
        return Err(format!("'{text}': an empty pattern"));
    }
    if out.len() > MAX_PATTERN {
        return Err(format!(
            "'{text}': {} bytes, more than the {MAX_PATTERN} fio takes",
            out.len()
        ));
    }
    Ok(out)
}

/// Fills `buf` with `pattern` repeated from its start.
pub fn fill(buf: &mut [u8], pattern: &[u8]) {
    for chunk in buf.chunks_mut(pattern.len()) {
        chunk.copy_from_slice(&pattern[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_pattern_forms() {
        assert_eq!(parse("0xaa555aa5").unwrap(), [0xaa, 0x55, 0x5a, 0xa5]);
        assert_eq!(parse("0xabc").unwrap(), [0x0a, 0xbc]);
        assert_eq!(parse("\"ab\"").unwrap(), b"ab");
        assert_eq!(parse("0xff'ab' 0x01").unwrap(), [0xff, b'a', b'b', 1]);
        for bad in ["", "0x", "\"ab", "%o", "1234", "0xzz"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse(&format!("0x{}", "ab".repeat(513))).is_err());
    }

    #[test]
    fn fill_repeats_from_the_start() {
        let mut b = [0u8; 7];
        fill(&mut b, &[1, 2, 3]);
        assert_eq!(b, [1, 2, 3, 1, 2, 3, 1]);
    }
}
