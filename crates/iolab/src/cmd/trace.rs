//! `iolab trace …` (placeholder until the trace crate lands).

/// Arguments of `iolab trace`.
#[derive(clap::Args)]
pub struct TraceArgs {}

/// Runs `iolab trace`.
pub fn run(_args: TraceArgs) -> anyhow::Result<i32> {
    anyhow::bail!("iolab trace is not built yet")
}
