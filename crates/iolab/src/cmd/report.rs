//! `iolab report RESULT.json…`: re-render saved results, overlaying several on one report.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// `iolab report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Saved JSON results.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
}

/// Runs `iolab report`; returns the exit code.
pub fn run(_args: ReportArgs) -> Result<i32> {
    anyhow::bail!("iolab report is not built yet")
}
