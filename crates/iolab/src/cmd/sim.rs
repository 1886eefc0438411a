//! `iolab sim list|explain|calibrate`: the model's catalog, what limits a modelled setup, and
//! how the model compares with every published figure it is calibrated against. Jobs and
//! suites run on a model through the usual commands with a `sim:DRIVE@PLATFORM[/PORT]` target.

use anyhow::{anyhow, Result};
use clap::{Args, Subcommand};
use iolab_sim::catalog::Catalog;
use std::path::PathBuf;

/// `iolab sim`.
#[derive(Args, Debug)]
pub struct SimArgs {
    #[command(subcommand)]
    command: SimCommand,
}

#[derive(Subcommand, Debug)]
enum SimCommand {
    /// The drives and platforms (with their ports) the model knows, with sources.
    List {
        /// Extra catalog entries (`drives/*.toml`, `platforms/*.toml`).
        #[arg(long, value_name = "DIR")]
        catalog: Option<PathBuf>,
    },
    /// The path of a setup and, for five standard tests, the figure and the resource that
    /// limits it.
    Explain {
        /// `sim:DRIVE@PLATFORM[/PORT]`, e.g. sim:ssd750-1200@z97/cpu.
        spec: String,
        /// Extra catalog entries.
        #[arg(long, value_name = "DIR")]
        catalog: Option<PathBuf>,
    },
    /// Runs every published figure of the calibration set (the reviews the parameters were
    /// chosen on) and of the validation set (figures no parameter was chosen on) on its modelled
    /// testbed and prints published against modelled, with each set's error distribution; exit
    /// code 1 when a calibration figure is out of tolerance.
    Calibrate {
        /// Print the rows as JSON (one array, each row naming its set).
        #[arg(long)]
        json: bool,
        /// Run one set only.
        #[arg(long, value_parser = ["calibration", "validation"])]
        set: Option<String>,
        /// Run only the figures whose id contains this text (ids are in
        /// catalog/figures/*.toml); the exit code then judges the calibration figures among
        /// them. An empty text is refused (it would name every figure): leave the option out.
        #[arg(long, value_name = "TEXT", value_parser = clap::builder::NonEmptyStringValueParser::new())]
        figure: Option<String>,
        /// Models run at once (default 2, 1 on a machine of one core): each takes up to about
        /// 170 MB, so 2 keep a calibration under 500 MB; more run faster on more cores, in more
        /// memory. Under mpirun, per process. The figures do not change.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        models: Option<u16>,
    },
}

/// The built-in catalog with the user's entries under `dir`, each built-in entry they replace
/// said on standard error.
fn load_catalog(dir: Option<&std::path::Path>) -> Result<Catalog> {
    let catalog = Catalog::load(dir)?;
    for replaced in catalog.replaced_builtins() {
        say!("note: {replaced}");
    }
    Ok(catalog)
}

/// Runs `iolab sim`; returns the exit code.
pub fn run(args: SimArgs) -> Result<i32> {
    match args.command {
        SimCommand::List { catalog } => {
            let catalog = load_catalog(catalog.as_deref())?;
            // Built-in entries are embedded in the binary: their `catalog/…` names are where
            // they were in the source tree, not files here. A user's file: where it really is,
            // and whether it replaces a built-in entry.
            let whence = |kind: &str, name: &str, file: &str| {
                if catalog.is_builtin_file(file) {
                    return "built-in".to_string();
                }
                let path = std::fs::canonicalize(file)
                    .map_or_else(|_| file.to_string(), |p| p.display().to_string());
                let replaces = catalog
                    .replaced_builtins()
                    .iter()
                    .any(|r| r.kind == kind && r.name == name);
                if replaces {
                    format!("{path}; replaces the built-in")
                } else {
                    path
                }
            };
            println!("drives:");
            for (name, (file, d)) in &catalog.drives {
                println!(
                    "  {name:<22} {}  [{}]",
                    d.title,
                    whence("drive", name, file)
                );
                if let Some(e) = catalog.unusable_error(name) {
                    println!("    not usable with this catalog: {e}");
                }
            }
            println!("platforms (ports; * = default):");
            for (name, (file, p)) in &catalog.platforms {
                println!(
                    "  {name:<22} {}  [{}]",
                    p.title,
                    whence("platform", name, file)
                );
                for (port, spec) in &p.ports {
                    let mark = if spec.default { "*" } else { " " };
                    println!("    {mark}{port:<19} {}", spec.title);
                }
            }
            println!(
                "built-in: compiled into iolab (catalog/drives/ and catalog/platforms/ of its \
                 source); to change one, copy it into the drives/ or platforms/ of a --catalog DIR"
            );
            println!("use as a target: sim:DRIVE@PLATFORM[/PORT], e.g. iolab quick sim:ssd750-1200@z97/cpu");
            println!(
                "without /PORT: the default port, or the port nearest the CPU that takes the drive"
            );
            Ok(0)
        }
        SimCommand::Explain { spec, catalog } => {
            // Loaded here too, for what it says of the user's entries.
            load_catalog(catalog.as_deref())?;
            print!("{}", iolab_sim::explain(&spec, catalog.as_deref())?);
            Ok(0)
        }
        SimCommand::Calibrate {
            json,
            set,
            figure,
            models,
        } => {
            let mut selection = iolab_sim::Selection::new(set.as_deref(), figure.as_deref());
            if let Some(n) = models {
                selection = selection.with_models(usize::from(n));
            }
            if let (true, Some(text)) = (selection.is_empty(), &figure) {
                // Under mpirun every rank finds the same: rank 0 says it.
                return crate::mpi::said_by_rank_0(Err(anyhow!(
                    "--figure {text:?}: no figure id{} contains it; the ids are the `id = ` \
                     lines of catalog/figures/calibration.toml and validation.toml",
                    set.as_deref()
                        .map_or(String::new(), |s| format!(" of the {s} set"))
                )));
            }
            // Under mpirun the ranks share the figures; rank 0 prints.
            let Some(rows) = crate::mpi::calibration_rows(&selection)? else {
                return Ok(0);
            };
            let out = rows
                .iter()
                .filter(|r| r.set == "calibration" && !r.within_tolerance())
                .count();
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else {
                for name in ["calibration", "validation"] {
                    let of_set: Vec<_> = rows.iter().filter(|r| r.set == name).collect();
                    if of_set.is_empty() {
                        continue;
                    }
                    println!(
                        "{name} set ({}):",
                        if name == "calibration" {
                            "the figures the parameters were chosen on"
                        } else {
                            "out of sample: figures no parameter was chosen on"
                        }
                    );
                    for r in &of_set {
                        let mark = if r.within_tolerance() { "ok " } else { "OUT" };
                        println!(
                            "{mark} {:<24} {:<70} published {:>10.2} modelled {:>10.2} ({:+.1} %)",
                            r.review, r.figure, r.published, r.modelled, r.error_pct
                        );
                    }
                    for line in summary(&of_set) {
                        println!("  {line}");
                    }
                }
            }
            Ok(if out == 0 { 0 } else { 1 })
        }
    }
}

/// A set's error distribution: within tolerance, steady-state figures, and the spread of the
/// two-sided figures' errors.
fn summary(rows: &[&iolab_sim::CalibrationRow]) -> Vec<String> {
    let within = rows.iter().filter(|r| r.within_tolerance()).count();
    let steady: Vec<_> = rows.iter().filter(|r| r.steady_state).collect();
    let steady_within = steady.iter().filter(|r| r.within_tolerance()).count();
    let mut errors: Vec<f64> = rows
        .iter()
        .filter(|r| r.bound.is_none())
        .map(|r| r.error_pct.abs())
        .collect();
    errors.sort_by(f64::total_cmp);
    let at = |q: f64| errors[((errors.len() - 1) as f64 * q).round() as usize];
    let mut lines = vec![format!(
        "{within} of {} figures within tolerance (their ±%, or the right side of a bound); \
         steady state: {steady_within} of {}",
        rows.len(),
        steady.len()
    )];
    if !errors.is_empty() {
        let bands = [15.0, 25.0, 50.0, 100.0]
            .iter()
            .map(|b| {
                let n = errors.iter().filter(|e| **e <= *b).count();
                format!("<= {b:.0} %: {n}")
            })
            .collect::<Vec<_>>()
            .join(", ");
        lines.push(format!(
            "|error| of the {} two-sided figures: median {:.1} %, 90th percentile {:.1} %, largest {:.1} % ({bands})",
            errors.len(),
            at(0.5),
            at(0.9),
            at(1.0)
        ));
    }
    lines
}
