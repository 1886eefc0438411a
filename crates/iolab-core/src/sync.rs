//! Syncing written data to stable storage during and after a job (fio's `fsync`,
//! `fdatasync`, `end_fsync`, `fsync_on_close`): every N writes the driver lets the writes in
//! flight complete, then syncs the target (fsync, or fdatasync where only the data and the
//! metadata needed to read it back must be stable) and goes on; at the end, once more.

use serde::{Deserialize, Serialize};

/// A job's syncs, as its job key `sync` gives them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncPolicy {
    /// Sync after every this many writes (per thread); none: only at the end, if asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_writes: Option<u64>,
    /// fdatasync rather than fsync.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub data_only: bool,
    /// Sync once more when the job's I/O ends (not counted in its measured time).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_end: bool,
}

impl SyncPolicy {
    /// What is wrong with it, if anything.
    pub fn check(&self) -> Result<(), String> {
        if self.every_writes == Some(0) {
            return Err("every_writes is 0; leave it out to sync only at the end".into());
        }
        if self.every_writes.is_none() && !self.at_end {
            return Err("give every_writes, at_end = true, or both".into());
        }
        Ok(())
    }
}

/// The syncs a job issued, kept in its result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncSummary {
    /// fsync or fdatasync.
    pub call: SyncCall,
    /// Syncs issued (the one at the end included).
    pub count: u64,
    /// Syncs that failed.
    pub failed: u64,
    /// Their mean duration, ns.
    pub mean_ns: f64,
    /// The longest, ns.
    pub max_ns: u64,
}

/// Which call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncCall {
    /// fsync(2).
    #[default]
    Fsync,
    /// fdatasync(2).
    Fdatasync,
}

impl SyncSummary {
    /// Adds a sync that took `ns` (`ok`: it succeeded).
    pub fn record(&mut self, ns: u64, ok: bool) {
        self.mean_ns = (self.mean_ns * self.count as f64 + ns as f64) / (self.count + 1) as f64;
        self.count += 1;
        self.failed += u64::from(!ok);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Adds another thread's syncs.
    pub fn merge(&mut self, other: &SyncSummary) {
        let n = self.count + other.count;
        if n > 0 {
            self.mean_ns =
                (self.mean_ns * self.count as f64 + other.mean_ns * other.count as f64) / n as f64;
        }
        self.count = n;
        self.failed += other.failed;
        self.max_ns = self.max_ns.max(other.max_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_means_add_up_across_threads() {
        let mut a = SyncSummary::default();
        a.record(100, true);
        a.record(300, false);
        let mut b = SyncSummary::default();
        b.record(600, true);
        a.merge(&b);
        assert_eq!((a.count, a.failed, a.max_ns), (3, 1, 600));
        assert!((a.mean_ns - 1000.0 / 3.0).abs() < 1e-9);
        assert!(SyncPolicy::default().check().is_err());
        assert!(SyncPolicy {
            every_writes: Some(0),
            ..SyncPolicy::default()
        }
        .check()
        .is_err());
    }
}
