//! NAND timing: lower and upper pages, page registers, reads on dies and channels.

use super::*;
use crate::model::resource::{occupy, Res, ResId};

/// The program unit a die's page register holds after a read, and for how long. The register
/// keeps the page until the die's next operation, and CHANGE READ COLUMN (05h-E0h, in Micron's
/// parallel NAND command set, e.g. the MT29F64G08CBAAA datasheet) clocks out any other part of
/// it without a new tR: a read of the same unit meanwhile (small sequential reads, several to a
/// page) costs only its data-out. That firmware uses it is assumed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct PageRegister {
    /// The unit: the FTL node holding it and its logical unit number. LPNs of one logical
    /// unit in one node are taken to share a physical unit, as sequential writes leave them
    /// (random writes scatter them over other nodes).
    pub(super) unit: (u32, u64),
    /// When the read's tR ends and the data is in the register.
    pub(super) ready: u64,
    /// When the next operation booked on the die starts and replaces it.
    pub(super) until: u64,
}

/// A register that holds nothing.
pub(super) const EMPTY_REGISTER: PageRegister = PageRegister {
    unit: (crate::ftl::UNMAPPED, u64::MAX),
    ready: 0,
    until: 0,
};

/// Lower- and upper-page times of SimpleSSD's sample MLC (its config/sample.cfg):
/// reads 40 / 65 µs, programs 500 / 1300 µs. Only the ratio is taken: a datasheet's typical
/// tR or tPROG is kept as the mean of the pair.
pub(super) const MLC_READ_US: [f64; 2] = [40.0, 65.0];

pub(super) const MLC_PROGRAM_US: [f64; 2] = [500.0, 1300.0];

/// Lower- and upper-page times around a typical (mean) time.
pub(super) fn page_times(typical_ns: u64, mlc: bool, ratio: [f64; 2]) -> [u64; 2] {
    if !mlc {
        return [typical_ns; 2];
    }
    let mean = (ratio[0] + ratio[1]) / 2.0;
    ratio.map(|r| (typical_ns as f64 * r / mean).round() as u64)
}

/// The mean of a lower- and an upper-page time: what a mix of both pages costs per page.
pub(super) fn mean_of(times: [u64; 2]) -> u64 {
    (times[0] + times[1]) / 2
}

/// 0 (lower) or 1 (upper): the page of its wordline a program unit is taken to sit in, from
/// a multiplicative hash of the unit's number.
pub(in crate::model) fn upper_page(unit: u64) -> usize {
    (unit.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 63) as usize
}

impl Ssd {
    /// Books a page read of `t_r` on die `d` from `at`, with its energy. Firmware puts host
    /// reads ahead of queued programs and collection work: the read waits for the die's earlier
    /// reads and for the NAND operation in progress (a program, or one copy or erase of a
    /// collection), not for the programs queued behind it ([`after_the_one_in_progress`]).
    /// A read is NAND work like a program: under a power limit it waits for the budget too,
    /// and then for the operation in progress when the budget lets it go.
    pub(super) fn read_die(&mut self, res: &mut [Res], d: u32, at: u64, t_r: u64) -> u64 {
        let i = d as usize;
        let gc = &self.gc[i];
        let ready = gc.op_end(at.max(self.read_until[i]));
        let booked = &mut self.programs_booked[i];
        let mut start = gc.op_end(after_the_one_in_progress(booked, at, ready));
        if let Some(l) = &mut self.power_limit {
            let admitted = l.admit(res, at, start, t_r as f64 * self.power.die_read_w / 1e9);
            if admitted > start {
                start = gc.op_end(past_the_one_in_progress_at(booked, admitted));
            }
        }
        let gc = &mut self.gc[i];
        let end = start + t_r;
        // What is left of the collection waits for the read taken between its operations.
        gc.delay(gc.overlap(start, end));
        self.read_until[i] = go_ahead(res, self.dies[i], booked, start, t_r);
        self.die_free
            .raise(i, res[self.dies[i] as usize].busy_until.max(gc.end));
        self.energy.read_ns += t_r;
        end
    }

    /// Reads program unit `unit` on die `d` for the host from `at`: from the die's page
    /// register when it still holds the unit (after the tR in progress, if any), else with
    /// a tR. Returns when the data can leave the die.
    pub(in crate::model) fn read_unit(
        &mut self,
        res: &mut [Res],
        d: u32,
        unit: (u32, u64),
        at: u64,
        t_r: u64,
    ) -> u64 {
        let i = d as usize;
        let reg = self.registers[i];
        if reg.unit == unit && at < reg.until {
            return at.max(reg.ready);
        }
        let end = self.read_die(res, d, at, t_r);
        // Programs are booked in start order; a collection in progress resumes right after.
        let booked = &self.programs_booked[i];
        let next_program = booked
            .get(booked.partition_point(|&(s, _)| s < end))
            .map_or(u64::MAX, |&(s, _)| s);
        let gc = &self.gc[i];
        let next_gc = if gc.end > end {
            end.max(gc.start)
        } else {
            u64::MAX
        };
        self.registers[i] = PageRegister {
            unit,
            ready: end,
            until: next_program.min(next_gc),
        };
        end
    }

    /// An operation booked on die `d` from `start` replaces what its page register holds then.
    pub(super) fn replace_register_at(&mut self, d: u32, start: u64) {
        let r = &mut self.registers[d as usize];
        r.until = r.until.min(start);
    }

    /// Books `d` of read data-out on channel `chan` from `at`, ahead of the program data loads
    /// queued behind the one in progress (as for the die's reads).
    pub(in crate::model) fn read_channel(
        &mut self,
        res: &mut [Res],
        chan: ResId,
        at: u64,
        d: u64,
    ) -> u64 {
        let i = (chan - self.chans[0]) as usize;
        let ready = at.max(self.chan_read_until[i]);
        let loads = &mut self.loads_booked[i];
        let start = after_the_one_in_progress(loads, at, ready);
        if let Some(l) = &mut self.power_limit {
            l.charge(res, at, d as f64 * self.power.channel_w / 1e9);
        }
        self.chan_read_until[i] = go_ahead(res, chan, loads, start, d);
        self.chan_read_until[i]
    }

    /// Books a program's data load of `d` on channel `chan` at `ready` or later, after the
    /// channel's reads and in the first gap between the loads already booked: a load booked
    /// for a die still collecting, a second ahead, does not hold up the channel's other dies.
    pub(super) fn load_channel(
        &mut self,
        res: &mut [Res],
        chan: ResId,
        at: u64,
        ready: u64,
        d: u64,
    ) -> u64 {
        let i = (chan - self.chans[0]) as usize;
        let loads = &mut self.loads_booked[i];
        let start = fit_before_booked(loads, at, ready.max(self.chan_read_until[i]), d);
        let pos = loads.partition_point(|&(s, _)| s < start);
        loads.insert(pos, (start, start + d));
        occupy(res, chan, start, d)
    }

    /// The channel of die `d`. Dies are numbered channel-first (die `d` is way `d / channels`
    /// on channel `d % channels`), so consecutive program units, which go to the next free die
    /// in index order, stripe across channels before they stack up on one — the channel-first
    /// allocation order (CWDP) that MQSim uses by default (its shipped ssdconfig.xml).
    #[inline]
    pub(in crate::model) fn chan_of(&self, d: u32) -> ResId {
        self.chans[(d as usize) % self.chans.len()]
    }
}
