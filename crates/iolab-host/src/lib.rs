//! What iolab reads of the machine it runs on, shared by the safety guard (`iolab-engine`) and
//! the host-path probe (`iolab-probe`): device numbers, the mount table and sysfs attributes.
//! Reading is lenient everywhere: which attributes and mounts exist depends on the kernel, the
//! drivers and the namespace, so a missing or odd one is `None` or skipped, never an error.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod devnum;
pub mod mountinfo;
pub mod sysfs;

pub use devnum::DevNum;
pub use mountinfo::Mount;
