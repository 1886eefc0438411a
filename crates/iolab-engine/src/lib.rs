//! iolab's engine: the [`target::Target`]/[`clock::Clock`] seam, the queue-keeping
//! [`driver`], the real targets (io_uring, psync), opening files and devices safely, and the
//! runner that turns a job into a [`iolab_core::result::JobResult`].
#![deny(missing_docs)]

pub mod buf;
pub mod clock;
pub mod driver;
pub mod fileset;
pub mod flow;
pub mod guard;
pub mod host;
pub mod numa;
pub mod open;
pub mod psync;
pub mod runner;
mod steady;
pub mod sys;
pub mod target;
pub mod verify;
