//! A job in one line, as tables and notes name it (`RandRead 4k QD32 T1`).

use super::{Access, Job, SizeShare};
use crate::size::format_size;
use std::fmt;

impl fmt::Display for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let split = |sizes: &[SizeShare]| {
            if sizes.len() == 1 {
                format_size(sizes[0].bytes)
            } else {
                sizes
                    .iter()
                    .map(|s| format!("{}/{}", format_size(s.bytes), percent(s.weight * 100.0)))
                    .collect::<Vec<_>>()
                    .join(":")
            }
        };
        let mut bs = split(&self.block_sizes);
        if !self.write_block_sizes.is_empty() {
            bs = format!("{bs},{}", split(&self.write_block_sizes));
        }
        write!(
            f,
            "{:?} {} QD{} T{}",
            self.access, bs, self.queue_depth, self.threads
        )?;
        if matches!(self.access, Access::Rw | Access::RandRw) {
            write!(f, " {}% read", percent(self.read_pct))?;
        }
        // random_pct decides the offsets; the access only gives its default (100 or 0).
        let default_random = if self.access.is_random() { 100.0 } else { 0.0 };
        if self.random_pct != default_random {
            write!(f, " {}% random", percent(self.random_pct))?;
        }
        if !self.distribution.is_uniform() {
            write!(f, " {}", self.distribution)?;
        }
        Ok(())
    }
}

/// A share for a label: whole numbers as they are, others to two decimals (`read_pct = 0.5`
/// was labelled "0% read", as if the job never read).
fn percent(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        let two = format!("{x:.2}");
        two.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}
