//! Reading sysfs and procfs attributes leniently: a missing, unreadable or odd attribute is
//! `None`, never an error, because which attributes exist depends on the kernel and the driver.

use std::fs;
use std::path::Path;
use std::str::FromStr;

/// An attribute's content with surrounding whitespace removed; `None` when missing, unreadable,
/// not UTF-8 or empty.
pub fn read(path: impl AsRef<Path>) -> Option<String> {
    let s = fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// An attribute parsed as a number (or anything `FromStr`); `None` when missing or malformed.
pub fn num<T: FromStr>(path: impl AsRef<Path>) -> Option<T> {
    read(path)?.parse().ok()
}

/// A hexadecimal attribute such as `0x8086` or `8086`.
pub fn hex(path: impl AsRef<Path>) -> Option<u32> {
    let s = read(path)?;
    u32::from_str_radix(s.trim_start_matches("0x"), 16).ok()
}

/// A flag attribute: `1`/`0`.
pub fn flag(path: impl AsRef<Path>) -> Option<bool> {
    match read(path)?.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// The bracketed choice of a selector attribute (`none [mq-deadline] kyber` → `mq-deadline`)
/// and all the choices.
pub fn selector(path: impl AsRef<Path>) -> Option<(Option<String>, Vec<String>)> {
    let s = read(path)?;
    let mut active = None;
    let mut all = Vec::new();
    for word in s.split_whitespace() {
        match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(w) => {
                active = Some(w.to_string());
                all.push(w.to_string());
            }
            None => all.push(word.to_string()),
        }
    }
    Some((active, all))
}

/// The last path component of a symlink's target (`driver` → `nvme`).
pub fn link_name(path: impl AsRef<Path>) -> Option<String> {
    let target = fs::read_link(path).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// Names of the entries of a directory, sorted; empty when it is missing.
pub fn entries(path: impl AsRef<Path>) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(path)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_readers() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::write(p.join("n"), "42\n").unwrap();
        fs::write(p.join("h"), "0x8086\n").unwrap();
        fs::write(p.join("bad"), "forty\n").unwrap();
        fs::write(p.join("empty"), "\n").unwrap();
        fs::write(p.join("sched"), "none [mq-deadline] kyber bfq\n").unwrap();
        fs::write(p.join("on"), "1\n").unwrap();
        assert_eq!(num::<u64>(p.join("n")), Some(42));
        assert_eq!(num::<u64>(p.join("bad")), None);
        assert_eq!(num::<u64>(p.join("missing")), None);
        assert_eq!(read(p.join("empty")), None);
        assert_eq!(hex(p.join("h")), Some(0x8086));
        assert_eq!(flag(p.join("on")), Some(true));
        assert_eq!(flag(p.join("n")), None);
        let (active, all) = selector(p.join("sched")).unwrap();
        assert_eq!(active.as_deref(), Some("mq-deadline"));
        assert_eq!(all.len(), 4);
        assert!(entries(p.join("missing")).is_empty());
        assert_eq!(entries(p), ["bad", "empty", "h", "n", "on", "sched"]);
    }
}
