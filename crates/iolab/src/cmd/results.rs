//! `iolab results list|show|compare|export`: the results store, and recording each run in it.

use crate::output::Rules;
use crate::session;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use iolab_core::result::RunResult;
use iolab_report::store::{RunFilter, Store, StoreError};
use iolab_report::store_tables;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// `iolab results`.
#[derive(Args, Debug)]
pub struct ResultsArgs {
    /// The results database [default: $IOLAB_DB, else results.sqlite in $IOLAB_RESULTS_DIR,
    /// else $XDG_DATA_HOME/iolab/results.sqlite, i.e. ~/.local/share/iolab/results.sqlite].
    #[arg(long, value_name = "PATH", global = true)]
    db: Option<PathBuf>,
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Recorded runs, newest first.
    List {
        /// Only runs of this kind: run, quick, replay, suite, or suite:NAME.
        #[arg(long)]
        kind: Option<String>,
        /// Only runs whose target path contains this.
        #[arg(long)]
        target: Option<String>,
        /// At most this many runs.
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// One run: target, host, every job's metrics, scores.
    Show {
        /// The run's number, or a unique prefix (4+ characters) of its key.
        run: String,
    },
    /// Runs side by side: each job's metrics (matched by job name) and scores, one column per
    /// run, with the change and, where there are repeats, whether it is within their noise.
    Compare {
        /// Two or more runs (numbers or key prefixes); `3,4,5` makes one side of several runs
        /// of the same work (their mean, with their spread).
        #[arg(required = true, num_args = 2..)]
        runs: Vec<String>,
        /// CSV instead of the table.
        #[arg(long)]
        csv: bool,
        /// Write it to this file instead of standard output (`-`: standard output).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Allow replacing an existing file that iolab did not write.
        #[arg(long)]
        overwrite: bool,
    },
    /// A run's JSON result, exactly as it was saved (or as CSV, or in fio's JSON layout).
    Export {
        /// The run's number or key prefix.
        run: String,
        /// The run's jobs as CSV, one row each with every metric.
        #[arg(long, conflicts_with = "fio_json")]
        csv: bool,
        /// The run in fio's JSON layout (fio 3.x `--output-format=json`), for fio's tooling.
        #[arg(long)]
        fio_json: bool,
        /// Write it to this file instead of standard output (`-`: standard output).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Allow replacing an existing file that iolab did not write.
        #[arg(long)]
        overwrite: bool,
    },
    /// Record saved results in the store: iolab's JSON results, or fio 3.x's JSON output
    /// (`--output-format=json` or `json+`), so fio's runs list, compare and report with
    /// iolab's.
    Import {
        /// The files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

/// The database every run is recorded in, and where that choice came from (for errors).
pub fn db_path(flag: Option<&Path>) -> (PathBuf, &'static str) {
    if let Some(p) = flag {
        return (p.to_path_buf(), "--db");
    }
    if let Some(p) = std::env::var_os("IOLAB_DB").filter(|p| !p.is_empty()) {
        return (PathBuf::from(p), "IOLAB_DB");
    }
    if let Some(d) = std::env::var_os("IOLAB_RESULTS_DIR").filter(|d| !d.is_empty()) {
        return (PathBuf::from(d).join("results.sqlite"), "IOLAB_RESULTS_DIR");
    }
    // Beside the default results directory: `<data>/iolab/results.sqlite`.
    let results = session::default_results_dir();
    let base = results
        .parent()
        .map_or_else(PathBuf::new, Path::to_path_buf);
    (base.join("results.sqlite"), "the default location")
}

/// Records a finished (or interrupted) run in the results store; returns its run number. The
/// JSON result is saved apart from it: a store that cannot be opened or written costs a
/// warning, never the run.
pub fn record(result: &RunResult) -> Option<i64> {
    let (path, from) = db_path(None);
    if let Err(e) = crate::output::check_store(&path, from) {
        say!("warning: the run is not recorded in the results store: {e:#}");
        return None;
    }
    let finished_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    match Store::open(&path).and_then(|mut store| store.insert(result, finished_unix_s)) {
        Ok(rec) => {
            say!(
                "recorded as run {} (key {}) in {}",
                rec.id,
                &rec.key[..12],
                path.display()
            );
            Some(rec.id)
        }
        Err(e) => {
            say!(
                "warning: could not record the run in the results store {}: {:#} (the JSON result is saved apart from it; set IOLAB_DB to use another database)",
                path.display(),
                anyhow::Error::new(e)
            );
            None
        }
    }
}

/// Opens the store for reading, saying where it looked and how to choose another.
fn open(flag: Option<&Path>) -> Result<Store> {
    let (path, from) = db_path(flag);
    crate::output::check_store(&path, from)?;
    match Store::open_existing(&path) {
        Err(StoreError::NotFound { .. }) => anyhow::bail!(
            "no results store at {} ({from}): runs are recorded there once iolab has run; \
             point --db PATH or IOLAB_DB at an existing database",
            path.display()
        ),
        other => Ok(other?),
    }
}

/// The kinds of run iolab records, as `--kind` takes them (`suite` also as `suite:NAME`).
const KINDS: &[&str] = &["run", "quick", "replay", "suite"];

/// Refuses a `--kind` that no run could have (a typo, say), naming the kinds there are: an
/// empty list would look as if no such run had been recorded yet.
fn check_kind(kind: &str, store: &Store) -> Result<()> {
    let base = kind.split_once(':').map_or(kind, |(base, _)| base);
    let known = KINDS.contains(&kind) || (base == "suite" && kind.len() > "suite:".len());
    anyhow::ensure!(
        known,
        "--kind {kind} is not a kind of run: give {}, or suite:NAME (kinds recorded: {})",
        KINDS.join(", "),
        recorded_kinds(store)?
    );
    Ok(())
}

/// The kinds recorded in `store`, for messages.
fn recorded_kinds(store: &Store) -> Result<String> {
    let kinds = store.kinds()?;
    Ok(if kinds.is_empty() {
        "none yet".into()
    } else {
        kinds.join(", ")
    })
}

/// Runs `iolab results`; returns the exit code.
pub fn run(args: ResultsArgs) -> Result<i32> {
    // An empty list would read as an empty store ("no runs recorded").
    if let Action::List { limit: 0, .. } = args.action {
        anyhow::bail!("--limit 0 would list nothing; give 1 or more");
    }
    if let Action::Import { files } = &args.action {
        return import(args.db.as_deref(), files);
    }
    let store = open(args.db.as_deref())?;
    let (db, _) = db_path(args.db.as_deref());
    match args.action {
        Action::List {
            kind,
            target,
            limit,
        } => {
            if let Some(k) = kind.as_deref() {
                check_kind(k, &store)?;
            }
            let (runs, total) = store.list(&RunFilter {
                kind: kind.clone(),
                target,
                limit: Some(limit),
            })?;
            print!("{}", store_tables::list_table(&runs, total));
            if let (Some(k), 0) = (kind, total) {
                say!(
                    "note: no recorded run is of kind '{k}'; kinds recorded: {}",
                    recorded_kinds(&store)?
                );
            }
        }
        Action::Show { run } => {
            let id = store.resolve(&run)?;
            print!("{}", store_tables::show_table(&store.show(id)?));
        }
        Action::Compare {
            runs,
            csv,
            output,
            overwrite,
        } => {
            let sides = runs
                .iter()
                .map(|side| {
                    side.split(',')
                        .map(|r| store.resolve(r.trim()))
                        .collect::<Result<Vec<_>, _>>()
                })
                .collect::<Result<Vec<_>, _>>()?;
            let comparison = iolab_report::compare::compare_sides(&store, &sides)?;
            let text = if csv {
                iolab_report::csv::compare_csv(&comparison)
            } else {
                store_tables::compare_table(&comparison)
            };
            emit(&db, "the comparison", text, output, overwrite)?;
        }
        Action::Export {
            run,
            csv,
            fio_json,
            output,
            overwrite,
        } => {
            let id = store.resolve(&run)?;
            let text = if csv {
                iolab_report::csv::run_csv(&store.show(id)?)
            } else if fio_json {
                iolab_report::fio::export::to_fio_json_text(&store.result(id)?)
            } else {
                store.export(id)? + "\n"
            };
            emit(&db, &format!("run {id}"), text, output, overwrite)?;
        }
        Action::Import { .. } => unreachable!("imported above"),
    }
    Ok(0)
}

/// Writes `text` to `output` (through the output rules) or standard output; `what` names it
/// in messages.
fn emit(
    db: &Path,
    what: &str,
    text: String,
    output: Option<PathBuf>,
    overwrite: bool,
) -> Result<()> {
    // `-` is standard output, as for `--json -`, not a file named `-`.
    match output.filter(|f| f.as_os_str() != "-") {
        Some(file) => {
            let rules = Rules::new(&[db], overwrite);
            crate::output::write("-o", &file, &rules, text.as_bytes())
                .with_context(|| format!("writing {what} to {}", file.display()))?;
            say!("{what} written to {}", file.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// `results import`: each file read as `iolab report` reads it (iolab's result or fio's
/// JSON output) and recorded; a file already recorded is said, not recorded twice.
fn import(db: Option<&Path>, files: &[PathBuf]) -> Result<i32> {
    let (path, from) = db_path(db);
    crate::output::check_store(&path, from)?;
    // All read first: a bad file records none, so a retry does not meet half of them
    // recorded.
    let results = files
        .iter()
        .map(|f| crate::cmd::report::read_result(f))
        .collect::<Result<Vec<_>>>()?;
    let mut store = Store::open(&path)?;
    for (file, result) in files.iter().zip(&results) {
        // When the run finished: its start plus its jobs' time.
        let finished = result.started_unix_s
            + result
                .jobs
                .iter()
                .map(|j| (j.measured_ns + j.ramp_ns) as f64 / 1e9)
                .sum::<f64>();
        // iolab's own result file is kept as written (the run's key is its text's); fio's
        // output is kept as converted.
        let recorded = match std::fs::read_to_string(file) {
            Ok(text) if !iolab_report::fio::import::looks_like_fio(&text) => {
                store.insert_json(result, text.trim_end_matches('\n').to_string(), finished)
            }
            _ => store.insert(result, finished),
        };
        match recorded {
            Ok(rec) => say!(
                "{}: recorded as run {} (key {}, {} {}) in {}",
                file.display(),
                rec.id,
                &rec.key[..12],
                result.tool.name,
                result.tool.version,
                path.display()
            ),
            Err(StoreError::Duplicate { id, .. }) => {
                say!("{}: already recorded as run {id}", file.display())
            }
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!("recording {}", file.display())))
            }
        }
    }
    Ok(0)
}
