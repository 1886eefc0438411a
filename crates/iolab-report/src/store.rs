//! The results store: every run recorded in one SQLite database, so that runs can be listed,
//! shown and compared long after their JSON files have moved or gone.
//!
//! Unlike the renderers, this module does I/O (the database file). It still reads no clock: the
//! caller says when a run finished.
//!
//! Layout: `runs` holds one row per run with its whole result JSON (so a run can always be
//! exported exactly as saved); `targets`, `steps`, `metrics`, `series` and `scores` hold the same
//! figures split out for queries. One run is inserted in one `BEGIN IMMEDIATE` transaction: a
//! crash leaves the run wholly in or wholly out. WAL journaling and a busy timeout let two runs
//! record at the same time. The layout's version is SQLite's `PRAGMA user_version`; opening an
//! older database upgrades it, a newer one is refused.

use iolab_core::job::Job;
use iolab_core::result::{JobResult, RunResult, SeriesResult, SteadyStateReport, SweepValue};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The store layout this code writes and reads (`PRAGMA user_version`).
pub const STORE_VERSION: u32 = 1;

/// How long a writer waits for another writer's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Key prefixes shorter than this are not looked up: `3` should mean run 3, not "any key that
/// starts with 3".
const MIN_KEY_PREFIX: usize = 4;

/// The SQL that takes a database from version `i` to `i + 1`, in order.
const MIGRATIONS: &[&str] = &[V1];

const V1: &str = r#"
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    -- FNV-1a of result_json: unique per run, the same in every copy of the database.
    run_key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    started_unix_s REAL NOT NULL,
    finished_unix_s REAL NOT NULL,
    tool_name TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    result_schema_version INTEGER NOT NULL,
    hostname TEXT NOT NULL,
    kernel TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    complete INTEGER NOT NULL CHECK (complete IN (0, 1)),
    incomplete_reason TEXT,
    suite_name TEXT,
    suite_scale REAL,
    notes_json TEXT NOT NULL,
    -- The whole result, pretty-printed exactly as the run's JSON file.
    result_json TEXT NOT NULL
);
CREATE INDEX runs_by_start ON runs (started_unix_s);
CREATE INDEX runs_by_kind ON runs (kind);

CREATE TABLE targets (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL UNIQUE REFERENCES runs (id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    engine TEXT NOT NULL,
    modelled INTEGER NOT NULL CHECK (modelled IN (0, 1)),
    model_json TEXT,
    size_bytes INTEGER NOT NULL,
    logical_block_bytes INTEGER NOT NULL,
    path_summary TEXT,
    path_ceiling_bytes_per_s REAL
);
CREATE INDEX targets_by_path ON targets (path);

-- One row per job of the run, in run order.
CREATE TABLE steps (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    job_index INTEGER NOT NULL,
    label TEXT NOT NULL,
    phase TEXT,
    step TEXT,
    chart TEXT,
    sweep_json TEXT NOT NULL,
    round INTEGER,
    complete INTEGER NOT NULL CHECK (complete IN (0, 1)),
    stop_reason TEXT,
    measured_ns INTEGER NOT NULL,
    ramp_ns INTEGER NOT NULL,
    series_interval_ms REAL NOT NULL,
    job_json TEXT NOT NULL,
    UNIQUE (run_id, job_index)
);

-- Names are JobResult::metric's (plus the deeper latency percentiles); direction is the
-- prefix of the name: read, write or total.
CREATE TABLE metrics (
    step_id INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    direction TEXT NOT NULL CHECK (direction IN ('read', 'write', 'total')),
    name TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (step_id, name)
) WITHOUT ROWID;
CREATE INDEX metrics_by_name ON metrics (name);

-- One row per series bin (usually a second); the mean latency is over both directions, as
-- the result schema has it.
CREATE TABLE series (
    step_id INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    bin INTEGER NOT NULL,
    t_end_s REAL NOT NULL,
    read_iops REAL NOT NULL,
    write_iops REAL NOT NULL,
    read_bytes_per_s REAL NOT NULL,
    write_bytes_per_s REAL NOT NULL,
    mean_lat_ns REAL NOT NULL,
    PRIMARY KEY (step_id, bin)
) WITHOUT ROWID;

-- A suite's scores, and a trace replay's storage-bench figures.
CREATE TABLE scores (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL,
    stddev REAL,
    rule TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
"#;

/// What can go wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file does not exist (reading commands never create one).
    #[error("no results store at {}", path.display())]
    NotFound {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A directory where the database file was expected.
    #[error(
        "{} is a directory, not a results store: give the database file in it (results.sqlite)",
        path.display()
    )]
    IsDirectory {
        /// The directory.
        path: PathBuf,
    },
    /// A device, a pipe or a socket where the database file was expected.
    #[error(
        "{} is not a regular file (a device or a pipe): a results store is a database file; \
         point --db or IOLAB_DB at one",
        path.display()
    )]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The database was written by a newer iolab.
    #[error(
        "the results store {} has layout version {found}, newer than this iolab reads \
         ({supported}): use a newer iolab, or another database",
        path.display()
    )]
    NewerLayout {
        /// The database.
        path: PathBuf,
        /// Its `user_version`.
        found: u32,
        /// [`STORE_VERSION`].
        supported: u32,
    },
    /// A file with no store layout in it: another program's database, or an empty file.
    #[error(
        "{} is not a results store iolab wrote (no layout version in it): point --db or \
         IOLAB_DB at a store iolab recorded runs in",
        path.display()
    )]
    NotAStore {
        /// The file.
        path: PathBuf,
    },
    /// No run has that id or key.
    #[error("no run '{0}' in the results store: give a run's number or key as `iolab results list` shows them")]
    UnknownRun(String),
    /// Too few characters to be taken as a key prefix (and not a run's number).
    #[error("'{0}' is too short for a key prefix: give at least {MIN_KEY_PREFIX} characters of the run's key, or the run's number, as `iolab results list` shows them")]
    ShortKeyPrefix(String),
    /// A key prefix that matches several runs.
    #[error("'{given}' matches several runs ({}): give more of the key, or the run's number", matches.join(", "))]
    AmbiguousRun {
        /// What was given.
        given: String,
        /// The keys it matches (a few).
        matches: Vec<String>,
    },
    /// The same result is already in the store.
    #[error("this result is already recorded as run {id} (key {key})")]
    Duplicate {
        /// Its id.
        id: i64,
        /// Its key.
        key: String,
    },
    /// An SQLite error, with what was being done.
    #[error("{what} ({})", path.display())]
    Sql {
        /// What was being done.
        what: String,
        /// The database.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A result that does not (de)serialise.
    #[error("result JSON of run {run}")]
    Json {
        /// The run's id (0 before it has one).
        run: i64,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
    /// A directory for the database could not be made.
    #[error("creating the directory {} for the results store", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// Shorthand for results of this module.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// An open results store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A run as the list shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Row id: the run's number.
    pub id: i64,
    /// The run's key (16 hex digits).
    pub key: String,
    /// `run`, `quick`, `suite:NAME`, `replay`.
    pub kind: String,
    /// Start, Unix seconds.
    pub started_unix_s: f64,
    /// When it was recorded, Unix seconds.
    pub finished_unix_s: f64,
    /// All jobs finished.
    pub complete: bool,
    /// Why not, if not.
    pub incomplete_reason: Option<String>,
    /// Tool version that ran it.
    pub tool_version: String,
    /// The tool that ran it: `iolab`, or `fio` for fio's output imported.
    pub tool_name: String,
    /// Host name.
    pub hostname: String,
    /// Kernel release.
    pub kernel: String,
    /// Target path or `sim:` name.
    pub target_path: String,
    /// Target kind (`file`, `block`, `sim`).
    pub target_kind: String,
    /// Whether the target was a model.
    pub modelled: bool,
    /// Jobs recorded.
    pub jobs: u32,
    /// Suite name, for suite runs.
    pub suite_name: Option<String>,
    /// Suite scale, for suite runs.
    pub suite_scale: Option<f64>,
}

/// Which runs to list.
#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    /// Kind, exactly or as the part before `:` (`suite` matches `suite:cdm`).
    pub kind: Option<String>,
    /// A part of the target's path.
    pub target: Option<String>,
    /// At most this many (newest first).
    pub limit: Option<u32>,
}

/// The target of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTarget {
    /// Path or `sim:` name.
    pub path: String,
    /// `file`, `block`, `sim`, `null`.
    pub kind: String,
    /// Engine used.
    pub engine: String,
    /// True for a model.
    pub modelled: bool,
    /// The model's parameters (JSON), when modelled.
    pub model_json: Option<String>,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Logical block size.
    pub logical_block_bytes: u64,
    /// The probe's one-line path summary.
    pub path_summary: Option<String>,
    /// The path's ceiling, bytes/s.
    pub path_ceiling_bytes_per_s: Option<f64>,
}

/// One metric of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredMetric {
    /// `read`, `write` or `total`.
    pub direction: String,
    /// Metric name (`read_iops`).
    pub name: String,
    /// Value in the unit its name says.
    pub value: f64,
}

/// One job of a run with its metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredStep {
    /// Position in the run, from 0.
    pub job_index: u32,
    /// The job's name.
    pub label: String,
    /// Suite phase.
    pub phase: Option<String>,
    /// Suite step.
    pub step: Option<String>,
    /// Suite chart.
    pub chart: Option<String>,
    /// Swept keys and values.
    pub sweep: Vec<SweepValue>,
    /// Steady-state round.
    pub round: Option<u32>,
    /// Whether the job finished.
    pub complete: bool,
    /// Why not.
    pub stop_reason: Option<String>,
    /// Measured time.
    pub measured_ns: u64,
    /// The job as run (`None` if this iolab cannot read how an other version stored it).
    pub job: Option<Job>,
    /// Its metrics, in [`metric_order`].
    pub metrics: Vec<StoredMetric>,
}

/// A score of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredScore {
    /// Name.
    pub name: String,
    /// Value.
    pub value: f64,
    /// Unit.
    pub unit: String,
    /// Standard deviation, where the rule gives one.
    pub stddev: Option<f64>,
    /// How it was computed.
    pub rule: String,
}

/// Everything `show` tells about a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunDetail {
    /// The list row.
    pub summary: RunSummary,
    /// CPU model of the host.
    pub cpu_model: String,
    /// The target.
    pub target: StoredTarget,
    /// The jobs.
    pub steps: Vec<StoredStep>,
    /// Scores.
    pub scores: Vec<StoredScore>,
    /// The run's notes.
    pub notes: Vec<String>,
    /// Steady-state verdicts of a suite's looped steps (SNIA PTS), from the saved result.
    pub steady_state: Vec<SteadyStateReport>,
    /// A model's own account of each job, by job index (watts, bottleneck, write
    /// amplification), as the live table and `iolab report` give it; `None` for a job it has
    /// none for, and empty for a run on a real target.
    pub model_lines: Vec<Option<String>>,
}

/// One row of a comparison: a job's metric (or a score) across runs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ComparedRow {
    /// Job label (with its round or occurrence when it repeats), or `score`.
    pub label: String,
    /// Metric name, or score name with its unit.
    pub metric: String,
    /// One value per compared run (or side: the mean of its runs); `None` where it lacks it.
    pub values: Vec<Option<f64>>,
    /// Per column, the spread of the value over repeats, where there were some: several runs
    /// of the side, or the counted runs one run combines (quick). Empty or `None`: no repeats.
    pub spread: Vec<Option<Spread>>,
    /// Per column, for a latency percentile or maximum, how many I/Os lie beyond it (the
    /// job's I/Os of that direction × the share above the percentile): a tail of a few I/Os
    /// moves by chance. Empty or `None`: not a tail figure, or not known.
    pub tail_ios: Vec<Option<f64>>,
}

/// How far one figure ranged over repeated measurements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Lowest value.
    pub min: f64,
    /// Highest value.
    pub max: f64,
    /// How many measurements.
    pub n: usize,
}

/// Runs side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The runs, in the order asked (with sides of several runs: each side's first).
    pub runs: Vec<RunSummary>,
    /// Where a column is a side of several runs, all of them per column (else empty).
    pub sides: Vec<Vec<RunSummary>>,
    /// Rows in first-seen order.
    pub rows: Vec<ComparedRow>,
    /// Job labels that name different workloads in different runs (access, block sizes,
    /// depth, threads, read share), with each run's workload (`None` where it lacks the job).
    pub differing: Vec<(String, Vec<Option<String>>)>,
}

/// What an insert produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The run's number.
    pub id: i64,
    /// The run's key.
    pub key: String,
}

/// Latency percentiles beyond [`JobResult::METRICS`], per direction, named in its style.
const DEEP_LATENCY: &[&str] = &["lat_p50_us", "lat_p99_9_us", "lat_p99_99_us"];

/// Every metric name the store writes, in the order tables show them: rates, then each
/// direction's latencies from the mean through the percentiles in rising order to the
/// maximum (`results compare` listed p99 before p50).
pub fn metric_order() -> Vec<String> {
    let mut names: Vec<String> = [
        "read_iops",
        "write_iops",
        "total_iops",
        "read_mb_per_s",
        "write_mb_per_s",
        "total_mb_per_s",
    ]
    .iter()
    .map(|m| m.to_string())
    .collect();
    for dir in ["read", "write"] {
        for m in [
            "lat_mean_us",
            "lat_p50_us",
            "lat_p99_us",
            "lat_p99_9_us",
            "lat_p99_99_us",
            "lat_max_us",
        ] {
            names.push(format!("{dir}_{m}"));
        }
    }
    names.push("lat_mean_us".into());
    // Any metric JobResult knows that the list above lacks still has a place.
    for m in JobResult::METRICS {
        if !names.iter().any(|n| n == m) {
            names.push(m.to_string());
        }
    }
    names
}

/// The direction a metric name belongs to.
fn direction_of(name: &str) -> &'static str {
    if name.starts_with("read_") {
        "read"
    } else if name.starts_with("write_") {
        "write"
    } else {
        "total"
    }
}

/// The metrics of one job: [`JobResult::metric`]'s names plus the deeper percentiles. A
/// direction with no I/Os gets no figures (a read job has no write latency, not a zero one);
/// a job with no I/Os at all gets none, its totals included: nothing was measured, and a
/// comparison showed `total_iops 0` (-100 %) beside its directions' "-".
pub fn job_metrics(j: &JobResult) -> Vec<StoredMetric> {
    let has = |dir: &str| match dir {
        "read" => j.read.ios > 0,
        "write" => j.write.ios > 0,
        _ => j.read.ios + j.write.ios > 0,
    };
    let mut out = Vec::new();
    for name in JobResult::METRICS {
        let dir = direction_of(name);
        if !has(dir) {
            continue;
        }
        if let Some(value) = j.metric(name) {
            out.push(StoredMetric {
                direction: dir.into(),
                name: (*name).into(),
                value,
            });
        }
    }
    for (dir, d) in [("read", &j.read), ("write", &j.write)] {
        if d.ios == 0 {
            continue;
        }
        for (m, ns) in DEEP_LATENCY
            .iter()
            .zip([d.lat_ns.p50, d.lat_ns.p99_9, d.lat_ns.p99_99])
        {
            out.push(StoredMetric {
                direction: dir.into(),
                name: format!("{dir}_{m}"),
                value: ns as f64 / 1e3,
            });
        }
    }
    out
}

/// Turns an SQLite error met while `what` on the database at `path` into a [`StoreError`].
fn sql_error(path: &Path, what: &str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    let (path, what) = (path.to_path_buf(), what.to_string());
    move |source| StoreError::Sql { what, path, source }
}

/// 64-bit FNV-1a: a stable run key from the result's JSON.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Refuses what is not a database file: a directory (SQLite would fail on it with words that
/// do not say so), a device or a pipe (SQLite would write its pages onto a device's data), and a
/// file that is neither empty nor an SQLite database (another program's file, a JSON result):
/// opening it would make it a database. A missing file is a new store.
fn refuse_non_database(path: &Path) -> Result<()> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => return Ok(()),
    };
    if meta.is_dir() {
        return Err(StoreError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    if !meta.is_file() {
        return Err(StoreError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut head = [0u8; 16];
    let sqlite = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"SQLite format 3\0");
    if meta.len() > 0 && !sqlite {
        return Err(StoreError::NotAStore {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

impl Store {
    /// Opens the store at `path`, creating the file (and its directory) and the tables when
    /// missing, and upgrading an older layout.
    pub fn open(path: &Path) -> Result<Store> {
        refuse_non_database(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        Self::open_with(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    }

    /// Opens an existing store for reading: a missing file is an error, not a new empty
    /// database, and nothing is written to it. A file that is not a store iolab wrote (another
    /// program's database, an empty file) is refused untouched; only a store of an older layout
    /// is opened for writing, to upgrade it.
    pub fn open_existing(path: &Path) -> Result<Store> {
        refuse_non_database(path)?;
        if !path.exists() {
            return Err(StoreError::NotFound {
                path: path.to_path_buf(),
            });
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql_error(path, "opening"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sql_error(path, "setting the busy timeout"))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        match store.layout_version()? {
            STORE_VERSION => Ok(store),
            0 => Err(StoreError::NotAStore {
                path: path.to_path_buf(),
            }),
            found if found > STORE_VERSION => Err(StoreError::NewerLayout {
                path: path.to_path_buf(),
                found,
                supported: STORE_VERSION,
            }),
            _ => Self::open_with(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            ),
        }
    }

    fn open_with(path: &Path, flags: OpenFlags) -> Result<Store> {
        let sql = |what: &str| sql_error(path, what);
        let conn = Connection::open_with_flags(path, flags).map_err(sql("opening"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sql("setting the busy timeout"))?;
        // Before anything is changed (the journal mode, the tables): a database with no layout
        // version but with tables of its own is another program's, not a new store. Both are
        // read in one statement, so from one snapshot: read apart, another iolab creating the
        // store between the two reads (tables and version in one transaction) made it look
        // like another program's.
        let (version, objects): (u32, i64) = conn
            .query_row(
                "SELECT (SELECT user_version FROM pragma_user_version),
                        (SELECT count(*) FROM sqlite_master)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql("reading the layout version and the schema"))?;
        if version == 0 && objects > 0 {
            return Err(StoreError::NotAStore {
                path: path.to_path_buf(),
            });
        }
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(sql("enabling foreign keys"))?;
        // WAL lets readers go on while a run is being recorded. A file system that cannot
        // share memory maps keeps the old journal, which is still transactional.
        // A write-protected file refuses it too; reading it still works.
        let _ = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0));
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// Where this store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, what: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> StoreError {
        sql_error(&self.path, &what.into())
    }

    /// The layout version of the open database.
    pub fn layout_version(&self) -> Result<u32> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(self.err("reading the layout version"))
    }

    /// Brings the layout to [`STORE_VERSION`], or refuses a newer one.
    fn migrate(&mut self) -> Result<()> {
        let found = self.layout_version()?;
        if found == STORE_VERSION {
            return Ok(());
        }
        if found > STORE_VERSION {
            return Err(StoreError::NewerLayout {
                path: self.path.clone(),
                found,
                supported: STORE_VERSION,
            });
        }
        let path = self.path.clone();
        let sql = move |what: &str| sql_error(&path, what);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql("locking the database to create its tables"))?;
        // Another process may have created the tables while this one waited for the lock.
        let found: u32 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(sql("reading the layout version"))?;
        if found > STORE_VERSION {
            return Err(StoreError::NewerLayout {
                path: self.path.clone(),
                found,
                supported: STORE_VERSION,
            });
        }
        for (from, step) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            tx.execute_batch(step)
                .map_err(sql(&format!("upgrading the layout from version {from}")))?;
        }
        tx.pragma_update(None, "user_version", STORE_VERSION)
            .map_err(sql("setting the layout version"))?;
        tx.commit().map_err(sql("committing the layout"))
    }

    /// Records one run, all of it or nothing, in one transaction. `finished_unix_s` is when
    /// the run ended (the caller's clock).
    pub fn insert(&mut self, r: &RunResult, finished_unix_s: f64) -> Result<Recorded> {
        // Kept exactly as `iolab` writes result files, so an export is byte for byte the file
        // (re-serialising a parsed result could move a float's last digit).
        let json = serde_json::to_string_pretty(r)
            .map_err(|source| StoreError::Json { run: 0, source })?;
        self.insert_json(r, json, finished_unix_s)
    }

    /// Records `r` keeping `json` as its saved text: the result file iolab wrote (without its
    /// final newline), so a file imported after its run was recorded is known as the same run,
    /// and exports byte for byte.
    pub fn insert_json(
        &mut self,
        r: &RunResult,
        json: String,
        finished_unix_s: f64,
    ) -> Result<Recorded> {
        let key = format!("{:016x}", fnv1a(json.as_bytes()));
        let path = self.path.clone();
        let sql = move |what: &str| sql_error(&path, what);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql("locking the database to record a run"))?;
        if let Some(id) = tx
            .query_row("SELECT id FROM runs WHERE run_key = ?1", [&key], |row| {
                row.get(0)
            })
            .optional()
            .map_err(sql("looking for the run's key"))?
        {
            return Err(StoreError::Duplicate { id, key });
        }
        let notes = serde_json::to_string(&r.notes)
            .map_err(|source| StoreError::Json { run: 0, source })?;
        tx.execute(
            "INSERT INTO runs (run_key, kind, started_unix_s, finished_unix_s, tool_name,
                 tool_version, result_schema_version, hostname, kernel, cpu_model, complete,
                 incomplete_reason, suite_name, suite_scale, notes_json, result_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                key,
                r.kind,
                r.started_unix_s,
                finished_unix_s,
                r.tool.name,
                r.tool.version,
                r.schema_version,
                r.host.hostname,
                r.host.kernel,
                r.host.cpu_model,
                r.complete,
                r.incomplete_reason,
                r.suite.as_ref().map(|s| &s.name),
                r.suite.as_ref().map(|s| s.scale),
                notes,
                json,
            ],
        )
        .map_err(sql("recording the run"))?;
        let run_id = tx.last_insert_rowid();
        let t = &r.target;
        tx.execute(
            "INSERT INTO targets (run_id, path, kind, engine, modelled, model_json, size_bytes,
                 logical_block_bytes, path_summary, path_ceiling_bytes_per_s)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                run_id,
                t.path,
                t.kind,
                t.engine,
                t.modelled,
                t.model.as_ref().map(|m| m.to_string()),
                t.size_bytes,
                t.logical_block_bytes,
                t.path_summary,
                t.path_ceiling_bytes_per_s,
            ],
        )
        .map_err(sql("recording the target"))?;
        {
            let mut step_stmt = tx
                .prepare(
                    "INSERT INTO steps (run_id, job_index, label, phase, step, chart, sweep_json,
                         round, complete, stop_reason, measured_ns, ramp_ns, series_interval_ms,
                         job_json)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                )
                .map_err(sql("preparing the steps"))?;
            let mut metric_stmt = tx
                .prepare(
                    "INSERT INTO metrics (step_id, direction, name, value) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(sql("preparing the metrics"))?;
            let mut bin_stmt = tx
                .prepare(
                    "INSERT INTO series (step_id, bin, t_end_s, read_iops, write_iops,
                         read_bytes_per_s, write_bytes_per_s, mean_lat_ns)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(sql("preparing the series"))?;
            for (index, j) in r.jobs.iter().enumerate() {
                let step = j.step.as_ref();
                let sweep = serde_json::to_string(&step.map(|s| &s.sweep[..]).unwrap_or(&[]))
                    .map_err(|source| StoreError::Json {
                        run: run_id,
                        source,
                    })?;
                let job = serde_json::to_string(&j.job).map_err(|source| StoreError::Json {
                    run: run_id,
                    source,
                })?;
                step_stmt
                    .execute(params![
                        run_id,
                        index as i64,
                        j.name,
                        step.map(|s| &s.phase),
                        step.map(|s| &s.step),
                        step.map(|s| &s.chart),
                        sweep,
                        step.and_then(|s| s.round),
                        j.complete,
                        j.stop_reason,
                        j.measured_ns,
                        j.ramp_ns,
                        j.series.interval_ms,
                        job,
                    ])
                    .map_err(sql("recording a step"))?;
                let step_id = tx.last_insert_rowid();
                for m in job_metrics(j) {
                    metric_stmt
                        .execute(params![step_id, m.direction, m.name, m.value])
                        .map_err(sql("recording a metric"))?;
                }
                let s = &j.series;
                for i in 0..s.t_end_s.len() {
                    let at = |v: &Vec<f64>| v.get(i).copied().unwrap_or(0.0);
                    bin_stmt
                        .execute(params![
                            step_id,
                            i as i64,
                            s.t_end_s[i],
                            at(&s.read_iops),
                            at(&s.write_iops),
                            at(&s.read_bytes_per_s),
                            at(&s.write_bytes_per_s),
                            at(&s.mean_lat_ns),
                        ])
                        .map_err(sql("recording the series"))?;
                }
            }
            let mut score_stmt = tx
                .prepare(
                    "INSERT INTO scores (run_id, position, name, value, unit, stddev, rule)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(sql("preparing the scores"))?;
            for (position, s) in scores_of(r).into_iter().enumerate() {
                score_stmt
                    .execute(params![
                        run_id,
                        position as i64,
                        s.name,
                        s.value,
                        s.unit,
                        s.stddev,
                        s.rule
                    ])
                    .map_err(sql("recording a score"))?;
            }
        }
        tx.commit().map_err(sql("committing the run"))?;
        Ok(Recorded { id: run_id, key })
    }

    /// Every kind of run recorded (`quick`, `suite:cdm`, …), sorted.
    pub fn kinds(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT kind FROM runs ORDER BY kind")
            .map_err(self.err("listing the kinds of run"))?;
        let kinds = stmt
            .query_map([], |r| r.get(0))
            .map_err(self.err("listing the kinds of run"))?
            .collect::<rusqlite::Result<Vec<String>>>()
            .map_err(self.err("listing the kinds of run"))?;
        Ok(kinds)
    }

    /// Runs matching `filter`, newest first, and how many matched in all.
    pub fn list(&self, filter: &RunFilter) -> Result<(Vec<RunSummary>, u64)> {
        let cond = "(?1 IS NULL OR r.kind = ?1 OR substr(r.kind, 1, length(?1) + 1) = ?1 || ':')
             AND (?2 IS NULL OR instr(t.path, ?2) > 0)";
        let total: u64 = self
            .conn
            .query_row(
                &format!(
                    "SELECT count(*) FROM runs r JOIN targets t ON t.run_id = r.id WHERE {cond}"
                ),
                params![filter.kind, filter.target],
                |row| row.get(0),
            )
            .map_err(self.err("counting runs"))?;
        let sql = format!(
            "{SUMMARY_SELECT} WHERE {cond} ORDER BY r.started_unix_s DESC, r.id DESC LIMIT ?3"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(self.err("listing runs"))?;
        let limit = filter.limit.map_or(-1, i64::from);
        let rows = stmt
            .query_map(params![filter.kind, filter.target, limit], summary_row)
            .map_err(self.err("listing runs"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("reading the run list"))?;
        Ok((rows, total))
    }

    /// The id of the run `given` names: its number, or a unique prefix (at least 4 hex digits)
    /// of its key.
    pub fn resolve(&self, given: &str) -> Result<i64> {
        let given = given.trim();
        if let Ok(id) = given.parse::<i64>() {
            let found: Option<i64> = self
                .conn
                .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
                .optional()
                .map_err(self.err("looking up a run"))?;
            if let Some(id) = found {
                // Long enough to be a key prefix too: a run whose key starts with it is another
                // reading of what was given, and picking one silently could show the wrong run.
                if given.len() >= MIN_KEY_PREFIX {
                    let others = self.key_prefix_hits(given)?;
                    if others.iter().any(|(other, _)| *other != id) {
                        let mut matches = vec![format!("run {id} by its number")];
                        matches.extend(others.iter().map(|(id, k)| format!("run {id} = {k}")));
                        return Err(StoreError::AmbiguousRun {
                            given: given.to_string(),
                            matches,
                        });
                    }
                }
                return Ok(id);
            }
        }
        if given.len() < MIN_KEY_PREFIX {
            // A number is taken as a run's number that does not exist; anything else as a
            // key prefix too short to pick one run out.
            return Err(if given.parse::<i64>().is_ok() {
                StoreError::UnknownRun(given.to_string())
            } else {
                StoreError::ShortKeyPrefix(given.to_string())
            });
        }
        let hits = self.key_prefix_hits(given)?;
        match hits.as_slice() {
            [] => Err(StoreError::UnknownRun(given.to_string())),
            [(id, _)] => Ok(*id),
            many => Err(StoreError::AmbiguousRun {
                given: given.to_string(),
                matches: many
                    .iter()
                    .map(|(id, k)| format!("run {id} = {k}"))
                    .collect(),
            }),
        }
    }

    /// The runs (id, key) whose key starts with `prefix`, in any case: the first six.
    fn key_prefix_hits(&self, prefix: &str) -> Result<Vec<(i64, String)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, run_key FROM runs WHERE substr(run_key, 1, length(?1)) = lower(?1)
                 ORDER BY id LIMIT 6",
            )
            .map_err(self.err("looking up a run key"))?;
        let rows = stmt
            .query_map([prefix], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(self.err("looking up a run key"))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("looking up a run key"))
    }

    /// The list row of run `id`.
    pub fn summary(&self, id: i64) -> Result<RunSummary> {
        self.conn
            .query_row(
                &format!("{SUMMARY_SELECT} WHERE r.id = ?1"),
                [id],
                summary_row,
            )
            .optional()
            .map_err(self.err("reading a run"))?
            .ok_or_else(|| StoreError::UnknownRun(id.to_string()))
    }

    /// Everything recorded about run `id` (see [`Store::resolve`]).
    pub fn show(&self, id: i64) -> Result<RunDetail> {
        let summary = self.summary(id)?;
        let (cpu_model, notes_json): (String, String) = self
            .conn
            .query_row(
                "SELECT cpu_model, notes_json FROM runs WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(self.err("reading a run"))?;
        let notes = serde_json::from_str(&notes_json)
            .map_err(|source| StoreError::Json { run: id, source })?;
        let target = self
            .conn
            .query_row(
                "SELECT path, kind, engine, modelled, model_json, size_bytes, logical_block_bytes,
                     path_summary, path_ceiling_bytes_per_s
                 FROM targets WHERE run_id = ?1",
                [id],
                |r| {
                    Ok(StoredTarget {
                        path: r.get(0)?,
                        kind: r.get(1)?,
                        engine: r.get(2)?,
                        modelled: r.get(3)?,
                        model_json: r.get(4)?,
                        size_bytes: r.get(5)?,
                        logical_block_bytes: r.get(6)?,
                        path_summary: r.get(7)?,
                        path_ceiling_bytes_per_s: r.get(8)?,
                    })
                },
            )
            .map_err(self.err("reading a run's target"))?;
        let steps = self.steps(id)?;
        let scores = self.scores(id)?;
        // The verdicts have no table of their own: the saved result keeps them.
        let result: serde_json::Value = serde_json::from_str(&self.export(id)?)
            .map_err(|source| StoreError::Json { run: id, source })?;
        let steady_state = match result.pointer("/suite/steady_state") {
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|source| StoreError::Json { run: id, source })?,
            None => Vec::new(),
        };
        // The model's lines come from its description in the saved result, read as the live
        // table reads it. A result this iolab cannot read whole just has none.
        let model_lines = match serde_json::from_value::<RunResult>(result) {
            Ok(r) if r.target.model.is_some() => r
                .jobs
                .iter()
                .map(|j| crate::terminal::model_line(&r, j))
                .collect(),
            _ => Vec::new(),
        };
        Ok(RunDetail {
            summary,
            cpu_model,
            target,
            steps,
            scores,
            notes,
            steady_state,
            model_lines,
        })
    }

    fn steps(&self, id: i64) -> Result<Vec<StoredStep>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, job_index, label, phase, step, chart, sweep_json, round, complete,
                     stop_reason, measured_ns, job_json
                 FROM steps WHERE run_id = ?1 ORDER BY job_index",
            )
            .map_err(self.err("reading steps"))?;
        let rows = stmt
            .query_map([id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(6)?,
                    StoredStep {
                        job_index: r.get(1)?,
                        label: r.get(2)?,
                        phase: r.get(3)?,
                        step: r.get(4)?,
                        chart: r.get(5)?,
                        sweep: Vec::new(),
                        round: r.get(7)?,
                        complete: r.get(8)?,
                        stop_reason: r.get(9)?,
                        measured_ns: r.get(10)?,
                        job: serde_json::from_str(&r.get::<_, String>(11)?).ok(),
                        metrics: Vec::new(),
                    },
                ))
            })
            .map_err(self.err("reading steps"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("reading steps"))?;
        let order = metric_order();
        let rank = |name: &str| order.iter().position(|n| n == name).unwrap_or(order.len());
        let mut metric_stmt = self
            .conn
            .prepare("SELECT direction, name, value FROM metrics WHERE step_id = ?1")
            .map_err(self.err("reading metrics"))?;
        let mut steps = Vec::with_capacity(rows.len());
        for (step_id, sweep_json, mut step) in rows {
            step.sweep = serde_json::from_str(&sweep_json)
                .map_err(|source| StoreError::Json { run: id, source })?;
            step.metrics = metric_stmt
                .query_map([step_id], |r| {
                    Ok(StoredMetric {
                        direction: r.get(0)?,
                        name: r.get(1)?,
                        value: r.get(2)?,
                    })
                })
                .map_err(self.err("reading metrics"))?
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(self.err("reading metrics"))?;
            // A job with I/O has its directions' figures: without any, it did none, and the
            // totals of 0 that runs recorded before job_metrics left them out are not figures.
            if step.metrics.iter().all(|m| m.direction == "total") {
                step.metrics.clear();
            }
            step.metrics
                .sort_by(|a, b| rank(&a.name).cmp(&rank(&b.name)).then(a.name.cmp(&b.name)));
            steps.push(step);
        }
        Ok(steps)
    }

    fn scores(&self, id: i64) -> Result<Vec<StoredScore>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT name, value, unit, stddev, rule FROM scores WHERE run_id = ?1
                 ORDER BY position",
            )
            .map_err(self.err("reading scores"))?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(StoredScore {
                    name: r.get(0)?,
                    value: r.get(1)?,
                    unit: r.get(2)?,
                    stddev: r.get(3)?,
                    rule: r.get(4)?,
                })
            })
            .map_err(self.err("reading scores"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("reading scores"))?;
        Ok(rows)
    }

    /// The per-interval series of job `job_index` of run `id`, as the result had it.
    pub fn series(&self, id: i64, job_index: u32) -> Result<SeriesResult> {
        let interval_ms: f64 = self
            .conn
            .query_row(
                "SELECT series_interval_ms FROM steps WHERE run_id = ?1 AND job_index = ?2",
                params![id, job_index],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.err("reading a series"))?
            .ok_or_else(|| StoreError::UnknownRun(format!("{id} job {job_index}")))?;
        let mut out = SeriesResult {
            interval_ms,
            ..SeriesResult::default()
        };
        let mut stmt = self
            .conn
            .prepare(
                "SELECT b.t_end_s, b.read_iops, b.write_iops, b.read_bytes_per_s,
                     b.write_bytes_per_s, b.mean_lat_ns
                 FROM series b JOIN steps s ON s.id = b.step_id
                 WHERE s.run_id = ?1 AND s.job_index = ?2 ORDER BY b.bin",
            )
            .map_err(self.err("reading a series"))?;
        let mut rows = stmt
            .query(params![id, job_index])
            .map_err(self.err("reading a series"))?;
        while let Some(r) = rows.next().map_err(self.err("reading a series"))? {
            let get = |i| r.get::<_, f64>(i);
            let read = || -> rusqlite::Result<[f64; 6]> {
                Ok([get(0)?, get(1)?, get(2)?, get(3)?, get(4)?, get(5)?])
            };
            let [t, ri, wi, rb, wb, lat] = read().map_err(self.err("reading a series"))?;
            out.t_end_s.push(t);
            out.read_iops.push(ri);
            out.write_iops.push(wi);
            out.read_bytes_per_s.push(rb);
            out.write_bytes_per_s.push(wb);
            out.mean_lat_ns.push(lat);
        }
        Ok(out)
    }

    /// Runs side by side: one row per job label and metric (and per score), one value per
    /// run. Jobs are matched by name; a name that repeats within a run is told apart by its
    /// round or its occurrence.
    pub fn compare(&self, ids: &[i64]) -> Result<Comparison> {
        let mut runs = Vec::with_capacity(ids.len());
        let mut rows: Vec<ComparedRow> = Vec::new();
        let mut index: std::collections::HashMap<(String, String), usize> = Default::default();
        // Each label's workload per run, to tell when the same name ran different work.
        let mut workloads: Vec<(String, Vec<Option<String>>)> = Vec::new();
        let mut put =
            |rows: &mut Vec<ComparedRow>, label: String, metric: String, col: usize, v| {
                let at = *index
                    .entry((label.clone(), metric.clone()))
                    .or_insert_with(|| {
                        rows.push(ComparedRow {
                            label,
                            metric,
                            values: vec![None; ids.len()],
                            ..ComparedRow::default()
                        });
                        rows.len() - 1
                    });
                rows[at].values[col] = Some(v);
            };
        for (col, &id) in ids.iter().enumerate() {
            let detail = self.show(id)?;
            let mut seen: std::collections::HashMap<String, u32> = Default::default();
            for step in &detail.steps {
                let mut label = match step.round {
                    Some(n) => format!("{} (round {n})", step.label),
                    None => step.label.clone(),
                };
                let count = seen.entry(label.clone()).or_insert(0);
                *count += 1;
                if *count > 1 {
                    label = format!("{label} #{count}");
                }
                if let Some(job) = &step.job {
                    let at = match workloads.iter().position(|(l, _)| *l == label) {
                        Some(at) => at,
                        None => {
                            workloads.push((label.clone(), vec![None; ids.len()]));
                            workloads.len() - 1
                        }
                    };
                    workloads[at].1[col] = Some(job.to_string());
                }
                for m in &step.metrics {
                    put(&mut rows, label.clone(), m.name.clone(), col, m.value);
                }
            }
            for s in &detail.scores {
                put(
                    &mut rows,
                    "score".into(),
                    format!("{} ({})", s.name, s.unit),
                    col,
                    s.value,
                );
            }
            runs.push(detail.summary);
        }
        // Keep each job's rows together, in metric order, even when a later run brought
        // metrics the first lacked.
        let order = metric_order();
        let rank = |m: &str| order.iter().position(|n| n == m).unwrap_or(order.len());
        let mut first_seen: Vec<&str> = Vec::new();
        for r in &rows {
            if !first_seen.contains(&r.label.as_str()) {
                first_seen.push(&r.label);
            }
        }
        let group = |label: &str| first_seen.iter().position(|l| *l == label);
        let mut keyed: Vec<_> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (group(&r.label), rank(&r.metric), i))
            .collect();
        keyed.sort();
        let rows = keyed.into_iter().map(|(_, _, i)| rows[i].clone()).collect();
        let differing = workloads
            .into_iter()
            .filter(|(_, w)| {
                let mut seen = w.iter().flatten();
                let first = seen.next();
                seen.any(|x| Some(x) != first)
            })
            .collect();
        Ok(Comparison {
            runs,
            sides: Vec::new(),
            rows,
            differing,
        })
    }

    /// Run `id`'s result exactly as it was saved: pretty JSON, as `iolab` writes result files
    /// (without their final newline).
    pub fn export(&self, id: i64) -> Result<String> {
        let json: String = self
            .conn
            .query_row("SELECT result_json FROM runs WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(self.err("reading a run's result"))?
            .ok_or_else(|| StoreError::UnknownRun(id.to_string()))?;
        Ok(json)
    }

    /// Run `id`'s result, parsed.
    pub fn result(&self, id: i64) -> Result<RunResult> {
        serde_json::from_str(&self.export(id)?)
            .map_err(|source| StoreError::Json { run: id, source })
    }

    /// SQLite's own consistency check (`ok` when sound).
    pub fn integrity_check(&self) -> Result<String> {
        let mut stmt = self
            .conn
            .prepare("PRAGMA integrity_check")
            .map_err(self.err("checking integrity"))?;
        let lines = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(self.err("checking integrity"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("checking integrity"))?;
        Ok(lines.join("\n"))
    }
}

const SUMMARY_SELECT: &str = "SELECT r.id, r.run_key, r.kind, r.started_unix_s, r.finished_unix_s,
        r.complete, r.incomplete_reason, r.tool_version, r.hostname, r.kernel, t.path, t.kind,
        t.modelled, (SELECT count(*) FROM steps s WHERE s.run_id = r.id), r.suite_name,
        r.suite_scale, r.tool_name
    FROM runs r JOIN targets t ON t.run_id = r.id";

fn summary_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunSummary> {
    Ok(RunSummary {
        id: r.get(0)?,
        key: r.get(1)?,
        kind: r.get(2)?,
        started_unix_s: r.get(3)?,
        finished_unix_s: r.get(4)?,
        complete: r.get(5)?,
        incomplete_reason: r.get(6)?,
        tool_version: r.get(7)?,
        hostname: r.get(8)?,
        kernel: r.get(9)?,
        target_path: r.get(10)?,
        target_kind: r.get(11)?,
        modelled: r.get(12)?,
        jobs: r.get(13)?,
        suite_name: r.get(14)?,
        suite_scale: r.get(15)?,
        tool_name: r.get(16)?,
    })
}

/// A run's scores: a suite's, or a trace replay's storage-bench figures.
fn scores_of(r: &RunResult) -> Vec<StoredScore> {
    let mut out: Vec<StoredScore> = r
        .suite
        .iter()
        .flat_map(|s| &s.scores)
        .map(|s| StoredScore {
            name: s.name.clone(),
            value: s.value,
            unit: s.unit.clone(),
            stddev: s.stddev,
            rule: s.rule.clone(),
        })
        .collect();
    if let Some(p) = &r.replay {
        let rule = "trace replay, storage-bench metric";
        for (name, value, unit) in [
            ("Data rate", p.data_rate_mb_per_s, "MB/s"),
            ("Average latency", p.avg_latency_us, "µs"),
            ("I/Os over 10 ms", p.pct_over_10ms, "%"),
            ("I/Os over 100 ms", p.pct_over_100ms, "%"),
        ] {
            out.push(StoredScore {
                name: name.into(),
                value,
                unit: unit.into(),
                stddev: None,
                rule: rule.into(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::{Access, Direction, JobSpec};
    use iolab_core::result::{
        HostInfo, Score, StepInfo, SuiteSummary, TargetInfo, ToolInfo, SCHEMA_VERSION,
    };
    use iolab_core::stats::RunStats;

    /// A job that did `reads` reads and `writes` writes of 4 KiB over 3 s, with latencies
    /// spread over 50–90 µs, summarised by the same code the engine uses.
    fn job(name: &str, reads: u64, writes: u64, qd: u32) -> JobResult {
        let spec = JobSpec {
            name: Some(name.into()),
            access: Some(if writes == 0 {
                Access::RandRead
            } else if reads == 0 {
                Access::RandWrite
            } else {
                Access::RandRw
            }),
            queue_depth: Some(qd),
            ..JobSpec::default()
        };
        let measured_ns = 3_000_000_000;
        let mut stats = RunStats::new(1_000_000_000);
        let n = reads + writes;
        for i in 0..n {
            let dir = if i < reads {
                Direction::Read
            } else {
                Direction::Write
            };
            let latency = 50_000 + (i * 7919) % 40_000;
            stats.record(dir, 4096, latency, i * (measured_ns - 1) / n.max(1));
        }
        JobResult {
            name: name.into(),
            job: spec.validate().unwrap(),
            complete: true,
            stop_reason: None,
            measured_ns,
            ramp_ns: 0,
            read: stats.direction_summary(Direction::Read, measured_ns),
            write: stats.direction_summary(Direction::Write, measured_ns),
            series: stats.series(measured_ns),
            cpu: Default::default(),
            errors: Vec::new(),
            latency_from_intended_start: false,
            repeats: Vec::new(),
            step: None,
            verify: None,
            steady_stop: None,
            latency_target: None,
            syncs: None,
        }
    }

    /// A run of `kind` on `path` started at `t`, with a read job and a write job.
    fn run(kind: &str, path: &str, t: f64, scale: u64) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo {
                name: "iolab".into(),
                version: "0.1.0".into(),
            },
            kind: kind.into(),
            started_unix_s: t,
            complete: true,
            incomplete_reason: None,
            host: HostInfo {
                hostname: "bench".into(),
                kernel: "6.1.0".into(),
                cpu_model: "test cpu".into(),
                cpus: 2,
                memory_bytes: 1 << 30,
            },
            target: TargetInfo {
                path: path.into(),
                kind: "file".into(),
                size_bytes: 64 << 20,
                logical_block_bytes: 512,
                engine: "io_uring".into(),
                path_ceiling_bytes_per_s: Some(600e6),
                path_summary: Some("test path".into()),
                ..TargetInfo::default()
            },
            notes: vec!["a note".into()],
            jobs: vec![
                job("4K QD1 read", 300 * scale, 0, 1),
                job("4K QD1 write", 0, 200 * scale, 1),
            ],
            suite: None,
            replay: None,
            scale: None,
        }
    }

    fn temp_store() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/results.sqlite");
        (dir, path)
    }

    fn count(store: &Store, table: &str) -> i64 {
        store
            .conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_run_goes_in_and_comes_back_out_unchanged() {
        let (_dir, path) = temp_store();
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.layout_version().unwrap(), STORE_VERSION);
        let original = run("run", "/tmp/t.bin", 1_795_392_000.5, 1);
        let rec = store.insert(&original, 1_795_392_004.0).unwrap();
        assert_eq!(rec.id, 1);
        assert_eq!(rec.key.len(), 16);

        // Export is the JSON file's text exactly (the file adds only a final newline).
        let exported = store.export(rec.id).unwrap();
        assert_eq!(exported, serde_json::to_string_pretty(&original).unwrap());
        assert_eq!(store.result(rec.id).unwrap(), original);

        let (runs, total) = store.list(&RunFilter::default()).unwrap();
        assert_eq!(total, 1);
        let s = &runs[0];
        assert_eq!(
            (s.kind.as_str(), s.target_path.as_str(), s.jobs, s.complete),
            ("run", "/tmp/t.bin", 2, true)
        );
        assert_eq!(s.finished_unix_s, 1_795_392_004.0);

        let d = store.show(rec.id).unwrap();
        assert_eq!(d.target.path_ceiling_bytes_per_s, Some(600e6));
        assert_eq!(d.notes, vec!["a note".to_string()]);
        assert_eq!(d.steps.len(), 2);
        let read = &d.steps[0];
        assert_eq!(read.label, "4K QD1 read");
        let get = |name: &str| {
            read.metrics
                .iter()
                .find(|m| m.name == name)
                .map(|m| (m.direction.as_str(), m.value))
        };
        // The stored figures are JobResult::metric's, under its names.
        let j = &original.jobs[0];
        assert_eq!(get("read_iops"), Some(("read", j.read.iops)));
        assert_eq!(get("total_iops"), Some(("total", j.total_iops())));
        assert_eq!(
            get("read_lat_p99_us"),
            Some(("read", j.metric("read_lat_p99_us").unwrap()))
        );
        assert_eq!(
            get("read_lat_p99_99_us"),
            Some(("read", j.read.lat_ns.p99_99 as f64 / 1e3))
        );
        assert!((j.read.iops - 100.0).abs() < 1e-9, "300 reads in 3 s");
        // A read job has no write figures rather than zero ones.
        assert_eq!(get("write_iops"), None);
        assert_eq!(get("write_lat_mean_us"), None);
        // Metrics come back in the documented order.
        let order = metric_order();
        let ranks: Vec<usize> = read
            .metrics
            .iter()
            .map(|m| order.iter().position(|n| *n == m.name).unwrap())
            .collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");

        // The series comes back as the result had it.
        assert_eq!(store.series(rec.id, 1).unwrap(), original.jobs[1].series);
        assert_eq!(count(&store, "series"), 6);
    }

    #[test]
    fn runs_are_found_by_number_or_key_prefix_and_filtered() {
        let (_dir, path) = temp_store();
        let mut store = Store::open(&path).unwrap();
        let a = store
            .insert(&run("run", "/tmp/a.bin", 100.0, 1), 101.0)
            .unwrap();
        let b = store
            .insert(&run("quick", "/tmp/b.bin", 200.0, 1), 201.0)
            .unwrap();
        let c = store
            .insert(&run("suite:cdm", "/dev/zram0", 300.0, 1), 301.0)
            .unwrap();
        assert_eq!(store.resolve("2").unwrap(), b.id);
        assert_eq!(store.resolve(&a.key[..6]).unwrap(), a.id);
        assert_eq!(store.resolve(&c.key.to_uppercase()).unwrap(), c.id);
        assert!(matches!(
            store.resolve("99"),
            Err(StoreError::UnknownRun(_))
        ));
        // Too short to be taken as a key prefix, and said so.
        assert!(matches!(
            store.resolve(&a.key[..2]),
            Err(StoreError::UnknownRun(_) | StoreError::ShortKeyPrefix(_))
        ));
        let short = store.resolve("ee6").unwrap_err();
        assert!(matches!(short, StoreError::ShortKeyPrefix(_)), "{short}");
        assert!(
            short.to_string().contains("at least 4 characters"),
            "{short}"
        );
        assert!(matches!(
            store.resolve("999"),
            Err(StoreError::UnknownRun(_))
        ));
        // A number that is also the start of another run's key: `0001` picked run 1 without
        // a word, though run 2's key starts with it.
        let key2 = format!("0001{}", &b.key[4..]);
        store
            .conn
            .execute("UPDATE runs SET run_key = ?1 WHERE id = ?2", (&key2, b.id))
            .unwrap();
        let both = store.resolve("0001").unwrap_err();
        assert!(matches!(both, StoreError::AmbiguousRun { .. }), "{both}");
        let said = both.to_string();
        assert!(
            said.contains(&format!("run {} by its number", a.id))
                && said.contains(&format!("run {} = {key2}", b.id)),
            "{said}"
        );
        assert_eq!(store.resolve(&key2[..6]).unwrap(), b.id);
        assert_eq!(store.kinds().unwrap(), ["quick", "run", "suite:cdm"]);

        let ids =
            |f: RunFilter| -> Vec<i64> { store.list(&f).unwrap().0.iter().map(|r| r.id).collect() };
        assert_eq!(ids(RunFilter::default()), vec![c.id, b.id, a.id]);
        let kind = |k: &str| RunFilter {
            kind: Some(k.into()),
            ..RunFilter::default()
        };
        assert_eq!(ids(kind("suite")), vec![c.id]);
        assert_eq!(ids(kind("suite:cdm")), vec![c.id]);
        assert_eq!(ids(kind("su")), Vec::<i64>::new());
        assert_eq!(
            ids(RunFilter {
                target: Some("/tmp/".into()),
                ..RunFilter::default()
            }),
            vec![b.id, a.id]
        );
        let (shown, total) = store
            .list(&RunFilter {
                limit: Some(1),
                ..RunFilter::default()
            })
            .unwrap();
        assert_eq!((shown.len(), total), (1, 3));
        assert!(crate::store_tables::list_table(&shown, total).contains("1 of 3 runs shown"));
    }

    #[test]
    fn compare_lines_up_jobs_by_name_across_runs() {
        let (_dir, path) = temp_store();
        let mut store = Store::open(&path).unwrap();
        let slow = run("run", "/tmp/a.bin", 100.0, 1);
        let mut fast = run("run", "/tmp/a.bin", 200.0, 2);
        fast.jobs.pop();
        // A mixed job under the read job's name: it brings write metrics the first run's
        // job of that name lacked.
        fast.jobs[0] = job("4K QD1 read", 600, 100, 1);
        fast.suite = Some(SuiteSummary {
            name: "x".into(),
            scores: vec![Score {
                name: "Total".into(),
                value: 950.0,
                unit: "points".into(),
                ..Score::default()
            }],
            ..SuiteSummary::default()
        });
        let a = store.insert(&slow, 101.0).unwrap();
        let b = store.insert(&fast, 201.0).unwrap();
        let c = store.compare(&[a.id, b.id]).unwrap();
        let row = |label: &str, metric: &str| {
            c.rows
                .iter()
                .find(|r| r.label == label && r.metric == metric)
                .map(|r| r.values.clone())
        };
        assert_eq!(
            row("4K QD1 read", "read_iops"),
            Some(vec![
                Some(slow.jobs[0].read.iops),
                Some(fast.jobs[0].read.iops)
            ])
        );
        // The second run has no write job: its column is empty there.
        assert_eq!(
            row("4K QD1 write", "write_iops"),
            Some(vec![Some(slow.jobs[1].write.iops), None])
        );
        assert_eq!(
            row("score", "Total (points)"),
            Some(vec![None, Some(950.0)])
        );
        // Each job's rows stay together, in metric order.
        let labels: Vec<&str> = c.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels.iter().filter(|l| **l == "4K QD1 read").count(),
            labels
                .iter()
                .skip_while(|l| **l != "4K QD1 read")
                .take_while(|l| **l == "4K QD1 read")
                .count(),
            "{labels:?}"
        );
        let read_rows: Vec<&str> = c
            .rows
            .iter()
            .filter(|r| r.label == "4K QD1 read")
            .map(|r| r.metric.as_str())
            .collect();
        assert_eq!(&read_rows[..2], &["read_iops", "write_iops"]);
        assert_eq!(row("4K QD1 read", "write_iops").unwrap()[0], None);
        let table = crate::store_tables::compare_table(&c);
        assert!(table.contains("read_iops"), "{table}");
        // 600 reads in 3 s against 300: +100 %.
        assert!(table.contains("+100.0 %"), "{table}");
        // The name is paired, and the table says the work behind it changed.
        assert_eq!(
            c.differing,
            vec![(
                "4K QD1 read".to_string(),
                vec![
                    Some("RandRead 4k QD1 T1".to_string()),
                    Some("RandRw 4k QD1 T1 50% read".to_string())
                ]
            )]
        );
        assert!(
            table.contains(&format!(
                "note: 4K QD1 read is not the same workload in every run: #{} RandRead 4k QD1 T1; #{} RandRw 4k QD1 T1 50% read",
                a.id, b.id
            )),
            "{table}"
        );
    }

    #[test]
    fn repeated_job_names_are_told_apart_by_round_or_occurrence() {
        let (_dir, path) = temp_store();
        let mut store = Store::open(&path).unwrap();
        let mut r = run("suite:x", "/tmp/a.bin", 100.0, 1);
        let read = r.jobs[0].clone();
        r.jobs = vec![read.clone(), read.clone(), read.clone(), read];
        for (i, j) in r.jobs.iter_mut().enumerate() {
            j.read.iops = i as f64;
            if i < 2 {
                j.name = "steady".into();
                j.step = Some(StepInfo {
                    round: Some(i as u32 + 1),
                    ..StepInfo::default()
                });
            } else {
                j.name = "dup".into();
            }
        }
        let id = store.insert(&r, 101.0).unwrap().id;
        let c = store.compare(&[id]).unwrap();
        let rows: Vec<(&str, Option<f64>)> = c
            .rows
            .iter()
            .filter(|r| r.metric == "read_iops")
            .map(|r| (r.label.as_str(), r.values[0]))
            .collect();
        assert_eq!(
            rows,
            vec![
                ("steady (round 1)", Some(0.0)),
                ("steady (round 2)", Some(1.0)),
                ("dup", Some(2.0)),
                ("dup #2", Some(3.0)),
            ]
        );
    }

    /// A job that did no I/O showed `total_iops 0` (and "-100.0 %") in a comparison where its
    /// directions showed "-": it has no figures at all, totals included.
    #[test]
    fn a_job_that_did_no_io_has_no_totals_either() {
        let (_dir, path) = temp_store();
        let mut store = Store::open(&path).unwrap();
        let did = run("run", "/tmp/a.bin", 100.0, 1);
        let mut idle = run("run", "/tmp/a.bin", 200.0, 1);
        idle.jobs[0] = job("4K QD1 read", 0, 0, 1);
        let a = store.insert(&did, 101.0).unwrap();
        let b = store.insert(&idle, 201.0).unwrap();
        let c = store.compare(&[a.id, b.id]).unwrap();
        for metric in ["read_iops", "total_iops", "read_mb_per_s", "total_mb_per_s"] {
            let row = c
                .rows
                .iter()
                .find(|r| r.label == "4K QD1 read" && r.metric == metric)
                .unwrap_or_else(|| panic!("no {metric} row"));
            assert!(row.values[0].is_some(), "{metric}");
            assert_eq!(row.values[1], None, "{metric}");
        }
        let table = crate::store_tables::compare_table(&c);
        let line = table.lines().find(|l| l.contains("total_iops")).unwrap();
        assert!(line.trim_end().ends_with('-'), "{table}");
        assert!(!table.contains("-100.0 %"), "{table}");
        // show says why the job has no figures.
        let shown = crate::store_tables::show_table(&store.show(b.id).unwrap());
        assert!(
            shown.contains("job 1: 4K QD1 read (RandRead 4k QD1 T1, 3.00 s, no I/O completed)"),
            "{shown}"
        );
        // A store written before kept totals of 0 for such a job: they are not shown either.
        let step_id: i64 = store
            .conn
            .query_row(
                "SELECT id FROM steps WHERE run_id = ?1 AND job_index = 0",
                [b.id],
                |r| r.get(0),
            )
            .unwrap();
        store
            .conn
            .execute(
                "INSERT INTO metrics (step_id, direction, name, value)
                 VALUES (?1, 'total', 'total_iops', 0.0)",
                [step_id],
            )
            .unwrap();
        assert_eq!(store.show(b.id).unwrap().steps[0].metrics, vec![]);
    }

    #[test]
    fn incomplete_runs_and_replays_are_recorded_with_their_reason_and_figures() {
        let (_dir, path) = temp_store();
        let mut store = Store::open(&path).unwrap();
        let mut r = run("replay", "/tmp/a.bin", 100.0, 1);
        r.complete = false;
        r.incomplete_reason = Some("interrupted".into());
        r.jobs[1].complete = false;
        r.jobs[1].stop_reason = Some("interrupted".into());
        r.replay = Some(iolab_core::result::ReplaySummary {
            data_rate_mb_per_s: 123.0,
            ..Default::default()
        });
        let id = store.insert(&r, 101.0).unwrap().id;
        let d = store.show(id).unwrap();
        assert!(!d.summary.complete);
        assert_eq!(d.summary.incomplete_reason.as_deref(), Some("interrupted"));
        assert!(!d.steps[1].complete);
        assert_eq!(d.scores[0].name, "Data rate");
        assert_eq!(d.scores[0].value, 123.0);
        let text = crate::store_tables::show_table(&d);
        assert!(text.contains("INCOMPLETE"), "{text}");
        assert!(text.contains("Data rate"), "{text}");
        assert!(text.contains("write_lat_p99_9_us"), "{text}");
    }

    #[test]
    fn the_same_result_twice_is_refused() {
        let (_dir, path) = temp_store();
        let mut store = Store::open(&path).unwrap();
        let r = run("run", "/tmp/a.bin", 100.0, 1);
        let first = store.insert(&r, 101.0).unwrap();
        match store.insert(&r, 102.0) {
            Err(StoreError::Duplicate { id, key }) => assert_eq!((id, key), (first.id, first.key)),
            other => panic!("expected Duplicate, got {other:?}"),
        }
        assert_eq!(count(&store, "runs"), 1);
    }

    #[test]
    fn a_failed_insert_leaves_no_part_of_the_run() {
        let (_dir, path) = temp_store();
        let mut store = Store::open(&path).unwrap();
        store
            .insert(&run("run", "/tmp/a.bin", 50.0, 1), 51.0)
            .unwrap();
        // Make the last tables' inserts fail, after runs, targets, steps and metrics went in.
        store
            .conn
            .execute_batch(
                "CREATE TRIGGER fail BEFORE INSERT ON series BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;",
            )
            .unwrap();
        let err = store
            .insert(&run("run", "/tmp/b.bin", 100.0, 1), 101.0)
            .unwrap_err();
        assert!(matches!(err, StoreError::Sql { .. }), "{err:?}");
        for (table, n) in [("runs", 1), ("targets", 1), ("steps", 2), ("series", 6)] {
            assert_eq!(count(&store, table), n, "{table}");
        }
        assert_eq!(count(&store, "metrics"), count_metrics_of_one_run());
    }

    fn count_metrics_of_one_run() -> i64 {
        run("run", "", 0.0, 1)
            .jobs
            .iter()
            .map(|j| job_metrics(j).len() as i64)
            .sum()
    }

    #[test]
    fn a_newer_layout_is_refused_and_a_missing_file_is_not_created() {
        let (dir, path) = temp_store();
        match Store::open_existing(&path) {
            Err(StoreError::NotFound { path: p }) => assert_eq!(p, path),
            other => panic!("expected NotFound, got {:?}", other.err()),
        }
        assert!(!path.exists());
        drop(Store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", STORE_VERSION + 1)
            .unwrap();
        drop(conn);
        let err = Store::open_existing(&path).err().unwrap();
        assert!(matches!(err, StoreError::NewerLayout { found, .. } if found == STORE_VERSION + 1));
        assert!(
            err.to_string().contains("newer than this iolab reads"),
            "{err}"
        );
        // Not a database at all: an error naming the file, not a panic.
        let junk = dir.path().join("junk.sqlite");
        std::fs::write(
            &junk,
            "not sqlite at all, just text long enough to look like a header",
        )
        .unwrap();
        let err = Store::open_existing(&junk).err().unwrap();
        assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
        assert!(err.to_string().contains("junk.sqlite"), "{err}");
    }

    #[test]
    fn only_a_database_file_or_a_new_one_is_opened_for_recording() {
        let dir = tempfile::tempdir().unwrap();
        // A JSON result where the store was expected: refused, and left as it was.
        let json = dir.path().join("r.json");
        std::fs::write(&json, "{\"schema_version\": 1}\n").unwrap();
        let err = Store::open(&json).err().unwrap();
        assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
        assert_eq!(std::fs::read(&json).unwrap(), b"{\"schema_version\": 1}\n");
        // A device: SQLite's pages would land on its data.
        let err = Store::open(Path::new("/dev/null")).err().unwrap();
        assert!(matches!(err, StoreError::NotAFile { .. }), "{err:?}");
        assert!(err.to_string().contains("not a regular file"), "{err}");
        // An empty file and a missing one become stores.
        let empty = dir.path().join("empty.sqlite");
        std::fs::write(&empty, "").unwrap();
        drop(Store::open(&empty).unwrap());
        drop(Store::open(&dir.path().join("new.sqlite")).unwrap());
    }

    /// An SQLite database of another program's in `dir`: one table of its own, one row.
    fn another_programs_database(dir: &Path) -> PathBuf {
        let other = dir.join("other.sqlite");
        let conn = Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
        other
    }

    #[test]
    fn reading_another_programs_database_or_an_empty_file_changes_nothing() {
        let (dir, _) = temp_store();
        let other = another_programs_database(dir.path());
        let empty = dir.path().join("empty.json");
        std::fs::write(&empty, "").unwrap();
        for path in [&other, &empty] {
            let before = std::fs::read(path).unwrap();
            let err = Store::open_existing(path).err().unwrap();
            assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
            assert!(err.to_string().contains("not a results store"), "{err}");
            assert_eq!(std::fs::read(path).unwrap(), before, "{}", path.display());
        }
        let conn = Connection::open(&other).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete", "the journal mode was changed");
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 1, "tables were added");
    }

    #[test]
    fn recording_into_another_programs_database_is_refused_untouched() {
        // IOLAB_DB pointed at another program's database: iolab's tables were added to it and
        // its journal switched to WAL, where only reading (`--db`) refused it.
        let (dir, _) = temp_store();
        let other = another_programs_database(dir.path());
        let before = std::fs::read(&other).unwrap();
        let err = Store::open(&other).err().unwrap();
        assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
        assert_eq!(std::fs::read(&other).unwrap(), before);
        let conn = Connection::open(&other).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete", "the journal mode was changed");
        // A new file, and an empty one, still become a store.
        for fresh in [
            dir.path().join("new.sqlite"),
            dir.path().join("empty.sqlite"),
        ] {
            if fresh.ends_with("empty.sqlite") {
                std::fs::write(&fresh, "").unwrap();
            }
            let store = Store::open(&fresh).unwrap();
            assert_eq!(store.layout_version().unwrap(), STORE_VERSION);
        }
    }

    #[test]
    fn a_directory_given_as_the_store_is_named_as_one() {
        // `iolab results list --db /tmp` said "opening (/tmp): disk I/O error".
        let (dir, _) = temp_store();
        for open in [Store::open_existing, Store::open] {
            let err = open(dir.path()).err().unwrap();
            assert!(matches!(err, StoreError::IsDirectory { .. }), "{err:?}");
            assert!(
                err.to_string().ends_with(
                    "is a directory, not a results store: give the database file in it \
                     (results.sqlite)"
                ),
                "{err}"
            );
        }
    }

    #[test]
    fn two_writers_at_once_lose_nothing_and_corrupt_nothing() {
        let (_dir, path) = temp_store();
        const PER_WRITER: u64 = 50;
        let writers: Vec<_> = (0..2u64)
            .map(|w| {
                let path = path.clone();
                std::thread::spawn(move || {
                    // Each writer has its own connection, as two processes would.
                    let mut store = Store::open(&path).unwrap();
                    for i in 0..PER_WRITER {
                        let t = (w * 1000 + i) as f64;
                        store
                            .insert(&run("run", &format!("/tmp/w{w}.bin"), t, 1), t + 1.0)
                            .unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let store = Store::open_existing(&path).unwrap();
        assert_eq!(store.integrity_check().unwrap(), "ok");
        let (_, total) = store.list(&RunFilter::default()).unwrap();
        assert_eq!(total, 2 * PER_WRITER);
        for w in 0..2 {
            let (_, n) = store
                .list(&RunFilter {
                    target: Some(format!("/tmp/w{w}.bin")),
                    ..RunFilter::default()
                })
                .unwrap();
            assert_eq!(n, PER_WRITER);
        }
        assert_eq!(count(&store, "steps"), 4 * PER_WRITER as i64);
        let mode: String = store
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }
}
