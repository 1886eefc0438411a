//! Every figure of the calibration set (catalog/figures/calibration.toml), run on the modelled testbed: within ±15 %
//! or on the right side of a bound; and every figure of the validation set, held to the state
//! recorded in `catalog/figures/state.toml`.
//!
//! The model does not reach every calibration figure yet. The ones it misses are listed in
//! [`KNOWN_OUT`], each with what is understood about the gap; the test fails when any other
//! figure leaves its tolerance (a regression), and says so when a listed figure comes in (remove
//! it then). The validation set is out of sample: its misses are what the model gets wrong, not
//! regressions, so its test asserts the recorded modelled value of every figure (and the set's
//! coverage); a change of the model that moves one fails until the state is blessed again with
//! `IOLAB_BLESS=1 cargo test -p iolab-sim --test calibration`, which shows the move in the diff.
//! The whole tables: `iolab sim calibrate`.

use iolab_sim::figures::FigureSet;
use iolab_sim::{calibrate, validate, CalibrationRow};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// Catalog drive families and platforms no validation figure runs on yet, each with why: the
/// validation set's coverage test fails for any other, and when one of these gains a figure.
const KNOWN_UNCOVERED: &[(&str, &str)] = &[
    (
        "rst-cache",
        "every published RST/SRT figure found so far (Tom's Hardware's Z68 review, AnandTech's Optane Memory M10 review, testbeds.md C) was looked at while choosing the cache's policies and sits in the calibration set; AnandTech's Z68 reviews (4329, 4337) give their cached results in charts only, and their one worded result ('more like a doubling of standalone HDD performance', Storage Bench 2011 Heavy) is of a 20 GB SATA cache, not the catalog's 60 GB NVMe one",
    ),
    (
        "storemi",
        "no published measurement of the 2018 StoreMI tier found outside PC Perspective (testbeds.md C) and Weekly ASCII's 2018 runs, both calibration; ASCII.jp's 2020 article measures StoreMI 2.0, a cache rather than a tier",
    ),
    (
        "storemi-ram",
        "as storemi: no published figure of the RAM layer outside the calibration set",
    ),
    (
        "platform h55",
        "no published figure of a catalog drive on an H55 board found outside AnandTech's 2010 SATA comparison (testbeds.md A, calibration); H55 board reviews seen test USB 3.0 or give their SATA results in charts only",
    ),
];

/// The queue depths of the jobs figure `id` of `set` runs.
fn queue_depths(set: &FigureSet, id: &str) -> Vec<i64> {
    let figure = set
        .figure
        .iter()
        .find(|f| f.id == id)
        .expect("a row names its figure");
    figure
        .measure
        .values()
        .filter_map(|m| m.job.as_deref())
        .filter_map(|job| set.job[job].get("queue_depth")?.as_integer())
        .collect()
}

/// The recorded state, shared by both tests.
const STATE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../catalog/figures/state.toml"
);
static STATE_LOCK: Mutex<()> = Mutex::new(());

/// Checks `rows` (all of one set) against the recorded state, or records them with
/// `IOLAB_BLESS=1`. Returns the figures whose modelled value moved.
fn check_state(set: &str, rows: &[CalibrationRow]) -> Vec<String> {
    let _lock = STATE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let text = std::fs::read_to_string(STATE).expect("state file reads");
    let header: String = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    #[derive(serde::Deserialize)]
    struct Row {
        set: String,
        id: String,
        modelled: f64,
    }
    #[derive(serde::Deserialize)]
    struct State {
        #[serde(default)]
        row: Vec<Row>,
    }
    let state: State = toml::from_str(&text).expect("state file parses");
    let mut recorded: BTreeMap<(String, String), f64> = state
        .row
        .into_iter()
        .map(|r| ((r.set, r.id), r.modelled))
        .collect();
    let moved: Vec<String> = rows
        .iter()
        .filter(|r| {
            recorded
                .get(&(set.to_string(), r.id.clone()))
                .is_none_or(|&m| (m - r.modelled).abs() > 1e-9 * m.abs().max(1.0))
        })
        .map(|r| {
            format!(
                "{} ({} recorded, {} now)",
                r.id,
                recorded
                    .get(&(set.to_string(), r.id.clone()))
                    .map_or("none".to_string(), |m| format!("{m}")),
                r.modelled
            )
        })
        .collect();
    let stale = recorded
        .keys()
        .any(|(s, id)| s == set && !rows.iter().any(|r| &r.id == id));
    if std::env::var_os("IOLAB_BLESS").is_some() && (!moved.is_empty() || stale) {
        recorded.retain(|(s, _), _| s != set);
        for r in rows {
            recorded.insert((set.to_string(), r.id.clone()), r.modelled);
        }
        let mut out = header;
        for ((s, id), m) in &recorded {
            out.push_str(&format!(
                "\n[[row]]\nset = \"{s}\"\nid = \"{id}\"\nmodelled = {m:?}\n"
            ));
        }
        std::fs::write(STATE, out).expect("state file writes");
        return Vec::new();
    }
    assert!(
        !stale,
        "{set}: the state file records figures the set no longer has; bless it"
    );
    moved
}

/// Figures the model misses today (review / figure), with why.
const KNOWN_OUT: &[(&str, &str)] = &[
    (
        "A (2010) C300 / 2MB seq read, P55 + Marvell on PCIe 1.0 x1",
        "PCIe 1.0 x1 after 8b/10b and 128-byte TLPs (the most ICH10-era root ports take: lspci \"DevCap: MaxPayload 128 bytes\") leaves ~210 MB/s; 164 is 65 % of the line rate. A USB 3.0 card measured the same way got ~150 MB/s through ICH10's PCIe 1.1 slots, x1 and x4 alike, and 240 in the IOH's gen-2 slot (connect-professional, \"Alles über USB 3.0\", p. 6), so such paths do hold devices near 60 %; that x4 did no better points at the device's round trips through the chipset, not the link, and neither the round trips nor the Marvell's outstanding requests are public",
    ),
    (
        "A (2010) C300 / 4K rand write QD3, Marvell PCIe 1.0 / PCIe 2.0 (about half)",
        "the firmware core receiving each write's data waits for the slower PCIe 1.0 x1 and the PCH's round trip, which gives 0.73; half needs the 88SE9128's host-memory read round trips and outstanding requests, which are not public",
    ),
    (
        "A (2010) Vertex LE / 4K rand read QD3, 890GX old driver",
        "the AHCI stack slowed by Cool'n'Quiet's 800 MHz state accounts for part of the gap; the south bridge's link power management, which AMD also turns off for its own tests, is not modelled",
    ),
    (
        "B (2011) force3 / 240/120 4K rand read QD32 (55-85 % faster)",
        "the lockstep ways (2 at 120 GB, 4 at 240 GB) each hold a read for a tR, so the 240 GB reads 1.9x as fast (50.5K against 26.4K IOPS) where the review found 1.6x (the Force GT's 1.75x is met); the asynchronous 240 GB would need another limit near 42K IOPS, and none is sourced",
    ),
    (
        "OCZ via AnandTech (2011) SF-2200 lineup / Agility 3 120GB (force3-120): 4KB random read, 20K IOPS",
        "OCZ's ratings grow by about 10K IOPS per way (8 dies 10K, 16 dies 20K, 32 dies 35-40K): about 100 us per read per way, where the L74A's typical tR (75 us, 57 / 93 us for lower and upper pages) and the way's data-out give 26.4K at 2 ways and 50.5-51.1K at 4; what adds the last quarter (ECC decoding, decompression, the firmware's own time per NAND read) is not public",
    ),
    (
        "OCZ via AnandTech (2011) SF-2200 lineup / Vertex 3 120GB (forcegt-120): 4KB random read, 20K IOPS",
        "as for the Agility 3 120GB",
    ),
    (
        "OCZ via AnandTech (2011) SF-2200 lineup / Agility 3 240GB (force3-240): 4KB random read, 35K IOPS",
        "as for the Agility 3 120GB, at 4 ways",
    ),
    (
        "OCZ via AnandTech (2011) SF-2200 lineup / Vertex 3 240GB (forcegt-240): 4KB random read, 40K IOPS",
        "as for the Agility 3 120GB, at 4 ways",
    ),
    (
        "D (2015) SSD 750 400 / spec seq read 128K QD32 (MB/s)",
        "the 400 GB's 9 channels (Tom's Hardware) still carry more than the controller's 2.75 GB/s read datapath; what holds Intel's figure to 2.2 GB/s is not known",
    ),
    (
        "E (2011) SF-1200 cards / RevoDrive spec sustained seq write, compressible (MB/s)",
        "OCZ does not say how 'sustained' was measured; in garbage-collection steady state, measured past the first burst, the two 60 GB members' collection holds the card to 321 MB/s, 20 % under OCZ's 400 (within the ±25 % the validation set allows steady-state figures, not this set's 15 %)",
    ),
    (
        "E (2011) SF-1200 cards / RevoDrive x2 spec sustained seq write, compressible (MB/s)",
        "OCZ does not say how 'sustained' was measured; in garbage-collection steady state the x2's four members (8 dies each, 32 GiB raw for 25 GB) collect compressible data faster than the card's PCI-X bus moves it (757 MB/s toward the drives in 128-byte bursts and 512-byte read requests), so it writes at its peak",
    ),
    (
        "Weekly ASCII (2018) StoreMI / StoreMI Tier drive, CrystalDiskMark run 1 Seq Q32T1 read / HDD alone ('about HDD level': 1)",
        "the paced mover (10 MiB/s, unsourced) has moved about a fifth of the 1 GiB file by run 1's fifth pass; how StoreMI decides when an extent is hot enough is not public, and a threshold chosen to hold run 1 at the disk's speed would be fitted to this figure",
    ),
    (
        "Weekly ASCII (2018) StoreMI / >= StoreMI Tier drive, CrystalDiskMark run 1 Seq Q32T1 write / SSD alone ('close to the SSD': at least 0.8)",
        "new writes land where their extent lies (the disk); the review's writes near the SSD's speed suggest StoreMI places new writes on the SSD, which no public document of StoreMI or FuzeDrive found states",
    ),
    (
        "Weekly ASCII (2018) StoreMI / StoreMI Tier drive, CrystalDiskMark run 4 Seq Q32T1 read / SSD alone ('almost equal to the SSD': 1)",
        "the mover's copies wait behind the benchmark's QD32 reads on the disk, so at 10 MiB/s the file is not all on the SSD by run 4; the rate is not public",
    ),
    (
        "Maximum PC (2010) Barracuda XT 2TB / HD Tach random access time, writes, P55 on-board Marvell (7 ms)",
        "past its first 128 writes (the cache's segments) each write waits for a destage, which the disk chooses shortest-positioning-first among the 32 oldest cached writes: 4.6 ms. How far this drive's firmware looks into its cache, how many write segments it keeps and how long HD Tach's access test runs are not published",
    ),
    (
        "Maximum PC (2010) Barracuda XT 2TB / HD Tach average sustained write, on-board Marvell / Intel PCH port (Marvell slightly faster: over 1)",
        "past the cache both ports write at the media rate; the job's 1 s lead-in is not past the 64 MB cache on the Intel port at 10 % and 30 % of the LBAs, where its longer command turnaround fills the cache more slowly (the Marvell port's 10 % point is at the media rate from its first second). How much of the buffer this drive gives sequential writes is not published",
    ),
];

#[test]
fn calibration_figures_within_tolerance_except_the_known_gaps() {
    let rows = calibrate();
    let (mut regressed, mut came_in) = (Vec::new(), Vec::new());
    for r in &rows {
        let name = format!("{} / {}", r.review, r.figure);
        let known = KNOWN_OUT.iter().any(|(k, _)| *k == name);
        let ok = r.within_tolerance();
        let mark = match (ok, known) {
            (true, false) => "ok ",
            (true, true) => "IN ",
            (false, true) => "gap",
            (false, false) => "OUT",
        };
        println!(
            "{mark} {:<24} {:<70} published {:>10.2} modelled {:>10.2} ({:+.1} %)",
            r.review, r.figure, r.published, r.modelled, r.error_pct
        );
        match (ok, known) {
            (false, false) => regressed.push(name),
            (true, true) => came_in.push(name),
            _ => {}
        }
    }
    let within = rows.iter().filter(|r| r.within_tolerance()).count();
    println!("{within} of {} figures within tolerance", rows.len());
    let moved = check_state("calibration", &rows);
    for name in &came_in {
        println!("now within tolerance, remove from KNOWN_OUT: {name}");
    }
    for (k, _) in KNOWN_OUT {
        assert!(
            rows.iter()
                .any(|r| format!("{} / {}", r.review, r.figure) == *k),
            "KNOWN_OUT names a figure the calibration no longer has: {k}"
        );
    }
    assert!(regressed.is_empty(), "out of tolerance: {regressed:#?}");
    assert!(
        moved.is_empty(),
        "modelled values moved (bless with IOLAB_BLESS=1 if intended): {moved:#?}"
    );
    assert!(
        rows.len() >= 94,
        "figures went missing from the calibration: {} rows",
        rows.len()
    );
}

#[test]
fn validation_figures_cover_the_catalog_and_hold_their_recorded_state() {
    let rows = validate();
    let set = FigureSet::validation();
    let mut sources = BTreeSet::new();
    let mut families = BTreeSet::new();
    let mut platforms = BTreeSet::new();
    // Each curve's queue depths, over the set's figures that name it.
    let mut curves: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for r in &rows {
        let mark = if r.within_tolerance() { "ok " } else { "OUT" };
        println!(
            "{mark} {:<36} {:<70} published {:>10.2} modelled {:>10.2} ({:+.1} %)",
            r.review, r.figure, r.published, r.modelled, r.error_pct
        );
        sources.insert(r.source.publication.clone());
        for t in &r.targets {
            let (d, p) = iolab_sim::figures::drive_and_platform(t);
            families.insert(iolab_sim::figures::drive_family(&d));
            platforms.insert(p);
        }
        if let Some(c) = &r.qd_curve {
            curves
                .entry(c.clone())
                .or_default()
                .extend(queue_depths(&set, &r.id));
        }
        if r.steady_state {
            assert_eq!(
                r.tolerance_pct, 25.0,
                "{}: steady-state figures are held to ±25 %",
                r.id
            );
        }
    }
    // A curve is a test at two queue depths or more: a figure alone on its curve here is a
    // point of one whose other depths are calibration figures, or not published.
    curves.retain(|_, depths| depths.len() >= 2);
    let within = rows.iter().filter(|r| r.within_tolerance()).count();
    println!(
        "{within} of {} validation figures within tolerance; {} sources; families {families:?}; platforms {platforms:?}; {} queue-depth curves; {} steady-state figures",
        rows.len(),
        sources.len(),
        curves.len(),
        rows.iter().filter(|r| r.steady_state).count()
    );
    assert_eq!(rows.len(), set.figure.len(), "every figure ran");
    // The set's reach (issue 38): every drive family and platform of the built-in catalog,
    // from independent sources, with steady-state figures and queue-depth curves.
    let catalog = iolab_sim::catalog::Catalog::load(None).expect("built-in catalog");
    // A set: a family is named once however many of its drives the catalog has.
    let uncovered: BTreeSet<String> = catalog
        .drives
        .keys()
        .map(|d| iolab_sim::figures::drive_family(d))
        .filter(|f| !families.contains(f))
        .chain(
            catalog
                .platforms
                .keys()
                .filter(|p| !platforms.contains(*p))
                .map(|p| format!("platform {p}")),
        )
        .collect();
    let unlisted: Vec<&String> = uncovered
        .iter()
        .filter(|u| !KNOWN_UNCOVERED.iter().any(|(k, _)| k == u))
        .collect();
    assert!(
        unlisted.is_empty(),
        "no validation figure runs on {unlisted:?}: add one (a published figure outside the calibration set), or list it in KNOWN_UNCOVERED with why"
    );
    for (k, _) in KNOWN_UNCOVERED {
        assert!(
            uncovered.iter().any(|u| u == k),
            "{k} is validated now: take it out of KNOWN_UNCOVERED"
        );
    }
    assert!(rows.len() >= 60, "{} validation figures", rows.len());
    assert!(sources.len() >= 5, "{} sources", sources.len());
    assert!(curves.len() >= 5, "queue-depth curves: {:?}", curves.keys());
    assert!(
        rows.iter().filter(|r| r.steady_state).count() >= 5,
        "steady-state figures"
    );
    for r in &rows {
        assert!(r.modelled.is_finite(), "{}: modelled {}", r.id, r.modelled);
        assert!(
            !r.source.url.is_empty(),
            "{}: a figure names where it was published",
            r.id
        );
    }
    let moved = check_state("validation", &rows);
    assert!(
        moved.is_empty(),
        "modelled values moved (bless with IOLAB_BLESS=1 if intended): {moved:#?}"
    );
}
