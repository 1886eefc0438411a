//! The SQL that creates and upgrades the store's tables.

/// The SQL that takes a database from version `i` to `i + 1`, in order.
pub(super) const MIGRATIONS: &[&str] = &[V1];

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
