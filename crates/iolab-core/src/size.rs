//! Byte sizes as users write them: `4k`, `128KiB`, `1m`, `1 GiB`, `512`, or a plain integer.
//!
//! Like fio, a bare `k`/`m`/`g`/`t` suffix means powers of 1024 (block sizes are always binary);
//! `kB`/`MB`/`GB`/`TB` mean powers of 1000, as drive makers use them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A size in bytes that parses from and prints to the human form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(pub u64);

/// Why a size string did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{input}' is not a size: {why} (write e.g. 4096, 4k, 128KiB, 1m, 1GiB or 16GB)")]
pub struct SizeError {
    /// The text that failed.
    pub input: String,
    /// What was wrong with it.
    pub why: &'static str,
}

/// Parses a human size such as `4k` or `1.5GiB` into bytes.
pub fn parse_size(input: &str) -> Result<u64, SizeError> {
    let err = |why| SizeError {
        input: input.to_string(),
        why,
    };
    let s = input.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    if num.is_empty() {
        return Err(err("it does not start with a number"));
    }
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" | "ki" => 1 << 10,
        "m" | "mib" | "mi" => 1 << 20,
        "g" | "gib" | "gi" => 1 << 30,
        "t" | "tib" | "ti" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(err("the unit is unknown")),
    };
    // In integers, not through f64: a double holds integers exactly only up to 2^53, so
    // offsets near the end of a large device came out rounded (2^64 - 512 as u64::MAX).
    let (whole, fraction) = num.split_once('.').unwrap_or((num, ""));
    if fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
        return Err(err("the number is malformed"));
    }
    let too_large = || err("it is too large (more than 18446744073709551615 bytes, 16 EiB)");
    let whole_bytes = digits(whole)
        .ok_or_else(too_large)?
        .checked_mul(u128::from(mult))
        .ok_or_else(too_large)?;
    let fraction_bytes = fraction_of(fraction.trim_end_matches('0'), mult)
        .ok_or_else(|| err("it is not a whole number of bytes"))?
        .ok_or_else(too_large)?;
    whole_bytes
        .checked_add(fraction_bytes)
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(too_large)
}

/// The value of a string of decimal digits; `None` past what u128 holds (empty is 0).
fn digits(s: &str) -> Option<u128> {
    s.bytes().try_fold(0u128, |v, d| {
        v.checked_mul(10)?.checked_add(u128::from(d - b'0'))
    })
}

/// `0.fraction` × `mult` in bytes: `None` if that is not a whole number, `Some(None)` if it is
/// one too large to hold.
fn fraction_of(fraction: &str, mult: u64) -> Option<Option<u128>> {
    if fraction.is_empty() {
        return Some(Some(0));
    }
    // 10^38 is the largest power of ten u128 holds; a byte count written with more decimal
    // places than that is refused as not whole (with a multiplier of at most 2^40 or 10^12,
    // past 40 places none is).
    let places = u32::try_from(fraction.len()).ok().filter(|&p| p <= 38)?;
    let numerator = digits(fraction)?;
    let denominator = 10u128.pow(places);
    let common = gcd(u128::from(mult), denominator);
    let (denominator, mult) = (denominator / common, u128::from(mult) / common);
    if numerator % denominator != 0 {
        return None;
    }
    Some((numerator / denominator).checked_mul(mult))
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Formats bytes in the shortest exact binary form (`4k`, `1m`, `1536`).
pub fn format_size(bytes: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{}", bytes >> shift, suffix);
        }
    }
    bytes.to_string()
}

/// A size for people: the exact form when it is short (`4k`, `2g`), else decimal units with three
/// significant digits (`1.20 TB` for a 1.2 TB drive, whose exact form is `1171875000k`). For
/// headers only: unlike [`format_size`], it does not parse back to the same value.
pub fn human_size(bytes: u64) -> String {
    let exact = format_size(bytes);
    if exact.len() <= 6 {
        return exact;
    }
    in_units(bytes, [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")])
}

/// A size for people in binary units with three significant digits (`16.0 GiB`, `46.6 MiB`,
/// `512 B`), for sentences whose other figures are in GiB: it reads the same at any size, where
/// a fixed unit printed a 200 MB span as `0.0 GiB`. Like [`human_size`], it does not parse back.
pub fn binary_size(bytes: u64) -> String {
    in_units(
        bytes,
        [(TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")],
    )
}

const KIB: f64 = 1024.0;
const MIB: f64 = KIB * 1024.0;
const GIB: f64 = MIB * 1024.0;
const TIB: f64 = GIB * 1024.0;

/// `bytes` in the largest of `units` (divisor, name), largest first, that it reaches once,
/// with three significant digits; below the smallest, in bytes.
fn in_units(bytes: u64, units: [(f64, &str); 4]) -> String {
    let Some((value, unit)) = units
        .into_iter()
        .map(|(divisor, unit)| (bytes as f64 / divisor, unit))
        .find(|(v, _)| *v >= 1.0)
    else {
        return format!("{bytes} B");
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_size(self.0))
    }
}

impl std::str::FromStr for ByteSize {
    type Err = SizeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_size(s).map(ByteSize)
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size in bytes, as an integer or a string such as \"4k\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ByteSize, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::custom("a size cannot be negative"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ByteSize, E> {
                parse_size(v).map(ByteSize).map_err(E::custom)
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_binary_and_decimal_units() {
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("128KiB").unwrap(), 131072);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_size("16GB").unwrap(), 16_000_000_000);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size(" 8 KiB ").unwrap(), 8192);
    }

    #[test]
    fn rejects_nonsense_with_a_hint() {
        let e = parse_size("4q").unwrap_err();
        assert!(e.to_string().contains("unit is unknown"));
        assert!(parse_size("k").is_err());
        assert!(parse_size("0.3").is_err());
    }

    #[test]
    fn integers_are_exact_to_the_last_byte_and_overflow_is_refused() {
        // Through f64 these were rounded: 2^64 - 512 became u64::MAX ("18446744073709551615 is
        // not sector-aligned"), 2^64 itself u64::MAX, 2^53 + 1 became 2^53.
        assert_eq!(
            parse_size("18446744073709551104").unwrap(),
            18_446_744_073_709_551_104
        );
        assert_eq!(parse_size("18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(parse_size("9007199254740993").unwrap(), (1 << 53) + 1);
        assert_eq!(parse_size("16777215t").unwrap(), 16_777_215 << 40);
        assert_eq!(parse_size("0.5k").unwrap(), 512);
        assert_eq!(parse_size(".5k").unwrap(), 512);
        assert_eq!(
            parse_size("1.50000000000000000000000000000000000000000g").unwrap(),
            3 << 29
        );
        assert_eq!(parse_size("1.25GB").unwrap(), 1_250_000_000);
        for too_large in [
            "18446744073709551616",
            "16777216t",
            "99999999999999999999999999999999999999999999",
            "18446744073709551615.5k",
        ] {
            let e = parse_size(too_large).unwrap_err();
            assert!(e.why.contains("too large"), "{too_large}: {e}");
        }
        for not_whole in [
            "1.0000000001k",
            "0.1",
            "1.5",
            "0.00000000000000000000000000000000000000000001g",
        ] {
            let e = parse_size(not_whole).unwrap_err();
            assert!(e.why.contains("whole number"), "{not_whole}: {e}");
        }
        for malformed in [".", "1.2.3", "..5"] {
            assert!(parse_size(malformed).is_err(), "{malformed}");
        }
    }

    #[test]
    fn formats_round_trip() {
        for v in [512, 4096, 1 << 20, 3 << 30, 1536] {
            assert_eq!(parse_size(&format_size(v)).unwrap(), v);
        }
    }

    #[test]
    fn binary_sizes_read_right_at_any_size() {
        assert_eq!(binary_size(16 << 30), "16.0 GiB");
        assert_eq!(binary_size(50_000_000), "47.7 MiB");
        assert_eq!(binary_size(6_250_000_000), "5.82 GiB");
        assert_eq!(binary_size(3 << 40), "3.00 TiB");
        assert_eq!(binary_size(1536), "1.50 KiB");
        assert_eq!(binary_size(512), "512 B");
    }

    #[test]
    fn human_sizes_are_short() {
        assert_eq!(human_size(4096), "4k");
        assert_eq!(human_size(2 << 30), "2g");
        assert_eq!(human_size(1_200_000_000_000), "1.20 TB");
        assert_eq!(human_size(400_088_457_216), "400 GB");
        assert_eq!(human_size(123_456_789), "123 MB");
    }
}
