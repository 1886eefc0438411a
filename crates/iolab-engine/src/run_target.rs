//! The engine's prepared file or device as a [`RunTarget`], the run API it shares with the
//! model. The runner's functions stay for callers that share one target between jobs running
//! beside each other (they take it by reference).

use crate::driver::{RequestSource, Worker};
use crate::open::PreparedTarget;
use crate::runner::{run_job, run_workers};
use iolab_core::job::Job;
use iolab_drive::run::{JobRun, RunControl, RunTarget};
use std::io;
use std::sync::atomic::AtomicBool;

impl RunTarget for PreparedTarget {
    fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    fn logical_block_bytes(&self) -> u64 {
        self.logical_block_bytes
    }

    fn run_workers<S: RequestSource + Send>(
        &mut self,
        job: &Job,
        workers: Vec<Worker<S>>,
        ctl: RunControl,
    ) -> io::Result<JobRun> {
        run_workers(self, job, workers, ctl)
    }

    fn run_job(&mut self, job: &Job, ctl: RunControl) -> io::Result<JobRun> {
        run_job(self, job, ctl)
    }

    fn idle(&mut self, seconds: f64, stop: Option<&AtomicBool>) {
        iolab_drive::clock::sleep_unless_stopped(seconds, stop);
    }
}
