//! Data verification: every written block carries per-sector stamps and checksums
//! ([`stamp`]); a block read back is classified as ok, corrupted, misplaced, zeros, torn,
//! stale or foreign ([`check`]) against what the job's [`table`] or a [`journal`] says should
//! be there; [`verifier`] ties them together for a running job, and [`scan`] checks a target
//! from its stamps alone.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod check;
pub mod journal;
pub mod scan;
pub mod stamp;
pub mod table;
pub mod verifier;
