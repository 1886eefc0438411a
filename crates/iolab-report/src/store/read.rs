//! Listing, showing and exporting recorded runs.

use super::*;

impl Store {
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
