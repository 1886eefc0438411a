//! Workload profiles for synthesis: published trace statistics as TOML data.
//!
//! A profile gives counts, volumes, the IO-size and queue-depth breakdowns (labels of
//! [`crate::analyze::buckets`]), the sequential share and a footprint. The three AnandTech
//! storage-bench traces ship with the crate (`profiles/*.toml`, embedded in the binary).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::analyze::buckets::{QD_LABELS, SIZE_LABELS};
use crate::error::{Result, TraceError};

/// Profiles shipped with the crate: (name, TOML text).
pub const BUILTIN: [(&str, &str); 3] = [
    ("destroyer", include_str!("../profiles/destroyer.toml")),
    ("heavy", include_str!("../profiles/heavy.toml")),
    ("light", include_str!("../profiles/light.toml")),
];

/// What a decimal "GB" in a profile means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GbUnit {
    /// 10^9 bytes.
    #[serde(rename = "GB")]
    Decimal,
    /// 2^30 bytes.
    #[serde(rename = "GiB")]
    Binary,
}

impl GbUnit {
    /// Bytes per unit.
    pub fn bytes(self) -> f64 {
        match self {
            GbUnit::Decimal => 1e9,
            GbUnit::Binary => (1u64 << 30) as f64,
        }
    }
}

/// A synthesis profile (see the module docs and `profiles/destroyer.toml`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Display name.
    pub name: String,
    /// Where the numbers come from.
    #[serde(default)]
    pub source: String,
    /// Read requests at scale 1.
    pub reads: u64,
    /// Write requests at scale 1.
    pub writes: u64,
    /// Volume read at scale 1, in `gb_unit`.
    pub gb_read: f64,
    /// Volume written at scale 1, in `gb_unit`.
    pub gb_written: f64,
    /// Unit of `gb_read` and `gb_written`.
    pub gb_unit: GbUnit,
    /// Published average queue depth: synthesis places the runs inside the QD breakdown's
    /// buckets so the mean depth on arrival comes near it.
    #[serde(default)]
    pub avg_qd: Option<f64>,
    /// Share of sequential requests, in percent.
    pub sequential_pct: f64,
    /// Address range random requests are spread over, in GiB.
    pub footprint_gib: f64,
    /// IO-size breakdown in percent of requests; keys are the size labels.
    pub size_pct: BTreeMap<String, f64>,
    /// Queue-depth breakdown in percent of requests; keys are the depth labels.
    pub qd_pct: BTreeMap<String, f64>,
}

impl Profile {
    /// Parses and validates a profile; `name` is used in errors.
    pub fn from_toml(name: &str, text: &str) -> Result<Profile> {
        let p: Profile = toml::from_str(text).map_err(|e| TraceError::Profile {
            name: name.to_string(),
            msg: format!("not a valid profile: {e}"),
        })?;
        p.validate(name)?;
        Ok(p)
    }

    /// A built-in profile by name (`destroyer`, `heavy`, `light`) or a TOML file by path.
    pub fn load(name_or_path: &str) -> Result<Profile> {
        let key = name_or_path.to_ascii_lowercase();
        let key = key.trim_start_matches("the-").trim_start_matches("the ");
        if let Some((n, text)) = BUILTIN.iter().find(|(n, _)| *n == key) {
            return Profile::from_toml(n, text);
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            return Err(TraceError::Profile {
                name: name_or_path.to_string(),
                msg: format!(
                    "no such file and not a built-in profile (built-in: {})",
                    BUILTIN.map(|b| b.0).join(", ")
                ),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|e| TraceError::io(name_or_path, e))?;
        Profile::from_toml(name_or_path, &text)
    }

    /// Size-bucket percentages in [`SIZE_LABELS`] order (missing labels are 0).
    pub fn size_vector(&self) -> [f64; SIZE_LABELS.len()] {
        SIZE_LABELS.map(|l| self.size_pct.get(l).copied().unwrap_or(0.0))
    }

    /// Depth-bucket percentages in [`QD_LABELS`] order (missing labels are 0).
    pub fn qd_vector(&self) -> [f64; QD_LABELS.len()] {
        QD_LABELS.map(|l| self.qd_pct.get(l).copied().unwrap_or(0.0))
    }

    fn validate(&self, name: &str) -> Result<()> {
        let err = |msg: String| TraceError::Profile {
            name: name.to_string(),
            msg,
        };
        for (table, map, labels) in [
            ("size_pct", &self.size_pct, &SIZE_LABELS[..]),
            ("qd_pct", &self.qd_pct, &QD_LABELS[..]),
        ] {
            for (k, v) in map {
                if !labels.contains(&k.as_str()) {
                    return Err(err(format!(
                        "unknown {table} label '{k}'; use one of: {}",
                        labels.join(", ")
                    )));
                }
                if !(v.is_finite() && *v >= 0.0) {
                    return Err(err(format!(
                        "{table}.{k} must be a percentage >= 0, found {v}"
                    )));
                }
            }
            let sum: f64 = map.values().sum();
            if (sum - 100.0).abs() > 0.5 {
                return Err(err(format!(
                    "{table} adds up to {sum:.2} %, not 100 %; put the rest in a bucket \
                     (for sizes, 'other' holds sizes between the listed ones)"
                )));
            }
        }
        if self.reads + self.writes == 0 {
            return Err(err("reads + writes must be > 0".to_string()));
        }
        for (k, v) in [
            ("gb_read", self.gb_read),
            ("gb_written", self.gb_written),
            ("footprint_gib", self.footprint_gib),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(err(format!("{k} must be >= 0, found {v}")));
            }
        }
        if self.footprint_gib < 0.001 {
            return Err(err(
                "footprint_gib must be at least 0.001 (1 MiB)".to_string()
            ));
        }
        if !(0.0..=100.0).contains(&self.sequential_pct) {
            return Err(err(format!(
                "sequential_pct must be within 0..100, found {}",
                self.sequential_pct
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse() {
        for (n, _) in BUILTIN {
            let p = Profile::load(n).unwrap();
            assert!(p.reads > 0, "{n}");
        }
        assert!(Profile::load("The Destroyer").is_ok());
        assert!(Profile::load("nope").is_err());
    }

    #[test]
    fn bad_profiles_say_what_to_fix() {
        let text = include_str!("../profiles/light.toml").replace("\"4K\" = 27.6", "\"4K\" = 7.6");
        let e = Profile::from_toml("x", &text).unwrap_err().to_string();
        assert!(e.contains("size_pct adds up to"), "{e}");
        let text = include_str!("../profiles/light.toml").replace("\"4K\" = 27.6", "\"5K\" = 27.6");
        let e = Profile::from_toml("x", &text).unwrap_err().to_string();
        assert!(e.contains("unknown size_pct label '5K'"), "{e}");
    }
}
