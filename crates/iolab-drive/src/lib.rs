//! iolab's seam between a workload and whatever serves it: the [`target::Target`] and
//! [`clock::Clock`] traits, the queue-keeping [`driver`] that runs workers over any target on any
//! clock, and the [`run`] result builder. The engine's real targets (io_uring, psync) and the
//! model's simulated one both implement the traits, so everything above the seam cannot tell
//! them apart. No `unsafe` here: what needs it (a prefetch instruction) the engine injects
//! through [`hint::CacheHint`].
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod clock;
pub mod driver;
pub mod flow;
pub mod hint;
pub mod null;
pub mod run;
pub mod target;
