//! iolab's engine: the real targets (io_uring, psync), opening files and devices safely, and the
//! runner that turns a job into a [`iolab_core::result::JobResult`].
#![deny(missing_docs)]

pub mod buf;
pub mod fileset;
pub mod guard;
pub mod host;
pub mod numa;
pub mod open;
pub mod psync;
pub mod run_target;
pub mod runner;
mod steady;
pub mod sys;
pub mod verify;

// The seam lives in iolab-drive; its old paths here keep working.
pub use iolab_drive::{clock, driver, flow, target};
