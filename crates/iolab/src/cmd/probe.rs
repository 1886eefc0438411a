//! `iolab probe` and `iolab trimcheck` (placeholder until the probe crate lands).

/// Arguments of `iolab probe`.
#[derive(clap::Args)]
pub struct ProbeArgs {}

/// Arguments of `iolab trimcheck`.
#[derive(clap::Args)]
pub struct TrimcheckArgs {}

/// Runs `iolab probe`.
pub fn run_probe(_args: ProbeArgs) -> anyhow::Result<i32> {
    anyhow::bail!("iolab probe is not built yet")
}

/// Runs `iolab trimcheck`.
pub fn run_trimcheck(_args: TrimcheckArgs) -> anyhow::Result<i32> {
    anyhow::bail!("iolab trimcheck is not built yet")
}
