//! Writes that cover an LPN in part: merged in the buffer, the rest of the LPN read from its
//! old copy before the unit is programmed, and where a read finds such an LPN's data.

use super::*;
use crate::model::resource::Res;

/// The program unit being filled: one multi-plane page on one die.
#[derive(Clone, Copy, Debug)]
pub(super) struct OpenUnit {
    pub(super) die: u32,
    pub(super) fill: u64,
    pub(super) ready: u64,
    /// Programmed in SLC mode (the drive's SLC cache had room when it opened).
    pub(super) slc: bool,
}

/// An LPN of the open program unit the host wrote in part, held in the write buffer until the
/// unit is programmed.
#[derive(Clone, Copy, Debug)]
pub(super) struct PartialLpn {
    pub(super) lpn: u64,
    /// Its 512-byte sectors the host has written since it entered the buffer, one bit each.
    pub(super) sectors: u8,
    /// Where its previous copy is, when the host has not written all of it: the rest is read
    /// from there before the unit is programmed, and a read that wants the rest before then
    /// goes there.
    pub(super) old: Option<OldCopy>,
}

/// The copy an LPN had before the host rewrote part of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(in crate::model) struct OldCopy {
    /// Its block node when it was rewritten (collection may have moved it since, on its die).
    pub(in crate::model) node: u32,
    pub(in crate::model) die: u32,
    /// Stored bytes.
    pub(in crate::model) bytes: u32,
}

/// Where a host read finds an LPN's data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(in crate::model) enum ReadFrom {
    /// The write buffer (written, not yet programmed).
    Buffer,
    /// The old copy of an LPN the host rewrote in part (its node followed to where collection
    /// has moved it): the read wants sectors the new data lacks.
    OldCopy(OldCopy),
    /// Where the map says (NAND, or nowhere for data never written).
    Mapped,
}

/// Every sector of an LPN (eight of 512 bytes).
pub(super) const WHOLE_LPN: u8 = u8::MAX;

/// The 512-byte sectors of `lpn` that `[offset, offset + len)` wholly covers, one bit each.
pub(super) fn sectors_covered(lpn: u64, offset: u64, len: u64) -> u8 {
    let (lo, hi) = bytes_within(lpn, offset, len);
    sector_bits(lo.div_ceil(512), hi / 512)
}

/// The 512-byte sectors of `lpn` that `[offset, offset + len)` touches, one bit each.
pub(super) fn sectors_touched(lpn: u64, offset: u64, len: u64) -> u8 {
    let (lo, hi) = bytes_within(lpn, offset, len);
    sector_bits(lo / 512, hi.div_ceil(512))
}

/// The part of `[offset, offset + len)` within `lpn`, as byte offsets into it.
pub(super) fn bytes_within(lpn: u64, offset: u64, len: u64) -> (u64, u64) {
    let base = lpn * 4096;
    let lo = offset.max(base) - base;
    let hi = (offset + len).min(base + 4096) - base;
    (lo, hi)
}

/// Sectors `first..end` of an LPN, one bit each.
pub(super) fn sector_bits(first: u64, end: u64) -> u8 {
    if end <= first {
        return 0;
    }
    ((1u16 << end) - (1u16 << first)) as u8
}

/// [`ssd_write`] of a write that covers an LPN in part, or while the open unit holds one, or
/// that rewrites an LPN of the open unit: a write to an LPN of the open unit, still in the
/// buffer, merges with it there and takes no new space (sub-4 KiB and unaligned writes fill
/// an LPN a piece at a time; a hot LPN rewritten before its unit fills is programmed once); a
/// full unit whose last LPN is partial waits for the rest of it (the next writes of such a
/// stream) or for the next LPN; and when a unit is programmed, what the host did not write of
/// its LPNs is read from their old copies first. A rewrite that compresses to another size
/// takes a new slot, as it would after the unit is programmed.
#[inline(never)]
pub(super) fn ssd_write_partial(
    ssd: &mut Ssd,
    res: &mut [Res],
    offset: u64,
    len: u64,
    at: u64,
    units_per_lpn: u32,
) -> u64 {
    let (first, last) = lpn_span(offset, len);
    let lpn_bytes = (units_per_lpn * ssd.ftl.unit_bytes) as u64;
    let merged: Vec<u64> = (first..=last)
        .filter(|&l| {
            ssd.partial_lpns.iter().any(|b| b.lpn == l)
                || (sectors_covered(l, offset, len) == WHOLE_LPN
                    && ssd.buffered.in_open_unit(l, l)
                    && ssd.ftl.stored_bytes(l) as u64 == lpn_bytes)
        })
        .collect();
    let done = ssd
        .buffer
        .admit(at, (last - first + 1 - merged.len() as u64) * lpn_bytes);
    let unit_bytes = ssd.unit_bytes;
    let is_full = |open: &Option<OpenUnit>| open.is_some_and(|u| u.fill >= unit_bytes);
    for lpn in first..=last {
        let sectors = sectors_covered(lpn, offset, len);
        if merged.contains(&lpn) {
            // (Gone when the unit was programmed within this write: it went with it.)
            if let Some(b) = ssd.partial_lpns.iter_mut().find(|b| b.lpn == lpn) {
                b.sectors |= sectors;
                if b.sectors == WHOLE_LPN && is_full(&ssd.open) {
                    if let Some(unit) = ssd.open.take() {
                        ssd.program_unit(res, unit, at); // its last LPN is now whole
                    }
                }
            }
            continue;
        }
        if is_full(&ssd.open) {
            if let Some(unit) = ssd.open.take() {
                ssd.program_unit(res, unit, at);
            }
        }
        if sectors != WHOLE_LPN {
            let old = ssd.ftl.block_of(lpn).map(|(node, die)| OldCopy {
                node,
                die,
                bytes: ssd.ftl.stored_bytes(lpn),
            });
            ssd.partial_lpns.push(PartialLpn { lpn, sectors, old });
        }
        if ssd.place_lpn(res, lpn, units_per_lpn, done) && sectors == WHOLE_LPN {
            let unit = ssd.open.take().expect("placed in the open unit");
            ssd.program_unit(res, unit, at);
        }
    }
    done
}

impl Ssd {
    /// Where a read of `[offset, offset + len)` at `at` finds `lpn`'s data: in the write
    /// buffer when it is written and not yet programmed, except that an LPN the host wrote in
    /// part is read from its old copy when the read wants sectors the host did not write (the
    /// map already names the unit the new data will be programmed into).
    #[inline]
    pub(in crate::model) fn read_from(
        &mut self,
        lpn: u64,
        offset: u64,
        len: u64,
        at: u64,
    ) -> ReadFrom {
        if !self.buffered.holds(lpn, at) {
            return ReadFrom::Mapped;
        }
        match self
            .partial_lpns
            .iter()
            .find(|b| b.lpn == lpn)
            .and_then(|b| {
                let old = b.old?;
                let wanted = sectors_touched(lpn, offset, len);
                (wanted & !b.sectors != 0).then_some(old)
            }) {
            Some(old) => ReadFrom::OldCopy(OldCopy {
                node: self.ftl.root_node(old.node),
                ..old
            }),
            None => ReadFrom::Buffer,
        }
    }

    /// Read-modify-write, as the open unit is about to be programmed: the sectors of its LPNs
    /// the host did not write are read from their previous copies (tR on that die, then the
    /// data out over its channel), from `at`. Returns when the last is in the controller
    /// (`at` when none is needed), and empties the unit's LPN list.
    pub(super) fn read_rest_of_partial_lpns(&mut self, res: &mut [Res], at: u64) -> u64 {
        let mut lpns = std::mem::take(&mut self.partial_lpns);
        let unit_lpns = self.unit_bytes / 4096;
        let mut ready = at;
        for b in &lpns {
            let Some(OldCopy { die, bytes, .. }) = b.old else {
                continue;
            };
            if b.sectors == WHOLE_LPN {
                continue; // written whole after all: nothing to read
            }
            let t_r = self.read_ns[upper_page(b.lpn / unit_lpns)];
            let end = self.read_die(res, die, at, t_r);
            // The register now holds a page no host read asks for by its unit.
            self.registers[die as usize] = EMPTY_REGISTER;
            let out = (bytes as f64 * self.chan_ns_per_byte) as u64;
            ready = ready.max(self.read_channel(res, self.chan_of(die), end, out));
        }
        lpns.clear();
        self.partial_lpns = lpns; // keeps its allocation
        ready
    }
}
