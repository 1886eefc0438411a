//! fio's JSON output (`--output-format=json` and `json+`, fio 3.x), both ways: iolab's results
//! written in fio's layout, so fio's tooling (fio-plot, dashboards, CI scripts) reads them
//! ([`export`]), and fio's output read into iolab's result schema, so fio runs and iolab runs
//! share one store, one comparison and one report ([`import`]).

pub mod export;
pub mod import;

/// fio's default `percentile_list`, in order: the percentiles fio writes under `clat_ns`.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// A percentile as fio names it in JSON: C's `%f` (`99.990000`).
pub fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}
