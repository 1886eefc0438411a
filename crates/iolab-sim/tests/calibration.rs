//! Every figure of testbeds.md, run on the modelled testbed: within ±15 % or on the right side
//! of a bound.

use iolab_sim::calibrate;

#[test]
fn calibration_figures_within_tolerance() {
    let rows = calibrate();
    let mut bad = Vec::new();
    for r in &rows {
        let mark = if r.within_tolerance() { "ok " } else { "OUT" };
        println!(
            "{mark} {:<24} {:<70} published {:>10.2} modelled {:>10.2} ({:+.1} %)",
            r.review, r.figure, r.published, r.modelled, r.error_pct
        );
        if !r.within_tolerance() {
            bad.push(format!("{} / {}", r.review, r.figure));
        }
    }
    println!(
        "{} of {} figures within tolerance",
        rows.len() - bad.len(),
        rows.len()
    );
    assert!(bad.is_empty(), "out of tolerance: {bad:#?}");
}
