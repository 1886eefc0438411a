//! iolab's pure core: what a workload is, what data it writes, and what a run measured.
//!
//! Nothing here performs I/O, reads a clock, spawns a thread or prints. The engine
//! (`iolab-engine`) and the model (`iolab-sim`) drive the same [`workload::IoGenerator`]s and
//! fill the same [`stats::DirectionStats`], so a real drive and a modelled one produce results of
//! one schema ([`result::RunResult`]).
//!
//! ```
//! use iolab_core::job::JobSpec;
//! let spec: JobSpec = toml::from_str(r#"
//!     name = "4k-random-read"
//!     access = "randread"
//!     block_size = "4k"
//!     queue_depth = 32
//!     size = "1g"
//! "#).unwrap();
//! let job = spec.validate().unwrap();
//! assert_eq!(job.queue_depth, 32);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod data;
pub mod hist;
pub mod job;
pub mod lat_target;
pub mod metrics;
pub mod model_info;
pub mod pattern;
pub mod prio;
pub mod quick;
pub mod result;
pub mod rng;
pub mod scale;
pub mod schedule;
pub mod size;
pub mod skew;
pub mod sprandom;
pub mod stats;
pub mod steady;
pub mod steady_stop;
pub mod sync;
pub mod text;
pub mod time;
pub mod window;
pub mod workload;
pub mod zbd;

pub use job::{Job, JobError, JobSpec};
