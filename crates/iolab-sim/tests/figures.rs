//! The figure sets as data: every figure names its source and runs on a catalog setup, and
//! `sim explain` says how well a setup is validated.

use iolab_sim::figures::{drive_and_platform, validation_summary, FigureSet};

#[test]
fn every_figure_names_its_source_and_runs_on_a_catalog_setup() {
    let catalog = iolab_sim::catalog::Catalog::load(None).expect("built-in catalog");
    for set in [FigureSet::calibration(), FigureSet::validation()] {
        assert!(!set.figure.is_empty(), "{}: no figures", set.name);
        for f in &set.figure {
            let source = &set.source[&f.source];
            for (what, text) in [
                ("publication", &source.publication),
                ("title", &source.title),
                ("address", &source.url),
                ("date", &source.date),
            ] {
                assert!(!text.trim().is_empty(), "{} {}: no {what}", set.name, f.id);
            }
            assert!(f.published.is_finite() && f.published != 0.0, "{}", f.id);
            for m in f.measure.values().filter(|m| !m.target.is_empty()) {
                let (drive, platform) = drive_and_platform(&m.target);
                assert!(
                    catalog.drives.contains_key(&drive),
                    "{} {}: no drive {drive}",
                    set.name,
                    f.id
                );
                assert!(
                    catalog.platforms.contains_key(&platform),
                    "{} {}: no platform {platform}",
                    set.name,
                    f.id
                );
            }
        }
    }
}

#[test]
fn explain_says_how_well_a_setup_is_validated() {
    // A family and a platform with validation figures: how many are within tolerance.
    let lines = validation_summary("ssd750-1200", "z97");
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].starts_with("validated, drive family ssd750: ")
            && lines[0].contains(" validation figures within tolerance"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("validated, platform z97: "),
        "{lines:?}"
    );
    // The garbage-collection steady state, on every drive: the set's steady-state figures.
    let steady = FigureSet::validation()
        .figure
        .iter()
        .filter(|f| f.steady_state)
        .count();
    assert!(steady > 0);
    assert!(
        lines[2].starts_with("validated in garbage-collection steady state (every drive): ")
            && lines[2].contains(&format!(" of {steady} validation figures")),
        "{lines:?}"
    );
    // None: said plainly.
    let none = validation_summary("no-such-drive-1", "no-such-platform");
    assert!(
        none[..2].iter().all(|l| l.contains("not validated")),
        "{none:?}"
    );
    // And `sim explain` prints it.
    let text = iolab_sim::explain("sim:ssd750-1200@z97/cpu", None).expect("explains");
    assert!(text.contains("validated, drive family ssd750"), "{text}");
}
