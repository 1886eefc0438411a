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
//!
//! The module's rooms: `schema` (the SQL of each layout version), `rows` (what the queries
//! return), `metrics` (the figures a result is split into), `write` (recording a run), `read`
//! (listing, showing, exporting) and `compare` (runs side by side).

mod compare;
mod metrics;
mod read;
mod rows;
mod schema;
#[cfg(test)]
mod tests;
mod write;

pub use iolab_core::metrics::{job_metrics, metric_order};
use metrics::scores_of;
pub use rows::*;
use schema::MIGRATIONS;

use iolab_core::job::Job;
use iolab_core::result::{RunResult, SeriesResult, SteadyStateReport, SweepValue};
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
}
