//! The model as a [`RunTarget`], the run API it shares with the engine's real targets. In
//! virtual time there is no wall-clock start, progress line or journal: of the
//! [`RunControl`] the model takes only `stop`.

use crate::SimSetup;
use iolab_core::job::Job;
use iolab_drive::driver::{RequestSource, Worker};
use iolab_drive::run::{JobRun, RunControl, RunTarget};
use std::io;
use std::sync::atomic::AtomicBool;

impl RunTarget for SimSetup {
    fn size_bytes(&self) -> u64 {
        SimSetup::size_bytes(self)
    }

    fn logical_block_bytes(&self) -> u64 {
        SimSetup::logical_block_bytes(self)
    }

    fn run_workers<S: RequestSource + Send>(
        &mut self,
        job: &Job,
        workers: Vec<Worker<S>>,
        ctl: RunControl,
    ) -> io::Result<JobRun> {
        SimSetup::run_workers(self, job, workers, ctl.stop)
    }

    fn run_job(&mut self, job: &Job, ctl: RunControl) -> io::Result<JobRun> {
        SimSetup::run_job(self, job, ctl.stop)
    }

    /// Virtual time passes at once: nothing to stop.
    fn idle(&mut self, seconds: f64, _stop: Option<&AtomicBool>) {
        SimSetup::idle(self, seconds);
    }
}
