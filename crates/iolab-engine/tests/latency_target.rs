//! fio's latency-target mode on a device whose latency grows with the queue: the search
//! settles at the deepest queue that meets the target, and the job's figures are one last
//! window at that depth.

use iolab_core::job::JobSpec;
use iolab_engine::clock::{Clock, VirtualClock};
use iolab_engine::driver::{drive, plan_workers, DriveOptions};
use iolab_engine::psync::NullTarget;
use iolab_engine::target::{Capabilities, Completion, IoReq, Target};

/// A device in virtual time that serves `per_io_ns` per I/O in flight: each I/O submitted with
/// n in flight (itself included) takes n × `per_io_ns`.
struct Queueing {
    inner: NullTarget,
    clock: VirtualClock,
    per_io_ns: u64,
    pending: Vec<(u64, Completion)>,
}

impl Target for Queueing {
    fn capabilities(&self) -> &Capabilities {
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
            let n = self.pending.len() as u64 + 1;
            let due = self.clock.now_ns() + n * self.per_io_ns;
            let c = Completion {
                tag: r.tag,
                result: i64::from(r.len),
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
fn the_search_settles_at_the_deepest_queue_that_meets_the_target() {
    // 100 µs per I/O in flight, a target of 500 µs for every I/O: up to 5 in flight meet it.
    let text = "queue_depth = 64\nduration_s = 60\nsize = \"1g\"\n\
                latency_target = { target_us = 500, window_s = 0.5 }";
    let job = JobSpec::from_toml(text, "t.toml")
        .unwrap()
        .validate()
        .unwrap();
    let clock = VirtualClock::new();
    let mut target = Queueing {
        inner: NullTarget::new(1 << 30),
        clock: clock.clone(),
        per_io_ns: 100_000,
        pending: Vec::new(),
    };
    target.prepare(64, 4096).unwrap();
    let opts = DriveOptions {
        duration_ns: job.duration_s.map(|d| (d * 1e9) as u64),
        interval_ns: 1_000_000_000,
        latency_target: job.latency_target.as_ref(),
        ..DriveOptions::default()
    };
    let out = drive(&mut target, &clock, plan_workers(&job, 0), &opts).unwrap();
    let search = out.depth_search.expect("the search");
    assert_eq!(search.settled(), Some(5), "{:?}", search.tried);
    let depths: Vec<u32> = search.tried.iter().map(|t| t.0).collect();
    assert_eq!(&depths[..4], &[1, 2, 4, 8], "doubling first");
    // The figures are one window at depth 5: 5 I/Os per 500 µs for 0.5 s, none over.
    assert!(out.complete);
    assert_eq!(out.measured_ns, 500_000_000);
    let r = out
        .stats
        .direction_summary(iolab_core::job::Direction::Read, out.measured_ns);
    assert!((r.iops - 10_000.0).abs() < 100.0, "{}", r.iops);
    assert!(r.lat_ns.max <= 500_000, "{}", r.lat_ns.max);
    assert!(
        clock.now_ns() < 60_000_000_000,
        "ended after the final window"
    );
}
