//! Recording a run: one transaction that writes its row, its target, each step with its
//! metrics and series, and its scores.

use super::*;
use rusqlite::Transaction;

/// Turns an SQLite error met while doing `what` into a [`StoreError`] on the store at a path.
type SqlError<'a> = &'a dyn Fn(&str) -> Box<dyn FnOnce(rusqlite::Error) -> StoreError>;

impl Store {
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
        let sql = move |what: &str| -> Box<dyn FnOnce(rusqlite::Error) -> StoreError> {
            Box::new(sql_error(&path, what))
        };
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
        let run_id = insert_run(&tx, r, &key, json, finished_unix_s, &sql)?;
        insert_target(&tx, run_id, r, &sql)?;
        insert_steps(&tx, run_id, r, &sql)?;
        insert_scores(&tx, run_id, r, &sql)?;
        tx.commit().map_err(sql("committing the run"))?;
        Ok(Recorded { id: run_id, key })
    }
}

/// The run's row; its id.
fn insert_run(
    tx: &Transaction,
    r: &RunResult,
    key: &str,
    json: String,
    finished_unix_s: f64,
    sql: SqlError,
) -> Result<i64> {
    let notes =
        serde_json::to_string(&r.notes).map_err(|source| StoreError::Json { run: 0, source })?;
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
    Ok(tx.last_insert_rowid())
}

/// The run's target.
fn insert_target(tx: &Transaction, run_id: i64, r: &RunResult, sql: SqlError) -> Result<()> {
    let model_json = r
        .target
        .model
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|source| StoreError::Json {
            run: run_id,
            source,
        })?;
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
            model_json,
            t.size_bytes,
            t.logical_block_bytes,
            t.path_summary,
            t.path_ceiling_bytes_per_s,
        ],
    )
    .map_err(sql("recording the target"))?;
    Ok(())
}

/// Each job as a step, with its metrics and per-second series.
fn insert_steps(tx: &Transaction, run_id: i64, r: &RunResult, sql: SqlError) -> Result<()> {
    let mut step_stmt = tx
        .prepare(
            "INSERT INTO steps (run_id, job_index, label, phase, step, chart, sweep_json,
                 round, complete, stop_reason, measured_ns, ramp_ns, series_interval_ms,
                 job_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )
        .map_err(sql("preparing the steps"))?;
    let mut metric_stmt = tx
        .prepare("INSERT INTO metrics (step_id, direction, name, value) VALUES (?1, ?2, ?3, ?4)")
        .map_err(sql("preparing the metrics"))?;
    let mut bin_stmt = tx
        .prepare(
            "INSERT INTO series (step_id, bin, t_end_s, read_iops, write_iops,
                 read_bytes_per_s, write_bytes_per_s, mean_lat_ns)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .map_err(sql("preparing the series"))?;
    let json_error = |source| StoreError::Json {
        run: run_id,
        source,
    };
    for (index, j) in r.jobs.iter().enumerate() {
        let step = j.step.as_ref();
        let sweep = serde_json::to_string(&step.map(|s| &s.sweep[..]).unwrap_or(&[]))
            .map_err(json_error)?;
        let job = serde_json::to_string(&j.job).map_err(json_error)?;
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
    Ok(())
}

/// The run's scores (a suite's, or a trace replay's).
fn insert_scores(tx: &Transaction, run_id: i64, r: &RunResult, sql: SqlError) -> Result<()> {
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
    Ok(())
}
