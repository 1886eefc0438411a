//! fio's numbers: sizes with its unit prefixes (`kb_base`), times with its suffixes, booleans
//! and the `READ,WRITE` lists many options take.

/// Parses a size as fio does. With `kb_base` 1024 (fio's default) `k`, `m`, `g`, `t`, `p` are
/// powers of 1024 and `ki`, `mi`, … powers of 1000 (fio's compatibility mode); with 1000 it is
/// the other way round. A trailing `b` is the byte unit (`4kb` is `4k`); case does not matter;
/// `0x` starts a hexadecimal number.
pub fn size(input: &str, kb_base: u64) -> Result<u64, String> {
    let s = input.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map_err(|_| format!("'{input}' is not a hexadecimal number"));
    }
    let (number, unit) = leading_number(input, s)?;
    let mut unit = unit.trim().to_ascii_lowercase();
    if unit.len() > 1 && unit.ends_with('b') {
        unit.pop();
    }
    let (other, base) = if kb_base == 1000 {
        (1024u64, 1000u64)
    } else {
        (1000, 1024)
    };
    let (prefix, iec) = match unit.strip_suffix('i') {
        Some(p) => (p, true),
        None => (unit.as_str(), false),
    };
    let power = match prefix {
        "" | "b" if !iec => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => {
            return Err(format!(
                "'{input}': unknown unit '{unit}' (fio's units: k, m, g, t, p, with i for the \
                 other base, and b for bytes)"
            ))
        }
    };
    let mult = if iec { other } else { base }.pow(power) as f64;
    let bytes = number * mult;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
        return Err(format!("'{input}' is out of range"));
    }
    Ok(bytes.round() as u64)
}

/// The number `s` starts with and the unit after it; `input` (as written) names it in errors.
fn leading_number<'a>(input: &str, s: &'a str) -> Result<(f64, &'a str), String> {
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let number = num
        .parse()
        .map_err(|_| format!("'{input}' does not start with a number"))?;
    Ok((number, unit))
}

/// Parses a time as fio does, in seconds: a bare number is in `default_unit_s` seconds (1 for
/// most options, 1e-6 for `thinktime`); suffixes `d`, `h`, `m`, `s`/`sec`, `ms`/`msec`,
/// `us`/`usec`, in any case.
pub fn seconds(input: &str, default_unit_s: f64) -> Result<f64, String> {
    let s = input.trim();
    let (number, unit) = leading_number(input, s)?;
    // Sub-second units divide, so that 10us is exactly 1e-5 s.
    let (mult, div) = match unit.trim().to_ascii_lowercase().as_str() {
        "" if default_unit_s < 1.0 => (1.0, (1.0 / default_unit_s).round()),
        "" => (default_unit_s, 1.0),
        "d" => (86_400.0, 1.0),
        "h" => (3600.0, 1.0),
        "m" | "min" => (60.0, 1.0),
        "s" | "sec" => (1.0, 1.0),
        "ms" | "msec" => (1.0, 1e3),
        "us" | "usec" => (1.0, 1e6),
        "ns" | "nsec" => (1.0, 1e9),
        other => {
            return Err(format!(
                "'{input}': unknown time unit '{other}' (d, h, m, s, ms, us)"
            ))
        }
    };
    Ok(number * mult / div)
}

/// A fio boolean: a bare flag or a number, non-zero being true (`true`/`false` too).
pub fn boolean(value: Option<&str>) -> Result<bool, String> {
    match value.map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(true),
        Some(v) => match v.as_str() {
            "" | "true" | "yes" | "on" => Ok(true),
            "false" | "no" | "off" => Ok(false),
            n => n
                .parse::<i64>()
                .map(|n| n != 0)
                .map_err(|_| format!("'{n}' is not a boolean (0 or 1)")),
        },
    }
}

/// The read and write values of fio's `READ,WRITE[,TRIM]` form: one value serves both, a blank
/// one keeps the default (`None`).
pub fn read_write(value: &str) -> (Option<&str>, Option<&str>) {
    let mut parts = value.split(',').map(str::trim);
    let read = parts.next().filter(|p| !p.is_empty());
    match parts.next() {
        None => (read, read),
        Some(w) => (read, Some(w).filter(|p| !p.is_empty())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_kb_base() {
        // fio's own examples, for kb_base=1024 (the default) and 1000.
        for (text, bytes) in [
            ("4096", 4096),
            ("4k", 4096),
            ("4kb", 4096),
            ("4KB", 4096),
            ("1m", 1 << 20),
            ("1mi", 1_000_000),
            ("1000ki", 1_000_000),
            ("1t", 1 << 40),
            ("1ti", 1_000_000_000_000),
            ("0x1000", 4096),
            ("1.5k", 1536),
        ] {
            assert_eq!(size(text, 1024), Ok(bytes), "{text}");
        }
        for (text, bytes) in [
            ("4ki", 4096),
            ("4KiB", 4096),
            ("1m", 1_000_000),
            ("1k", 1000),
        ] {
            assert_eq!(size(text, 1000), Ok(bytes), "{text}");
        }
        assert!(size("4q", 1024).unwrap_err().contains("unknown unit"));
        assert!(size("k", 1024).is_err());
    }

    #[test]
    fn times_take_fio_suffixes_and_the_option_default_unit() {
        assert_eq!(seconds("30", 1.0), Ok(30.0));
        assert_eq!(seconds("2m", 1.0), Ok(120.0));
        assert_eq!(seconds("1h", 1.0), Ok(3600.0));
        assert_eq!(seconds("500ms", 1.0), Ok(0.5));
        assert_eq!(seconds("10", 1e-6), Ok(1e-5));
        assert_eq!(seconds("10USEC", 1.0), Ok(1e-5));
        assert!(seconds("1y", 1.0).is_err());
    }

    #[test]
    fn booleans_and_read_write_lists() {
        assert_eq!(boolean(None), Ok(true));
        assert_eq!(boolean(Some("0")), Ok(false));
        assert_eq!(boolean(Some("1")), Ok(true));
        assert!(boolean(Some("maybe")).is_err());
        assert_eq!(read_write("4k"), (Some("4k"), Some("4k")));
        assert_eq!(read_write("4k,8k"), (Some("4k"), Some("8k")));
        assert_eq!(read_write(",8k"), (None, Some("8k")));
        assert_eq!(read_write("4k,"), (Some("4k"), None));
    }
}
