//! Runs the published figures of the calibration and validation sets (`crate::figures`):
//! for each, the same test the review ran, on the modelled testbed, with durations scaled down
//! (virtual time is cheap, but steady figures come within a fraction of a second).
//!
//! Qualitative findings are expressed as ratios between two modelled runs (e.g. "240 GB is
//! 70–90 % faster" → published ratio 1.8) so that they sit in the same table.

use crate::figures::{Bound, Figure, FigureSet, Kind, Measure, Metric, Prep, Source};
use crate::{open, SimSetup};
use iolab_core::data::DataGenerator;
use iolab_core::job::{Direction, Job, JobSpec};
use iolab_core::result::JobResult;
use iolab_core::workload::IoRequest;
use iolab_drive::driver::{Planned, RequestSource, Worker};
use iolab_drive::hint::CacheHint;
use std::collections::HashMap;

/// One published figure and what the model gives for the same test.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CalibrationRow {
    /// `calibration` or `validation`.
    pub set: String,
    /// The figure's id in its set.
    pub id: String,
    /// Review or document.
    pub review: String,
    /// Figure: test and path.
    pub figure: String,
    /// Published value.
    pub published: f64,
    /// Modelled value.
    pub modelled: f64,
    /// (modelled − published) / published × 100.
    pub error_pct: f64,
    /// Allowed error of a two-sided figure, %.
    pub tolerance_pct: f64,
    /// A one-sided figure's side.
    pub bound: Option<Bound>,
    /// A garbage-collection steady-state figure.
    pub steady_state: bool,
    /// The queue-depth curve the figure is a point of.
    pub qd_curve: Option<String>,
    /// Where it was published.
    pub source: Source,
    /// The modelled testbeds it ran on.
    pub targets: Vec<String>,
}

impl CalibrationRow {
    /// Within its tolerance of the published figure, or on the right side of a bound.
    pub fn within_tolerance(&self) -> bool {
        match self.bound {
            Some(Bound::AtLeast) => self.modelled >= self.published,
            Some(Bound::AtMost) => self.modelled <= self.published,
            None => self.error_pct.abs() <= self.tolerance_pct,
        }
    }

    /// A row for `figure` of `set` modelled at `modelled`.
    pub fn new(set: &FigureSet, figure: &Figure, modelled: f64) -> CalibrationRow {
        let mut targets: Vec<String> = figure
            .measure
            .values()
            .map(|m| m.target.clone())
            .filter(|t| !t.is_empty())
            .collect();
        targets.sort();
        targets.dedup();
        CalibrationRow {
            set: set.name.clone(),
            id: figure.id.clone(),
            review: figure.review.clone(),
            figure: figure.figure.clone(),
            published: figure.published,
            modelled,
            error_pct: (modelled - figure.published) / figure.published * 100.0,
            tolerance_pct: figure.tolerance_pct,
            bound: figure.bound,
            steady_state: figure.steady_state,
            qd_curve: figure.qd_curve.clone(),
            source: set.source[&figure.source].clone(),
            targets,
        }
    }
}

/// A job from a few keys; `span` bytes, `seconds` of measurement.
pub(crate) fn job(
    name: &str,
    access: &str,
    bs: &str,
    qd: u32,
    threads: u32,
    span: u64,
    seconds: f64,
) -> Job {
    job_from(&format!(
        "name = \"{name}\"\naccess = \"{access}\"\nblock_size = \"{bs}\"\nqueue_depth = {qd}\nthreads = {threads}\nsize = {span}\nduration_s = {seconds}\n"
    ))
}

/// A job from its TOML text.
fn job_from(text: &str) -> Job {
    toml::from_str::<JobSpec>(text)
        .expect("calibration job parses")
        .validate()
        .expect("calibration job is valid")
}

/// What one run measured.
#[derive(Clone, Copy, Debug, Default)]
struct Fig {
    mb_s: f64,
    iops: f64,
    lat_us: f64,
    watts: f64,
    over_10ms: f64,
}

impl Fig {
    /// A single number (a size, a power, a link's ceiling) whichever metric asks for it.
    fn all(v: f64) -> Fig {
        Fig {
            mb_s: v,
            iops: v,
            lat_us: v,
            watts: v,
            over_10ms: v,
        }
    }

    fn get(&self, metric: Metric) -> f64 {
        match metric {
            Metric::MbS => self.mb_s,
            Metric::Iops => self.iops,
            Metric::LatUs => self.lat_us,
            Metric::Watts => self.watts,
            Metric::Over10ms => self.over_10ms,
        }
    }
}

fn fig(r: &JobResult, watts: f64) -> Fig {
    let ios = r.read.ios + r.write.ios;
    Fig {
        mb_s: r.read.bw_mb_per_s + r.write.bw_mb_per_s,
        iops: r.read.iops + r.write.iops,
        lat_us: if ios == 0 {
            0.0
        } else {
            (r.read.lat_ns.mean * r.read.ios as f64 + r.write.lat_ns.mean * r.write.ios as f64)
                / ios as f64
                / 1e3
        },
        watts,
        over_10ms: r.ios_over_10ms() as f64,
    }
}

/// Prepares a model for `measured`: a `Written` span holds what the benchmark wrote before it
/// read, in the data it reads (a compressing drive stores zeros in a fraction of the space).
fn prepare(sim: &mut SimSetup, prep: Prep, measured: &Job) {
    match prep {
        Prep::Empty => {}
        Prep::Written => {
            let mut fill = job("fill", "write", "1m", 32, 1, measured.span(), 1e6);
            fill.duration_s = None; // one pass over the span
            fill.data = measured.data;
            sim.run_job(&fill, None).expect("fill runs");
            sim.idle(1.0);
        }
        Prep::Full => sim.precondition_fill(),
        Prep::Steady => sim.precondition_steady(),
    }
}

/// A fresh model of `spec` (a catalog entry: it opens) prefetching with `hint`.
fn open_hinted(spec: &str, hint: CacheHint) -> SimSetup {
    let mut sim = open(spec, None).unwrap_or_else(|e| panic!("{spec}: {e}"));
    sim.set_cache_hint(hint);
    sim
}

/// Runs `job` on a fresh model of `spec` prepared as asked.
fn run(spec: &str, prep: Prep, job: &Job, hint: CacheHint) -> Fig {
    let mut sim = open_hinted(spec, hint);
    prepare(&mut sim, prep, job);
    let r = sim.run_job(job, None).expect("job runs");
    let w = sim.tests().last().map_or(0.0, |t| t.avg_power_w);
    fig(&r.result, w)
}

/// `runs` runs of `job` on one model of `spec`, `idle_s` apart.
fn launches(
    spec: &str,
    prep: Prep,
    job: &Job,
    runs: usize,
    idle_s: f64,
    hint: CacheHint,
) -> Vec<Fig> {
    let mut sim = open_hinted(spec, hint);
    prepare(&mut sim, prep, job);
    (0..runs)
        .map(|_| {
            let r = sim.run_job(job, None).expect("launch runs");
            sim.idle(idle_s);
            fig(&r.result, 0.0)
        })
        .collect()
}

/// A synthesised storage-bench trace's requests, replayed as fast as possible.
struct TraceRequests(std::vec::IntoIter<iolab_trace::ReplayIo>);

impl RequestSource for TraceRequests {
    fn next_planned(&mut self) -> Option<Planned> {
        let io = self.0.next()?;
        Some(Planned {
            req: IoRequest {
                dir: if io.write {
                    Direction::Write
                } else {
                    Direction::Read
                },
                offset: io.offset,
                len: io.len,
            },
            at_ns: None,
        })
    }
}

/// Replays `requests` synthesised from the built-in `profile` (AnandTech's Storage Bench tables, calibration source anandtech-9090) on
/// `spec`, as fast as possible at the trace's recorded queue depth, the drive full or (with
/// `steady`) in garbage-collection steady state.
fn bench(spec: &str, profile: &str, requests: u64, steady: bool, hint: CacheHint) -> Fig {
    let profile = iolab_trace::Profile::load(profile).expect("built-in profile");
    let opts = iolab_trace::SynthOptions {
        requests: Some(requests),
        ..Default::default()
    };
    let records: Vec<_> = iolab_trace::Synth::new(&profile, &opts)
        .expect("profile synthesises")
        .collect();
    let qd = iolab_trace::replay::recorded_queue_depth(records.iter().cloned(), 1).suggested();
    let mut sim = open_hinted(spec, hint);
    if steady {
        sim.precondition_steady();
    } else {
        sim.precondition_fill();
    }
    let replay_opts = iolab_trace::ReplayOptions {
        align: 4096,
        ..iolab_trace::ReplayOptions::new(0, sim.size_bytes())
    };
    let ios: Vec<_> = iolab_trace::replay::Replay::new(records.into_iter().map(Ok), replay_opts)
        .expect("replay options")
        .map(|io| io.expect("synthesised records are valid"))
        .collect();
    let largest = ios.iter().map(|io| io.len).max().unwrap_or(4096);
    let mut job = job_from(&format!(
        "name = \"storage bench\"\naccess = \"randrw\"\nblock_size = \"{}k\"\nqueue_depth = {qd}\nthreads = 1\nsize = {}\nduration_s = 1e6\nread_pct = 50",
        largest.div_ceil(4096) * 4,
        sim.size_bytes()
    ));
    job.duration_s = None; // the trace ends the run
    let worker = Worker {
        index: 0,
        data: DataGenerator::new(&job, job.seed),
        source: TraceRequests(ios.into_iter()),
        queue_depth: qd,
        spare_slots: 0,
    };
    let r = sim
        .run_workers(&job, vec![worker], None)
        .expect("replay runs")
        .result;
    assert_eq!(
        r.read.ios + r.write.ios,
        requests,
        "every request of the trace ran"
    );
    fig(&r, 0.0)
}

/// Runs the figures of a set, each measurement once (figures sharing a measurement share its
/// run: every run is deterministic).
struct Runner<'a> {
    set: &'a FigureSet,
    done: HashMap<String, Vec<Fig>>,
    hint: CacheHint,
    /// Models run at once, each on its own thread.
    models: usize,
}

impl Runner<'_> {
    fn job(&self, m: &Measure) -> Job {
        let name = m.job.as_deref().expect("checked when the set was read");
        toml::Value::Table(self.set.job[name].clone())
            .try_into::<JobSpec>()
            .unwrap_or_else(|e| panic!("{}: job {name}: {e}", self.set.name))
            .validate()
            .unwrap_or_else(|e| panic!("{}: job {name}: {e}", self.set.name))
    }

    /// What a measurement's runs give: a pure function of the measurement (every run is
    /// deterministic), so measurements run on any thread in any order.
    fn compute(&self, m: &Measure) -> Vec<Fig> {
        match m.kind {
            Kind::Run => vec![run(&m.target, m.prep, &self.job(m), self.hint)],
            Kind::Launches => launches(
                &m.target,
                m.prep,
                &self.job(m),
                m.runs.unwrap_or(1),
                m.idle_s.unwrap_or(0.0),
                self.hint,
            ),
            Kind::StorageBench => vec![bench(
                &m.target,
                m.profile.as_deref().unwrap_or("light"),
                m.requests.unwrap_or(80_000),
                m.prep == Prep::Steady,
                self.hint,
            )],
            Kind::Size | Kind::IdlePower => {
                let sim = open(&m.target, None).unwrap_or_else(|e| panic!("{}: {e}", m.target));
                let v = if m.kind == Kind::Size {
                    sim.size_bytes() as f64
                } else {
                    sim.idle_w()
                };
                vec![Fig::all(v)]
            }
            Kind::Dmi3Ceiling => {
                let v = iolab_link::Link::dmi(iolab_link::DmiGen::Dmi3)
                    .effective(256)
                    .mb_per_s();
                vec![Fig::all(v)]
            }
        }
    }

    /// Runs every measurement `figures` need that has not run yet, `models` at once (one per
    /// thread), and keeps their results.
    fn run_all(&mut self, figures: &[&Figure]) {
        let mut todo: Vec<(String, &Measure)> = Vec::new();
        for f in figures {
            for m in f.measure.values() {
                let key = format!("{m:?}");
                if !self.done.contains_key(&key) && !todo.iter().any(|(k, _)| *k == key) {
                    todo.push((key, m));
                }
            }
        }
        let threads = self.models.min(todo.len());
        let next = std::sync::atomic::AtomicUsize::new(0);
        let this = &*self;
        let results: Vec<(usize, Vec<Fig>)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some((_, m)) = todo.get(i) else {
                                break mine;
                            };
                            mine.push((i, this.compute(m)));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        for (i, figs) in results {
            self.done.insert(todo[i].0.clone(), figs);
        }
    }

    /// A measurement's value, from the runs [`run_all`](Self::run_all) made.
    fn measure(&self, m: &Measure) -> f64 {
        let key = format!("{m:?}");
        let figs = &self.done[&key];
        let pick = m.pick.unwrap_or(1).clamp(1, figs.len()) - 1;
        figs[pick].get(m.metric)
    }
}

/// How many models a calibration runs at once in one process unless told. Each takes memory
/// for what its run writes: The Destroyer on the SM951 or the SSD 750 peaks at about 170 MB,
/// the 970 EVO's sustained write at 160 MB, every other measurement under 85 MB (each run alone
/// under `/usr/bin/time`). Two at once keep a calibration under the model's 500 MB target on a
/// machine of any size (issue 38); more cores are used by more processes (mpirun), or by more
/// models at once where the memory is there ([`Selection::with_models`]).
const MODELS_AT_ONCE: usize = 2;

/// The models a calibration runs at once by default, given the machine's `cores`.
fn models_at_once(cores: usize) -> usize {
    cores.clamp(1, MODELS_AT_ONCE)
}

/// [`models_at_once`] on this machine.
fn default_models() -> usize {
    models_at_once(std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The modelled value of each figure of `set` named by its index, in that order, `models` run
/// at once (at least one).
fn modelled(
    set: &FigureSet,
    indices: &[usize],
    hint: CacheHint,
    models: usize,
) -> Vec<(usize, f64)> {
    let mut runner = Runner {
        set,
        done: HashMap::new(),
        hint,
        models,
    };
    let figures: Vec<&Figure> = indices.iter().map(|&i| &set.figure[i]).collect();
    runner.run_all(&figures);
    indices
        .iter()
        .map(|&i| {
            let f = &set.figure[i];
            let mut values = HashMap::new();
            for (name, m) in &f.measure {
                values.insert(name.clone(), runner.measure(m));
            }
            let value = crate::figures::eval(&f.value, &|n| values.get(n).copied())
                .expect("checked when the set was read");
            (i, value)
        })
        .collect()
}

/// The figures a `sim calibrate` runs: each set it runs (calibration first) with the indices
/// of the figures it keeps, in the set's order.
pub struct Selection {
    sets: Vec<(FigureSet, Vec<usize>)>,
    /// Models run at once in this process.
    models: usize,
}

impl Selection {
    /// Parts a selection splits into for processes that share it (MPI ranks): contiguous runs
    /// of its figures, so that figures sharing a measurement mostly share a part (it runs once
    /// there) and the parts in order are the selection's figures in order.
    pub const PARTS: usize = 16;

    /// The figures of the set named `set` (`calibration` or `validation`; both if `None`)
    /// whose ids contain `figure` (all if `None`). Only the sets named are read.
    pub fn new(set: Option<&str>, figure: Option<&str>) -> Selection {
        let sets = ["calibration", "validation"]
            .into_iter()
            .filter(|name| set.is_none_or(|s| s == *name))
            .map(|name| {
                let set = if name == "calibration" {
                    FigureSet::calibration()
                } else {
                    FigureSet::validation()
                };
                let kept = (0..set.figure.len())
                    .filter(|&i| figure.is_none_or(|text| set.figure[i].id.contains(text)))
                    .collect();
                (set, kept)
            })
            .collect();
        Selection {
            sets,
            models: default_models(),
        }
    }

    /// The same selection run `models` models at once in this process (at least one), in
    /// place of two (or one on a machine of one core): faster on a machine of
    /// more cores, at up to about 170 MB of memory per model. The values do not change.
    pub fn with_models(mut self, models: usize) -> Selection {
        self.models = models.max(1);
        self
    }

    /// How many figures it holds.
    pub fn len(&self) -> usize {
        self.sets.iter().map(|(_, kept)| kept.len()).sum()
    }

    /// Whether it holds no figure.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every figure's modelled value, in one process: `(position in the selection, value)`.
    pub fn modelled(&self, hint: CacheHint) -> Vec<(usize, f64)> {
        self.modelled_positions(0..self.len(), hint)
    }

    /// The modelled values of part `part` (of [`PARTS`](Self::PARTS)): `(position in the
    /// selection, value)`. Every run is deterministic, so the values are those
    /// [`modelled`](Self::modelled) computes.
    pub fn modelled_part(&self, part: usize, hint: CacheHint) -> Vec<(usize, f64)> {
        let n = self.len();
        self.modelled_positions(part * n / Self::PARTS..(part + 1) * n / Self::PARTS, hint)
    }

    fn modelled_positions(
        &self,
        positions: std::ops::Range<usize>,
        hint: CacheHint,
    ) -> Vec<(usize, f64)> {
        let mut values = Vec::with_capacity(positions.len());
        let mut first = 0;
        for (set, kept) in &self.sets {
            let mine = positions.start.max(first)..positions.end.min(first + kept.len());
            if !mine.is_empty() {
                let indices = &kept[mine.start - first..mine.end - first];
                values.extend(
                    modelled(set, indices, hint, self.models)
                        .into_iter()
                        .zip(mine)
                        .map(|((_, value), position)| (position, value)),
                );
            }
            first += kept.len();
        }
        values
    }

    /// The rows from every figure's value (the parts' values gathered, in any order), in the
    /// selection's order.
    pub fn rows(&self, mut values: Vec<(usize, f64)>) -> Vec<CalibrationRow> {
        debug_assert_eq!(values.len(), self.len(), "a value for every figure");
        values.sort_by_key(|&(position, _)| position);
        let figures = self
            .sets
            .iter()
            .flat_map(|(set, kept)| kept.iter().map(move |&i| (set, &set.figure[i])));
        figures
            .zip(values)
            .map(|((set, figure), (_, value))| CalibrationRow::new(set, figure, value))
            .collect()
    }
}

/// Runs every figure of the set named `set`, without the engine's prefetch instruction (the
/// same figures, computed more slowly).
fn run_whole_set(set: &str) -> Vec<CalibrationRow> {
    let selection = Selection::new(Some(set), None);
    selection.rows(selection.modelled(CacheHint::NONE))
}

/// Runs every figure of the calibration set (catalog/figures/calibration.toml).
pub fn calibrate() -> Vec<CalibrationRow> {
    run_whole_set("calibration")
}

/// Runs every figure of the validation set (figures no parameter was chosen on).
pub fn validate() -> Vec<CalibrationRow> {
    run_whole_set("validation")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts of a selection hold each of its figures once, with the value one process
    /// computes for it, whatever part it falls in.
    #[test]
    fn a_selections_parts_model_each_figure_once_as_one_process_does() {
        let selection = Selection::new(None, Some("p55"));
        assert!(selection.len() >= 3, "{} figures", selection.len());
        let mut parts: Vec<(usize, u64)> = (0..Selection::PARTS)
            .flat_map(|part| selection.modelled_part(part, CacheHint::NONE))
            .map(|(i, v)| (i, v.to_bits()))
            .collect();
        parts.sort_unstable();
        let whole: Vec<(usize, u64)> = selection
            .modelled(CacheHint::NONE)
            .into_iter()
            .map(|(i, v)| (i, v.to_bits()))
            .collect();
        assert_eq!(parts, whole);
        // However many models run at once, the values are the same.
        let one_at_a_time: Vec<(usize, u64)> = Selection::new(None, Some("p55"))
            .with_models(1)
            .modelled(CacheHint::NONE)
            .into_iter()
            .map(|(i, v)| (i, v.to_bits()))
            .collect();
        assert_eq!(one_at_a_time, whole);
        let rows = selection.rows(selection.modelled(CacheHint::NONE));
        assert!(rows.iter().any(|r| r.set == "calibration"));
        assert!(rows.iter().any(|r| r.set == "validation"));
        assert!(rows.iter().all(|r| r.id.contains("p55")));
        let validation_only = Selection::new(Some("validation"), Some("p55"));
        assert_eq!(
            validation_only.len(),
            rows.iter().filter(|r| r.set == "validation").count()
        );
    }

    /// A machine of many cores runs no more models at once than the memory target allows; one
    /// of one core runs one.
    #[test]
    fn a_calibration_runs_at_most_two_models_at_once_however_many_cores() {
        assert_eq!(models_at_once(64), MODELS_AT_ONCE);
        assert_eq!(models_at_once(2), 2);
        assert_eq!(models_at_once(1), 1);
        assert_eq!(models_at_once(0), 1);
    }

    /// A read measured after `Written` reads what the benchmark wrote in its own data: on a
    /// compressing drive, zeros are stored in a fraction of the NAND and read faster than
    /// incompressible data, which crosses the channels whole; a drive that stores data as it
    /// comes reads both alike.
    #[test]
    fn a_written_span_holds_the_data_the_read_job_reads() {
        let read = |spec: &str, data: &str| {
            let text = format!(
                "name = \"r\"\naccess = \"read\"\nblock_size = \"16m\"\nqueue_depth = 1\nthreads = 1\nsize = 1000000000\nduration_s = 0.3\ndata = \"{data}\"\n"
            );
            run(spec, Prep::Written, &job_from(&text), CacheHint::NONE).mb_s
        };
        let sandforce = "sim:sf1200-60@x58/ich10";
        let (zeros, random) = (read(sandforce, "zeros"), read(sandforce, "random"));
        assert!(
            zeros > random * 1.2,
            "zeros {zeros} MB/s, random {random} MB/s"
        );
        let plain = "sim:c300-256@x58/ich10";
        let (zeros, random) = (read(plain, "zeros"), read(plain, "random"));
        assert!(
            (zeros / random - 1.0).abs() < 0.01,
            "zeros {zeros}, random {random}"
        );
    }
}
