//! The small vocabularies of a job: directions, access patterns, written data, verify modes.

use serde::{Deserialize, Serialize};

/// Whether an I/O reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// A read.
    Read,
    /// A write.
    Write,
    /// A TRIM (discard): the range's data is dropped; no bytes move.
    Trim,
}

/// The access pattern, named as fio names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mix of reads and writes (`read_pct` decides the share).
    Rw,
    /// Random mix of reads and writes (`read_pct` decides the share).
    RandRw,
    /// Sequential TRIMs (fio's `rw=trim`).
    Trim,
    /// Random TRIMs (fio's `rw=randtrim`).
    RandTrim,
    /// Sequential TRIMs, each followed by a write of the same blocks (fio's `rw=trimwrite`).
    TrimWrite,
    /// Random TRIMs, each followed by a write of the same blocks (fio's `rw=randtrimwrite`).
    RandTrimWrite,
}

impl Access {
    /// True for the random patterns.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Access::RandRead
                | Access::RandWrite
                | Access::RandRw
                | Access::RandTrim
                | Access::RandTrimWrite
        )
    }

    /// What the pattern does with TRIMs: none, only TRIMs, or each TRIM followed by a write.
    pub fn trims(self) -> TrimKind {
        match self {
            Access::Trim | Access::RandTrim => TrimKind::Only,
            Access::TrimWrite | Access::RandTrimWrite => TrimKind::ThenWrite,
            _ => TrimKind::None,
        }
    }

    /// The share of reads this pattern implies, if it is not a mix.
    pub(crate) fn fixed_read_pct(self) -> Option<f64> {
        match self {
            Access::Read | Access::RandRead => Some(100.0),
            Access::Write | Access::RandWrite => Some(0.0),
            Access::Trim | Access::RandTrim | Access::TrimWrite | Access::RandTrimWrite => {
                Some(0.0)
            }
            Access::Rw | Access::RandRw => None,
        }
    }
}

/// How an access pattern uses TRIMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimKind {
    /// Reads and writes only.
    None,
    /// Every I/O is a TRIM.
    Only,
    /// A TRIM, then a write of the same range, in turn.
    ThenWrite,
}

impl std::str::FromStr for Access {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "read" | "seqread" => Access::Read,
            "write" | "seqwrite" => Access::Write,
            "randread" => Access::RandRead,
            "randwrite" => Access::RandWrite,
            "rw" | "readwrite" | "mixed" => Access::Rw,
            "randrw" => Access::RandRw,
            "trim" => Access::Trim,
            "randtrim" => Access::RandTrim,
            "trimwrite" => Access::TrimWrite,
            "randtrimwrite" => Access::RandTrimWrite,
            other => {
                return Err(format!(
                    "unknown access '{other}': use read, write, randread, randwrite, rw, randrw, \
                     trim, randtrim, trimwrite or randtrimwrite"
                ))
            }
        })
    }
}

/// What the written bytes look like. Drives that compress or deduplicate (SandForce, some
/// filesystems) are only measured honestly with `random`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DataKind {
    /// Fresh incompressible content for every write (the default).
    #[default]
    Random,
    /// All zero bytes.
    Zeros,
}

impl std::str::FromStr for DataKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "random" => Ok(DataKind::Random),
            "zeros" | "zero" => Ok(DataKind::Zeros),
            other => Err(format!("unknown data '{other}': use random or zeros")),
        }
    }
}

/// Whether and when written data is read back and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    /// Written data is not checked (the default).
    #[default]
    Off,
    /// Every written block is read back and checked once the job's I/O ends (fio's
    /// `verify=crc32c` with its verify phase; `crc32c` is taken as this).
    #[serde(alias = "crc32c")]
    End,
    /// Each write is read back and checked as soon as it completes, before its block is written
    /// again (fio's `verify_backlog=1`).
    Inline,
    /// Written blocks are stamped but not read back by this job: a later job with `reads`, or
    /// `iolab verify TARGET`, checks them (fio's `verify` with `do_verify=0`).
    Stamp,
    /// Every block the job reads is checked by its stamps, as `iolab verify` does: data an
    /// earlier job or run wrote with verify (fio's read job with `verify`). Read-only jobs.
    Reads,
}

impl std::str::FromStr for VerifyMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" | "none" => Ok(VerifyMode::Off),
            "end" | "crc32c" => Ok(VerifyMode::End),
            "inline" => Ok(VerifyMode::Inline),
            "stamp" => Ok(VerifyMode::Stamp),
            "reads" => Ok(VerifyMode::Reads),
            other => Err(format!(
                "unknown verify '{other}': use end, inline, stamp, reads or off"
            )),
        }
    }
}

impl VerifyMode {
    /// True when off (results leave the key out then).
    pub fn is_off(&self) -> bool {
        *self == VerifyMode::Off
    }

    /// The name job files and results use.
    pub fn name(self) -> &'static str {
        match self {
            VerifyMode::Off => "off",
            VerifyMode::End => "end",
            VerifyMode::Inline => "inline",
            VerifyMode::Stamp => "stamp",
            VerifyMode::Reads => "reads",
        }
    }
}
