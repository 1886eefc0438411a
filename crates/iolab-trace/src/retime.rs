//! Times carried from one format's clock to another's in a conversion.
//!
//! Records keep their format's own clock ([`TraceRecord::time_ns`]): MSR counts Windows
//! FILETIME (since 1601), Alibaba, Tencent and SYSTOR count Unix time (since 1970), and the
//! other formats count from the trace's start. [`Retime`] moves a record's times onto the
//! output format's clock: between two calendar clocks by the difference of their epochs, so
//! each record keeps its date; from a calendar clock to one that counts from the start, by
//! counting from the first record.

use crate::format::Format;
use crate::record::TraceRecord;

/// Seconds from FILETIME's epoch (1601-01-01) to the Unix epoch (1970-01-01).
pub const FILETIME_TO_UNIX_S: u64 = 11_644_473_600;

impl Format {
    /// Where the format's calendar clock starts, in ns after 1601-01-01 (FILETIME's epoch):
    /// 0 for MSR, the Unix epoch for Alibaba, Tencent and SYSTOR; `None` for a format that
    /// counts from the trace's start.
    pub fn epoch_after_1601_ns(self) -> Option<u128> {
        match self {
            Format::Msr => Some(0),
            Format::Alibaba | Format::Tencent | Format::Systor => {
                Some(u128::from(FILETIME_TO_UNIX_S) * 1_000_000_000)
            }
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Mode {
    /// The same clock (or both count from the start): times as they are.
    Keep,
    /// Counted from the first record (its time, once seen).
    FromFirst(Option<u64>),
    /// Between calendar clocks: `t + from_epoch - to_epoch`, both after 1601.
    Shift { from: u128, to: u128 },
}

/// Carries records' times from one format's clock to another's; see the module docs.
#[derive(Debug, Clone)]
pub struct Retime {
    mode: Mode,
    clamped: u64,
    before_epoch: bool,
    started: bool,
    to: Format,
}

impl Retime {
    /// For a conversion from `from` to `to`.
    pub fn new(from: Format, to: Format) -> Retime {
        let mode = match (from.epoch_after_1601_ns(), to.epoch_after_1601_ns()) {
            (Some(a), Some(b)) if a != b => Mode::Shift { from: a, to: b },
            (Some(_), None) => Mode::FromFirst(None),
            _ => Mode::Keep,
        };
        Retime {
            mode,
            clamped: 0,
            before_epoch: false,
            started: false,
            to,
        }
    }

    /// Moves `r`'s issue and completion times onto the output's clock. A time the output
    /// cannot hold (before its start or epoch) becomes its 0 and is counted in
    /// [`Retime::clamped`]; a trace whose first record is before the output's epoch (an MSR
    /// trace synthesised from FILETIME 0, written as Unix time) is counted from its first
    /// record instead ([`Retime::before_epoch`]).
    pub fn apply(&mut self, r: &mut TraceRecord) {
        if let Mode::Shift { from, to } = self.mode {
            // Only the first record decides; a later one is clamped below.
            if !self.started && u128::from(r.time_ns) + from < to {
                self.before_epoch = true;
                self.mode = Mode::FromFirst(None);
            }
        }
        self.started = true;
        let (time, completion, clamped) = match &mut self.mode {
            Mode::Keep => return,
            Mode::FromFirst(origin) => {
                let o = *origin.get_or_insert(r.time_ns);
                (
                    r.time_ns.checked_sub(o),
                    r.completion_ns.map(|c| c.saturating_sub(o)),
                    r.time_ns < o,
                )
            }
            Mode::Shift { from, to } => {
                let (from, to) = (*from, *to);
                let shift = |t: u64| {
                    (u128::from(t) + from)
                        .checked_sub(to)
                        .and_then(|t| u64::try_from(t).ok())
                };
                let t = shift(r.time_ns);
                let c = r.completion_ns.map(|c| shift(c).unwrap_or(0));
                (t, c, t.is_none())
            }
        };
        r.time_ns = time.unwrap_or(0);
        r.completion_ns = completion;
        self.clamped += u64::from(clamped);
    }

    /// Records whose time the output could not hold, written at its time 0: earlier than
    /// the first record where the output counts from it, or before its epoch.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Whether the first record was before the output format's epoch, so that the output
    /// counts from the first record rather than keeping dates.
    pub fn before_epoch(&self) -> bool {
        self.before_epoch
    }

    /// Says what [`Retime::clamped`] and [`Retime::before_epoch`] did, for warnings; none
    /// when every record kept its time.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.before_epoch {
            w.push(format!(
                "the trace starts before {}'s epoch (1970-01-01), which its times cannot \
                 express: they count from the first record instead",
                self.to
            ));
        }
        if self.clamped > 0 {
            let from = match self.mode {
                Mode::Shift { .. } => format!("before {}'s epoch", self.to),
                _ => "earlier than the first record".to_string(),
            };
            w.push(format!(
                "{} records were {from} and were written at time 0; put the trace in time \
                 order first (--sort-window N)",
                self.clamped
            ));
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Op;

    fn rec(time_ns: u64) -> TraceRecord {
        TraceRecord {
            time_ns,
            device: 0,
            op: Op::Read,
            offset_bytes: 0,
            len_bytes: 4096,
            completion_ns: Some(time_ns + 1000),
        }
    }

    #[test]
    fn calendar_clocks_keep_each_records_date() {
        // FILETIME 128166385295514663 × 100 ns is 2007-02-22 17:22:09.5514663 UTC.
        let unix_ns = 1_172_164_929_551_466_300;
        let msr = 12_816_638_529_551_466_300;
        let mut r = rec(msr);
        let mut to_unix = Retime::new(Format::Msr, Format::Alibaba);
        to_unix.apply(&mut r);
        assert_eq!(
            (r.time_ns, r.completion_ns),
            (unix_ns, Some(unix_ns + 1000))
        );
        let mut back = Retime::new(Format::Tencent, Format::Msr);
        back.apply(&mut r);
        assert_eq!(r, rec(msr));
        assert_eq!(to_unix.clamped() + back.clamped(), 0);
        // Same epoch: unchanged.
        let mut same = Retime::new(Format::Systor, Format::Alibaba);
        let mut r = rec(unix_ns);
        same.apply(&mut r);
        assert_eq!(r, rec(unix_ns));
    }

    #[test]
    fn times_the_output_cannot_hold_are_counted() {
        // A synthesised MSR trace from FILETIME 0: counted from its first record.
        let mut t = Retime::new(Format::Msr, Format::Systor);
        let mut a = rec(5_000);
        let mut b = rec(7_000);
        t.apply(&mut a);
        t.apply(&mut b);
        assert_eq!((a.time_ns, b.time_ns), (0, 2_000));
        assert!(t.before_epoch() && t.clamped() == 0);
        // After a first record in the epoch, one before it is clamped, not rebased.
        let mut t = Retime::new(Format::Msr, Format::Alibaba);
        let e = FILETIME_TO_UNIX_S * 1_000_000_000;
        let mut recs = [rec(e + 3_000), rec(e - 1_000)];
        for r in &mut recs {
            t.apply(r);
        }
        assert_eq!(recs.map(|r| r.time_ns), [3_000, 0]);
        assert!(!t.before_epoch() && t.clamped() == 1);
        // A record before the first, where the output counts from the start.
        let mut t = Retime::new(Format::Msr, Format::Fio3);
        let mut recs = [rec(10_000), rec(9_000), rec(12_000)];
        for r in &mut recs {
            t.apply(r);
        }
        assert_eq!(recs.map(|r| r.time_ns), [0, 0, 2_000]);
        assert_eq!(t.clamped(), 1);
        assert!(t.warnings()[0].starts_with("1 records were earlier than the first"));
    }
}
