//! fio's flows: jobs with the same flow id that run at the same time issue I/Os in proportion
//! to their weights. Each job counts the I/Os it issued, the flow counts all of them; a job
//! whose share of the count is above its share of the weight holds back until the others
//! catch up. A job that ends takes its count and weight out of the flow, so the others go on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The shared count and weight of one flow.
#[derive(Debug)]
pub struct FlowGroup {
    /// I/Os issued by the flow's jobs so far, plus one (fio's start, so no ratio divides by 0).
    issued: AtomicU64,
    /// The sum of the weights of the jobs in it.
    weight: AtomicU64,
}

impl FlowGroup {
    /// A flow with no job in it yet.
    pub fn new() -> Arc<FlowGroup> {
        Arc::new(FlowGroup {
            issued: AtomicU64::new(1),
            weight: AtomicU64::new(0),
        })
    }
}

/// One job's place in a flow (shared by its threads). Join every job of a flow before any of
/// them starts, or the first would see only its own weight.
#[derive(Debug)]
pub struct FlowMember {
    group: Arc<FlowGroup>,
    weight: u64,
    issued: AtomicU64,
    /// How long to hold back when ahead of its share (0: look again at once).
    pub sleep_ns: u64,
}

impl FlowMember {
    /// Adds a job of `weight` to `group`.
    pub fn join(group: &Arc<FlowGroup>, weight: u32, sleep_ns: u64) -> FlowMember {
        group.weight.fetch_add(u64::from(weight), Ordering::Relaxed);
        FlowMember {
            group: Arc::clone(group),
            weight: u64::from(weight),
            issued: AtomicU64::new(0),
            sleep_ns,
        }
    }

    /// Whether the job may issue an I/O now; if so, it is counted.
    pub fn try_issue(&self) -> bool {
        let mine = self.issued.load(Ordering::Relaxed) as f64;
        let all = self.group.issued.load(Ordering::Relaxed).max(1) as f64;
        let total_weight = self.group.weight.load(Ordering::Relaxed).max(1) as f64;
        if mine / all > self.weight as f64 / total_weight {
            return false;
        }
        self.group.issued.fetch_add(1, Ordering::Relaxed);
        self.issued.fetch_add(1, Ordering::Relaxed);
        true
    }
}

impl Drop for FlowMember {
    fn drop(&mut self) {
        let mine = self.issued.load(Ordering::Relaxed);
        self.group.issued.fetch_sub(mine, Ordering::Relaxed);
        self.group.weight.fetch_sub(self.weight, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_issue_in_proportion_to_their_weights_and_leave_cleanly() {
        let flow = FlowGroup::new();
        let (a, b) = (FlowMember::join(&flow, 1, 0), FlowMember::join(&flow, 8, 0));
        let (mut na, mut nb) = (0u32, 0u32);
        // Each tries as fast as it can, in turn: the flow decides who goes.
        for _ in 0..9000 {
            na += u32::from(a.try_issue());
            nb += u32::from(b.try_issue());
        }
        let ratio = f64::from(nb) / f64::from(na);
        assert!((7.5..8.5).contains(&ratio), "{nb}:{na}");
        drop(b);
        // Alone in the flow, a is never held back.
        assert!((0..100).all(|_| a.try_issue()));
        drop(a);
        assert_eq!(flow.issued.load(Ordering::Relaxed), 1);
        assert_eq!(flow.weight.load(Ordering::Relaxed), 0);
    }
}
