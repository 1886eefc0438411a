//! Text from input made safe to show on a terminal.
//!
//! A trace line, a job name, a target path or a note read from a result file may hold control
//! bytes: an ESC sequence copied to a terminal recolours it, moves the cursor, rewrites the
//! title or hides what came before. Everything taken from input passes through here before it
//! is printed, so the user sees the bytes (`\x1b[2J`) instead of their effect.
//!
//! The rule: C0 controls (U+0000–U+001F), DEL (U+007F) and C1 controls (U+0080–U+009F; U+009B
//! is an 8-bit CSI) become `\xNN` (`\t`, `\n` and `\r` as `\t`, `\n`, `\r`), and the
//! bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder what
//! follows them on screen, become `\u{NNNN}`. Every other character is kept; a backslash is
//! not doubled, so ordinary Windows paths read as written. The result holds no control
//! character, so escaping twice changes nothing.

use std::borrow::Cow;

/// Whether `c` is shown escaped (see the module's rule).
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write as _;
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x100 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        }
    }
}

/// `s` with every control character escaped, newlines and tabs included: for one-line text
/// such as a name, a path or a quoted field.
pub fn escape_control(s: &str) -> Cow<'_, str> {
    escape_with(s, |_| false)
}

/// `s` with control characters escaped except `\n` and `\t`: for a message of several lines
/// (an error with a hint on its own line) whose parts may come from input.
pub fn escape_control_keep_lines(s: &str) -> Cow<'_, str> {
    escape_with(s, |c| c == '\n' || c == '\t')
}

fn escape_with(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_escape(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c) && !keep(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Bytes that may not be UTF-8 (a trace line, a file name) as escaped text: valid UTF-8 as
/// [`escape_control`] shows it, each invalid byte as `\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(&escape_control(chunk.valid()));
        for b in chunk.invalid() {
            use std::fmt::Write as _;
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_bytes_become_visible_escapes() {
        assert_eq!(escape_control("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(escape_control("\x1f\u{8b}"), "\\x1f\\x8b");
        assert_eq!(escape_control("t\tn\nr\r"), "t\\tn\\nr\\r");
        assert_eq!(escape_control("\x7f\u{9b}31m"), "\\x7f\\x9b31m");
        assert_eq!(escape_control("abc\u{202e}cba"), "abc\\u{202e}cba");
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        for s in ["plain", "C:\\trace\\hm_0.csv", "naïve 東京 ½", ""] {
            assert!(matches!(escape_control(s), Cow::Borrowed(t) if t == s));
        }
    }

    #[test]
    fn escaping_twice_changes_nothing() {
        let once = escape_control("x\x1b]0;title\x07y\u{2066}").into_owned();
        assert_eq!(escape_control(&once), once);
    }

    #[test]
    fn multi_line_messages_keep_their_lines() {
        assert_eq!(escape_control_keep_lines("a\x1b\nb\tc"), "a\\x1b\nb\tc");
    }

    #[test]
    fn invalid_utf8_bytes_are_shown_as_hex() {
        assert_eq!(escape_bytes(b"ok\xff\x1b"), "ok\\xff\\x1b");
        assert_eq!(escape_bytes("é".as_bytes()), "é");
    }
}
