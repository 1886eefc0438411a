//! A hard disk entry's rules.

use super::*;
use crate::SimError;

impl DriveSpec {
    /// The rules of a hdd entry (its kind's tables are present, checked by the caller).
    pub(super) fn validate_hdd(&self, file: &str) -> Result<(), SimError> {
        let missing = |table: &str| self.missing(file, table);
        let h = self.hdd.as_ref().ok_or_else(|| missing("hdd"))?;
        need_source(file, "hdd", &h.source)?;
        // A command waits up to a revolution (60e9 / rpm ns) for its sector: at
        // 0.001 rpm that is 17 hours, and the disk does no I/O at all.
        if !(MIN_RPM..=MAX_RPM).contains(&h.rpm) {
            return Err(bad(
                file,
                "hdd.rpm",
                format!(
                    "{} is no disk's spindle speed: use {MIN_RPM} to {MAX_RPM} (disks spin \
                     3600 to 15000 rpm; the model waits up to a revolution, 60e9 / rpm ns, \
                     per command)",
                    h.rpm
                ),
            ));
        }
        if h.outer_bytes_per_s <= 0.0 || h.inner_bytes_per_s <= 0.0 {
            return Err(bad(file, "hdd", "media rates must be positive"));
        }
        if h.capacity_bytes < MIN_DRIVE_BYTES {
            return Err(bad(
                file,
                "hdd.capacity_bytes",
                format!("must be at least {MIN_DRIVE_BYTES} (1 MiB)"),
            ));
        }
        if h.seek_full_ns < h.seek_track_ns {
            return Err(bad(
                file,
                "hdd.seek_full_ns",
                format!(
                    "a full-stroke seek cannot be shorter than a track-to-track one \
                     (seek_track_ns = {})",
                    h.seek_track_ns
                ),
            ));
        }
        if h.write_cache_bytes > h.capacity_bytes {
            return Err(bad(
                file,
                "hdd.write_cache_bytes",
                format!(
                    "{} is more than the disk holds ({} bytes): a write cache is a \
                     buffer of a few MiB to a few hundred (0 writes through)",
                    h.write_cache_bytes, h.capacity_bytes
                ),
            ));
        }
        if h.write_cache_segments == Some(0) {
            return Err(bad(
                file,
                "hdd.write_cache_segments",
                "must be at least 1 (leave it out for a cache limited by its bytes alone)",
            ));
        }
        if h.inner_bytes_per_s > h.outer_bytes_per_s {
            return Err(bad(
                file,
                "hdd.inner_bytes_per_s",
                "must not exceed outer_bytes_per_s: the outer zones hold more sectors \
                 per track, so the media rate falls towards the spindle",
            ));
        }
        Ok(())
    }
}
