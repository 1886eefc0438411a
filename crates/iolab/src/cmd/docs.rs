//! `iolab completions SHELL` and `iolab man`: shell completions (clap_complete) and man pages
//! (clap_mangen), generated from the same command definitions as the parser, so they never
//! drift from it.

use crate::output::{self, Rules};
use anyhow::{Context, Result};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// `iolab completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

/// `iolab man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write iolab.1 and one page per command (iolab-run.1, …) into this directory instead of
    /// printing iolab.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Allow replacing existing pages that iolab did not write.
    #[arg(long)]
    pub overwrite: bool,
}

/// Prints the completion script for `args.shell`.
pub fn completions(args: CompletionsArgs, mut cli: clap::Command) -> Result<i32> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cli, "iolab", &mut out);
    let _ = std::io::stdout().write_all(&out);
    Ok(0)
}

/// One page in roff.
fn page(cmd: clap::Command) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .context("rendering the man page")?;
    Ok(out)
}

/// Prints iolab.1, or writes every page into `--dir`.
pub fn man(args: ManArgs, cli: clap::Command) -> Result<i32> {
    let Some(dir) = args.dir else {
        let _ = std::io::stdout().write_all(&page(cli)?);
        return Ok(0);
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "--dir {}: not a directory; create it first (mkdir -p {})",
            dir.display(),
            dir.display()
        );
    }
    let rules = Rules::new(&[], args.overwrite);
    let mut pages = vec![("iolab.1".to_string(), page(cli.clone())?)];
    for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
        // clap names a command by a `&'static str` (without its `string` feature): the few
        // page names live until the command exits.
        let name: &'static str = Box::leak(format!("iolab-{}", sub.get_name()).into_boxed_str());
        let cmd = sub.clone().name(name).bin_name(name);
        pages.push((format!("{name}.1"), page(cmd)?));
    }
    for (name, bytes) in &pages {
        let path = dir.join(name);
        output::write("--dir", &path, &rules, bytes)?;
    }
    say!("{} man pages written to {}", pages.len(), dir.display());
    Ok(0)
}
