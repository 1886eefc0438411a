//! `iolab results list|show|compare`: the results store.

use anyhow::Result;
use clap::Args;

/// `iolab results`.
#[derive(Args, Debug)]
pub struct ResultsArgs {}

/// Runs `iolab results`; returns the exit code.
pub fn run(_args: ResultsArgs) -> Result<i32> {
    anyhow::bail!("iolab results is not built yet")
}
