//! Block-size splits in fio's `bssplit` forms.

use crate::size::parse_size;
use serde::{Deserialize, Serialize};

/// One block size and its share of I/Os in a split.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeShare {
    /// Block size in bytes.
    pub bytes: u64,
    /// Weight (percent of I/Os; normalised if the weights do not add up to 100).
    pub weight: f64,
}

/// Parses fio's `bssplit` form: `512/10:4k/60:64k/30` (size/percent pairs, `:`-separated).
///
/// As in fio, a share may be left blank (`4k/50:64k/`, or a size alone): the blank entries
/// split what the given shares leave of 100 evenly. fio's separate read and write splits
/// (`READ,WRITE`) are refused: one split serves both directions here.
pub fn parse_bssplit(s: &str) -> Result<Vec<SizeShare>, String> {
    if s.contains(',') {
        return Err(format!(
            "'{s}' gives separate read and write splits (fio's READ,WRITE form), which are not \
             supported: give one split, used for reads and writes alike, or run the reads and \
             the writes as two jobs, each with its own split"
        ));
    }
    let mut parsed: Vec<(u64, Option<f64>)> = Vec::new();
    let mut blanks = Vec::new();
    for part in s.split(':').filter(|p| !p.trim().is_empty()) {
        let (size, weight) = part.split_once('/').unwrap_or((part, ""));
        let bytes = parse_size(size).map_err(|e| match part.contains('/') {
            true => e.to_string(),
            false => format!("{e}; an entry of the split is SIZE/PERCENT, e.g. 4k/60"),
        })?;
        let weight = weight.trim();
        if weight.is_empty() {
            blanks.push(part.trim());
            parsed.push((bytes, None));
            continue;
        }
        let weight: f64 = weight.parse().map_err(|_| {
            format!("'{weight}' in '{part}' is not a percentage (e.g. 4k/60, or 4k/ for the rest)")
        })?;
        parsed.push((bytes, Some(weight)));
    }
    if parsed.is_empty() {
        return Err("the split is empty".into());
    }
    let given: f64 = parsed.iter().filter_map(|(_, w)| *w).sum();
    let rest = if blanks.is_empty() {
        0.0
    } else if !given.is_finite() {
        return Err("weights must be finite numbers, none negative, not all zero".into());
    } else if given >= 100.0 {
        return Err(format!(
            "the given weights add up to {given}, which leaves nothing for {}; give every \
             size a weight, or make the given ones add up to less than 100",
            blanks.join(", ")
        ));
    } else {
        (100.0 - given) / blanks.len() as f64
    };
    Ok(parsed
        .into_iter()
        .map(|(bytes, weight)| SizeShare {
            bytes,
            weight: weight.unwrap_or(rest),
        })
        .collect())
}

/// A block-size split: sizes and their weights.
pub type Split = Vec<SizeShare>;

/// Parses fio's `READ,WRITE` form of a split (`4k/50:8k/50,64k/100`; a third, trim, part is
/// ignored, as iolab issues no TRIM): the reads' split and the writes' where it differs. A
/// blank part is `None`: the reads then take the default size, the writes the reads' split.
pub fn parse_bssplit_rw(s: &str) -> Result<(Option<Split>, Option<Split>), String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() == 1 {
        return parse_bssplit(s).map(|r| (Some(r), None));
    }
    if parts.len() > 3 {
        return Err(format!(
            "'{s}' has {} comma-separated splits; give READ,WRITE (fio's form)",
            parts.len()
        ));
    }
    let part = |p: &str| -> Result<Option<Split>, String> {
        if p.trim().is_empty() {
            Ok(None)
        } else {
            parse_bssplit(p).map(Some)
        }
    };
    let (read, write) = (part(parts[0])?, part(parts[1])?);
    if read.is_none() && write.is_none() {
        return Err(format!("'{s}' gives no split for reads or writes"));
    }
    let write = if write == read { None } else { write };
    Ok((read, write))
}
