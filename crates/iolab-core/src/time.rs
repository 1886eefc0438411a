//! Calendar time for result stamps, without a date library.

/// A UTC calendar time, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcTime {
    /// Year (proleptic Gregorian).
    pub year: i64,
    /// Month, 1–12.
    pub month: i64,
    /// Day of the month, 1–31.
    pub day: i64,
    /// Hour, 0–23.
    pub hour: i64,
    /// Minute, 0–59.
    pub minute: i64,
    /// Second, 0–59.
    pub second: i64,
}

impl UtcTime {
    /// The calendar time of a Unix time (Howard Hinnant's civil-from-days algorithm).
    pub fn from_unix(unix_s: f64) -> UtcTime {
        let secs = unix_s as i64;
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        UtcTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
        }
    }

    /// `2026-11-23 01:02:03`.
    pub fn readable(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `20261123T010203Z` (ISO 8601 basic: file names).
    pub fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// Seconds from a duration as people write it: a bare number is seconds (`90`, `1.5`), or a
/// number with one of fio's time units: `us`, `ms`, `s`, `m` (or `min`), `h`, `d` (`500ms`,
/// `30s`, `1m`, `2h`). Whether the value suits the option is for the option to say.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let what = || {
        format!(
            "'{text}' is not a duration: give seconds (90, 1.5) or a number with a unit \
             (500ms, 30s, 1m, 2h; us, ms, s, m, h and d are known)"
        )
    };
    let t = text.trim();
    // A bare number as Rust reads it (1e3, and NaN or inf, which the option then refuses by
    // name), as before units were taken.
    if let Ok(n) = t.parse::<f64>() {
        return Ok(n);
    }
    let at = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(at);
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1.0,
        "us" => 1e-6,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return Err(what()),
    };
    let n: f64 = number.trim().parse().map_err(|_| what())?;
    if !n.is_finite() {
        return Err(what());
    }
    Ok(n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(UtcTime::from_unix(0.0).compact(), "19700101T000000Z");
        assert_eq!(
            UtcTime::from_unix(1_795_392_000.0 + 3661.0).readable(),
            "2026-11-23 01:01:01"
        );
        // A leap day.
        assert_eq!(
            UtcTime::from_unix(951_782_400.0).readable(),
            "2000-02-29 00:00:00"
        );
    }

    #[test]
    fn durations_take_fios_units() {
        for (text, secs) in [
            ("90", 90.0),
            ("1.5", 1.5),
            ("30s", 30.0),
            ("500ms", 0.5),
            ("250us", 0.000_25),
            ("1m", 60.0),
            ("2min", 120.0),
            ("1h", 3600.0),
            ("1D", 86_400.0),
            (" 0.5 s ", 0.5),
            ("1e3", 1000.0),
        ] {
            assert_eq!(parse_seconds(text), Ok(secs), "{text}");
        }
        // Bare numbers pass as they are, for the option to judge.
        assert!(parse_seconds("nan").unwrap().is_nan());
        assert_eq!(parse_seconds("inf"), Ok(f64::INFINITY));
        for bad in ["", "1x", "m", "1m30s", "infs", "nanms"] {
            let e = parse_seconds(bad).unwrap_err();
            assert!(
                e.contains("is not a duration") && e.contains("30s"),
                "{bad}: {e}"
            );
        }
    }
}
