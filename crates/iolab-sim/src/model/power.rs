//! Power coefficients of a device, the busy time they are charged on, and a power limit.

use super::resource::{Res, ResId};

/// Power coefficients of an SSD or HDD.
#[derive(Clone, Debug, Default)]
pub struct Power {
    /// Idle watts.
    pub idle_w: f64,
    /// While the drive holds a host command (see [`Awake`]).
    pub active_w: f64,
    /// Per busy controller core.
    pub controller_w: f64,
    /// Per die reading.
    pub die_read_w: f64,
    /// Per die programming.
    pub die_program_w: f64,
    /// Per die erasing.
    pub die_erase_w: f64,
    /// Per busy channel.
    pub channel_w: f64,
    /// HDD seeking and transferring.
    pub seek_w: f64,
    /// The most the drive may draw, sustained (an NVMe power state's Maximum Power): its
    /// NAND work waits when it would draw more (see [`PowerLimit`]). `None`: no limit.
    pub max_w: Option<f64>,
}

impl Power {
    /// Joules of NAND work above idle (channels and controller apart).
    pub fn joules(&self, e: Energy) -> f64 {
        (e.read_ns as f64 * self.die_read_w
            + e.program_ns as f64 * self.die_program_w
            + e.erase_ns as f64 * self.die_erase_w)
            / 1e9
    }
}

/// The time a drive holds at least one host command. An NVMe drive leaves its idle power
/// state when a command arrives and stays in an active one until it has none: its host
/// interface, DRAM and controller clocks draw power for as long as a command is in it, not only
/// for the microseconds a core or die works on it. AnandTech measured the 970 EVO drawing over
/// 2.5 W at queue depths 1-4 of random reads, where its dies and cores are mostly waiting.
///
/// A command holds every drive it reaches from its arrival until the host's request is done
/// (a striped request holds each member until the slowest is done). The tiers' own copies do
/// not count.
#[derive(Clone, Copy, Debug, Default)]
pub struct Awake {
    /// Commands held.
    held: u32,
    /// Since when at least one has been held.
    since: u64,
    /// Time held before `since`.
    ns: u64,
}

impl Awake {
    /// A command arrives at `t`.
    pub(super) fn begin(&mut self, t: u64) {
        if self.held == 0 {
            self.since = t;
        }
        self.held += 1;
    }

    /// A command held is done at `t`.
    pub(super) fn end(&mut self, t: u64) {
        self.held -= 1;
        if self.held == 0 {
            self.ns += t.saturating_sub(self.since);
        }
    }

    /// The commands held are dropped at `t` (the job that sent them is over).
    pub(super) fn drop_all(&mut self, t: u64) {
        if self.held > 0 {
            self.held = 1;
            self.end(t);
        }
    }

    /// Time held up to `now`.
    pub fn ns_at(&self, now: u64) -> u64 {
        self.ns
            + if self.held > 0 {
                now.saturating_sub(self.since)
            } else {
                0
            }
    }
}

/// Busy-time counters used for power.
#[derive(Clone, Copy, Debug, Default)]
pub struct Energy {
    /// Die read time summed over dies.
    pub read_ns: u64,
    /// Die program time summed.
    pub program_ns: u64,
    /// Die erase time summed.
    pub erase_ns: u64,
}

impl Energy {
    pub(super) fn add(&mut self, o: Energy) {
        self.read_ns += o.read_ns;
        self.program_ns += o.program_ns;
        self.erase_ns += o.erase_ns;
    }

    /// This less `o`, none below zero.
    pub fn less(self, o: Energy) -> Energy {
        Energy {
            read_ns: self.read_ns.saturating_sub(o.read_ns),
            program_ns: self.program_ns.saturating_sub(o.program_ns),
            erase_ns: self.erase_ns.saturating_sub(o.erase_ns),
        }
    }

    pub(super) fn share(self, f: f64) -> Energy {
        let part = |x: u64| (x as f64 * f) as u64;
        Energy {
            read_ns: part(self.read_ns),
            program_ns: part(self.program_ns),
            erase_ns: part(self.erase_ns),
        }
    }
}

/// How far ahead of the work being booked the power budget may already be spent: a burst of
/// this much of the budget passes unthrottled. The NVMe specification calls Maximum Power the
/// *sustained* maximum (libnvme's `nvme_id_psd`) and gives no window; 100 ms is assumed. Only
/// transients depend on it: the long-run draw meets the limit whatever it is.
const BURST_NS: u64 = 100_000_000;

/// A drive's power limit, kept the way a rate limiter keeps a cell rate (the generic cell-rate
/// algorithm): every piece of NAND work charges its energy, when it is booked, to a
/// power-budget resource as the time the budget takes to earn it (joules over the watts the
/// limit leaves above idle and a busy controller), and the dies' work (reads, programs,
/// collections) starts no earlier than [`BURST_NS`] before the budget has earned everything
/// charged so far. A read is held like a program: charged and never held, reads drew more than
/// the limit (a read-only job on an entry whose `max_w` is below its read power went over it).
/// Firmware still serves reads ahead of queued programs on a die; the budget holds them in
/// the order they are booked. A read's data-out over its channel is charged and not held: it
/// follows the die's read, which the budget held (a program's data load is held with it).
/// Collections that an analytic steady state leaves running are charged as they run
/// ([`PowerLimit::add_background`]): booked as one lump, they would hold every program of the
/// first half second back.
///
/// Work is charged at the time it is booked, not at the time it is booked *for*: a program
/// booked a second ahead, behind its die's collection, would otherwise push the budget a
/// second ahead for every die. The resource's busy time is the budget's use, so a drive held
/// at its limit names it as the bottleneck.
#[derive(Clone, Debug)]
pub struct PowerLimit {
    /// The power-budget resource: busy until the budget has earned what was charged.
    res: ResId,
    /// Nanoseconds of budget per joule.
    ns_per_joule: f64,
    /// Work that draws power steadily until its end, charged as time passes: `(end, watts)`.
    background: Vec<(u64, f64)>,
    /// How far the background's draw has been charged.
    background_to: u64,
    /// Pieces of work the budget made wait: with none, its busy time is spent on work that
    /// ran anyway (work under the limit, background collections), and the limit held nothing
    /// back.
    pub held: u64,
}

impl PowerLimit {
    /// A limit of `budget_w` watts of NAND work on resource `res`.
    pub(super) fn new(res: ResId, budget_w: f64) -> PowerLimit {
        PowerLimit {
            res,
            ns_per_joule: 1e9 / budget_w,
            background: Vec::new(),
            background_to: 0,
            held: 0,
        }
    }

    /// Adds work that draws `watts` from `now` until `end`, charged as time passes; it does
    /// not wait for the budget.
    pub(super) fn add_background(&mut self, now: u64, end: u64, watts: f64) {
        if self.background.is_empty() {
            self.background_to = now;
        }
        self.background.push((end, watts));
    }

    /// Charges `joules` of work booked at `now` to start at `start` or later; returns when it
    /// may start.
    pub(super) fn admit(&mut self, res: &mut [Res], now: u64, start: u64, joules: f64) -> u64 {
        let earned_at = self.charge(res, now, joules);
        let admitted = start.max(earned_at.saturating_sub(BURST_NS));
        self.held += u64::from(admitted > start);
        admitted
    }

    /// The power-budget resource.
    pub fn resource(&self) -> ResId {
        self.res
    }

    /// Charges `joules` of work booked at `now` that runs whatever the budget says; returns
    /// when the budget has earned everything charged.
    pub(super) fn charge(&mut self, res: &mut [Res], now: u64, joules: f64) -> u64 {
        let r = &mut res[self.res as usize];
        if !self.background.is_empty() && now > self.background_to {
            let from = self.background_to;
            let drawn: f64 = self
                .background
                .iter()
                .map(|&(end, w)| w * end.min(now).saturating_sub(from) as f64)
                .sum::<f64>()
                / 1e9;
            self.background.retain(|&(end, _)| end > now);
            self.background_to = now;
            Self::earn(r, from, drawn * self.ns_per_joule);
        }
        Self::earn(r, now, joules * self.ns_per_joule)
    }

    fn earn(r: &mut Res, now: u64, ns: f64) -> u64 {
        r.busy_until = r.busy_until.max(now) + ns as u64;
        r.busy_ns += ns as u64;
        r.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResKind;

    const MS: u64 = 1_000_000;

    /// A 10 W budget (a joule takes 100 ms to earn) on resource 0.
    fn ten_watts() -> (PowerLimit, Vec<Res>) {
        let res = vec![Res {
            busy_until: 0,
            busy_ns: 0,
            kind: ResKind::Power,
            group: "budget".into(),
        }];
        (PowerLimit::new(0, 10.0), res)
    }

    #[test]
    fn work_that_may_wait_starts_at_the_budgets_rate_after_a_burst() {
        let (mut limit, mut res) = ten_watts();
        // Five 1 J programs, all booked at once and ready at once: the first passes in the
        // burst, then one per 100 ms, which is 10 W.
        let starts: Vec<u64> = (0..5).map(|_| limit.admit(&mut res, 0, 0, 1.0)).collect();
        assert_eq!(starts, [0, 100 * MS, 200 * MS, 300 * MS, 400 * MS]);
        // Work ready later than the budget needs is not moved.
        assert_eq!(limit.admit(&mut res, 0, 900 * MS, 1.0), 900 * MS);
        assert_eq!(
            res[0].busy_ns,
            600 * MS,
            "the budget's use is its busy time"
        );
    }

    #[test]
    fn work_charged_without_waiting_pushes_later_work_back() {
        let (mut limit, mut res) = ten_watts();
        for _ in 0..3 {
            limit.charge(&mut res, 0, 1.0);
        }
        // 300 ms of budget spent at 0 (data transfers, collections carried from a steady
        // state): a program ready at once waits 250 ms (350 - burst).
        assert_eq!(limit.admit(&mut res, 0, 0, 0.5), 250 * MS);
        // Booked later, when the budget has caught up, nothing waits.
        assert_eq!(
            limit.admit(&mut res, 2_000 * MS, 2_000 * MS, 0.5),
            2_000 * MS
        );
    }

    #[test]
    fn a_drive_is_awake_while_it_holds_any_command_counted_once() {
        let mut awake = Awake::default();
        // Two commands overlapping from 0 to 30, then a gap, then one from 50.
        awake.begin(0);
        awake.begin(10);
        awake.end(20);
        assert_eq!(awake.ns_at(25), 25, "still held by the first");
        awake.end(30);
        assert_eq!(awake.ns_at(45), 30, "nothing held from 30");
        awake.begin(50);
        assert_eq!(awake.ns_at(60), 40);
        // A job that ends with commands still held stops counting them.
        awake.drop_all(70);
        assert_eq!(awake.ns_at(100), 50);
    }

    #[test]
    fn background_work_is_charged_as_time_passes() {
        let (mut limit, mut res) = ten_watts();
        // 15 W of collections running until 1 s: at 1 s they have drawn 15 J, 1.5 s of a
        // 10 W budget, so a program ready then waits until 1.4 s (1.5 s less the burst).
        limit.add_background(0, 1_000 * MS, 15.0);
        assert_eq!(
            limit.admit(&mut res, 1_000 * MS, 1_000 * MS, 0.0),
            1_400 * MS
        );
        // Ended, they draw nothing more.
        assert_eq!(limit.charge(&mut res, 3_000 * MS, 0.0), 3_000 * MS);
        assert_eq!(res[0].busy_ns, 1_500 * MS);
    }
}
