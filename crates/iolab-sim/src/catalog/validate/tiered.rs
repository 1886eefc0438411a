//! A tiered drive's rules: its fast and slow members and how data moves between them.

use super::*;
use crate::SimError;

impl DriveSpec {
    /// The rules of a tiered entry (its kind's tables are present, checked by the caller).
    pub(super) fn validate_tiered(&self, file: &str) -> Result<(), SimError> {
        let missing = |table: &str| self.missing(file, table);
        let t = self.tiered.as_ref().ok_or_else(|| missing("tiered"))?;
        need_source(file, "tiered", &t.source)?;
        if !matches!(t.mode.as_str(), "tier" | "cache") {
            return Err(bad(file, "tiered.mode", "use tier or cache"));
        }
        if t.extent_bytes == 0 || t.extent_bytes % 4096 != 0 {
            return Err(bad(
                file,
                "tiered.extent_bytes",
                "must be a positive multiple of 4096",
            ));
        }
        // The fast member holds fast_bytes / extent_bytes extents (or cache lines): with
        // none, nothing is ever promoted and the volume runs as its slow drive alone.
        if t.fast_bytes < t.extent_bytes {
            return Err(bad(
                file,
                "tiered.fast_bytes",
                format!(
                    "{} holds no extent of tiered.extent_bytes = {}: give the fast drive \
                     at least one",
                    t.fast_bytes, t.extent_bytes
                ),
            ));
        }
        // The tier counts an extent's accesses in a byte, stopping at 255, and promotes
        // when the count reaches this: at 0 (counted before compared) or above 255 it
        // never does, and the volume runs as its slow drive alone.
        if !(1..=MAX_PROMOTE_AFTER).contains(&t.promote_after) {
            return Err(bad(
                file,
                "tiered.promote_after",
                format!(
                    "{} accesses: use 1 to {MAX_PROMOTE_AFTER} (1 promotes an extent on \
                     its first access)",
                    t.promote_after
                ),
            ));
        }
        if t.mode == "cache" && t.extent_bytes > 32 * 4096 {
            return Err(bad(
                file,
                "tiered.extent_bytes",
                "a cache tracks the 4 KiB blocks it holds of each line: at most 131072 (128 KiB)",
            ));
        }
        if t.ram_bytes > MAX_RAM_TIER_BYTES {
            return Err(bad(
                file,
                "tiered.ram_bytes",
                format!("at most {MAX_RAM_TIER_BYTES} (1 TiB)"),
            ));
        }
        if t.ram_bytes % 4096 != 0 {
            return Err(bad(
                file,
                "tiered.ram_bytes",
                "must be a multiple of 4096 (the RAM layer keeps 4 KiB lines); 0 for none",
            ));
        }
        if t.ram_bytes > 0 && !(t.ram_bytes_per_s.is_finite() && t.ram_bytes_per_s > 0.0) {
            return Err(bad(
                file,
                "tiered.ram_bytes_per_s",
                "a RAM layer needs its copy rate in bytes/s (e.g. half the memory's peak bandwidth)",
            ));
        }
        if !(t.promote_bytes_per_s.is_finite() && t.promote_bytes_per_s >= 0.0) {
            return Err(bad(
                file,
                "tiered.promote_bytes_per_s",
                "the mover's rate in bytes/s: a positive number (leave it out for an unpaced mover)",
            ));
        }
        if t.promote_bytes_per_s > 0.0 && t.mode != "tier" {
            return Err(bad(
                file,
                "tiered.promote_bytes_per_s",
                "only a tier (mode = \"tier\") moves extents in the background; a cache copies \
                 what it reads as it reads it: remove the key",
            ));
        }
        Ok(())
    }
}
