//! An SSD entry's rules: capacity, controller, buffer, NAND, FTL, SLC cache and power.

use super::*;
use crate::SimError;

impl DriveSpec {
    /// The rules of a ssd entry (its kind's tables are present, checked by the caller), table
    /// by table in the order a reader meets them.
    pub(super) fn validate_ssd(&self, file: &str) -> Result<(), SimError> {
        let missing = |table: &str| self.missing(file, table);
        let cap = self.capacity.as_ref().ok_or_else(|| missing("capacity"))?;
        let ctl = self
            .controller
            .as_ref()
            .ok_or_else(|| missing("controller"))?;
        let nand = self.nand.as_ref().ok_or_else(|| missing("nand"))?;
        let ftl = self.ftl.as_ref().ok_or_else(|| missing("ftl"))?;
        let buf = self.buffer.as_ref().ok_or_else(|| missing("buffer"))?;
        need_source(file, "capacity", &cap.source)?;
        need_source(file, "controller", &ctl.source)?;
        need_source(file, "nand", &nand.source)?;
        need_source(file, "ftl", &ftl.source)?;
        need_source(file, "buffer", &buf.source)?;
        check_nand_positive(file, nand)?;
        check_ssd_capacity(file, cap)?;
        check_controller(file, ctl)?;
        check_nand_bounds(file, nand)?;
        check_min_stored_fraction(file, ftl)?;
        check_nand_layout(file, nand)?;
        check_spare_capacity(file, cap, nand, ftl)?;
        check_compression(file, ftl)?;
        if let Some(c) = &self.slc_cache {
            check_slc_cache(file, c, cap, nand)?;
        }
        if let Some(p) = &self.power {
            check_ssd_power(file, p, ctl)?;
        }
        Ok(())
    }
}

/// Every count and time of the NAND is positive.
fn check_nand_positive(file: &str, nand: &NandSpec) -> Result<(), SimError> {
    let positive = [
        ("nand.channels", nand.channels as u64),
        ("nand.dies", nand.dies as u64),
        ("nand.planes", nand.planes as u64),
        ("nand.page_bytes", nand.page_bytes as u64),
        ("nand.pages_per_block", nand.pages_per_block as u64),
        ("nand.blocks_per_plane", nand.blocks_per_plane as u64),
        ("nand.read_ns", nand.read_ns),
        ("nand.program_ns", nand.program_ns),
    ];
    for (k, v) in positive {
        if v == 0 {
            return Err(bad(file, k, "must be positive"));
        }
    }
    Ok(())
}

/// The usable capacity is at least 1 MiB and no more than the model maps in memory.
fn check_ssd_capacity(file: &str, cap: &CapacitySpec) -> Result<(), SimError> {
    if cap.usable_bytes < MIN_DRIVE_BYTES {
        return Err(bad(
            file,
            "capacity.usable_bytes",
            format!("must be at least {MIN_DRIVE_BYTES} (1 MiB)"),
        ));
    }
    if cap.usable_bytes > MAX_SSD_BYTES {
        return Err(bad(
            file,
            "capacity.usable_bytes",
            format!(
                "at most {MAX_SSD_BYTES} (16 TB): the model maps every 4 KiB page, \
                 4 bytes each, in memory"
            ),
        ));
    }
    Ok(())
}

/// The controller has 1 to [`MAX_CORES`] cores.
fn check_controller(file: &str, ctl: &ControllerSpec) -> Result<(), SimError> {
    // 0 cores would process nothing; it was taken as 1 without a word.
    if ctl.cores.is_some_and(|c| c == 0 || c > MAX_CORES) {
        return Err(bad(
            file,
            "controller.cores",
            format!("must be 1 to {MAX_CORES} (or left out: 1)"),
        ));
    }
    Ok(())
}

/// The NAND's bus width, geometry and times stay within what any NAND has.
fn check_nand_bounds(file: &str, nand: &NandSpec) -> Result<(), SimError> {
    if nand.bus_bytes.is_some_and(|b| !(1..=8).contains(&b)) {
        return Err(bad(
            file,
            "nand.bus_bytes",
            "must be 1 to 8: the NAND bus's width in bytes (1 for ONFI and Toggle)",
        ));
    }
    // Bounds far outside any NAND, so the arithmetic on the geometry and the
    // energy of booked work stay meaningful.
    let at_most = [
        ("nand.planes", nand.planes as u64, 16),
        ("nand.pages_per_block", nand.pages_per_block as u64, 1 << 14),
        ("nand.page_bytes", nand.page_bytes as u64, 1 << 16),
        (
            "nand.blocks_per_plane",
            nand.blocks_per_plane as u64,
            1 << 20,
        ),
        ("nand.dies", nand.dies as u64, 1 << 12),
        ("nand.read_ns", nand.read_ns, 10_000_000),
        ("nand.program_ns", nand.program_ns, 100_000_000),
        ("nand.erase_ns", nand.erase_ns, 1_000_000_000),
    ];
    for (k, v, max) in at_most {
        if v > max {
            return Err(bad(
                file,
                k,
                format!("{v} is more than any NAND has: at most {max}"),
            ));
        }
    }
    Ok(())
}

/// Compressed data keeps a share of its bytes above 0 and at most all of them.
fn check_min_stored_fraction(file: &str, ftl: &FtlSpec) -> Result<(), SimError> {
    if ftl
        .min_stored_fraction
        .is_some_and(|f| !(f > 0.0 && f <= 1.0))
    {
        return Err(bad(
            file,
            "ftl.min_stored_fraction",
            "must be above 0 and at most 1: the least share of its bytes that \
             compressed data keeps on NAND",
        ));
    }
    Ok(())
}

/// Dies spread evenly over channels, cells the model knows, whole 4 KiB pages and a bus
/// that moves data.
fn check_nand_layout(file: &str, nand: &NandSpec) -> Result<(), SimError> {
    if nand.dies % nand.channels != 0 {
        return Err(bad(
            file,
            "nand.dies",
            format!(
                "{} dies cannot be spread evenly over {} channels",
                nand.dies, nand.channels
            ),
        ));
    }
    if !matches!(nand.bits_per_cell, None | Some(1) | Some(2)) {
        return Err(bad(
            file,
            "nand.bits_per_cell",
            "the model knows 1 (uniform pages) or 2 (MLC lower and upper pages); \
             for TLC or QLC leave it out and the typical times apply to every page",
        ));
    }
    if nand.page_bytes % 4096 != 0 {
        return Err(bad(file, "nand.page_bytes", "must be a multiple of 4096"));
    }
    if nand.bus_mt_per_s.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Err(bad(file, "nand.bus_mt_per_s", "must be positive"));
    }
    Ok(())
}

/// The FTL's compression is one the model knows.
fn check_compression(file: &str, ftl: &FtlSpec) -> Result<(), SimError> {
    match ftl.compression.as_deref() {
        None | Some("none") | Some("sandforce") => Ok(()),
        Some(o) => Err(bad(
            file,
            "ftl.compression",
            format!("unknown compression '{o}': use none or sandforce"),
        )),
    }
}

/// The raw NAND holds the usable capacity and enough spare blocks per die for the FTL.
fn check_spare_capacity(
    file: &str,
    cap: &CapacitySpec,
    nand: &NandSpec,
    ftl: &FtlSpec,
) -> Result<(), SimError> {
    if ftl.parity_die && nand.dies < 2 {
        return Err(bad(
            file,
            "ftl.parity_die",
            "needs at least 2 dies: a die's worth of the array holds the others' parity",
        ));
    }
    let raw = [
        nand.planes as u64,
        nand.pages_per_block as u64,
        nand.page_bytes as u64,
        data_blocks_per_plane(nand, ftl) as u64,
        nand.dies as u64,
    ]
    .iter()
    .try_fold(1u64, |acc, &x| acc.checked_mul(x))
    .filter(|&raw| raw <= u64::MAX / 2)
    .ok_or_else(|| {
        bad(
            file,
            "nand",
            "dies × planes × blocks × pages × page size is more bytes than the \
             model can count",
        )
    })?;
    if cap.usable_bytes > raw {
        return Err(bad(
            file,
            "capacity.usable_bytes",
            format!(
                "{} usable bytes is above the raw NAND capacity of {raw} bytes \
                 (dies × planes × blocks × pages × page size, less a parity die's worth)",
                cap.usable_bytes
            ),
        ));
    }
    // The FTL collects when a die's free space drops below this many blocks: at 0
    // it never does, and the drive writes on without reclaiming anything.
    if ftl.gc_free_blocks == Some(0) {
        return Err(bad(
            file,
            "ftl.gc_free_blocks",
            "must be at least 1: garbage collection runs when a die has fewer free \
             blocks than this, so at 0 the drive would never collect (or leave it \
             out: 2)",
        ));
    }
    let gc = ftl.gc_free_blocks.unwrap_or(2) as u64;
    let spare_blocks = (raw - cap.usable_bytes) / block_bytes(nand);
    if spare_blocks < (gc + 2) * nand.dies as u64 {
        return Err(bad(
            file,
            "capacity.usable_bytes",
            format!(
                "only {spare_blocks} spare blocks for {} dies: the FTL needs at least \
                 {} per die (GC threshold + open blocks)",
                nand.dies,
                gc + 2
            ),
        ));
    }
    Ok(())
}

/// An SLC cache programs faster than the array and holds no more than the drive.
fn check_slc_cache(
    file: &str,
    c: &SlcCacheSpec,
    cap: &CapacitySpec,
    nand: &NandSpec,
) -> Result<(), SimError> {
    need_source(file, "slc_cache", &c.source)?;
    if c.program_ns == 0 || c.program_ns >= nand.program_ns {
        return Err(bad(
            file,
            "slc_cache.program_ns",
            format!(
                "an SLC program must be positive and faster than the array's \
                 nand.program_ns ({} ns)",
                nand.program_ns
            ),
        ));
    }
    let bytes = c.static_bytes.saturating_add(c.dynamic_bytes);
    if bytes == 0 || bytes > cap.usable_bytes {
        return Err(bad(
            file,
            "slc_cache.static_bytes",
            format!(
                "the cache ({bytes} bytes with dynamic_bytes) must hold something \
                 and no more than the drive's {} usable bytes",
                cap.usable_bytes
            ),
        ));
    }
    Ok(())
}

/// A power limit leaves the NAND some power above the controller's and the idle draw.
fn check_ssd_power(file: &str, p: &PowerSpec, ctl: &ControllerSpec) -> Result<(), SimError> {
    need_source(file, "power", &p.source)?;
    let busy_w = p.idle_w + p.active_w + p.controller_w * ctl.cores.unwrap_or(1).max(1) as f64;
    if p.max_w.is_some_and(|m| !(m.is_finite() && m > busy_w)) {
        return Err(bad(
            file,
            "power.max_w",
            format!(
                "must be above idle_w, active_w and controller_w for every \
                 core ({busy_w} W): the limit has to leave the NAND some power"
            ),
        ));
    }
    Ok(())
}
