//! The cross-field rules of catalog entries: every entry is checked after parsing, and refused
//! with its file and key when a rule fails. Rules shared by all kinds are here; each kind of
//! drive has its own module, and platforms theirs.

mod card;
mod hdd;
mod platform;
mod ssd;
mod tiered;

use super::*;
use crate::SimError;
use iolab_link::Link;
use std::collections::BTreeMap;

pub(super) fn bad(file: &str, key: impl Into<String>, message: impl Into<String>) -> SimError {
    SimError::Catalog {
        file: file.to_string(),
        key: key.into(),
        message: message.into(),
    }
}

/// The longest any one operation of a modelled part may take. A time above it is a unit
/// mistake (seconds or microseconds written as nanoseconds), and adding such times would
/// overflow the model's u64 nanosecond clock.
pub(super) const MAX_OPERATION_NS: f64 = 1e12;

/// Every number of an entry, by its key as written: finite and not negative; times (`*_ns`)
/// at most [`MAX_OPERATION_NS`]; data rates (`*_bytes_per_s`) at least 1 kB/s and bus rates
/// (`*_mt_per_s`) at least 1 MT/s, since the model turns a rate into nanoseconds per byte and
/// a zero or vanishing one would give infinite times that wrap around; queue depths at least 1.
/// Checked on the TOML itself because NaN and infinities are valid TOML floats.
pub(super) fn check_numbers(file: &str, table: &toml::Table, prefix: &str) -> Result<(), SimError> {
    for (k, v) in table {
        let key = format!("{prefix}{k}");
        check_value(file, &key, k, v)?;
    }
    Ok(())
}

pub(super) fn check_value(
    file: &str,
    key: &str,
    name: &str,
    v: &toml::Value,
) -> Result<(), SimError> {
    let x = match v {
        toml::Value::Table(t) => return check_numbers(file, t, &format!("{key}.")),
        toml::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_value(file, &format!("{key}[{i}]"), name, item)?;
            }
            return Ok(());
        }
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        _ => return Ok(()),
    };
    let rule = if !x.is_finite() || x < 0.0 {
        Some("must be a finite number, not negative")
    } else if name.ends_with("_ns") && x > MAX_OPERATION_NS {
        Some("is over 1000 s for one operation: times are in nanoseconds")
    } else if name.ends_with("_bytes_per_s") && x < 1e3 {
        Some("must be at least 1 kB/s: rates are in bytes per second (leave an optional rate out for no limit)")
    } else if name.ends_with("_mt_per_s") && x < 1.0 {
        Some("must be at least 1 MT/s: bus rates are in megatransfers per second")
    } else if name == "queue_depth" && x < 1.0 {
        Some("must be at least 1 (or left out where it is optional)")
    } else {
        None
    };
    match rule {
        // Very small or large values in exponent form, as a user would write them.
        Some(r) if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e16) => {
            Err(bad(file, key, format!("{x:e} {r}")))
        }
        Some(r) => Err(bad(file, key, format!("{x} {r}"))),
        None => Ok(()),
    }
}

/// An entry's TOML as a table, for [`check_numbers`] (called once the typed parse has
/// succeeded, so an error here is not expected).
pub(super) fn raw_table(file: &str, text: &str) -> Result<toml::Table, SimError> {
    text.parse::<toml::Table>().map_err(|e| SimError::Parse {
        file: file.to_string(),
        message: e.to_string(),
    })
}

/// `key` names the table ("" for the entry's top level, whose key is plain `source`).
pub(super) fn need_source(file: &str, key: &str, s: &str) -> Result<(), SimError> {
    if s.trim().is_empty() {
        return Err(bad(
            file,
            if key.is_empty() {
                "source".to_string()
            } else {
                format!("{key}.source")
            },
            "every table must cite its public source",
        ));
    }
    Ok(())
}

pub(super) fn check_link(
    file: &str,
    key: &str,
    name: &str,
    local: &BTreeMap<String, LinkSpec>,
) -> Result<(), SimError> {
    if parse_std_link(name).is_some() || local.contains_key(name) {
        Ok(())
    } else {
        Err(bad(
            file,
            key,
            format!(
                "unknown link '{name}': use sata1.5/sata3/sata6, pcie<gen>x<lanes>, dmi1–dmi4, \
                 or define [links.{name}]"
            ),
        ))
    }
}

pub(super) fn check_link_spec(file: &str, key: &str, l: &LinkSpec) -> Result<(), SimError> {
    need_source(file, key, &l.source)?;
    match (&l.link, l.bytes_per_s) {
        (Some(s), None) => {
            let Some(std) = parse_std_link(s) else {
                return Err(bad(
                    file,
                    format!("{key}.link"),
                    format!(
                        "unknown link '{s}': use sata1.5/sata3/sata6, pcie<gen>x<lanes> (gen 1–5, \
                         x1/x2/x4/x8/x16), dmi1–dmi4, or give bytes_per_s instead for a pipe of \
                         your own"
                    ),
                ));
            };
            // A standard link's directions are its standard's: SATA is one pipe, PCIe and DMI
            // carry both ways at once.
            if l.half_duplex {
                return Err(bad(
                    file,
                    format!("{key}.half_duplex"),
                    format!(
                        "a standard link's duplex is its standard's ({s} is {}): remove it, or \
                         give bytes_per_s for a custom pipe",
                        if matches!(std, Link::Sata { .. }) {
                            "half-duplex already"
                        } else {
                            "full-duplex"
                        }
                    ),
                ));
            }
            check_payload_is_read(file, &format!("{key}.max_payload_bytes"), Some(std), l)?;
        }
        (None, Some(r)) if r > 0.0 && r.is_finite() => {
            check_payload_is_read(file, &format!("{key}.max_payload_bytes"), None, l)?;
        }
        _ => {
            return Err(bad(
                file,
                key,
                "give either link (a standard link) or a positive bytes_per_s",
            ))
        }
    }
    check_max_payload(
        file,
        &format!("{key}.max_payload_bytes"),
        l.max_payload_bytes,
    )?;
    check_bursts(file, &format!("{key}.bursts"), l)
}

/// Bursts frame a custom pipe (`bytes_per_s`); a standard link has its own framing (TLPs,
/// FISes), which they would silently stand beside. Their sizes count a transfer's bursts
/// and requests, so they are whole and positive.
fn check_bursts(file: &str, key: &str, l: &LinkSpec) -> Result<(), SimError> {
    let Some(b) = l.bursts else {
        return Ok(());
    };
    if l.link.is_some() {
        return Err(bad(
            file,
            key,
            "a standard link is framed by its standard (PCIe TLPs, SATA FISes): remove bursts, \
             or give bytes_per_s for a pipe of your own",
        ));
    }
    for (name, bytes) in [
        ("bytes", b.bytes),
        ("read_request_bytes", b.read_request_bytes),
    ] {
        if bytes == 0 {
            return Err(bad(
                file,
                format!("{key}.{name}"),
                "0 bytes moves nothing: give the largest transfer in bytes (PCI-X: bursts end \
                 at the 128-byte disconnect boundary, reads ask for 512 bytes by default)",
            ));
        }
    }
    // Their times are numbers like every other: refused when negative or not finite before
    // they get here.
    Ok(())
}

/// A payload size counts the TLPs of a PCIe-like link; a SATA link (FISes) or a custom pipe
/// (`bytes_per_s`, `std` = `None`) has none, and the size would be silently ignored.
pub(super) fn check_payload_is_read(
    file: &str,
    key: &str,
    std: Option<Link>,
    l: &LinkSpec,
) -> Result<(), SimError> {
    match (l.max_payload_bytes, std) {
        (Some(_), None | Some(Link::Sata { .. })) => Err(bad(
            file,
            key,
            "only a PCIe or DMI link has a max payload size (its TLPs): remove it",
        )),
        _ => Ok(()),
    }
}

/// A PCIe max payload size is a power of two from 128 to 4096 bytes (the model counts a
/// transfer's packets with it, and would divide by zero on 0).
pub(super) fn check_max_payload(file: &str, key: &str, mps: Option<u32>) -> Result<(), SimError> {
    match mps {
        Some(mps) if !mps.is_power_of_two() || !(128..=4096).contains(&mps) => Err(bad(
            file,
            key,
            format!("{mps} is not a PCIe max payload size (128, 256, … 4096)"),
        )),
        _ => Ok(()),
    }
}

impl DriveSpec {
    /// `interface.max_payload_bytes` sizes the TLPs of a PCIe interface; a SATA one has none,
    /// and a tiered drive's members attach with their own interfaces.
    fn check_interface_payload_is_read(&self, file: &str) -> Result<(), SimError> {
        let key = "interface.max_payload_bytes";
        if self.interface.max_payload_bytes.is_none() {
            return Ok(());
        }
        if self.kind == DriveKind::Tiered {
            return Err(bad(
                file,
                key,
                "a tiered drive's members attach with their own interfaces: give it in the \
                 fast or slow drive's entry",
            ));
        }
        if matches!(
            parse_std_link(&self.interface.link),
            Some(Link::Sata { .. })
        ) {
            return Err(bad(
                file,
                key,
                "only a PCIe interface has a max payload size (its TLPs): remove it",
            ));
        }
        Ok(())
    }

    /// Checks every cross-field rule; `file` names the entry in errors.
    pub fn validate(&self, file: &str) -> Result<(), SimError> {
        need_source(file, "", &self.source)?;
        need_source(file, "interface", &self.interface.source)?;
        for (n, l) in &self.links {
            check_link_spec(file, &format!("links.{n}"), l)?;
        }
        // The interface is what a port negotiates with (SATA generations, PCIe generations and
        // lanes), so it is a standard link; [links] are the hops of a card's own path, which no
        // port negotiates with.
        if parse_std_link(&self.interface.link).is_none() {
            let name = &self.interface.link;
            return Err(bad(
                file,
                "interface.link",
                if self.links.contains_key(name) {
                    format!(
                        "'{name}' names one of this entry's [links], which serve card.path only: \
                         a drive's interface is a standard link a port negotiates with (sata1.5, \
                         sata3, sata6 or pcie<gen>x<lanes>)"
                    )
                } else {
                    format!(
                        "unknown link '{name}': a drive's interface is a standard link a port \
                         negotiates with (sata1.5, sata3, sata6 or pcie<gen>x<lanes>)"
                    )
                },
            ));
        }
        check_max_payload(
            file,
            "interface.max_payload_bytes",
            self.interface.max_payload_bytes,
        )?;
        self.check_interface_payload_is_read(file)?;
        // The model reads each table for some kinds only: one of another kind (a table left
        // from a copied entry, or a mistyped kind) would be silently ignored.
        let tables = [
            ("capacity", self.capacity.is_some(), "an SSD's"),
            ("controller", self.controller.is_some(), "an SSD's"),
            ("buffer", self.buffer.is_some(), "an SSD's"),
            ("nand", self.nand.is_some(), "an SSD's"),
            ("ftl", self.ftl.is_some(), "an SSD's"),
            ("slc_cache", self.slc_cache.is_some(), "an SSD's"),
            ("power", self.power.is_some(), "an SSD's or a hard disk's"),
            ("hdd", self.hdd.is_some(), "a hard disk's"),
            ("card", self.card.is_some(), "a card's"),
            ("links", !self.links.is_empty(), "a card's (for card.path)"),
            ("tiered", self.tiered.is_some(), "a tiered drive's"),
        ];
        let takes: &[&str] = match self.kind {
            DriveKind::Ssd => &[
                "capacity",
                "controller",
                "buffer",
                "nand",
                "ftl",
                "slc_cache",
                "power",
            ],
            DriveKind::Hdd => &["hdd", "power"],
            DriveKind::Card => &["card", "links"],
            DriveKind::Tiered => &["tiered"],
        };
        if let Some((t, _, whose)) = tables
            .iter()
            .find(|(t, present, _)| *present && !takes.contains(t))
        {
            return Err(bad(
                file,
                *t,
                format!(
                    "a drive of kind \"{}\" has no [{t}] table ([{t}] is {whose}): remove it, \
                     or correct kind",
                    self.kind.name()
                ),
            ));
        }
        match self.kind {
            DriveKind::Ssd => self.validate_ssd(file),
            DriveKind::Hdd => self.validate_hdd(file),
            DriveKind::Card => self.validate_card(file),
            DriveKind::Tiered => self.validate_tiered(file),
        }
    }

    /// The error for a table a drive of its kind needs and lacks.
    fn missing(&self, file: &str, table: &str) -> SimError {
        bad(
            file,
            table,
            format!(
                "a drive of kind \"{}\" needs a [{table}] table",
                self.kind.name()
            ),
        )
    }
}

/// A name a target spec can address (`sim:DRIVE@PLATFORM/PORT`): letters, digits, `-`, `_`
/// and `.`, not empty.
pub(super) fn check_name(file: &str, key: &str, name: &str) -> Result<(), SimError> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || !name.chars().all(fits) {
        return Err(bad(
            file,
            key,
            format!(
                "'{name}' cannot be addressed as sim:DRIVE@PLATFORM/PORT: use letters, digits, \
                 '-', '_' and '.'"
            ),
        ));
    }
    Ok(())
}

/// The smallest drive the model takes: a job needs room for a few blocks.
pub(super) const MIN_DRIVE_BYTES: u64 = 1 << 20;

/// The largest SSD the model takes: its page map is 4 bytes per 4 KiB page in memory (16 GB
/// for 16 TB).
pub(super) const MAX_SSD_BYTES: u64 = 16_000_000_000_000;

/// Controller cores at most (each is a resource of the model).
pub(super) const MAX_CORES: u32 = 256;

/// A catalog file's bytes as text, or an error naming the file and the first byte that is not
/// UTF-8 (the reader's own "stream did not contain valid UTF-8" said neither).
pub(super) fn utf8_text(file: &str, bytes: Vec<u8>) -> Result<String, SimError> {
    String::from_utf8(bytes).map_err(|e| SimError::Parse {
        file: file.to_string(),
        message: format!(
            "not UTF-8 text (byte {} is not): save the file as UTF-8, as TOML requires",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// Refuses a file with nothing in it but blanks and comments, saying what an entry needs (the
/// parser's "missing field `name`" did not say the file was empty).
pub(super) fn not_empty(file: &str, text: &str, needs: &str, folder: &str) -> Result<(), SimError> {
    let has_content = text
        .lines()
        .map(str::trim)
        .any(|l| !l.is_empty() && !l.starts_with('#'));
    if has_content {
        return Ok(());
    }
    Err(SimError::Parse {
        file: file.to_string(),
        message: format!(
            "the file has no entry: {needs} (`iolab sim list` names the built-in entries; \
             their files are catalog/{folder}/*.toml in iolab's source); remove the file or \
             fill it in"
        ),
    })
}

/// The slowest spindle the model takes: disks spin 3600 to 15000 rpm, and a command waits up to
/// a revolution for its sector (60 ms at 1000 rpm).
pub(super) const MIN_RPM: f64 = 1000.0;

/// The fastest spindle the model takes (the fastest disks spin at 15000 rpm).
pub(super) const MAX_RPM: f64 = 20000.0;

/// Members of a card at most (each is a whole drive model).
pub(super) const MAX_CARD_MEMBERS: u32 = 64;

/// Extents (and fast slots) a tier keeps at most: about 9 bytes each in memory (9.7 GB at the
/// limit, about a 10 TB SSD's page map), indexed by u32.
pub(super) const MAX_TIER_EXTENTS: u64 = 1 << 30;

/// The most accesses a tier may wait for before it promotes an extent (its count is a byte).
pub(super) const MAX_PROMOTE_AFTER: u32 = u8::MAX as u32;

/// A RAM tier at most (the model keeps a line per 4 KiB).
pub(super) const MAX_RAM_TIER_BYTES: u64 = 1 << 40;

/// Bytes in one multi-plane block (all planes of a die erased together).
pub fn block_bytes(n: &NandSpec) -> u64 {
    n.planes as u64 * n.pages_per_block as u64 * n.page_bytes as u64
}

/// Raw NAND capacity.
pub fn nand_raw_bytes(n: &NandSpec) -> u64 {
    n.dies as u64 * n.blocks_per_plane as u64 * block_bytes(n)
}

/// A JBOD concatenates its members: a stripe size given for one would be silently ignored.
pub(super) fn check_jbod_has_no_stripe(
    file: &str,
    key: &str,
    stripe: Option<u64>,
) -> Result<(), SimError> {
    match stripe {
        Some(_) => Err(bad(
            file,
            key,
            "a jbod concatenates its members and stripes nothing: remove it, or use raid0",
        )),
        None => Ok(()),
    }
}

/// A RAID port's members attach through their own ports (slot, HBA, path up to the CPU):
/// the volume's port has none of its own, and one given there would be silently ignored.
pub(super) fn check_raid_port_has_no_link(
    file: &str,
    key: &str,
    p: &PortSpec,
) -> Result<(), SimError> {
    let own = [
        ("slot", p.slot.is_some()),
        ("hba", p.hba.is_some()),
        ("path", !p.path.is_empty()),
    ];
    match own.iter().find(|(_, given)| *given) {
        Some((k, _)) => Err(bad(
            file,
            format!("{key}.{k}"),
            format!(
                "a RAID port has no {k} of its own: its members attach through their ports \
                 (raid.members), so give the {k} there; a RAID port takes raid, driver, \
                 latency_ns, default, title and source"
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
