//! One fio job (its `[global]` options and its own, later ones winning) as an iolab
//! [`JobSpec`]: every option translated, accepted as having no effect, or refused with why.

use super::ini::{Opt, Place};
use super::options::{canonical, no_effect, refusal, TRANSLATED};
use super::units;
use iolab_core::job::{Access, DataKind, JobSpec};
use iolab_core::size::ByteSize;
use iolab_engine::open::EngineChoice;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// An option iolab cannot honour.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Where it is written.
    pub at: Place,
    /// As written (`verify=md5`).
    pub option: String,
    /// Why.
    pub why: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.at, self.option, self.why)
    }
}

/// One fio job, translated.
#[derive(Debug)]
pub struct FioJob {
    /// The iolab job.
    pub spec: JobSpec,
    /// Where fio set what each iolab key came from.
    pub places: BTreeMap<String, Place>,
    /// The section header.
    pub header: Place,
    /// The engine fio's `ioengine` maps to, with the option as written and where.
    pub engine: (EngineChoice, String, Option<Place>),
    /// How options were mapped where it is not one to one, and options of no effect.
    pub notes: Vec<String>,
    /// Options that cannot be honoured.
    pub problems: Vec<Problem>,
    /// `stonewall` (or `wait_for_previous`) is set: the job starts after the ones before end.
    pub stonewall: bool,
    /// `wait_for=NAME`, and where.
    pub wait_for: Option<(String, Place)>,
    /// `new_group` is set: the job starts a reporting group.
    pub new_group: bool,
}

/// What the translation needs to know of the world.
pub struct Context<'a> {
    /// The size of the target the job runs on, if it can be known (for `size=50%`).
    pub target_size: &'a dyn Fn(Option<&str>) -> Option<u64>,
    /// A target was given on the command line (it replaces fio's `filename`).
    pub cli_target: bool,
}

/// The later of each option, by canonical name.
pub(super) struct Opts<'a> {
    map: BTreeMap<String, &'a Opt>,
    pub(super) kb_base: u64,
}

impl<'a> Opts<'a> {
    pub(super) fn get(&self, key: &str) -> Option<&'a Opt> {
        self.map.get(key).copied()
    }
    pub(super) fn value(&self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(|o| o.value.as_deref())
    }
    pub(super) fn flag(&self, key: &str) -> Result<bool, String> {
        self.get(key)
            .map_or(Ok(false), |o| units::boolean(o.value.as_deref()))
    }
}

/// The translation of one job, collecting problems instead of stopping at the first.
pub(super) struct Tr<'a> {
    pub(super) o: Opts<'a>,
    pub(super) job: FioJob,
}

impl Tr<'_> {
    /// Refuses `key`, named where it is written (or, where the job only implies it, at the
    /// job's header).
    pub(super) fn problem(&mut self, key: &str, why: impl Into<String>) {
        let (at, option) = match self.o.get(key) {
            Some(opt) => (opt.at.clone(), opt.written()),
            None => (self.job.header.clone(), key.to_string()),
        };
        self.job.problems.push(Problem {
            at,
            option,
            why: why.into(),
        });
    }
    pub(super) fn note(&mut self, key: &str, what: impl Into<String>) {
        if let Some(opt) = self.o.get(key) {
            self.job
                .notes
                .push(format!("{} ({}): {}", opt.written(), opt.at, what.into()));
        }
    }
    /// Records that iolab key `to` comes from fio option `from`.
    pub(super) fn from(&mut self, to: &str, from: &str) {
        if let Some(opt) = self.o.get(from) {
            self.job.places.insert(to.to_string(), opt.at.clone());
        }
    }
    pub(super) fn size(&mut self, key: &str) -> Option<u64> {
        let v = self.o.value(key)?;
        match units::size(v, self.o.kb_base) {
            Ok(b) => Some(b),
            Err(e) => {
                self.problem(key, e);
                None
            }
        }
    }
    pub(super) fn seconds(&mut self, key: &str, unit: f64) -> Option<f64> {
        let v = self.o.value(key)?;
        match units::seconds(v, unit) {
            Ok(s) => Some(s),
            Err(e) => {
                self.problem(key, e);
                None
            }
        }
    }
    pub(super) fn number<T: std::str::FromStr>(&mut self, key: &str) -> Option<T> {
        let v = self.o.value(key)?;
        match v.trim().parse() {
            Ok(n) => Some(n),
            Err(_) => {
                self.problem(key, format!("'{v}' is not a number"));
                None
            }
        }
    }
    pub(super) fn flag(&mut self, key: &str) -> bool {
        match self.o.flag(key) {
            Ok(b) => b,
            Err(e) => {
                self.problem(key, e);
                false
            }
        }
    }
    /// One value for reads and writes of `key`'s `READ,WRITE` form, or a problem if they
    /// differ where the job does both.
    pub(super) fn one_value(&mut self, key: &str, reads: bool, writes: bool) -> Option<String> {
        let v = self.o.value(key)?;
        let (r, w) = units::read_write(v);
        let picked = match (reads, writes) {
            (true, false) => r,
            (false, true) => w,
            _ if r == w => r,
            _ => {
                self.problem(
                    key,
                    "separate values for reads and writes in a job that does both; iolab takes \
                     one value for the job",
                );
                return None;
            }
        };
        picked.map(str::to_string)
    }
}

/// Translates the job `name` from its options (`[global]`'s first, then its own).
pub fn job(name: &str, header: Place, opts: &[Opt], ctx: &Context) -> FioJob {
    let mut map = BTreeMap::new();
    for o in opts {
        map.insert(canonical(&o.key).to_string(), o);
    }
    let kb_base = match map.get("kb_base").and_then(|o| o.value.as_deref()) {
        Some("1000") => 1000,
        _ => 1024,
    };
    let mut tr = Tr {
        o: Opts { map, kb_base },
        job: FioJob {
            spec: JobSpec {
                name: Some(name.to_string()),
                ..JobSpec::default()
            },
            places: BTreeMap::new(),
            header,
            engine: (EngineChoice::Psync, "psync (fio's default)".into(), None),
            notes: Vec::new(),
            problems: Vec::new(),
            stonewall: false,
            wait_for: None,
            new_group: false,
        },
    };
    if let Some(n) =
        tr.o.value("kb_base")
            .filter(|v| !matches!(*v, "1000" | "1024"))
    {
        let n = n.to_string();
        tr.problem("kb_base", format!("'{n}' is neither 1024 nor 1000"));
    }
    let keys: Vec<String> = tr.o.map.keys().cloned().collect();
    for key in &keys {
        if TRANSLATED.contains(&key.as_str()) {
            continue;
        }
        match no_effect(key) {
            Some(what) => tr.note(key, format!("no effect on the I/O issued ({what})")),
            None => tr.problem(key, refusal(key)),
        }
    }
    if let Some(n) = tr.o.value("name") {
        tr.job.spec.name = Some(n.to_string());
        tr.from("name", "name");
    }
    order(&mut tr);
    super::concurrency::job_keys(&mut tr);
    let (reads, writes) = access(&mut tr);
    engine(&mut tr);
    super::blocks::blocks(&mut tr, reads, writes);
    super::budget::span_and_budget(&mut tr, ctx);
    target(&mut tr, ctx);
    randomness(&mut tr);
    rates(&mut tr, reads, writes);
    data(&mut tr);
    super::verify::verify(&mut tr, writes);
    super::steady::steady(&mut tr);
    super::prio::priority(&mut tr, reads, writes);
    super::lat_target::latency_target(&mut tr);
    super::sync::sync(&mut tr, writes);
    super::errors::ignore_error(&mut tr);
    super::dedupe::dedupe(&mut tr);
    super::fill::fill_device(&mut tr);
    super::sprandom::sprandom(&mut tr);
    let sequential = !tr.job.spec.access.is_some_and(Access::is_random);
    if sequential
        && tr.job.spec.threads.unwrap_or(1) > 1
        && tr.job.spec.zones.is_none()
        && tr.job.spec.thread_offset.is_none()
    {
        tr.note(
            "numjobs",
            "iolab's threads of a sequential job start at staggered points of the span, where \
             fio's clones each start at its beginning",
        );
    }
    if tr.flag("group_reporting") || tr.o.get("numjobs").is_none() {
        // Nothing to say: iolab reports a job's threads together, as group_reporting does.
    } else if tr.job.spec.threads.unwrap_or(1) > 1 {
        tr.note(
            "numjobs",
            "iolab reports the clones together as one job (fio's group_reporting)",
        );
    }
    for log in [
        "write_bw_log",
        "write_lat_log",
        "write_iops_log",
        "write_hist_log",
    ] {
        tr.note(
            log,
            "iolab keeps per-second bandwidth, IOPS and latency series in the result instead \
             of fio's log files",
        );
    }
    tr.job
}

fn order(tr: &mut Tr) {
    tr.job.stonewall = tr.flag("stonewall");
    if let Some(o) = tr.o.get("wait_for") {
        tr.job.wait_for = o.value.clone().map(|v| (v, o.at.clone()));
    }
    tr.job.new_group = tr.flag("new_group");
}

/// `rw` and the read share; returns whether the job reads and writes.
fn access(tr: &mut Tr) -> (bool, bool) {
    let rw = tr.o.value("rw").unwrap_or("read").to_string();
    let (base, modifier) = match rw.split_once(':') {
        Some((b, m)) => (b.trim(), Some(m.trim().to_string())),
        None => (rw.trim(), None),
    };
    // fio's rw values are iolab's access names, less iolab's own aliases.
    let parsed = match base {
        "seqread" | "seqwrite" | "mixed" => None,
        b => b.parse::<Access>().ok(),
    };
    let access = match parsed {
        Some(a) => a,
        None => {
            let other = base.to_string();
            tr.problem("rw", format!("'{other}' is not one of fio's rw values"));
            Access::Read
        }
    };
    if let Some(m) = modifier.filter(|m| !m.is_empty()) {
        if access.is_random() {
            // randread:N: N I/Os per random offset, the others following on.
            match m.parse::<u32>() {
                Ok(n) if n > 1 => {
                    tr.job.spec.random_run = Some(n);
                    tr.from("random_run", "rw");
                }
                Ok(_) => {}
                Err(_) => tr.problem("rw", format!("':{m}' is not a number of I/Os")),
            }
        } else {
            // read:8k: holes of 8k (or, negative, steps back).
            let (neg, size) = match m.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, m.as_str()),
            };
            match units::size(size, tr.o.kb_base) {
                Ok(b) if b > 0 => {
                    let b = b as i64;
                    tr.job.spec.seq_skip = Some(if neg { -b } else { b });
                    tr.from("seq_skip", "rw");
                }
                Ok(_) => {}
                Err(e) => tr.problem("rw", e),
            }
        }
    }
    tr.job.spec.access = Some(access);
    tr.from("access", "rw");
    let mixed = matches!(access, Access::Rw | Access::RandRw);
    let read_pct = match (
        tr.number::<f64>("rwmixread"),
        tr.number::<f64>("rwmixwrite"),
    ) {
        (Some(r), _) => {
            tr.from("read_pct", "rwmixread");
            Some(r)
        }
        (None, Some(w)) => {
            tr.from("read_pct", "rwmixwrite");
            Some(100.0 - w)
        }
        (None, None) => None,
    };
    if mixed {
        // fio's default mix is 50/50, as iolab's.
        tr.job.spec.read_pct = read_pct;
    } else if read_pct.is_some() {
        tr.note(
            "rwmixread",
            "no effect: the job does not mix reads and writes",
        );
        tr.note(
            "rwmixwrite",
            "no effect: the job does not mix reads and writes",
        );
    }
    let r = match access {
        Access::Read | Access::RandRead => (true, false),
        Access::Write | Access::RandWrite => (false, true),
        _ => (
            read_pct.is_none_or(|p| p > 0.0),
            read_pct.is_none_or(|p| p < 100.0),
        ),
    };
    if access.is_random() {
        if let Some(p) = tr.one_value("percentage_random", r.0, r.1) {
            match p.parse::<f64>() {
                Ok(p) => {
                    tr.job.spec.random_pct = Some(p);
                    tr.from("random_pct", "percentage_random");
                }
                Err(_) => tr.problem("percentage_random", "not a percentage"),
            }
        }
    } else {
        tr.note("percentage_random", "no effect: the job is sequential");
    }
    r
}

fn engine(tr: &mut Tr) {
    let Some(opt) = tr.o.get("ioengine") else {
        return;
    };
    let name = opt.value.clone().unwrap_or_default();
    let choice = match name.as_str() {
        "io_uring" | "libaio" | "posixaio" => EngineChoice::Auto,
        "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => EngineChoice::Psync,
        other => {
            let why = match other {
                "io_uring_cmd" | "sg" | "xnvme" | "libzbc" | "nvme" => {
                    "a passthrough engine that sends commands, not block I/O; iolab measures \
                     reads and writes through files and block devices"
                }
                "null" | "cpuio" | "cpp_null" | "exec" => {
                    "an engine that does no storage I/O; iolab measures storage"
                }
                "mmap" | "splice" | "e4defrag" | "falloc" | "ftruncate" | "filecreate"
                | "filestat" | "filedelete" | "dircreate" | "dirstat" | "dirdelete" => {
                    "an engine that does not read and write blocks (file operations or \
                     mappings); iolab's engines are io_uring and psync"
                }
                _ => {
                    "not a file or block engine iolab has (it maps io_uring, libaio and posixaio \
                     to io_uring; psync, sync, pvsync, pvsync2 and vsync to psync)"
                }
            };
            tr.problem("ioengine", why);
            return;
        }
    };
    tr.job.engine = (choice, opt.written(), Some(opt.at.clone()));
}

/// `filename` and `directory` (the target, unless the command line gives one).
fn target(tr: &mut Tr, ctx: &Context) {
    let dir = tr.o.value("directory").map(PathBuf::from);
    let files: Vec<String> = match tr.o.value("filename") {
        Some(list) => split_filenames(list),
        None => Vec::new(),
    };
    if ctx.cli_target {
        if !files.is_empty() || dir.is_some() {
            let key = if files.is_empty() {
                "directory"
            } else {
                "filename"
            };
            tr.note(key, "replaced by the target given on the command line");
        }
        return;
    }
    if files.len() > 1 {
        tr.problem(
            "filename",
            format!(
                "{} files: iolab measures one target; give one on the command line",
                files.len()
            ),
        );
        return;
    }
    // fio's own name for a job's file: JOBNAME.CLONE.FILE.
    let name = files
        .into_iter()
        .next()
        .unwrap_or_else(|| format!("{}.0.0", tr.job.spec.name.as_deref().unwrap_or("job")));
    let path = match dir {
        Some(d) if !name.starts_with('/') => d.join(name),
        _ => PathBuf::from(name),
    };
    tr.job.spec.target = Some(path.display().to_string());
    let from = if tr.o.get("filename").is_some() {
        "filename"
    } else {
        "directory"
    };
    tr.from("target", from);
}

/// fio's `:`-separated file list, where `\:` is a colon inside a name.
fn split_filenames(list: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = list.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().unwrap().push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// `random_distribution`, `norandommap`, `randrepeat`, `randseed`, `zonemode`.
fn randomness(tr: &mut Tr) {
    let random = tr.job.spec.access.is_some_and(Access::is_random);
    let mut skewed = false;
    if let Some(d) = tr.o.value("random_distribution") {
        match d.parse::<iolab_core::skew::Distribution>() {
            Ok(dist) if dist.is_uniform() => {}
            Ok(dist) => {
                skewed = true;
                tr.job.spec.distribution = Some(dist.to_string());
                tr.from("distribution", "random_distribution");
            }
            Err(e) => tr.problem("random_distribution", e),
        }
    }
    let norandommap = tr.flag("norandommap");
    if random && !norandommap && !skewed && tr.job.spec.random_pct.is_none_or(|p| p >= 100.0) {
        // fio's random map (on by default): every block once before any again.
        tr.job.spec.random_map = Some(true);
    }
    if let Some(seed) = tr.number::<u64>("randseed") {
        tr.job.spec.seed = Some(seed);
        tr.from("seed", "randseed");
    } else if tr.o.get("randrepeat").is_some() && !tr.flag("randrepeat") {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        tr.job.spec.seed = Some(seed);
        tr.from("seed", "randrepeat");
        tr.note(
            "randrepeat",
            format!("a seed from the clock, {seed}, kept in the result"),
        );
    }
    match tr.o.value("zonemode") {
        None | Some("none") => {
            for key in ["zonesize", "zonerange", "zoneskip"] {
                tr.note(key, "no effect without zonemode");
            }
            for key in super::options::ZBD_ONLY {
                tr.note(key, "no effect without zonemode=zbd");
            }
        }
        Some("zbd") => super::zbd::zbd(tr),
        Some("strided") => {
            let io = tr.size("zonesize");
            let range = tr.size("zonerange");
            let skip = tr.size("zoneskip");
            match io.or(range) {
                Some(io) => {
                    tr.job.spec.stride_io = Some(ByteSize(io));
                    tr.job.spec.stride_range = range.filter(|&r| r != io).map(ByteSize);
                    tr.job.spec.stride_skip = skip.filter(|&s| s > 0).map(ByteSize);
                    tr.from("stride_io", "zonesize");
                    tr.from("stride_range", "zonerange");
                    tr.from("stride_skip", "zoneskip");
                }
                None => tr.problem("zonemode", "zonemode=strided needs zonesize"),
            }
        }
        Some(other) => {
            let other = other.to_string();
            tr.problem(
                "zonemode",
                format!("zonemode={other} is not one of iolab's (none, strided, zbd)"),
            );
        }
    }
}

/// `rate`, `rate_iops`, `rate_min`, `rate_iops_min`, `rate_process`.
fn rates(tr: &mut Tr, reads: bool, writes: bool) {
    let kb_base = tr.o.kb_base;
    // fio's caps are each clone's (numjobs); iolab's the job's, over its threads.
    let clones = f64::from(tr.job.spec.threads.unwrap_or(1));
    let bytes = |v: &str| units::size(v, kb_base).map(|b| b as f64);
    let iops = |v: &str| {
        v.parse::<f64>()
            .map_err(|_| format!("'{v}' is not a number"))
    };
    if let Some(b) = cap(tr, "rate", reads, writes, clones, &bytes) {
        tr.job.spec.rate_bytes_per_s = Some(ByteSize(b.max(1.0) as u64));
        tr.from("rate_bytes_per_s", "rate");
    }
    if let Some(x) = cap(tr, "rate_iops", reads, writes, clones, &iops) {
        tr.job.spec.rate_iops = Some(x);
        tr.from("rate_iops", "rate_iops");
    }
    for key in ["rate_min", "rate_iops_min"] {
        tr.note(
            key,
            "iolab does not stop a job that runs slower; the result shows the rate it reached",
        );
    }
    match tr.o.value("rate_process") {
        None | Some("linear") => {}
        Some("poisson") => {
            if tr.job.spec.rate_iops.is_some() || tr.job.spec.rate_bytes_per_s.is_some() {
                tr.job.spec.rate_poisson = Some(true);
                tr.from("rate_poisson", "rate_process");
            } else {
                tr.note("rate_process", "no effect without a rate");
            }
        }
        Some(other) => {
            let other = other.to_string();
            tr.problem(
                "rate_process",
                format!("'{other}' is not linear or poisson"),
            );
        }
    }
}

/// The job's cap from fio's `READ,WRITE[,TRIM]` caps, each `clones` times (every clone has its
/// own): the one its direction has, or for a mix the total that keeps each direction within
/// its own cap at the job's read share.
fn cap(
    tr: &mut Tr,
    key: &str,
    reads: bool,
    writes: bool,
    clones: f64,
    parse: &dyn Fn(&str) -> Result<f64, String>,
) -> Option<f64> {
    let v = tr.o.value(key)?.to_string();
    let (r, w) = units::read_write(&v);
    let mut parsed = |x: Option<&str>| match x.map(parse) {
        Some(Ok(n)) if n > 0.0 => Some(n),
        Some(Err(e)) => {
            tr.problem(key, e);
            None
        }
        _ => None,
    };
    let (r, w) = (parsed(r), parsed(w));
    if !(reads && writes) {
        return if reads { r } else { w }.map(|c| c * clones);
    }
    let share = tr.job.spec.read_pct.unwrap_or(50.0) / 100.0;
    let total = [(r, share), (w, 1.0 - share)]
        .into_iter()
        .filter_map(|(c, s)| c.filter(|_| s > 0.0).map(|c| c / s))
        .reduce(f64::min)?
        * clones;
    tr.note(
        key,
        format!(
            "fio caps reads and writes each (of every clone); iolab caps the job's total at \
             {total:.0}/s, which keeps each within its cap at the job's read share"
        ),
    );
    Some(total)
}

/// The written data.
fn data(tr: &mut Tr) {
    if tr.flag("zero_buffers") {
        tr.job.spec.data = Some(DataKind::Zeros);
        tr.from("data", "zero_buffers");
    }
    for key in ["refill_buffers", "scramble_buffers"] {
        tr.note(key, "iolab fills every write with fresh data anyway");
    }
    if let Some(p) = tr.number::<f64>("buffer_compress_percentage") {
        if p > 0.0 {
            tr.job.spec.compress_pct = Some(p);
            tr.from("compress_pct", "buffer_compress_percentage");
        }
    }
    if let Some(chunk) = tr.size("buffer_compress_chunk") {
        if chunk != 512 {
            tr.note(
                "buffer_compress_chunk",
                "iolab makes each 512-byte segment compressible by the share; the ratio is the \
                 same",
            );
        }
    }
    if let Some(p) = tr.number::<f64>("dedupe_percentage") {
        if p > 0.0 {
            tr.job.spec.dedupe_pct = Some(p);
            tr.from("dedupe_pct", "dedupe_percentage");
        }
    }
    if let Some(v) = tr.o.value("continue_on_error") {
        if !matches!(v, "none" | "0") {
            tr.job.spec.continue_on_error = Some(true);
            tr.from("continue_on_error", "continue_on_error");
            if v != "all" {
                tr.note(
                    "continue_on_error",
                    "iolab counts every kind of error and goes on",
                );
            }
        }
    }
}

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;
