//! What a model (`sim:`) was and what it did, as a result carries it (`TargetInfo::model`).
//!
//! The catalog entries themselves (a drive's, a platform's, a port's) stay JSON values: they are
//! the model's own data, whose shape is the catalog's business, and a result keeps them whole so
//! that it can be rerun or checked without the catalog it came from.
//!
//! Fields are declared in alphabetical order: results written before these types existed had
//! their keys sorted, and a result read and written again stays byte for byte the same.

use serde::{Deserialize, Serialize};

/// A model's parameters and what each of its jobs did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelInfo {
    /// The drive's catalog entry.
    pub drive: Option<CatalogEntry>,
    /// The host driver (`ahci`, `nvme`, ...).
    pub driver: String,
    /// The driver's cost per I/O, ns.
    pub driver_latency_ns: u64,
    /// The drives' power at idle, watts.
    pub idle_power_w: f64,
    /// The host's limit of I/Os outstanding to the drive.
    pub max_outstanding: u32,
    /// The entries of a card's or a tier's member drives.
    pub members: Vec<CatalogEntry>,
    /// Which model this is.
    pub model: String,
    /// Always true: the figures come from a model.
    pub modelled: bool,
    /// The host path, hop by hop.
    pub path: Vec<String>,
    /// The platform's catalog entry.
    pub platform: Option<PlatformEntry>,
    /// The port's entry in the platform.
    pub port: Option<serde_json::Value>,
    /// `sim:DRIVE@PLATFORM/PORT`.
    pub spec: String,
    /// The state the model was left in (`fresh`, `full`, `steady`, ...).
    pub state: String,
    /// What each job did to the model.
    pub tests: Vec<ModelTest>,
}

/// A catalog entry and the file it came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CatalogEntry {
    /// The entry, as the catalog holds it.
    pub entry: serde_json::Value,
    /// The catalog file.
    pub file: String,
}

/// A platform's catalog entry, with what names it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlatformEntry {
    /// The entry, as the catalog holds it.
    pub entry: serde_json::Value,
    /// The catalog file.
    pub file: String,
    /// The platform's short name.
    pub name: String,
    /// Where its facts come from.
    pub source: String,
    /// Its title.
    pub title: String,
}

/// What one job did to the model: power and the busiest resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelTest {
    /// Mean power over the job (watts, drive(s) only).
    pub avg_power_w: f64,
    /// The resource group with the highest utilisation.
    pub bottleneck: String,
    /// Its utilisation (0–1).
    pub bottleneck_utilisation: f64,
    /// Job name.
    pub job: String,
    /// The share of the bytes it read from SSDs that came from their DRAM write buffers (data
    /// written and not yet programmed), when it read from one.
    pub reads_from_buffer: Option<f64>,
    /// NAND write amplification during the job, when it wrote: bytes programmed (the host's
    /// and collection's) over bytes the host wrote. Above 1 from collection and from writes
    /// smaller than the 4 KiB mapping unit; below 1 when inline compression saves more, or
    /// when the write buffer takes rewrites of data it has not programmed yet (a small span
    /// written over and over). Collection that runs during the job counts, also what an
    /// analytic steady state left running: a job that writes little just after one (a paced
    /// job of 100 IOPS, say) shows far more than the drive's steady-state figure.
    pub write_amplification: Option<f64>,
}
