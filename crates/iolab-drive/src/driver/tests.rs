//! Tests of the driver: request planning, pacing, think pauses, stops and exact latency counts.

use super::{
    drive, plan_workers, DriveOptions, DriveOutcome, Planned, RequestSource, STOP_POLL_NS,
};
use crate::clock::Clock;
use crate::target::{Completion, IoReq, Target};
use iolab_core::job::{Direction, Job, JobSpec};
use iolab_core::workload::IoGenerator;
use std::sync::atomic::{AtomicBool, Ordering};

fn job(text: &str) -> Job {
    let mut job = JobSpec::from_toml(text, "test.toml")
        .unwrap()
        .validate()
        .unwrap();
    if job.span_bytes.is_none() {
        job.resolve_span(1 << 30).unwrap();
    }
    job
}

/// Every request of every worker, in each worker's order.
fn requests(job: &Job) -> Vec<Vec<Planned>> {
    plan_workers(job, 0)
        .into_iter()
        .map(|mut w| std::iter::from_fn(|| w.source.next_planned()).collect())
        .collect()
}

#[test]
fn poisson_arrivals_keep_the_rate_with_exponential_gaps() {
    let starts = |text: &str| -> Vec<f64> {
        let planned = &requests(&job(text))[0];
        planned
            .windows(2)
            .map(|w| (w[1].at_ns.unwrap() - w[0].at_ns.unwrap()) as f64)
            .collect()
    };
    let even = starts(
        "rate_iops = 1000
ios_limit = 20000",
    );
    assert!(
        even.iter().all(|&g| (g - 1e6).abs() < 2.0),
        "{:?}",
        &even[..5]
    );
    let gaps = starts(
        "rate_iops = 1000
ios_limit = 20000
rate_poisson = true",
    );
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!((mean / 1e6 - 1.0).abs() < 0.03, "mean gap {mean}");
    // Exponential: the standard deviation equals the mean, and e^-1 of gaps exceed it.
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((sd / mean - 1.0).abs() < 0.05, "sd {sd} mean {mean}");
    let longer = gaps.iter().filter(|&&g| g > mean).count() as f64 / gaps.len() as f64;
    assert!((longer - (-1f64).exp()).abs() < 0.02, "{longer}");
}

#[test]
fn byte_budgets_are_issued_in_whole_blocks() {
    // 1 MiB over 3 threads is 349,525.3 bytes each: a short last read per thread, which
    // O_DIRECT refuses, unless the shares are cut in whole blocks.
    let pass = requests(&job("access = \"read\"\nthreads = 3\nsize = \"1m\""));
    let lens: Vec<u64> = pass.iter().flatten().map(|p| p.req.len).collect();
    assert!(lens.iter().all(|&l| l == 4096), "{lens:?}");
    assert_eq!(lens.len(), 256);
    let limited = requests(&job("access = \"write\"\nio_limit = 10000"));
    let lens: Vec<u64> = limited.iter().flatten().map(|p| p.req.len).collect();
    assert_eq!(
        lens,
        [4096, 4096],
        "what is left of the budget is not issued"
    );
    // Every request of a mix is one of its sizes, the last of a budget too.
    for (split, sizes) in [
        ("8k/50:12k/50", [8192, 12288]),
        ("4k/50:64k/50", [4096, 65536]),
        ("12k/50:20k/50", [12288, 20480]),
    ] {
        for limit in [
            "io_limit = 100000\nthreads = 3",
            "size = \"1m\"\nthreads = 3",
        ] {
            let text = format!("access = \"write\"\nbssplit = \"{split}\"\n{limit}");
            for p in requests(&job(&text)).iter().flatten() {
                assert!(sizes.contains(&p.req.len), "{split}: {}", p.req.len);
            }
        }
    }
}

#[test]
fn one_pass_covers_every_block_of_the_span_once() {
    // 70 blocks over 3 threads (24 + 23 + 23), with zones or without: each thread's
    // share begins where the previous one ends (a thread used to start at 23 blocks in
    // and read block 23 twice and block 69 never; zones left the tail unwritten).
    for zones in ["", "zones = true\n"] {
        let text =
            format!("access = \"write\"\nblock_size = \"1m\"\nthreads = 3\n{zones}size = \"70m\"");
        let mut offsets: Vec<u64> = requests(&job(&text))
            .iter()
            .flatten()
            .map(|p| p.req.offset >> 20)
            .collect();
        offsets.sort_unstable();
        assert_eq!(offsets, (0..70).collect::<Vec<_>>(), "{zones}");
    }
}

#[test]
fn a_random_one_pass_visits_every_block_once() {
    // A random pass used to draw with replacement and reach about 63 % of the blocks
    // (1 − 1/e), some of them two or three times. 1,000 blocks of 4 KiB (one thread's
    // share not a whole number of blocks of the others' with 3 and 7 threads), and 70
    // blocks of 1 MiB in zones.
    for (text, blocks, shift) in [
        ("size = \"4000k\"", 1000, 12),
        ("block_size = \"1m\"\nsize = \"70m\"", 70, 20),
    ] {
        for access in ["randread", "randwrite", "randrw"] {
            for threads in [
                "",
                "threads = 3\n",
                "threads = 7\n",
                "threads = 3\nzones = true\n",
            ] {
                let text = format!("access = \"{access}\"\n{threads}{text}");
                let pass = requests(&job(&text));
                let mut offsets: Vec<u64> = pass
                    .iter()
                    .flatten()
                    .map(|p| p.req.offset >> shift)
                    .collect();
                offsets.sort_unstable();
                let issued = offsets.len();
                offsets.dedup();
                assert_eq!(
                    (issued, offsets.len()),
                    (blocks as usize, blocks as usize),
                    "{text}: I/Os issued and distinct blocks reached, of {blocks}"
                );
                assert_eq!(offsets.last(), Some(&(blocks - 1)), "{text}");
                // Each thread in a random order, not its share walked in sequence.
                for w in &pass {
                    let steps = w.windows(2).filter(|p| p[1].req.offset > p[0].req.offset);
                    assert!(steps.count() < w.len() * 3 / 4 + 1, "{text}");
                }
            }
        }
    }
    // The order is the seed's: the same seed gives the same, another seed another.
    let order = |seed: u64| requests(&job(&format!("seed = {seed}\nsize = \"4m\"")));
    assert_eq!(order(3), order(3));
    assert_ne!(order(3), order(4));
}

#[test]
fn timed_and_budgeted_random_jobs_still_draw_with_replacement() {
    // The calibrated model's figures come from jobs like these (Iometer's uniform draws):
    // a budget of one span's worth of I/Os reaches about 63 % of its blocks. So does a
    // split of several sizes, whose blocks do not tile the span, in one pass.
    for text in [
        "ios_limit = 1000\nsize = \"4000k\"",
        "io_limit = \"4000k\"\nsize = \"4000k\"",
    ] {
        let mut blocks: Vec<u64> = requests(&job(text))[0]
            .iter()
            .map(|p| p.req.offset >> 12)
            .collect();
        assert_eq!(blocks.len(), 1000);
        blocks.sort_unstable();
        blocks.dedup();
        assert!(
            (580..=680).contains(&blocks.len()),
            "{text}: {}",
            blocks.len()
        );
    }
    let mut g = IoGenerator::new(&job("duration_s = 10\nsize = \"4000k\""), 0);
    let mut blocks: Vec<u64> = (0..1000).map(|_| g.next_request().offset >> 12).collect();
    blocks.sort_unstable();
    blocks.dedup();
    assert!(
        (580..=680).contains(&blocks.len()),
        "timed: {}",
        blocks.len()
    );
}

/// Virtual time that sets `stop` (a Ctrl-C) once it reaches `at_ns`.
struct InterruptAt<'a> {
    clock: crate::clock::VirtualClock,
    at_ns: u64,
    stop: &'a AtomicBool,
}

impl Clock for InterruptAt<'_> {
    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }
    fn sleep_until_ns(&self, t_ns: u64) {
        self.clock.sleep_until_ns(t_ns);
        if t_ns >= self.at_ns {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

fn drive_on_null(job: &Job, clock: &dyn Clock, stop: Option<&AtomicBool>) -> DriveOutcome {
    let mut target = crate::null::NullTarget::new(job.span());
    target
        .prepare(job.queue_depth, job.max_block() as usize)
        .unwrap();
    let opts = DriveOptions {
        duration_ns: job.duration_s.map(|d| (d * 1e9) as u64),
        interval_ns: 1_000_000_000,
        stop,
        think: job.schedule.think,
        ..DriveOptions::default()
    };
    drive(&mut target, clock, plan_workers(job, 0), &opts).unwrap()
}

#[test]
fn a_thinking_job_pauses_after_every_so_many_ios() {
    // 10 I/Os, a pause of 1 ms after every 2: counted as issued, 5 bursts of 2 and 4
    // pauses between them; counted as completed with 4 in flight, bursts of 4, 4 and 2
    // (the pause waits for the burst's I/Os), so 2 pauses.
    for (after, pauses) in [("issue", 4), ("complete", 2)] {
        let j = job(&format!(
            "ios_limit = 10\nqueue_depth = 4\nthink_s = 0.001\nthink_blocks = 2\n\
             think_after = \"{after}\""
        ));
        let clock = crate::clock::VirtualClock::new();
        let out = drive_on_null(&j, &clock, None);
        assert_eq!(out.stats.read.ios, 10);
        assert_eq!(out.measured_ns, pauses * 1_000_000, "{after}");
    }
}

#[test]
fn a_job_ended_by_another_stops_issuing_and_is_complete() {
    let j = job("duration_s = 60");
    let end = AtomicBool::new(true);
    let mut target = crate::null::NullTarget::new(j.span());
    target.prepare(1, 4096).unwrap();
    let opts = DriveOptions {
        duration_ns: Some(60_000_000_000),
        interval_ns: 1_000_000_000,
        end: Some(&end),
        ..DriveOptions::default()
    };
    let clock = crate::clock::VirtualClock::new();
    let out = drive(&mut target, &clock, plan_workers(&j, 0), &opts).unwrap();
    assert!(out.complete && out.stopped_by.is_none());
    assert_eq!(out.stats.read.ios, 0);
    assert_eq!(out.measured_ns, 0);
}

#[test]
fn a_paced_job_waiting_for_its_next_io_ends_with_its_duration() {
    // One I/O every 20 s for 1 s: the next one is due 19 s after the end, and the driver
    // used to sleep until then (a 2 s job of 1 MiB at 100 kB/s took 10 s).
    let j = job("rate_iops = 0.05\nduration_s = 1");
    let clock = crate::clock::VirtualClock::new();
    let out = drive_on_null(&j, &clock, None);
    assert_eq!(clock.now_ns(), 1_000_000_000, "ran past the end");
    assert_eq!(out.measured_ns, 1_000_000_000);
    assert_eq!(out.stats.read.ios, 1);
    assert!(out.complete);
}

#[test]
fn a_paced_job_waiting_for_its_next_io_stops_soon_after_ctrl_c() {
    // Three I/Os 20 s apart, no duration; Ctrl-C at 1 s. It used to take effect only at
    // the next I/O, 19 s later, or (with a duration) never.
    for duration in ["", "duration_s = 60\n"] {
        let j = job(&format!("rate_iops = 0.05\nios_limit = 3\n{duration}"));
        let stop = AtomicBool::new(false);
        let clock = InterruptAt {
            clock: crate::clock::VirtualClock::new(),
            at_ns: 1_000_000_000,
            stop: &stop,
        };
        let out = drive_on_null(&j, &clock, Some(&stop));
        assert_eq!(out.stopped_by.as_deref(), Some("interrupted"), "{duration}");
        let t = clock.now_ns();
        assert!(
            (1_000_000_000..=1_000_000_000 + STOP_POLL_NS).contains(&t),
            "{duration}: stopped at {t} ns"
        );
        assert_eq!(out.stats.read.ios, 1);
        assert_eq!(out.measured_ns, t);
    }
}

/// A target in virtual time whose `n`-th request takes `latencies_ns[n]`.
struct Scripted {
    inner: crate::null::NullTarget,
    clock: crate::clock::VirtualClock,
    latencies_ns: Vec<u64>,
    submitted: usize,
    /// (due time, completion)
    pending: Vec<(u64, Completion)>,
}

impl Target for Scripted {
    fn capabilities(&self) -> &crate::target::Capabilities {
        self.inner.capabilities()
    }
    fn prepare(&mut self, slots: u32, slot_bytes: usize) -> std::io::Result<()> {
        self.inner.prepare(slots, slot_bytes)
    }
    fn buffer_mut(&mut self, tag: u32) -> &mut [u8] {
        self.inner.buffer_mut(tag)
    }
    fn submit(&mut self, reqs: &[IoReq]) -> std::io::Result<()> {
        for r in reqs {
            let due = self.clock.now_ns() + self.latencies_ns[self.submitted];
            self.submitted += 1;
            let c = Completion {
                tag: r.tag,
                result: r.len as i64,
                done_ns: Some(due),
            };
            self.pending.push((due, c));
        }
        Ok(())
    }
    fn reap(
        &mut self,
        _min: usize,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        let limit = timeout_ns.map_or(u64::MAX, |t| self.clock.now_ns().saturating_add(t));
        self.pending.sort_by_key(|p| std::cmp::Reverse(p.0));
        match self.pending.last() {
            Some(&(due, c)) if due <= limit => {
                self.pending.pop();
                self.clock.advance_to(due);
                out.push(c);
            }
            _ => self.clock.advance_to(limit),
        }
        Ok(())
    }
}

#[test]
fn every_io_longer_than_10_ms_or_100_ms_is_counted_exactly() {
    // The histogram's bucket holding 10 ms spans 9.961–10.027 ms, the one holding 100 ms
    // 99.615–100.139 ms: only exact counts put 10.013 ms over 10 ms and 100.1 ms over 100.
    let latencies_ns = vec![
        9_000_000,
        10_000_000,
        10_000_001,
        10_013_000,
        10_026_000,
        99_999_000,
        100_000_000,
        100_100_000,
        40_000,
    ];
    let n = latencies_ns.len();
    let j = job(&format!("queue_depth = 1\nios_limit = {n}"));
    let clock = crate::clock::VirtualClock::new();
    let mut target = Scripted {
        inner: crate::null::NullTarget::new(j.span()),
        clock: clock.clone(),
        latencies_ns,
        submitted: 0,
        pending: Vec::new(),
    };
    target.prepare(1, j.max_block() as usize).unwrap();
    let opts = DriveOptions {
        interval_ns: 1_000_000_000,
        ..DriveOptions::default()
    };
    let out = drive(&mut target, &clock, plan_workers(&j, 0), &opts).unwrap();
    let r = out
        .stats
        .direction_summary(Direction::Read, out.measured_ns);
    assert_eq!(r.ios, n as u64);
    assert_eq!((r.ios_over_10ms, r.ios_over_100ms), (Some(6), Some(1)));
}

#[test]
fn two_rate_caps_hold_together_and_workers_share_one_schedule() {
    // 1000 IOPS and 1 MiB/s of 4 KiB reads: the byte cap is the tighter (256 IOPS).
    let both = requests(&job(
        "rate_iops = 1000\nrate_bytes_per_s = \"1m\"\nios_limit = 3",
    ));
    let at: Vec<u64> = both[0].iter().map(|p| p.at_ns.unwrap()).collect();
    assert_eq!(at, [0, 3_906_250, 7_812_500]);
    // 7 workers at 1000 IOPS in all: each issues every 7 ms, one after another 1 ms
    // apart, not all seven at once.
    let workers = requests(&job("rate_iops = 1000\nthreads = 7\nios_limit = 14"));
    let firsts: Vec<u64> = workers.iter().map(|w| w[0].at_ns.unwrap()).collect();
    assert_eq!(firsts, (0..7).map(|i| i * 1_000_000).collect::<Vec<_>>());
    assert_eq!(workers[3][1].at_ns, Some(10_000_000));
}

/// What a [`Bursty`] target saw, in order.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Seen {
    /// The driver took a slot's buffer (to fill it).
    Buffer,
    Submit,
    Push,
    Reap,
}

/// A target that needs data and fills ahead, completing everything submitted at once (as a
/// disk that answers in bursts), and keeps the bytes of each write as it was submitted.
struct Bursty {
    caps: crate::target::Capabilities,
    slot_bytes: usize,
    bufs: Vec<Vec<u8>>,
    pending: Vec<Completion>,
    seen: Vec<Seen>,
    written: Vec<Vec<u8>>,
}

impl Bursty {
    fn new(size_bytes: u64) -> Self {
        Bursty {
            caps: crate::target::Capabilities {
                kind: crate::target::TargetKind::Null,
                engine: "bursty",
                size_bytes,
                logical_block_bytes: 512,
                needs_data: true,
                modelled: false,
            },
            slot_bytes: 0,
            bufs: Vec::new(),
            pending: Vec::new(),
            seen: Vec::new(),
            written: Vec::new(),
        }
    }
}

impl Target for Bursty {
    fn capabilities(&self) -> &crate::target::Capabilities {
        &self.caps
    }
    fn prepare(&mut self, slots: u32, slot_bytes: usize) -> std::io::Result<()> {
        self.slot_bytes = slot_bytes;
        self.bufs = vec![vec![0; slot_bytes]; slots as usize];
        Ok(())
    }
    fn buffer_mut(&mut self, tag: u32) -> &mut [u8] {
        self.seen.push(Seen::Buffer);
        &mut self.bufs[tag as usize]
    }
    fn submit(&mut self, reqs: &[IoReq]) -> std::io::Result<()> {
        self.seen.push(Seen::Submit);
        for r in reqs {
            if r.dir == Direction::Write {
                self.written
                    .push(self.bufs[r.tag as usize][..r.len as usize].to_vec());
            }
            self.pending.push(Completion {
                tag: r.tag,
                result: r.len as i64,
                done_ns: None,
            });
        }
        Ok(())
    }
    fn reap(
        &mut self,
        _min: usize,
        _timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        self.seen.push(Seen::Reap);
        out.append(&mut self.pending);
        Ok(())
    }
    fn fills_ahead(&self) -> bool {
        true
    }
    fn push(&mut self) -> std::io::Result<()> {
        self.seen.push(Seen::Push);
        Ok(())
    }
}

/// Drives `j` over a [`Bursty`] target whose worker keeps `spare` buffers filled ahead.
fn drive_bursty(j: &Job, spare: u32) -> Bursty {
    let mut target = Bursty::new(j.span());
    let mut workers = plan_workers(j, 0);
    workers[0].spare_slots = spare;
    let slots = j.queue_depth + spare;
    target.prepare(slots, j.max_block() as usize).unwrap();
    let clock = crate::clock::VirtualClock::new();
    let opts = DriveOptions {
        interval_ns: 1_000_000_000,
        ..DriveOptions::default()
    };
    let out = drive(&mut target, &clock, workers, &opts).unwrap();
    assert_eq!(out.stats.write.ios, j.ios_limit.unwrap());
    target
}

#[test]
fn writes_filled_ahead_carry_the_same_data_and_leave_no_fill_between_reap_and_submit() {
    let j = job("access = \"randwrite\"\nqueue_depth = 4\nios_limit = 64\nseed = 3");
    let spare = super::fill_ahead_slots(&j);
    assert_eq!(spare, 4);
    let ahead = drive_bursty(&j, spare);
    let inline = drive_bursty(&j, 0);
    // The same bytes, write for write: the spare buffers take the data stream in its order.
    assert_eq!(ahead.written.len(), 64);
    assert_eq!(ahead.written, inline.written);
    let distinct: std::collections::HashSet<_> = ahead.written.iter().collect();
    assert_eq!(distinct.len(), 64, "each write its own data");
    // Filling as they are issued, each burst's writes wait for their data between the reap
    // and the submission; filled ahead, none does after the first turn, and every later
    // fill comes after a push has handed the turn's writes to the device.
    let fills_after_reap = |seen: &[Seen]| {
        let mut n = 0;
        let mut after_reap = false;
        for s in seen {
            match s {
                Seen::Reap => after_reap = true,
                Seen::Submit | Seen::Push => after_reap = false,
                Seen::Buffer if after_reap => n += 1,
                Seen::Buffer => {}
            }
        }
        n
    };
    assert!(fills_after_reap(&inline.seen) >= 60);
    assert_eq!(fills_after_reap(&ahead.seen), 0, "{:?}", &ahead.seen[..20]);
    assert!(ahead.seen.contains(&Seen::Push));
    assert!(!inline.seen.contains(&Seen::Push));
}

#[test]
fn only_jobs_that_write_generated_data_of_one_size_fill_ahead() {
    let spare = |text: &str| super::fill_ahead_slots(&job(text));
    assert_eq!(spare("access = \"randwrite\"\nqueue_depth = 32"), 32);
    assert_eq!(spare("access = \"randrw\"\nqueue_depth = 8"), 8);
    // Capped at 64 MiB of spare buffers.
    assert_eq!(
        spare("access = \"write\"\nblock_size = \"1m\"\nqueue_depth = 128"),
        64
    );
    assert_eq!(spare("access = \"randread\"\nqueue_depth = 32"), 0);
    assert_eq!(spare("access = \"randtrim\"\nqueue_depth = 32"), 0);
    assert_eq!(spare("access = \"randwrite\"\ndata = \"zeros\""), 0);
    assert_eq!(spare("access = \"randwrite\"\npattern = \"0xdeadbeef\""), 0);
    assert_eq!(
        spare("access = \"randwrite\"\nbssplit = \"4k/50:64k/50\""),
        0
    );
}

#[test]
fn a_drained_end_counts_the_ios_in_flight_at_the_end_over_the_time_they_took() {
    // QD 4, every I/O 300 µs, 1 ms measured: three rounds complete within it (at 0.3, 0.6 and
    // 0.9 ms); the fourth, issued at 0.9 ms, completes at 1.2 ms.
    let run = |drain: bool| {
        let j = job(&format!(
            "queue_depth = 4\nduration_s = 0.001\ndrain_end = {drain}"
        ));
        let clock = crate::clock::VirtualClock::new();
        let mut target = Scripted {
            inner: crate::null::NullTarget::new(j.span()),
            clock: clock.clone(),
            latencies_ns: vec![300_000; 64],
            submitted: 0,
            pending: Vec::new(),
        };
        target.prepare(4, j.max_block() as usize).unwrap();
        let opts = DriveOptions {
            duration_ns: Some(1_000_000),
            drain_end: j.drain_end,
            interval_ns: 1_000_000_000,
            ..DriveOptions::default()
        };
        let out = drive(&mut target, &clock, plan_workers(&j, 0), &opts).unwrap();
        (out.stats.read.ios, out.measured_ns)
    };
    assert_eq!(run(false), (12, 1_000_000));
    assert_eq!(run(true), (16, 1_200_000));
}
