//! I/O priorities per request (fio's `prio`/`prioclass` and `cmdprio*`): the job's default
//! priority, and shares of its reads and writes, by block size, issued at other priorities.
//! Pure: the driver draws a number per I/O and the target carries the value the kernel takes
//! (`ioprio`: class << 13 | hint << 3 | level).
//!
//! A share is written `BS/PCT/CLASS/LEVEL[/HINT]`, shares joined by `:` — fio's
//! `cmdprio_bssplit` form — where `BS` is a block size or `*` for every size, `PCT` the percent
//! of that size's I/Os, `CLASS` `rt`, `be` or `idle` (or fio's 1, 2, 3) and `LEVEL` 0–7 (0 the
//! highest). I/Os no share picks go at the job's default.

use crate::job::Direction;
use serde::{Deserialize, Serialize};

/// The kernel's priority classes.
const CLASSES: [(&str, u16); 3] = [("rt", 1), ("be", 2), ("idle", 3)];
const CLASS_SHIFT: u16 = 13;
const HINT_SHIFT: u16 = 3;
/// Hints fit in the 10 bits between level and class.
const MAX_HINT: u16 = (1 << 10) - 1;

/// A job's I/O priorities, as its job key `io_priority` gives them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoPriority {
    /// The job's default class (`rt`, `be`, `idle`); none: the thread's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// The default level, 0–7 (default 4 with a class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    /// The default's hint (device-specific, e.g. command duration limits; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<u16>,
    /// Shares of the reads at other priorities (`64k/25/rt/1:*/10/be/0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    /// Shares of the writes at other priorities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
}

/// One share: I/Os of `block` bytes (0: any size), `pct` percent of them, at `ioprio`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// Block size the share applies to (0: every size).
    pub block: u64,
    /// Percent of that size's I/Os, in hundredths of a percent.
    pub pct_centi: u32,
    /// The value the kernel takes.
    pub ioprio: u16,
}

/// The kernel's `ioprio` value for a class name or number, level and hint.
pub fn ioprio(class: &str, level: u16, hint: u16) -> Result<u16, String> {
    let c = CLASSES
        .iter()
        .find(|(name, n)| *name == class || n.to_string() == class)
        .map(|(_, n)| *n)
        .ok_or_else(|| format!("class '{class}' is not rt, be or idle (1, 2, 3)"))?;
    if level > 7 {
        return Err(format!("level {level} is not 0–7"));
    }
    if hint > MAX_HINT {
        return Err(format!("hint {hint} is past {MAX_HINT}"));
    }
    Ok(c << CLASS_SHIFT | hint << HINT_SHIFT | level)
}

/// A priority as people write it: `rt/1`, `be/4/2` (class/level/hint), or `none`.
pub fn describe(ioprio: u16) -> String {
    if ioprio == 0 {
        return "none".into();
    }
    let class = ioprio >> CLASS_SHIFT;
    let name = CLASSES
        .iter()
        .find(|(_, n)| *n == class)
        .map_or("?", |(s, _)| s);
    let hint = (ioprio >> HINT_SHIFT) & MAX_HINT;
    let level = ioprio & 7;
    if hint == 0 {
        format!("{name}/{level}")
    } else {
        format!("{name}/{level}/{hint}")
    }
}

/// Parses shares `BS/PCT/CLASS/LEVEL[/HINT]:…`; `size` reads a block size.
pub fn parse_shares(
    text: &str,
    size: &dyn Fn(&str) -> Result<u64, String>,
) -> Result<Vec<Share>, String> {
    let mut out: Vec<Share> = Vec::new();
    for part in text.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let f: Vec<&str> = part.split('/').map(str::trim).collect();
        if !(4..=5).contains(&f.len()) {
            return Err(format!("'{part}' is not BS/PCT/CLASS/LEVEL[/HINT]"));
        }
        let block = if f[0] == "*" { 0 } else { size(f[0])? };
        let pct: f64 = f[1]
            .parse()
            .ok()
            .filter(|p| (0.0..=100.0).contains(p))
            .ok_or_else(|| format!("'{}' in '{part}' is not a percentage", f[1]))?;
        let number = |s: &str| {
            s.parse::<u16>()
                .map_err(|_| format!("'{s}' in '{part}' is not a number"))
        };
        let hint = f.get(4).map_or(Ok(0), |h| number(h))?;
        let ioprio = ioprio(f[2], number(f[3])?, hint)?;
        out.push(Share {
            block,
            pct_centi: (pct * 100.0).round() as u32,
            ioprio,
        });
    }
    for b in out.iter().map(|s| s.block) {
        let total: u32 = out
            .iter()
            .filter(|s| s.block == b)
            .map(|s| s.pct_centi)
            .sum();
        if total > 10_000 {
            return Err(format!(
                "the shares of {} add up to {}% (at most 100)",
                if b == 0 {
                    "*".to_string()
                } else {
                    b.to_string()
                },
                total as f64 / 100.0
            ));
        }
    }
    Ok(out)
}

/// A job's priorities, resolved: what each I/O is issued at.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Priorities {
    /// The default (0: none, the thread's own).
    pub default: u16,
    /// Shares of reads.
    pub read: Vec<Share>,
    /// Shares of writes.
    pub write: Vec<Share>,
}

impl IoPriority {
    /// Resolves the key (sizes read by `size`), or says what is wrong.
    pub fn resolve(
        &self,
        size: &dyn Fn(&str) -> Result<u64, String>,
    ) -> Result<Priorities, String> {
        let default = match (&self.class, self.level) {
            (Some(c), l) => ioprio(c, l.unwrap_or(4) as u16, self.hint.unwrap_or(0))?,
            (None, None) if self.hint.is_none() => 0,
            (None, _) => return Err("a level or hint needs a class".into()),
        };
        let shares = |t: &Option<String>| {
            t.as_deref()
                .map_or(Ok(Vec::new()), |t| parse_shares(t, size))
        };
        Ok(Priorities {
            default,
            read: shares(&self.read)?,
            write: shares(&self.write)?,
        })
    }
}

impl IoPriority {
    /// [`IoPriority::resolve`] with iolab's sizes (`64k`, `1m`).
    pub fn priorities(&self) -> Result<Priorities, String> {
        self.resolve(&|s| crate::size::parse_size(s).map_err(|e| e.to_string()))
    }
}

impl Priorities {
    /// Whether any I/O goes at a priority of its own.
    pub fn any(&self) -> bool {
        self.default != 0 || !self.read.is_empty() || !self.write.is_empty()
    }

    /// The priority of an I/O of `len` bytes in direction `dir`, given a uniform draw `u` in
    /// `[0, 1)`: the share of its size (or of `*`) the draw falls in, else the default.
    pub fn pick(&self, dir: Direction, len: u64, u: f64) -> u16 {
        // TRIMs go at the default: fio's shares are of reads and writes.
        let shares: &[_] = match dir {
            Direction::Read => &self.read,
            Direction::Write => &self.write,
            Direction::Trim => &[],
        };
        let sized = shares.iter().any(|s| s.block == len);
        let x = (u * 10_000.0) as u32;
        let mut below = 0;
        for s in shares
            .iter()
            .filter(|s| s.block == len || (!sized && s.block == 0))
        {
            below += s.pct_centi;
            if x < below {
                return s.ioprio;
            }
        }
        self.default
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(s: &str) -> Result<u64, String> {
        match s {
            "64k" => Ok(65536),
            "1m" | "1024k" => Ok(1 << 20),
            _ => Err(format!("bad size {s}")),
        }
    }

    #[test]
    fn values_are_the_kernels() {
        assert_eq!(ioprio("rt", 0, 0).unwrap(), 1 << 13);
        assert_eq!(ioprio("3", 2, 0).unwrap(), 3 << 13 | 2);
        assert_eq!(ioprio("be", 0, 3).unwrap(), 2 << 13 | 3 << 3);
        assert!(ioprio("bulk", 0, 0).is_err() && ioprio("rt", 8, 0).is_err());
        assert_eq!(describe(ioprio("idle", 7, 0).unwrap()), "idle/7");
        assert_eq!(describe(ioprio("be", 1, 2).unwrap()), "be/1/2");
    }

    #[test]
    fn draws_fall_in_the_shares_of_their_block_size() {
        let p = IoPriority {
            class: Some("be".into()),
            level: Some(7),
            hint: None,
            read: Some("64k/25/1/1:64k/75/idle/2:*/10/rt/0".into()),
            write: None,
        }
        .resolve(&size)
        .unwrap();
        let (rt1, idle2, rt0) = (
            ioprio("rt", 1, 0).unwrap(),
            ioprio("idle", 2, 0).unwrap(),
            ioprio("rt", 0, 0).unwrap(),
        );
        let be7 = ioprio("be", 7, 0).unwrap();
        assert_eq!(p.pick(Direction::Read, 65536, 0.0), rt1);
        assert_eq!(p.pick(Direction::Read, 65536, 0.2499), rt1);
        assert_eq!(p.pick(Direction::Read, 65536, 0.25), idle2);
        assert_eq!(p.pick(Direction::Read, 65536, 0.9999), idle2);
        // Other sizes: the `*` share, then the default.
        assert_eq!(p.pick(Direction::Read, 1 << 20, 0.05), rt0);
        assert_eq!(p.pick(Direction::Read, 1 << 20, 0.5), be7);
        assert_eq!(p.pick(Direction::Write, 65536, 0.0), be7);
        assert!(parse_shares("64k/60/rt/0:64k/50/be/0", &size)
            .unwrap_err()
            .contains("110%"));
        assert!(parse_shares("64k/60", &size).is_err());
    }
}
