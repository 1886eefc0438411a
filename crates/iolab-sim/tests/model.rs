//! Behaviour of the model through its public API: determinism, bad catalog input, state kept
//! across jobs, fast preconditioning.

use iolab_core::job::{Job, JobSpec};
use iolab_core::result::JobResult;
use iolab_sim::catalog::Catalog;
use iolab_sim::{open, open_with, SimError, SimSetup};

fn job(text: &str) -> Job {
    toml::from_str::<JobSpec>(text).unwrap().validate().unwrap()
}

/// One job on a fresh 7,200 rpm hard disk behind H67's SATA port.
fn on_a_fresh_hdd(text: &str) -> JobResult {
    let mut sim = open("sim:hdd-7200@h67", None).unwrap();
    sim.run_job(&job(text), None).unwrap().result
}

#[test]
fn same_seed_gives_byte_identical_results() {
    let run = || {
        let mut sim = open("sim:ssd750-400@z97/cpu", None).unwrap();
        let j = job("access = \"randrw\"\nqueue_depth = 8\nthreads = 2\nsize = \"1g\"\nduration_s = 0.02\nseed = 7");
        let r = sim.run_job(&j, None).unwrap();
        serde_json::to_string(&(r.result, sim.describe())).unwrap()
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    assert!(a.contains("\"modelled\":true"));
}

#[test]
fn whole_catalog_loads_and_every_drive_opens_on_a_fitting_port() {
    let cat = Catalog::load(None).unwrap();
    assert!(cat.drives.len() >= 20 && cat.platforms.len() >= 8);
    for (spec, size) in [
        ("sim:c300-256@x58/ich-marvell", 256_060_514_304u64),
        ("sim:revodrive-x2-100@p55/cpu-x16", 100_000_000_000),
        ("sim:ibis-240@x58/ioh-x16", 240_000_000_000),
        ("sim:nvme2018-500@z270/raid0", 1_000_000_000_000),
        ("sim:hdd-7200@h67", 1_000_204_886_016),
        ("sim:storemi@x470", 1_256_000_000_000),
        ("sim:rst-cache@z270/sata", 1_000_204_886_016),
    ] {
        let sim = open_with(spec, cat.clone()).unwrap_or_else(|e| panic!("{spec}: {e}"));
        let got = sim.size_bytes() as f64;
        assert!((got / size as f64 - 1.0).abs() < 0.01, "{spec}: {got}");
    }
}

fn bad_drive(edit: impl Fn(String) -> String) -> SimError {
    let text = edit(include_str!("../../../catalog/drives/ssd750-400.toml").to_string());
    let mut cat = Catalog::default();
    cat.add_drive("user/drives/bad.toml", &text).unwrap_err()
}

/// Asserts that the drive entry `text`, loaded as `file`, is refused saying `says`.
fn assert_drive_refused(file: &str, text: &str, says: &str) {
    let e = Catalog::default().add_drive(file, text).unwrap_err();
    assert!(e.to_string().contains(says), "{file}: {e}");
}

/// Asserts that the platform entry `text`, loaded as `file`, is refused saying `says`.
fn assert_platform_refused(file: &str, text: &str, says: &str) {
    let e = Catalog::default().add_platform(file, text).unwrap_err();
    assert!(e.to_string().contains(says), "{file}: {e}");
}

#[test]
fn inconsistent_entries_are_rejected_naming_file_and_key() {
    let e = bad_drive(|t| t.replace("dies = 36", "dies = 35"));
    assert!(
        e.to_string().contains("user/drives/bad.toml: nand.dies"),
        "{e}"
    );
    let e = bad_drive(|t| t.replace("usable_bytes = 400000000000", "usable_bytes = 900000000000"));
    assert!(
        e.to_string().contains("capacity.usable_bytes") && e.to_string().contains("raw"),
        "{e}"
    );
    let e = bad_drive(|t| t.replace("link = \"pcie3x4\"", "link = \"pcie9x4\""));
    assert!(
        e.to_string().contains("interface.link") && e.to_string().contains("unknown link"),
        "{e}"
    );
    let e = bad_drive(|t| t.replace("bits_per_cell = 2", "bits_per_cell = 3"));
    assert!(
        e.to_string().contains("bad.toml: nand.bits_per_cell"),
        "{e}"
    );
    let e = bad_drive(|t| t.replace("[ftl]\n", "[ftl]\nbogus = 1\n"));
    assert!(
        e.to_string().contains("bad.toml") && e.to_string().contains("bogus"),
        "{e}"
    );
    // A name a target spec could not address.
    for name in ["a@b", "", " "] {
        let text = include_str!("../../../catalog/drives/ssd750-400.toml")
            .replace("name = \"ssd750-400\"", &format!("name = \"{name}\""));
        assert_drive_refused("user/drives/n.toml", &text, "n.toml: name");
    }
    // A card's members attach over a standard link, not one of the card's own (a panic).
    let local = include_str!("../../../catalog/drives/ibis-100.toml")
        .replace("member_link = \"sata3\"", "member_link = \"hsdl\"");
    assert_drive_refused(
        "user/drives/card.toml",
        &local,
        "card.toml: card.member_link",
    );
    let card = include_str!("../../../catalog/drives/revodrive-120-jbod.toml")
        .replace("queue_depth = 1", "queue_depth = 0");
    assert_drive_refused(
        "user/drives/card.toml",
        &card,
        "card.toml: card.queue_depth",
    );
    let slow_slc = include_str!("../../../catalog/drives/nvme2018-500.toml")
        .replace("program_ns = 186990", "program_ns = 900000");
    assert_drive_refused(
        "user/drives/tlc.toml",
        &slow_slc,
        "tlc.toml: slc_cache.program_ns",
    );
    let no_rate = include_str!("../../../catalog/drives/storemi-ram.toml")
        .replace("ram_bytes_per_s = 23.5e9\n", "");
    assert_drive_refused(
        "user/drives/tier.toml",
        &no_rate,
        "tier.toml: tiered.ram_bytes_per_s",
    );
    let wide = include_str!("../../../catalog/drives/rst-cache.toml")
        .replace("extent_bytes = 131072", "extent_bytes = 262144");
    assert_drive_refused(
        "user/drives/cache.toml",
        &wide,
        "cache.toml: tiered.extent_bytes",
    );
    // A platform link's payload size: 0 would have divided by zero in the model.
    for mps in ["0", "100"] {
        let text = include_str!("../../../catalog/platforms/z97.toml").replacen(
            "max_payload_bytes = 128",
            &format!("max_payload_bytes = {mps}"),
            1,
        );
        assert_platform_refused(
            "user/platforms/z97.toml",
            &text,
            "z97.toml: links.dmi.max_payload_bytes",
        );
    }
    // A RAID port listing one member twice would stripe over one drive as if two.
    let twice = include_str!("../../../catalog/platforms/z270.toml").replace(
        "members = [\"pch-m2a\", \"pch-m2b\"]",
        "members = [\"pch-m2a\", \"pch-m2a\"]",
    );
    assert_platform_refused(
        "user/platforms/z270.toml",
        &twice,
        "z270.toml: ports.raid0.raid.members: 'pch-m2a' is listed twice",
    );
    // A protocol no platform has a driver for: the drive's key is at fault.
    let mut cat = Catalog::load(None).unwrap();
    let text = include_str!("../../../catalog/drives/ssd750-400.toml")
        .replace("protocol = \"nvme\"", "protocol = \"scsi\"")
        .replace("name = \"ssd750-400\"", "name = \"odd\"");
    cat.add_drive("user/drives/odd.toml", &text).unwrap();
    let e = open_with("sim:odd@z97/cpu", cat).err().unwrap();
    assert!(
        e.to_string()
            .contains("odd.toml: interface.protocol: no platform has a driver for 'scsi'"),
        "{e}"
    );
    // A disk whose seek curve, zones or size cannot be: each would have broken the model (a
    // full stroke shorter than a track-to-track seek underflowed into a hang).
    let hdd = include_str!("../../../catalog/drives/hdd-7200.toml");
    for (from, to, key) in [
        (
            "seek_full_ns = 18000000",
            "seek_full_ns = 100",
            "hdd.seek_full_ns",
        ),
        (
            "inner_bytes_per_s = 75000000.0",
            "inner_bytes_per_s = 250000000.0",
            "hdd.inner_bytes_per_s",
        ),
        (
            "capacity_bytes = 1000204886016",
            "capacity_bytes = 1000",
            "hdd.capacity_bytes",
        ),
        (
            "write_cache_segments = 128",
            "write_cache_segments = 0",
            "hdd.write_cache_segments",
        ),
    ] {
        assert!(hdd.contains(from), "{from}");
        assert_drive_refused(
            "user/drives/disk.toml",
            &hdd.replace(from, to),
            &format!("disk.toml: {key}"),
        );
    }
    let none = include_str!("../../../catalog/drives/revodrive-120.toml")
        .replace("count = 2", "count = 0");
    assert_drive_refused("user/drives/card.toml", &none, "card.toml: card.count");
    // It says what to do: where the driver is, how to add it.
    let e = open("sim:revodrive-120@z97", None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("Platforms with it: 890gx, h55, p55, x58") && e.contains("[drivers.sil3124]"),
        "{e}"
    );
    // A port that would take the drive, held back by the driver, is named with the reason
    // (it said "no port of x58 takes it").
    let e = open("sim:ssd750-1200@x58/ich10", None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("its port 'ioh-x16' would, but") && e.contains("drivers.nvme"),
        "{e}"
    );
}

/// Numbers the model cannot use: NaN or negative power, rates of zero (infinite transfer
/// times that wrapped around and ran as if unlimited), times that overflow the clock, a
/// queue of no commands, a compressed share above the whole, a drive smaller than one page.
/// Each was accepted before, and the run went on with a wrong figure.
#[test]
fn numbers_out_of_range_are_rejected_naming_the_key() {
    let cases = [
        (
            "die_read_w = 0.3",
            "die_read_w = nan",
            "power.die_read_w: NaN",
        ),
        ("idle_w = 4.0", "idle_w = -0.5", "power.idle_w: -0.5"),
        ("idle_w = 4.0", "idle_w = inf", "power.idle_w: inf"),
        (
            "read_bytes_per_s = 2750000000.0",
            "read_bytes_per_s = 0.0",
            "controller.read_bytes_per_s: 0 must be at least 1 kB/s",
        ),
        (
            "read_bytes_per_s = 2750000000.0",
            "read_bytes_per_s = 2750000000.0\nnand_write_bytes_per_s = 10.0",
            "controller.nand_write_bytes_per_s: 10 must be at least 1 kB/s",
        ),
        (
            "bus_mt_per_s = 400.0",
            "bus_mt_per_s = 1e-300",
            "nand.bus_mt_per_s: 1e-300 must be at least 1 MT/s",
        ),
        (
            "latency_ns = 4000",
            "latency_ns = 9000000000000000000",
            "controller.latency_ns: 9e18 is over 1000 s",
        ),
        (
            "queue_depth = 4096",
            "queue_depth = 0",
            "controller.queue_depth: 0 must be at least 1",
        ),
        (
            "usable_bytes = 400000000000",
            "usable_bytes = 100",
            "capacity.usable_bytes: must be at least 1048576 (1 MiB)",
        ),
        // Sizes that set the model's memory, and values no NAND has (each broke a run: an
        // abort, watts by the million, a bus of 0 bytes giving infinite channel times).
        (
            "usable_bytes = 400000000000",
            "usable_bytes = 100000000000000000",
            "capacity.usable_bytes: at most 16000000000000 (16 TB)",
        ),
        (
            "read_ns = 80000",
            "read_ns = 1000000000",
            "nand.read_ns: 1000000000 is more than any NAND has",
        ),
        (
            "bus = \"sync\"",
            "bus = \"sync\"\nbus_bytes = 0",
            "nand.bus_bytes: must be 1 to 8",
        ),
        (
            "pages_per_block = 512",
            "pages_per_block = 67108865",
            "nand.pages_per_block: 67108865 is more than any NAND has",
        ),
        (
            "max_w = 25.0",
            "max_w = 3.0",
            "power.max_w: must be above idle_w, active_w and controller_w for every core (4 W)",
        ),
    ];
    for (from, to, says) in cases {
        let e = bad_drive(|t| {
            assert!(t.contains(from), "the SSD 750 entry no longer has {from}");
            t.replacen(from, to, 1)
        });
        assert!(
            e.to_string()
                .contains(&format!("user/drives/bad.toml: {says}")),
            "{to}: {e}"
        );
    }
    let compressed = include_str!("../../../catalog/drives/sf1200-60.toml")
        .replace("min_stored_fraction = 0.1", "min_stored_fraction = 2.0");
    assert_drive_refused(
        "user/drives/sf.toml",
        &compressed,
        "sf.toml: ftl.min_stored_fraction",
    );
    // A card's bus: bursts of no bytes, a negative bus time, bursts on a standard link.
    let card = include_str!("../../../catalog/drives/revodrive-x2-100.toml");
    for (from, to, says) in [
        (
            "bursts = { bytes = 128,",
            "bursts = { bytes = 0,",
            "links.pcix133.bursts.bytes: 0 bytes",
        ),
        (
            "read_request_ns = 45.0 }",
            "read_request_ns = -1.0 }",
            "links.pcix133.bursts.read_request_ns: -1 must be a finite number, not negative",
        ),
        (
            "bytes_per_s = 1064000000.0\nhalf_duplex = true",
            "link = \"pcie1x4\"",
            "links.pcix133.bursts: a standard link is framed by its standard",
        ),
    ] {
        assert!(
            card.contains(from),
            "the RevoDrive x2 entry no longer has {from}"
        );
        assert_drive_refused("user/drives/card.toml", &card.replacen(from, to, 1), says);
    }
    // Platforms go through the same rules, keys named down their tables.
    let text = include_str!("../../../catalog/platforms/z97.toml").replacen(
        "queue_depth = 32",
        "queue_depth = 0",
        1,
    );
    assert_platform_refused(
        "user/platforms/z97.toml",
        &text,
        "z97.toml: drivers.ahci.queue_depth: 0 must be at least 1",
    );
}

/// A mistyped slot, link or HBA of a platform says what the key takes, as a mistyped hop of a
/// port's path does (each said only "unknown link 'sata'" or "unknown hba 'pc'").
#[test]
fn a_mistyped_slot_link_or_hba_says_what_the_key_takes() {
    let z97 = include_str!("../../../catalog/platforms/z97.toml");
    for (from, to, says) in [
        (
            "slot = \"sata6\"",
            "slot = \"sata\"",
            "z97.toml: ports.sata.slot: unknown link 'sata': a slot is a standard link the drive \
             negotiates with: sata1.5, sata3, sata6 or pcie<gen>x<lanes>",
        ),
        (
            "link = \"pcie2x2\"",
            "link = \"pcie2\"",
            "z97.toml: links.pch_m2.link: unknown link 'pcie2': use sata1.5/sata3/sata6, \
             pcie<gen>x<lanes>",
        ),
        (
            "hba = \"pch\"",
            "hba = \"pc\"",
            "z97.toml: ports.sata.hba: unknown hba 'pc' (this platform's: pch): define \
             [hbas.pc]",
        ),
    ] {
        assert!(z97.contains(from), "{from}");
        assert_platform_refused("user/platforms/z97.toml", &z97.replacen(from, to, 1), says);
    }
}

#[test]
fn bad_specs_say_what_to_write() {
    assert!(matches!(
        open("ssd750-400", None),
        Err(SimError::Spec { .. })
    ));
    assert!(matches!(
        open("sim:nope@z97", None),
        Err(SimError::UnknownDrive { .. })
    ));
    assert!(matches!(
        open("sim:ssd750-400@z97/nope", None),
        Err(SimError::UnknownPort { .. })
    ));
    let e = open("sim:c300-256@z97/cpu", None).err().unwrap();
    assert!(matches!(e, SimError::Incompatible { .. }), "{e}");
    // A port that does not take the drive: the error names those that do.
    let e = open("sim:revodrive-120@x58/ich10", None).err().unwrap();
    assert!(
        e.to_string()
            .ends_with("ports of x58 that take it: ioh-x16"),
        "{e}"
    );
}

#[test]
fn without_a_port_a_drive_goes_where_it_fits() {
    // The default port when it takes the drive…
    assert_eq!(
        open("sim:c300-256@x58", None).unwrap().spec(),
        "sim:c300-256@x58/ich10"
    );
    // …else the port nearest the CPU that does: X58's default is a SATA port, a SATA drive
    // on Z97 leaves the CPU slot for the PCH's SATA.
    assert_eq!(
        open("sim:revodrive-120@x58", None).unwrap().spec(),
        "sim:revodrive-120@x58/ioh-x16"
    );
    assert_eq!(
        open("sim:c300-256@z97", None).unwrap().spec(),
        "sim:c300-256@z97/sata"
    );
}

/// A user platform that marks no port as the default (the key is optional) refused every
/// spec without a port ("has no port '(default)'"), though a port took the drive: it goes to
/// the port nearest the CPU that takes it, as when the default does not.
#[test]
fn on_a_platform_without_a_default_port_a_drive_goes_where_it_fits() {
    let mut cat = Catalog::load(None).unwrap();
    let z97 = include_str!("../../../catalog/platforms/z97.toml")
        .replace("name = \"z97\"", "name = \"nodefault\"")
        .replace("default = true\n", "");
    cat.add_platform("user/platforms/nodefault.toml", &z97)
        .unwrap();
    for (drive, port) in [("c300-256", "sata"), ("ssd750-400", "cpu")] {
        let spec = format!("sim:{drive}@nodefault");
        let sim = open_with(&spec, cat.clone()).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(sim.spec(), format!("sim:{drive}@nodefault/{port}"));
    }
    // A drive the platform has no driver for is refused saying so, as on Z97.
    let e = open_with("sim:revodrive-120@nodefault", cat)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("[drivers.sil3124]"), "{e}");
}

#[test]
fn state_persists_across_jobs_and_full_drive_writes_amplify() {
    let mut sim = open("sim:ssd750-400@z97/cpu", None).unwrap();
    sim.precondition_steady();
    let w = job("access = \"randwrite\"\nqueue_depth = 32\nduration_s = 1");
    let steady = sim.run_job(&w, None).unwrap().result.write.iops;
    let wa = sim.tests().last().unwrap().write_amplification.unwrap();
    assert!(wa > 1.8, "steady-state write amplification {wa}");
    // Trimmed and given time to finish the collections under way, the drive writes as fresh:
    // collection finds nothing valid to move.
    sim.trim_all();
    sim.idle(2.0);
    let fresh = sim.run_job(&w, None).unwrap().result.write.iops;
    let wa = sim.tests().last().unwrap().write_amplification.unwrap();
    assert!(fresh > 1.8 * steady, "fresh {fresh} vs steady {steady}");
    assert!(wa < 1.01, "after TRIM: write amplification {wa}");
    let d = sim.describe();
    assert_eq!(d.tests.len(), 2);
    assert!(d.tests[0].avg_power_w > 4.0);
}

#[test]
fn writes_larger_than_the_buffer_keep_a_collecting_drive_as_busy_as_small_ones() {
    // AS SSD's 16 MB blocks at QD1 into an SF-1200's 4 MiB buffer, on a drive in steady state:
    // taken a program unit at a time as they stream in and room frees, they write as fast as
    // 128 KiB writes at QD32 (both held by the channels' collections). Taken whole, each
    // waited for every program before it, and the channels idled: 13.5 against 21.6 MB/s.
    let rate = |bs: &str, qd: u32| {
        let mut sim = open("sim:sf1200-120@h67/sata", None).unwrap();
        sim.precondition_steady();
        let w = job(&format!(
            "access = \"write\"\nblock_size = \"{bs}\"\nqueue_depth = {qd}\nsize = 400000000"
        ));
        sim.run_job(&w, None).unwrap().result.write.bw_mb_per_s
    };
    let (large, small) = (rate("16m", 1), rate("128k", 32));
    assert!(
        (large / small - 1.0).abs() < 0.05,
        "16 MB at QD1 {large:.1} MB/s against 128 KiB at QD32 {small:.1} MB/s"
    );
}

#[test]
fn a_controllers_flash_side_write_path_caps_program_data_where_the_dies_could_go_faster() {
    // The Force GT 240 GB's 32 dies could take a fresh 1 GB sequential write at about
    // 365 MB/s; its SF-2281 hands the channels 327 MB/s of program data, parity included (one
    // unit in 32), so the host writes at 31/32 of that. The 120 GB's 16 dies stay below it.
    // The catalog's rate, or ten times it (the dies and channels alone).
    let rate = |name: &str, entry: &str, bytes_per_s: &str| {
        let line = "nand_write_bytes_per_s = 327000000.0";
        let changed = format!("nand_write_bytes_per_s = {bytes_per_s}");
        let mut sim = probe(name, entry, line, &changed, "h67/sata");
        let w = job("access = \"write\"\nblock_size = \"1m\"\nsize = 1000000000");
        sim.run_job(&w, None).unwrap().result.write.bw_mb_per_s
    };
    let (catalog, unlimited) = ("327000000.0", "3270000000.0");
    let big = include_str!("../../../catalog/drives/forcegt-240.toml");
    let (capped, free) = (
        rate("forcegt-240", big, catalog),
        rate("forcegt-240", big, unlimited),
    );
    let parity = 31.0 / 32.0;
    assert!(
        (capped / (327.0 * parity) - 1.0).abs() < 0.01,
        "{capped:.1} MB/s"
    );
    assert!(
        free > 1.1 * capped,
        "dies alone {free:.1}, capped {capped:.1} MB/s"
    );
    let small = include_str!("../../../catalog/drives/forcegt-120.toml");
    let (capped, free) = (
        rate("forcegt-120", small, catalog),
        rate("forcegt-120", small, unlimited),
    );
    // (Only the time each unit spends on the path, well under a program, is added.)
    assert!(
        (capped / free - 1.0).abs() < 0.005,
        "the 120 GB's dies are slower than the path: {capped:.2} against {free:.2} MB/s"
    );
}

#[test]
fn a_parity_die_costs_one_program_in_as_many_as_the_drive_has_dies() {
    // The Force GT 120 GB keeps RAISE parity on a die's worth of its 16 dies: every 15 units
    // of data carry one of parity, 16/15 of the data reaches NAND on a fresh drive, and the
    // array keeps that die's worth less room, so a full drive collects harder than the
    // same drive without the parity die.
    let run = |parity: bool, state: &str| {
        // The drive as built in, or as a user's entry with the parity die off.
        let mut cat = Catalog::load(None).unwrap();
        let name = if parity {
            "forcegt-120"
        } else {
            let path = format!(
                "{}/../../catalog/drives/forcegt-120.toml",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read_to_string(path).unwrap();
            assert!(
                text.contains("parity_die = true"),
                "forcegt-120 keeps parity"
            );
            let without = text
                .replace("name = \"forcegt-120\"", "name = \"forcegt-120-no-parity\"")
                .replace("parity_die = true", "parity_die = false");
            cat.add_drive("user/drives/forcegt-120-no-parity.toml", &without)
                .unwrap();
            "forcegt-120-no-parity"
        };
        let mut sim = open_with(&format!("sim:{name}@h67/sata"), cat).unwrap();
        if state == "steady" {
            sim.precondition_steady();
        }
        let w = job("access = \"write\"\nblock_size = \"16m\"\nsize = 400000000");
        let mb_s = sim.run_job(&w, None).unwrap().result.write.bw_mb_per_s;
        let wa = sim.tests().last().unwrap().write_amplification.unwrap();
        (mb_s, wa)
    };
    let ((with_mb_s, with_wa), (without_mb_s, without_wa)) =
        (run(true, "fresh"), run(false, "fresh"));
    assert!(
        (without_wa - 1.0).abs() < 0.005,
        "without parity: write amplification {without_wa}"
    );
    assert!(
        (with_wa - 16.0 / 15.0).abs() < 0.005,
        "with parity: write amplification {with_wa}"
    );
    let ratio = with_mb_s / without_mb_s;
    assert!(
        (ratio - 15.0 / 16.0).abs() < 0.02,
        "fresh: {with_mb_s:.1} against {without_mb_s:.1} MB/s"
    );
    let ((with_mb_s, _), (without_mb_s, _)) = (run(true, "steady"), run(false, "steady"));
    assert!(
        with_mb_s < 0.8 * without_mb_s,
        "steady: {with_mb_s:.1} against {without_mb_s:.1} MB/s"
    );
}

#[test]
fn hdd_and_tiers_behave_like_their_mechanisms() {
    let r = |spec: &str, text: &str| {
        let mut sim = open(spec, None).unwrap();
        sim.run_job(&job(text), None).unwrap().result
    };
    let rr = r("sim:hdd-7200@h67", "access = \"randread\"\nduration_s = 1");
    assert!(
        rr.read.iops > 60.0 && rr.read.iops < 150.0,
        "HDD random read {} IOPS",
        rr.read.iops
    );
    // Native command queuing: with 32 commands to choose from the drive takes the one it
    // reaches soonest, so random reads more than double; with two (one running, one waiting)
    // there is no choice.
    let deep = r(
        "sim:hdd-7200@h67",
        "access = \"randread\"\nqueue_depth = 32\nduration_s = 10",
    );
    let two = r(
        "sim:hdd-7200@h67",
        "access = \"randread\"\nqueue_depth = 2\nduration_s = 10",
    );
    assert!(
        deep.read.iops > 2.0 * two.read.iops,
        "QD32 {} vs QD2 {}",
        deep.read.iops,
        two.read.iops
    );
    assert!(
        (two.read.iops / rr.read.iops - 1.0).abs() < 0.15,
        "QD2 {} vs QD1 {}",
        two.read.iops,
        rr.read.iops
    );
    let sr = r(
        "sim:hdd-7200@h67",
        "access = \"read\"\nblock_size = \"1m\"\nduration_s = 1",
    );
    assert!(
        sr.read.bw_mb_per_s > 120.0 && sr.read.bw_mb_per_s < 160.0,
        "{}",
        sr.read.bw_mb_per_s
    );
    // Zoned recording: the rate follows the track's radius and LBAs fill the platter by area,
    // so the middle LBA of a 150 -> 75 MB/s disk reads at about 119 MB/s (a rate linear in
    // the LBA gave 100).
    let middle = r(
        "sim:hdd-7200@h67",
        "access = \"read\"\nblock_size = \"1m\"\nqueue_depth = 4\noffset = \"500g\"\nsize = \"8g\"\nduration_s = 1",
    );
    assert!(
        middle.read.bw_mb_per_s > 110.0 && middle.read.bw_mb_per_s < 122.0,
        "{}",
        middle.read.bw_mb_per_s
    );
    // Power: a busy disk draws idle plus seeking (5.5 + 2.5 W), never more, however short
    // the job (each job used to be charged the whole of the seek its last command left
    // running: 8.04 W).
    for text in [
        "access = \"randwrite\"\nblock_size = \"64k\"\nduration_s = 0.3",
        "access = \"write\"\nblock_size = \"1m\"\nqueue_depth = 32\nduration_s = 0.3",
    ] {
        let mut sim = open("sim:hdd-7200@z97/sata", None).unwrap();
        sim.run_job(&job(text), None).unwrap();
        let t = sim.tests().last().unwrap();
        assert!(
            t.avg_power_w <= 8.0 + 1e-9 && t.avg_power_w > 7.9,
            "{text}: {} W",
            t.avg_power_w
        );
    }
    // A path that keeps one command in flight names that, not latency, when the job would
    // keep more: the JBOD card's RAID layer takes one at a time.
    for (qd, says) in [(1, "latency-bound"), (32, "host queue limit of 1")] {
        let mut sim = open("sim:revodrive-120-jbod@x58", None).unwrap();
        let text = format!("access = \"randread\"\nqueue_depth = {qd}\nduration_s = 0.1");
        sim.run_job(&job(&text), None).unwrap();
        let b = &sim.tests().last().unwrap().bottleneck;
        assert!(b.starts_with(says), "QD{qd}: {b}");
    }
    // A cache: the second pass over a small hot set comes from the SSD.
    let mut sim = open("sim:rst-cache@z270/sata", None).unwrap();
    let hot = job("access = \"randread\"\nsize = \"64m\"\nblock_size = \"128k\"\nios_limit = 2000");
    let first = sim.run_job(&hot, None).unwrap().result.read.lat_ns.mean;
    sim.idle(1.0);
    let second = sim.run_job(&hot, None).unwrap().result.read.lat_ns.mean;
    assert!(second < first / 5.0, "first {first} ns, second {second} ns");
}

#[test]
fn a_hard_disk_acknowledges_writes_from_its_cache_and_writes_them_in_its_own_order() {
    let mut sim = open("sim:hdd-7200@h67", None).unwrap();
    let burst = job("access = \"randwrite\"\nios_limit = 120");
    let r = sim.run_job(&burst, None).unwrap().result;
    // 120 writes fit the cache's 128 segments: no seek, no rotation (a read takes ~14 ms).
    assert!(
        r.write.lat_ns.p50 < 500_000,
        "p50 {} ns",
        r.write.lat_ns.p50
    );
    // Flat out, the cache fills and writes go at the rate the disk empties it, reordering
    // the oldest 32 as it would 32 queued reads.
    let reads = sim
        .run_job(
            &job("access = \"randread\"\nqueue_depth = 32\nduration_s = 20"),
            None,
        )
        .unwrap()
        .result
        .read
        .iops;
    let long = job("access = \"randwrite\"\nduration_s = 60");
    let per_s = sim.run_job(&long, None).unwrap().result.series.write_iops;
    let tail = per_s[per_s.len() - 20..].iter().sum::<f64>() / 20.0;
    assert!(
        tail > 0.7 * reads && tail < 1.4 * reads,
        "sustained writes {tail} IOPS vs QD32 reads {reads}"
    );
}

#[test]
fn a_hard_disks_write_cache_holds_so_many_runs_of_writes_not_only_so_many_bytes() {
    // The cache holds written data in at most 128 segments, one per run of written sectors.
    // 1,000 random 4 KiB writes (4 MB, far less than its 64 MB) fill it after 128: from there
    // each waits for a destage, a seek and a rotational wait shortened by choosing among the
    // cached writes, where all 1,000 used to be acknowledged from the cache at once.
    let writes = |text: &str| on_a_fresh_hdd(text).write;
    let random = writes("access = \"randwrite\"\nios_limit = 1000");
    assert!(
        random.lat_ns.p50 > 1_000_000 && random.lat_ns.mean < 10e6,
        "{:?}",
        random.lat_ns
    );
    // The first 128 are taken into the cache as they come.
    let burst = writes("access = \"randwrite\"\nios_limit = 120");
    assert!(burst.lat_ns.max < 500_000, "{:?}", burst.lat_ns);
    // A sequential stream continues one run: it stays one segment, and 1,000 writes are
    // taken into the cache as they come.
    let sequential = writes("access = \"write\"\nblock_size = \"4k\"\nios_limit = 1000");
    assert!(sequential.lat_ns.p50 < 500_000, "{:?}", sequential.lat_ns);
}

#[test]
fn a_hard_disk_reads_data_still_in_its_write_cache_from_the_cache() {
    // 50 writes of 64 KiB spread over the disk stay in the write cache (they fit its 128
    // segments and are acknowledged at once; destaging them takes the disk a few
    // milliseconds each). A 4 KiB read within each follows, or one 10 GiB past each.
    let read_back = |shift: u64| {
        let mut sim = open("sim:hdd-7200@h67", None).unwrap();
        let at = |i: u64| i * (18 << 30);
        for i in 0..50 {
            let w = format!(
                "access = \"write\"\nblock_size = \"64k\"\noffset = {}\nsize = \"64k\"\nios_limit = 1",
                at(i)
            );
            sim.run_job(&job(&w), None).unwrap();
        }
        let mut lat: Vec<f64> = (0..50)
            .map(|i| {
                let r = format!(
                    "access = \"read\"\nblock_size = \"4k\"\noffset = {}\nsize = \"4k\"\nios_limit = 1",
                    at(i) + 8192 + shift
                );
                sim.run_job(&job(&r), None).unwrap().result.read.lat_ns.mean
            })
            .collect();
        lat.sort_by(f64::total_cmp);
        lat[25]
    };
    let (written, elsewhere) = (read_back(0), read_back(10 << 30));
    // A read of what was just written comes from the cache, without a seek or a rotational
    // wait; one of other data goes to the platters.
    assert!(written < 500_000.0, "median {written} ns");
    assert!(elsewhere > 2_000_000.0, "median {elsewhere} ns");
}

#[test]
fn a_read_after_a_burst_of_cached_writes_waits_for_a_few_destages_not_the_whole_cache() {
    // Random writes over 1 GiB fill the write cache with destages close to one another; a
    // read elsewhere on the disk is always farther than the next destage. By positioning time
    // alone it waited for the whole cache (no read completed in 2 s); aged, it goes once it
    // has waited about as long as reaching it takes.
    let mut sim = open("sim:hdd-7200@h67", None).unwrap();
    let burst = job("access = \"randwrite\"\nsize = \"1g\"\nqueue_depth = 32\nduration_s = 2");
    sim.run_job(&burst, None).unwrap();
    let r = job("access = \"randread\"\nduration_s = 1");
    let read = sim.run_job(&r, None).unwrap().result.read;
    assert!(read.ios > 20, "{read:?}");
    assert!(read.lat_ns.max < 100_000_000, "{:?}", read.lat_ns);
}

#[test]
fn a_queue_depth_1_stream_after_a_burst_of_cached_writes_is_not_held_behind_destages() {
    // The disk started a destage in the microseconds between two commands of a QD1 stream,
    // and each read then waited for it and a seek back: 128 KiB sequential reads after a
    // sequential burst ran at 15 MB/s (8.6 ms each), against 150 MB/s (0.87 ms) with a clean
    // cache. It destages once it has idled, and the stream streams.
    let reads_after = |burst: bool| {
        let mut sim = open("sim:hdd-7200@h67", None).unwrap();
        if burst {
            let w = job("access = \"write\"\nblock_size = \"128k\"\nsize = \"1g\"\nduration_s = 1");
            sim.run_job(&w, None).unwrap();
        }
        let r = job("access = \"read\"\nblock_size = \"128k\"\nsize = \"1g\"\nduration_s = 0.5");
        sim.run_job(&r, None).unwrap().result.read
    };
    let (after, clean) = (reads_after(true), reads_after(false));
    assert!(
        after.iops > 0.9 * clean.iops,
        "after a burst {} IOPS (p50 {} ns), with a clean cache {}",
        after.iops,
        after.lat_ns.p50,
        clean.iops
    );
    // The cache still destages once the host leaves the disk alone: an idle second later,
    // a write burst of the cache's size is taken at the link's speed again.
    let mut sim = open("sim:hdd-7200@h67", None).unwrap();
    let fill = job("access = \"write\"\nblock_size = \"128k\"\nsize = \"1g\"\nduration_s = 1");
    sim.run_job(&fill, None).unwrap();
    sim.idle(1.0);
    let again = job("access = \"write\"\nblock_size = \"128k\"\nsize = \"1g\"\nio_limit = \"32m\"");
    let w = sim.run_job(&again, None).unwrap().result.write;
    assert!(w.lat_ns.p50 < 500_000, "{:?}", w.lat_ns);
}

#[test]
fn a_queued_sequential_mix_takes_each_block_as_it_comes_round() {
    // 4 KiB sequential reads and writes, half each, at QD4: the drive chooses among reads and
    // destages a block or two apart on one track. Each was positioned as a seek elsewhere, a
    // track-to-track seek and a rotational wait drawn at random, and NCQ took whichever drew
    // the shortest; once the destages fell out of order, QD4 ran at about 500 read IOPS a
    // second (760 over 20 s, p50 2.7 ms) against QD1's 2,871. A sector a short way on from
    // where the last command ended comes under the head as the gap passes, and the one it
    // comes to first goes first.
    let reads = |qd: u32| {
        let mut sim = open("sim:hdd-7200@h67", None).unwrap();
        let text =
            format!("access = \"rw\"\nblock_size = \"4k\"\nqueue_depth = {qd}\nduration_s = 3");
        let r = sim.run_job(&job(&text), None).unwrap().result;
        (r.read.iops, r.series.read_iops[2])
    };
    let ((qd1, _), (qd4, third_s)) = (reads(1), reads(4));
    assert!(
        third_s > 0.9 * qd1,
        "QD4 {third_s} read IOPS in its third second ({qd4} over 3 s), QD1 {qd1}"
    );
}

#[test]
fn reads_of_what_the_look_ahead_read_come_from_the_buffer_whatever_ran_in_between() {
    let reads = |text: &str| on_a_fresh_hdd(text).read;
    let alone = reads("access = \"read\"\nblock_size = \"4k\"\nduration_s = 2");
    // A sequential 4 KiB stream of reads and writes at QD1: a read waited for the destages of
    // the writes since the last read, which the disk (holding them until it idled) ran only
    // once the read was queued, 100 us each: mean 224 us against 124 reading alone, 2,871 read
    // IOPS. The look-ahead had read the data past the last read into the buffer before.
    let mixed = reads("access = \"rw\"\nblock_size = \"4k\"\nduration_s = 2");
    assert!(
        mixed.lat_ns.mean < alone.lat_ns.mean * 1.1 && mixed.iops > 0.45 * alone.iops,
        "mixed {} read IOPS, mean {} ns; reads alone {} IOPS, mean {} ns",
        mixed.iops,
        mixed.lat_ns.mean,
        alone.iops,
        alone.lat_ns.mean
    );
    // A stream slower than a revolution a read lost the look-ahead at each read: p50 965 us,
    // mean 2.5 ms at 100 IOPS. The look-ahead read on while the disk waited.
    let paced = reads("access = \"read\"\nblock_size = \"4k\"\nrate_iops = 100\nduration_s = 2");
    assert!(
        paced.lat_ns.mean < alone.lat_ns.mean * 1.1,
        "at 100 IOPS mean {} ns, flat out {} ns",
        paced.lat_ns.mean,
        alone.lat_ns.mean
    );
}

#[test]
fn a_tier_moves_hot_extents_in_the_background_not_in_front_of_the_host() {
    let iops = |qd: u32| {
        let mut sim = open("sim:storemi@x470", None).unwrap();
        let text =
            format!("access = \"randread\"\nsize = \"1g\"\nqueue_depth = {qd}\nduration_s = 5");
        sim.run_job(&job(&text), None).unwrap().result.read.iops
    };
    // Extents turn hot all the time under random reads; copying each at once flooded the disk
    // with 1 MiB copies: QD32 ran at 1.8 times QD1 here (and below QD1 while the disk served
    // its queue in arrival order).
    let (qd1, qd32) = (iops(1), iops(32));
    assert!(qd32 > 2.0 * qd1, "QD32 {qd32} IOPS vs QD1 {qd1}");
}

#[test]
fn a_tiers_demotions_parked_in_the_disk_cache_do_not_starve_the_hosts_writes() {
    // Random writes over a full tier turn extents hot; each promotion displaces an extent to
    // the disk, and that 1 MiB write waits in the disk's write cache. A mover that started
    // the next copy as soon as the last one's read was done filled the cache with demotions:
    // the host's 4 KiB writes got about 10 IOPS, against some 470 from the disk alone.
    let iops = |spec: &str| {
        let mut sim = open(spec, None).unwrap();
        sim.precondition_fill();
        let text =
            "access = \"randwrite\"\nsize = \"16g\"\nqueue_depth = 32\nramp_s = 1\nduration_s = 2";
        sim.run_job(&job(text), None).unwrap().result.write.iops
    };
    let (tier, disk) = (iops("sim:storemi@x470"), iops("sim:hdd-7200@x470"));
    assert!(tier > 0.5 * disk, "tier {tier} IOPS vs disk alone {disk}");
}

#[test]
fn a_tiers_mover_does_not_wait_for_the_disk_cache_to_destage_the_hosts_writes() {
    // The mover starts its next copy once none of its own copies waits in the slow disk; it
    // counted the destages of the host's writes as its own. With the disk destaging only once
    // it idles, those waited as long as a QD1 mixed stream kept it busy, and no extent moved:
    // 4 KiB random 50/50 reads and writes over 256 MiB ran at 230 read IOPS, the disk alone's
    // 150, against 4000 with the hot extents promoted. (128 MiB since the mover keeps its
    // 10 MiB/s busy or idle: some 13 s for the set.)
    let iops = |spec: &str| {
        let mut sim = open(spec, None).unwrap();
        let text = "access = \"randrw\"\nsize = \"128m\"\nduration_s = 20";
        sim.run_job(&job(text), None).unwrap().result.read.iops
    };
    let (tier, disk) = (iops("sim:storemi@x470"), iops("sim:hdd-7200@x470"));
    assert!(tier > 5.0 * disk, "tier {tier} IOPS vs disk alone {disk}");
}

#[test]
fn a_tiers_demotion_does_not_hold_the_hosts_writes_behind_it_for_room_in_the_disk_cache() {
    // A 1 MiB demotion waited at the head of the disk's write-cache queue for room, and each
    // 4 KiB host write waited behind it: with the cache full of random writes that room took
    // some 256 destages, and no write completed for 0.4 s (max latency 1.16 s, 103 IOPS in
    // `iolab sim explain`). A write lacking more room than a destage frees is written through.
    let mut sim = open("sim:storemi@x470", None).unwrap();
    let text = "access = \"randwrite\"\nsize = \"16g\"\nqueue_depth = 32\nduration_s = 5\nseed = 1";
    let w = sim.run_job(&job(text), None).unwrap().result.write;
    assert!(w.lat_ns.max < 400_000_000, "{:?}", w.lat_ns);
    let mut disk = open("sim:hdd-7200@x470", None).unwrap();
    let alone = disk.run_job(&job(text), None).unwrap().result.write;
    assert!(
        w.iops > 0.6 * alone.iops,
        "tier {} IOPS vs disk alone {}",
        w.iops,
        alone.iops
    );
}

#[test]
fn a_hot_set_written_at_random_is_promoted_without_waiting_for_the_disk_to_destage() {
    // The mover waited for each demotion's destage, which sat behind the whole 64 MB write
    // cache of the host's random writes: one promotion every ~22 s, and a 256 MiB hot set
    // written at random stayed at the disk's ~770 IOPS for a minute.
    let text = "access = \"randwrite\"\nsize = \"256m\"\nduration_s = 40\nseed = 1";
    let mut sim = open("sim:storemi@x470", None).unwrap();
    let per_s = sim
        .run_job(&job(text), None)
        .unwrap()
        .result
        .series
        .write_iops;
    let tail = per_s[per_s.len() - 10..].iter().sum::<f64>() / 10.0;
    let mut disk = open("sim:hdd-7200@x470", None).unwrap();
    let alone = disk
        .run_job(&job(text), None)
        .unwrap()
        .result
        .series
        .write_iops;
    let disk_tail = alone[alone.len() - 10..].iter().sum::<f64>() / 10.0;
    assert!(
        tail > 10.0 * disk_tail,
        "tier {tail} IOPS over the last 10 s vs disk alone {disk_tail}"
    );
}

#[test]
fn a_cache_keeps_what_it_read_and_a_ram_layer_serves_repeats_from_memory() {
    let passes = |spec: &str, text: &str, n: usize| -> Vec<f64> {
        let mut sim = open(spec, None).unwrap();
        (0..n)
            .map(|_| {
                let r = sim.run_job(&job(text), None).unwrap().result;
                sim.idle(1.0);
                r.read.lat_ns.mean
            })
            .collect()
    };
    // 4 KiB reads: the cache copies the 4 KiB it read, not its 128 KiB line, so a first pass
    // costs the disk no more than the disk alone; blocks never read stay on the disk.
    let small = "access = \"randread\"\nsize = \"64m\"\nios_limit = 500";
    let disk = passes("sim:hdd-7200@z270/sata", small, 1)[0];
    let cache = passes("sim:rst-cache@z270/sata", small, 2);
    assert!(
        cache[0] < disk * 1.05,
        "first pass {} ns vs disk {disk} ns",
        cache[0]
    );
    assert!(cache[1] < disk / 20.0, "second pass {} ns", cache[1]);
    let other = "access = \"randread\"\nsize = \"64m\"\nios_limit = 500\nseed = 9";
    let mut sim = open("sim:rst-cache@z270/sata", None).unwrap();
    sim.run_job(&job(small), None).unwrap();
    let cold = sim
        .run_job(&job(other), None)
        .unwrap()
        .result
        .read
        .lat_ns
        .mean;
    assert!(
        cold > disk / 2.0,
        "other blocks {cold} ns vs disk {disk} ns"
    );
    // StoreMI's RAM layer: a repeat is a memory copy, faster than the SSD tier could serve it.
    let hot = "access = \"randread\"\nsize = \"64m\"\nios_limit = 2000";
    let ram = passes("sim:storemi-ram@x470", hot, 2);
    let tier = passes("sim:storemi@x470", hot, 3);
    assert!(
        ram[1] < tier[2] / 2.0,
        "RAM {} ns vs SSD tier {} ns",
        ram[1],
        tier[2]
    );
    // A first read comes from the disk (or, once the mover has promoted its extent during the
    // pass, the SSD), never from RAM.
    assert!(
        ram[0] > 20.0 * ram[1],
        "a first read comes from the disk: {} ns, a repeat {} ns",
        ram[0],
        ram[1]
    );
}

#[test]
fn user_catalog_directory_adds_drives() {
    let dir = std::env::temp_dir().join(format!("iolab-sim-cat-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("drives")).unwrap();
    let text = include_str!("../../../catalog/drives/ssd750-400.toml")
        .replace("name = \"ssd750-400\"", "name = \"my-drive\"");
    std::fs::write(dir.join("drives/my.toml"), text).unwrap();
    let sim = open("sim:my-drive@z97", Some(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(sim.is_ok());
}

#[test]
fn the_host_keeps_no_more_in_flight_than_the_drive_queues() {
    // The AHCI driver sends 32; a disk whose NCQ takes 4 gets 4, where the driver's 32 won.
    let mut cat = Catalog::load(None).unwrap();
    let text = include_str!("../../../catalog/drives/hdd-7200.toml")
        .replace("name = \"hdd-7200\"", "name = \"ncq4\"")
        .replace("queue_depth = 32", "queue_depth = 4");
    cat.add_drive("user/drives/ncq4.toml", &text).unwrap();
    let sim = open_with("sim:ncq4@h67", cat).unwrap();
    assert_eq!(sim.describe().max_outstanding, 4);
}

/// Each member of a platform's RAID volume keeps its own NCQ queue: four SATA SSDs on Z97's
/// RST take the driver's 128 commands (4 × 32), where the volume was held to one member's 32
/// and random reads stopped at QD32's 181K IOPS, "host queue limit of 32", however deep the
/// job.
#[test]
fn each_member_of_a_platform_raid_keeps_its_own_queue() {
    let sim = open("sim:forcegt-240@z97/sata-raid0", None).unwrap();
    assert_eq!(sim.describe().max_outstanding, 128);
    let iops = |qd: u32| {
        let mut sim = open("sim:forcegt-240@z97/sata-raid0", None).unwrap();
        sim.precondition_fill();
        let text = format!("access = \"randread\"\nqueue_depth = {qd}\nduration_s = 0.2");
        let r = sim.run_job(&job(&text), None).unwrap().result;
        let b = sim.tests().last().unwrap().bottleneck.clone();
        assert!(!b.starts_with("host queue limit"), "QD{qd}: {b}");
        r.read.iops
    };
    let (q32, q128) = (iops(32), iops(128));
    assert!(q128 > 1.3 * q32, "QD32 {q32:.0} IOPS, QD128 {q128:.0}");
    // A single drive on one of those ports is still held to its own 32.
    let one = open("sim:forcegt-240@z97/sata", None).unwrap();
    assert_eq!(one.describe().max_outstanding, 32);
}

#[test]
fn a_result_carries_the_parameters_of_a_cards_members_and_a_tiers_drives() {
    let members = |spec: &str| -> Vec<String> {
        let d = open(spec, None).unwrap().describe();
        d.members
            .iter()
            .map(|m| m.entry["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(members("sim:revodrive-x2-100@x58"), ["sf1200-25"]);
    assert_eq!(members("sim:storemi@x470").len(), 2);
    assert!(members("sim:ssd750-400@z97").is_empty());
    // And the platform's: an edited driver latency or link shows in the result that used it.
    let d = open("sim:c300-256@x58/ich-marvell", None)
        .unwrap()
        .describe();
    let entry = &d.platform.unwrap().entry;
    assert_eq!(entry["name"], "x58");
    assert!(
        entry["drivers"]["ahci"]["latency_ns"].as_u64().unwrap() > 0,
        "{entry}"
    );
    assert!(entry["ports"]["ich-marvell"].is_object(), "{entry}");
}

#[test]
fn user_entries_are_checked_against_each_other_and_their_members() {
    let dir = std::env::temp_dir().join(format!("iolab-sim-cat2-{}", std::process::id()));
    let drives = dir.join("drives");
    std::fs::create_dir_all(&drives).unwrap();
    let load = |files: &[(&str, String)]| {
        for f in std::fs::read_dir(&drives).unwrap() {
            std::fs::remove_file(f.unwrap().path()).unwrap();
        }
        for (name, text) in files {
            std::fs::write(drives.join(name), text).unwrap();
        }
        Catalog::load(Some(&dir))
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let ssd = include_str!("../../../catalog/drives/ssd750-400.toml");
    // Replacing a built-in entry is allowed; two user files naming one entry are not.
    let mine = ssd.replace("name = \"ssd750-400\"", "name = \"mine\"");
    let results = [
        load(&[("a.toml", ssd.to_string())]),
        load(&[("a.toml", mine.clone()), ("b.toml", mine)]),
        // A tier's fast share cannot be more than its fast drive holds.
        load(&[(
            "tier.toml",
            include_str!("../../../catalog/drives/storemi.toml")
                .replace("fast_bytes = 256000000000", "fast_bytes = 900000000000"),
        )]),
        // Nor its extent more than its slow drive (here a 25 GB SSD: an extent larger than
        // the 1 TB disk would be larger than the fast share too); nor a card's stripe more
        // than a member (each built a volume of 0 bytes, on which `sim explain` panicked).
        load(&[(
            "tier.toml",
            include_str!("../../../catalog/drives/storemi.toml")
                .replace("slow = \"hdd-7200\"", "slow = \"sf1200-25\"")
                .replace("extent_bytes = 1048576", "extent_bytes = 103079215104"),
        )]),
        load(&[(
            "card.toml",
            include_str!("../../../catalog/drives/revodrive-120.toml")
                .replace("stripe_bytes = 65536", "stripe_bytes = 100000000000"),
        )]),
    ];
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(results[0], Ok(()));
    let dup = results[1].as_ref().unwrap_err();
    assert!(
        dup.contains("b.toml: name") && dup.contains("a.toml already defines"),
        "{dup}"
    );
    let tier = results[2].as_ref().unwrap_err();
    assert!(
        tier.contains("tier.toml: tiered.fast_bytes") && tier.contains("nvme2018-500"),
        "{tier}"
    );
    for (result, says) in [
        (&results[3], "tier.toml: tiered.extent_bytes"),
        (&results[4], "card.toml: card.stripe_bytes"),
    ] {
        let e = result.as_ref().unwrap_err();
        assert!(e.contains(says), "{e}");
    }
}

#[test]
fn a_raid_port_striping_more_than_a_member_holds_is_refused() {
    let mut cat = Catalog::load(None).unwrap();
    let z97 = include_str!("../../../catalog/platforms/z97.toml")
        .replace("stripe_bytes = 131072", "stripe_bytes = 1000000000000000");
    cat.add_platform("user/platforms/z97.toml", &z97).unwrap();
    let e = open_with("sim:forcegt-240@z97/sata-raid0", cat)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("z97.toml: ports.sata-raid0.raid.stripe_bytes"),
        "{e}"
    );
}

#[test]
fn a_volume_of_its_own_is_refused_as_a_member_of_a_raid_port() {
    // A tier or a card behind a chipset RAID port used to build a volume of 0 bytes. Where
    // no port of the platform has the card's driver (X470 has no SiI3124 driver), that is said.
    for spec in ["sim:storemi@z270/raid0", "sim:revodrive-120@x470/raid0"] {
        let e = open(spec, None).err().unwrap().to_string();
        assert!(
            e.contains("cannot be a member of the RAID volume")
                && (e.contains("that take it") || e.contains("takes it")),
            "{spec}: {e}"
        );
    }
}

/// The line of `iolab sim explain SPEC` for the test named `test`.
fn explain_line(spec: &str, test: &str) -> String {
    let text = iolab_sim::explain(spec, None).unwrap();
    let line = text.lines().find(|l| l.contains(test));
    line.unwrap_or_else(|| panic!("no {test} in {text}"))
        .to_string()
}

#[test]
fn a_saturated_full_duplex_link_is_named_the_bottleneck() {
    // Reads fill PCIe 1.0 x1 toward the host while the other direction idles: the link, not a
    // half-busy average, is what limits them.
    let seq_read = explain_line("sim:c300-256@p55/pch-marvell", "128K sequential read");
    assert!(
        seq_read.contains("PCIe 1.0 x1") && seq_read.contains("toward the host"),
        "{seq_read}"
    );
}

#[test]
fn explain_measures_each_test_from_the_filled_drive_past_its_write_cache() {
    // A hard disk writes sequentially at its media rate (150 MB/s at the outer zone), not at
    // the link rate its 64 MB write cache takes a first burst at (373 MB/s over 0.3 s), nor
    // behind the random writes of the test before it still destaging (2 MB/s).
    let seq_write = explain_line("sim:hdd-7200@h67", "128K sequential write");
    let mb_s: f64 = seq_write
        .split_whitespace()
        .nth(4)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no MB/s in {seq_write}"));
    assert!((100.0..=160.0).contains(&mb_s), "{seq_write}");
}

/// A published figure that is in neither figure set: DMI 2.0 tops out at 1.6–1.8 GB/s in practice,
/// and on Z87 "three decent SSDs are enough to saturate it" at about 1,600 MB/s
/// (Tom's Hardware, "Samsung XP941 on Z97", reviews/samsung-xp941-z97-pci-express,3826-3). Sequential reads from Force GT 240s in RAID-0 on
/// Z97's SATA ports (the same DMI 2.0): one is held by its SATA link; four stop at the DMI,
/// inside that range give or take the project's 15 %.
#[test]
fn dmi_2_caps_a_sata_raid_0_where_reviewers_found_it() {
    let seq_read = |spec: &str| {
        let mut sim = open(spec, None).unwrap();
        sim.precondition_fill();
        let j = job("access = \"read\"\nblock_size = \"128k\"\nqueue_depth = 32\nsize = \"8g\"\nduration_s = 0.1");
        let r = sim.run_job(&j, None).unwrap().result;
        let limit = sim.tests().last().unwrap().bottleneck.clone();
        (r.read.bytes as f64 / 0.1 / 1e6, limit)
    };
    let (one, one_limit) = seq_read("sim:forcegt-240@z97/sata");
    assert!(one_limit.contains("sata link"), "{one_limit}");
    let (four, four_limit) = seq_read("sim:forcegt-240@z97/sata-raid0");
    assert!(four_limit.starts_with("dmi"), "{four_limit}");
    assert!(
        (1600.0 * 0.85..=1800.0 * 1.15).contains(&four),
        "four drives read {four:.0} MB/s"
    );
    assert!(four < 3.5 * one, "one {one:.0} MB/s, four {four:.0} MB/s");
}

/// A model of catalog drive `name` (its entry's text `entry`) with the line `line` set to
/// `changed`, known as `probe`, at `port`.
fn probe(name: &str, entry: &str, line: &str, changed: &str, port: &str) -> SimSetup {
    assert!(entry.contains(line), "{name} has no line {line}");
    let mut cat = Catalog::load(None).unwrap();
    let text = entry
        .replace(line, changed)
        .replace(&format!("name = \"{name}\""), "name = \"probe\"");
    cat.add_drive("probe.toml", &text).unwrap();
    open_with(&format!("sim:probe@{port}"), cat).unwrap()
}

/// QD1 4 KiB random reads of a full SSD 750 400 GB whose NAND is described with `bits_per_cell`.
fn qd1_read_latency(bits_per_cell: u32) -> iolab_core::result::LatencySummary {
    let mut sim = probe(
        "ssd750-400",
        include_str!("../../../catalog/drives/ssd750-400.toml"),
        "bits_per_cell = 2",
        &format!("bits_per_cell = {bits_per_cell}"),
        "z97/cpu",
    );
    sim.precondition_fill();
    let j = job("access = \"randread\"\nqueue_depth = 1\nsize = \"4g\"\nduration_s = 0.05");
    sim.run_job(&j, None).unwrap().result.read.lat_ns
}

#[test]
fn mlc_pages_split_read_latency_around_the_typical_read_time() {
    // One service time per read with uniform pages; with MLC lower and upper pages (tR 80 µs
    // typical: 61 and 99 µs) the reads fall into two groups 38 µs apart, about half each, and
    // the mean stays where the typical time put it.
    let uniform = qd1_read_latency(1);
    let mlc = qd1_read_latency(2);
    assert!(uniform.max - uniform.min < 1_000, "{uniform:?}");
    let spread = (mlc.max - mlc.min) as f64;
    assert!((30_000.0..46_000.0).contains(&spread), "{mlc:?}");
    assert!(
        mlc.p50 < mlc.min + 5_000 || mlc.p50 > mlc.max - 5_000,
        "{mlc:?}"
    );
    assert!(mlc.p90 > mlc.max - 5_000, "{mlc:?}");
    assert!(
        (mlc.mean / uniform.mean - 1.0).abs() < 0.03,
        "{mlc:?} vs {uniform:?}"
    );
}

#[test]
fn reads_during_garbage_collection_wait_for_one_nand_operation() {
    // Steady state, mixed load: collection runs on every die. A read waits for the copy or
    // erase in progress (a few ms at most: tR + tPROG is 1.4 ms, an erase 3 ms), never for a
    // whole victim block's copies (~1 s on this drive) or for programs and their data loads
    // booked to run after that collection.
    let mut sim = open("sim:ssd750-400@z97/cpu", None).unwrap();
    sim.precondition_steady();
    let mix = job("access = \"randrw\"\nread_pct = 70\nqueue_depth = 8\nduration_s = 0.5");
    let r = sim.run_job(&mix, None).unwrap().result;
    let wa = sim.tests().last().unwrap().write_amplification.unwrap();
    assert!(wa > 1.5, "collection ran: write amplification {wa}");
    assert!(r.read.ios > 2_000, "{} reads", r.read.ios);
    assert!(r.read.lat_ns.max < 20_000_000, "{:?}", r.read.lat_ns);
}

#[test]
fn an_slc_cache_takes_writes_fast_until_full_and_folds_back_when_idle() {
    // The 2018 NVMe drive: 22 GB of SLC cache on an empty drive (4 GB static + 18 GB in free
    // space), 2.3 GB/s inside it, the TLC array's 600 MB/s beyond it.
    let mut sim = open("sim:nvme2018-500@z270/cpu", None).unwrap();
    let write = |sim: &mut iolab_sim::SimSetup, gb: u64, offset_gb: u64| {
        let j = job(&format!(
            "access = \"write\"\nblock_size = \"128k\"\nqueue_depth = 32\noffset = {}\nsize = {}\nio_limit = {}",
            offset_gb * 1_000_000_000,
            gb * 1_000_000_000,
            gb * 1_000_000_000
        ));
        sim.run_job(&j, None).unwrap().result.write.bw_mb_per_s
    };
    let inside = write(&mut sim, 16, 0);
    let beyond = write(&mut sim, 16, 16); // 6 GB more fit, then the array
    let after = write(&mut sim, 16, 32);
    assert!(inside > 2000.0, "inside the cache {inside} MB/s");
    assert!(after > 550.0 && after < 650.0, "cache full {after} MB/s");
    assert!(
        beyond > after && beyond < inside,
        "{inside} / {beyond} / {after}"
    );
    // A minute of idle folds the cache (22 GB at 600 MB/s takes 37 s).
    sim.idle(60.0);
    let again = write(&mut sim, 4, 48);
    assert!(again > 2000.0, "after idle {again} MB/s");
    // Rewriting one 1 GB span (CrystalDiskMark's test file) leaves stale copies in the cache,
    // not new data to fold: 30 GB of it stay at the cache's speed.
    let mut rewrite = open("sim:nvme2018-500@z270/cpu", None).unwrap();
    let j = job("access = \"write\"\nblock_size = \"128k\"\nqueue_depth = 32\nsize = \"1g\"\nio_limit = \"30g\"");
    let same_span = rewrite.run_job(&j, None).unwrap().result.write.bw_mb_per_s;
    assert!(same_span > 2000.0, "rewriting 1 GB: {same_span} MB/s");
    // A full drive keeps only the static part: 4 GB fast, then the array.
    let mut full = open("sim:nvme2018-500@z270/cpu", None).unwrap();
    full.precondition_fill();
    let first = write(&mut full, 3, 0);
    let next = write(&mut full, 8, 3);
    assert!(
        first > 2000.0 && next < 900.0,
        "full drive {first} then {next} MB/s"
    );
}

/// Asserts that no second of a per-second series falls below `share` of the series' mean:
/// a drive that stalls (a second at 0 IOPS) fails it.
fn no_second_below(per_s: &[f64], share: f64) {
    let mean = per_s.iter().sum::<f64>() / per_s.len() as f64;
    assert!(per_s.iter().all(|&x| x > share * mean), "{per_s:?}");
}

#[test]
fn a_steady_state_drive_writes_at_its_collection_limit_from_the_first_second() {
    // The analytic steady state spreads the dies over their collection cycle: left at their
    // threshold together, every die started collecting with the first writes and the drive
    // stalled for 1.4 s. And a program queued behind one die's collection does not hold up
    // its channel's other dies (which left the dies idle two thirds of the time).
    let mut sim = open("sim:ssd750-1200@z97/cpu", None).unwrap();
    sim.precondition_steady();
    let w = job("access = \"randwrite\"\nqueue_depth = 32\nthreads = 4\nduration_s = 3");
    let r = sim.run_job(&w, None).unwrap().result;
    let t = sim.tests().last().unwrap();
    // Busy throughout: the dies, or the power limit that holds them back (the next test).
    let held = t.bottleneck.contains("NAND dies") || t.bottleneck.contains("power limit");
    assert!(held && t.bottleneck_utilisation > 0.9, "{t:?}");
    assert!(t.write_amplification.unwrap() > 2.0, "{t:?}");
    // The stall was 1.4 s; a write may still wait tens of milliseconds for the power budget
    // that a few collections booked at once have spent.
    assert!(r.write.lat_ns.max < 100_000_000, "{:?}", r.write.lat_ns);
    no_second_below(&r.series.write_iops, 0.5);
}

#[test]
fn a_drive_running_out_of_spare_slows_down_without_stalling() {
    // Filled sequentially, then written at random: the SM951 takes writes at its command rate
    // until its spare area runs out (about 120 s), then collects garbage. Each collection
    // takes one victim (the dies' victims are 88 % valid then); collecting a whole block's
    // worth at once booked seconds of copies as one lump, and the host's programs, waiting
    // for their room to come back from it, stalled for a second at a time (0 IOPS, writes
    // waiting 2.1 s).
    let mut sim = open("sim:sm951-512@z97/cpu", None).unwrap();
    sim.precondition_fill();
    let w = job("access = \"randwrite\"\nqueue_depth = 32\nduration_s = 140");
    let r = sim.run_job(&w, None).unwrap().result;
    let per_s = &r.series.write_iops;
    let (fresh, last) = (per_s[10], per_s[per_s.len() - 1]);
    assert!(last < 0.7 * fresh, "the spare ran out: {per_s:?}");
    no_second_below(per_s, 0.2);
    assert!(r.write.lat_ns.max < 500_000_000, "{:?}", r.write.lat_ns);
}

#[test]
fn an_ssd_750_writing_flat_out_in_steady_state_is_held_at_its_power_limit() {
    // Unlimited, the 1.2 TB's collections and programs draw well over 25 W; the 25 W its
    // controller family specifies as sustained maximum holds it there, at fewer IOPS, and the
    // limit is named as what holds the drive back.
    let w = job("access = \"randwrite\"\nqueue_depth = 32\nduration_s = 6");
    let run = |cat: Catalog| {
        let mut sim = open_with("sim:ssd750-1200@z97/cpu", cat).unwrap();
        sim.precondition_steady();
        let iops = sim.run_job(&w, None).unwrap().result.write.iops;
        (iops, sim.tests().last().unwrap().clone())
    };
    let limited = Catalog::load(None).unwrap();
    let mut unlimited = limited.clone();
    let (_, drive) = unlimited.drives.get_mut("ssd750-1200").unwrap();
    drive.power.as_mut().unwrap().max_w = None;
    let (held_iops, held) = run(limited);
    let (free_iops, free) = run(unlimited);
    assert!(free.avg_power_w > 26.0, "{free:?}");
    assert!(held.avg_power_w < 25.5, "{held:?}");
    assert!(held.bottleneck.contains("power limit (25 W)"), "{held:?}");
    assert!(
        held_iops < 0.97 * free_iops && held_iops > 0.8 * free_iops,
        "{held_iops} vs {free_iops}"
    );
}

#[test]
fn a_short_job_at_the_power_limit_reports_only_the_work_that_ran_during_it() {
    // Programs and collections are booked up to a second ahead of the writes that cause
    // them. Counted when booked, a one-second job reported 28 W against the 25 W limit: the
    // energy of work it left queued. Counted as it runs, the job stays within the limit and
    // the next job draws the rest.
    let mut sim = open("sim:ssd750-1200@z97/cpu", None).unwrap();
    sim.precondition_steady();
    let w = job("access = \"randwrite\"\nqueue_depth = 32\nduration_s = 1");
    sim.run_job(&w, None).unwrap();
    let short = sim.tests().last().unwrap().clone();
    assert!(short.avg_power_w < 25.5, "{short:?}");
    assert!(short.bottleneck.contains("power limit (25 W)"), "{short:?}");
    assert!(short.bottleneck_utilisation <= 1.0, "{short:?}");
    let reads = job("access = \"randread\"\nqueue_depth = 1\nduration_s = 0.5");
    sim.run_job(&reads, None).unwrap();
    let after = sim.tests().last().unwrap().avg_power_w;
    let mut rested = open("sim:ssd750-1200@z97/cpu", None).unwrap();
    rested.precondition_steady();
    rested.idle(10.0);
    rested.run_job(&reads, None).unwrap();
    let alone = rested.tests().last().unwrap().avg_power_w;
    assert!(
        after > alone + 3.0,
        "the queued work runs then: {after} W against {alone} W"
    );
}

#[test]
fn an_nvme_drive_draws_its_active_power_while_it_holds_a_command() {
    // The 2018 NVMe drive stays in an active power state while it holds a command: AnandTech
    // measured the 970 EVO over 2.5 W on average at QD1, QD2 and QD4 of random reads (the
    // dies and cores alone gave 0.3-0.8 W), and its 6.2 W PS0 is never passed.
    let watts = |spec: &str, text: &str| {
        let mut sim = open(spec, None).unwrap();
        sim.precondition_fill();
        sim.run_job(&job(text), None).unwrap();
        sim.tests().last().unwrap().avg_power_w
    };
    let random_read = |qd: u32| {
        format!("access = \"randread\"\nqueue_depth = {qd}\nsize = \"64g\"\nduration_s = 0.5")
    };
    let low_qd: Vec<f64> = [1, 2, 4]
        .iter()
        .map(|&qd| watts("sim:nvme2018-500@z270/cpu", &random_read(qd)))
        .collect();
    let mean = low_qd.iter().sum::<f64>() / 3.0;
    assert!(mean > 2.5 && mean < 3.0, "{low_qd:?}");
    assert!(low_qd[0] < low_qd[1] && low_qd[1] < low_qd[2], "{low_qd:?}");
    for text in [
        "access = \"randwrite\"\nqueue_depth = 32\nduration_s = 0.3",
        "access = \"write\"\nblock_size = \"128k\"\nqueue_depth = 32\nduration_s = 0.3",
        "access = \"read\"\nblock_size = \"128k\"\nqueue_depth = 32\nduration_s = 0.3",
    ] {
        let w = watts("sim:nvme2018-500@z270/cpu", text);
        assert!(w > 3.0 && w < 6.2, "{text}: {w} W");
    }
    // A member of a RAID-0 is held only by the commands that reach it: at QD1 the two drives
    // take turns, so the pair draws about one drive's active power, not two (a little less
    // than one drive alone: the RAID driver's longer path leaves the drives idle longer).
    let pair = watts("sim:nvme2018-500@x470/raid0", &random_read(1));
    assert!(
        pair > 1.5 && pair < low_qd[0] + 0.5,
        "{pair} W vs {low_qd:?}"
    );
}

#[test]
fn a_read_goes_ahead_of_the_programs_queued_on_its_die() {
    // Sequential writes keep a full write buffer's programs queued on every die (32 MiB over
    // 36 dies: about 28 programs, 36 ms). A read among them waits for the program in progress,
    // not for the queue: it took 28 ms when reads could only use gaps between programs.
    let mut sim = open("sim:ssd750-400@z97/cpu", None).unwrap();
    sim.precondition_fill();
    let mixed = job("access = \"rw\"\nread_pct = 1\nqueue_depth = 32\nduration_s = 0.5");
    let r = sim.run_job(&mixed, None).unwrap().result;
    assert!(r.read.ios > 100, "{:?}", r.read);
    assert!(r.read.lat_ns.max < 5_000_000, "{:?}", r.read.lat_ns);
    assert!(
        r.write.bw_bytes_per_s > 800e6,
        "the writes keep their pace: {:?}",
        r.write
    );
}

#[test]
fn writes_smaller_than_a_mapping_unit_merge_in_the_buffer_or_cost_a_read() {
    // The FTL maps 4 KiB. Sequential 512-byte writes fill each LPN in the buffer a sector at
    // a time, so the NAND takes each byte once; random ones each take a whole LPN.
    let run = |sim: &mut iolab_sim::SimSetup, text: &str| {
        let r = sim.run_job(&job(text), None).unwrap().result.write.iops;
        (r, sim.tests().last().unwrap().write_amplification.unwrap())
    };
    let mut sim = open("sim:ssd750-400@z97/cpu", None).unwrap();
    sim.precondition_fill();
    let small = "block_size = 512\nqueue_depth = 32\nsize = \"4g\"\nduration_s = 0.2";
    let (_, seq_wa) = run(&mut sim, &format!("access = \"write\"\n{small}"));
    assert!((seq_wa - 1.0).abs() < 0.01, "sequential 512 B: {seq_wa}");
    let (_, rand_wa) = run(&mut sim, &format!("access = \"randwrite\"\n{small}"));
    assert!((rand_wa - 8.0).abs() < 0.1, "random 512 B: {rand_wa}");

    // A 4 KiB write that straddles two LPNs writes both, and on a full drive first reads
    // the part of each it does not cover (read-modify-write): a trimmed drive has nothing to
    // read. Aligned writes need neither.
    let four_k = "access = \"randwrite\"\nqueue_depth = 32\nsize = \"16g\"\nduration_s = 0.3";
    let misaligned = format!("{four_k}\noffset = 512");
    let (aligned_full, wa) = run(&mut sim, four_k);
    assert!((wa - 1.0).abs() < 0.01, "aligned: {wa}");
    let (misaligned_full, wa) = run(&mut sim, &misaligned);
    assert!((wa - 2.0).abs() < 0.01, "misaligned: {wa}");
    let mut empty = open("sim:ssd750-400@z97/cpu", None).unwrap();
    let (misaligned_empty, _) = run(&mut empty, &misaligned);
    assert!(
        misaligned_full < 0.8 * misaligned_empty && misaligned_empty < aligned_full,
        "aligned {aligned_full}, misaligned {misaligned_full} (full) / {misaligned_empty} (empty)"
    );
}

#[test]
fn small_sequential_reads_share_one_page_read() {
    // A die's page register keeps the unit it read until its next operation: the next reads of
    // that unit (sequential reads smaller than it) need only their data-out, while random
    // reads each need a tR.
    let mut sim = open("sim:ssd750-400@z97/cpu", None).unwrap();
    sim.precondition_fill();
    let mut iops = |access: &str, bs: &str| {
        let text = format!(
            "access = \"{access}\"\nblock_size = \"{bs}\"\nqueue_depth = 1\nsize = \"4g\"\nduration_s = 0.05"
        );
        sim.run_job(&job(&text), None).unwrap().result.read.iops
    };
    let (seq_512, rand_512) = (iops("read", "512"), iops("randread", "512"));
    assert!(
        seq_512 > 3.0 * rand_512,
        "512 B: sequential {seq_512}, random {rand_512}"
    );
    let (seq_4k, rand_4k) = (iops("read", "4k"), iops("randread", "4k"));
    assert!(
        seq_4k > 1.5 * rand_4k,
        "4 KiB: sequential {seq_4k}, random {rand_4k}"
    );
}

#[test]
fn data_not_yet_programmed_is_read_from_the_write_buffer_and_rewritten_there() {
    // Two 4 KiB writes leave the SSD 750's program unit (8 LPNs) open: their data is only in
    // DRAM, so reading it back costs what reading never-written LPNs costs (no NAND at all),
    // not a page read.
    let mut sim = open("sim:ssd750-400@z97/cpu", None).unwrap();
    sim.run_job(
        &job("access = \"write\"\nblock_size = \"4k\"\nsize = \"8k\"\nios_limit = 2"),
        None,
    )
    .unwrap();
    // Mean latency of 4 KiB reads over 8 KiB at `offset`, and the share the buffer served.
    let read_at = |sim: &mut SimSetup, offset: &str| {
        let text = format!(
            "access = \"randread\"\nblock_size = \"4k\"\noffset = \"{offset}\"\nsize = \"8k\"\nios_limit = 200"
        );
        let lat = sim
            .run_job(&job(&text), None)
            .unwrap()
            .result
            .read
            .lat_ns
            .mean;
        (lat, sim.tests().last().unwrap().reads_from_buffer.unwrap())
    };
    let (buffered, share) = read_at(&mut sim, "0");
    let (unwritten, none) = read_at(&mut sim, "1m");
    assert_eq!(buffered, unwritten, "a buffered read costs no NAND time");
    assert_eq!(share, 1.0, "every read found its data in the buffer");
    assert_eq!(none, 0.0);

    // The same LPNs once programmed are read from NAND.
    sim.precondition_fill();
    let (programmed, share) = read_at(&mut sim, "0");
    assert_eq!(share, 0.0);
    assert!(
        programmed > buffered + 5_000.0,
        "from NAND {programmed} ns, from the buffer {buffered} ns"
    );

    // A hot LPN rewritten while its unit is open is replaced in the buffer, not programmed
    // again: 4 KiB random writes over 16 KiB (4 LPNs, inside one open unit) program nothing,
    // while over 1 GiB each write takes its own slot.
    let mut amplification = |size: &str| {
        let text = format!(
            "access = \"randwrite\"\nblock_size = \"4k\"\nsize = \"{size}\"\nios_limit = 2000"
        );
        sim.run_job(&job(&text), None).unwrap();
        sim.tests().last().unwrap().write_amplification.unwrap()
    };
    let (hot, spread) = (amplification("16k"), amplification("1g"));
    assert!(hot < 0.01, "16 KiB span: write amplification {hot}");
    assert!(spread > 0.95, "1 GiB span: write amplification {spread}");
}

/// 4 KiB random writes at QD3 (calibration source anandtech-2973's test) on the C300, with its write data received
/// in line by the firmware core or taken by a DMA engine, behind the 890GX's 6 Gb/s port or the
/// X58's 3 Gb/s one.
fn c300_qd3_write_iops(in_line: bool, port: &str) -> f64 {
    let mut sim = probe(
        "c300-256",
        include_str!("../../../catalog/drives/c300-256.toml"),
        "write_data_in_line = true",
        &format!("write_data_in_line = {in_line}"),
        port,
    );
    let j = job("access = \"randwrite\"\nqueue_depth = 3\nsize = \"8g\"\nduration_s = 0.1");
    sim.run_job(&j, None).unwrap().result.write.iops
}

#[test]
fn writes_whose_data_a_core_receives_in_line_follow_the_link_rate_at_low_queue_depth() {
    // A DMA engine taking the data leaves the core to commands: three writes in flight wait
    // on the path's latency, and the 3 Gb/s link (busy 22 of every 86 us) costs nothing. A
    // core receiving each write's data serves one write per data phase plus its 10 us
    // command, handshakes and round trip included: at 3 Gb/s that cycle, not the latency,
    // bounds three writes in flight.
    let in_line_6 = c300_qd3_write_iops(true, "890gx/sb850");
    let in_line_3 = c300_qd3_write_iops(true, "x58/ich10");
    assert!(
        (1.15..1.6).contains(&(in_line_6 / in_line_3)),
        "{in_line_6:.0} / {in_line_3:.0} IOPS"
    );
    assert!(
        in_line_3 < 1e9 / (10_000.0 + 4096.0 / 0.3),
        "{in_line_3:.0} IOPS"
    );
    let dma_6 = c300_qd3_write_iops(false, "890gx/sb850");
    let dma_3 = c300_qd3_write_iops(false, "x58/ich10");
    assert!(
        (dma_6 / dma_3 - 1.0).abs() < 0.05,
        "{dma_6:.0} / {dma_3:.0} IOPS"
    );
}

/// Runs the job `text` on `sim` and returns the model's report of it.
fn report_of(sim: &mut SimSetup, text: &str) -> iolab_sim::TestReport {
    sim.run_job(&job(text), None).unwrap();
    sim.tests().last().unwrap().clone()
}

#[test]
fn a_short_job_from_the_steady_state_is_charged_only_the_collections_run_during_it() {
    // The analytic steady state leaves collections running for up to a second. Charged whole
    // to the first job, 100 writes (1.4 ms) reported 7.7 kW and a write amplification of
    // 2,500; charged as they run, the drive stays near its 25 W limit, and the pages those
    // collections move in a later job are that job's.
    let mut sim = open("sim:ssd750-1200@z97/cpu", None).unwrap();
    sim.precondition_steady();
    let first = report_of(
        &mut sim,
        "access = \"randwrite\"\nqueue_depth = 1\nios_limit = 100",
    );
    assert!(first.avg_power_w < 26.0, "{first:?}");
    assert!(first.write_amplification.unwrap() < 20.0, "{first:?}");
    let second = report_of(
        &mut sim,
        "access = \"randwrite\"\nqueue_depth = 1\nduration_s = 0.2",
    );
    assert!(
        second.write_amplification.unwrap() > 1.5,
        "the collections still running are charged as they run: {second:?}"
    );
}

/// Paced reads, one per millisecond from when the run starts.
struct PacedReads {
    start_ns: u64,
    left: u64,
}

impl iolab_engine::driver::RequestSource for PacedReads {
    fn paced(&self) -> bool {
        true
    }
    fn start_at(&mut self, t_ns: u64) {
        self.start_ns = t_ns;
    }
    fn next_planned(&mut self) -> Option<iolab_engine::driver::Planned> {
        self.left = self.left.checked_sub(1)?;
        Some(iolab_engine::driver::Planned {
            req: iolab_core::workload::IoRequest {
                dir: iolab_core::job::Direction::Read,
                offset: self.left * 4096,
                len: 4096,
            },
            at_ns: Some(self.start_ns + (100 - self.left) * 1_000_000),
        })
    }
}

#[test]
fn paced_requests_are_timed_from_the_start_of_their_run_not_of_the_model() {
    // A trace replayed after a fill: its timestamps count from when the replay starts. Counted
    // from the model's time zero, every latency held the fill's second.
    let mut sim = open("sim:ssd750-400@z97/cpu", None).unwrap();
    sim.run_job(
        &job("access = \"write\"\nsize = \"1g\"\nduration_s = 1"),
        None,
    )
    .unwrap();
    let reads = job("access = \"randread\"\nsize = \"1g\"");
    let worker = iolab_engine::driver::Worker {
        index: 0,
        source: PacedReads {
            start_ns: 0,
            left: 100,
        },
        data: iolab_core::data::DataGenerator::new(&reads, 1),
        queue_depth: 4,
        spare_slots: 0,
    };
    let r = sim.run_workers(&reads, vec![worker], None).unwrap().result;
    assert_eq!(r.read.ios, 100);
    assert!(r.read.lat_ns.max < 10_000_000, "{:?}", r.read.lat_ns);
}

#[test]
fn a_tier_reports_the_hosts_reads_only_and_no_write_amplification_when_the_job_wrote_nothing() {
    // Random reads on StoreMI come from the disk (9 ms each); its mover meanwhile copies hot
    // extents to the SSD and reads them back out of the SSD's write buffer. Those copies
    // made the job's reads "99.9 % from the write buffer", with a write amplification.
    let mut sim = open("sim:storemi@x470", None).unwrap();
    sim.precondition_fill();
    let t = report_of(
        &mut sim,
        "access = \"randread\"\nsize = \"1g\"\nduration_s = 2\nramp_s = 1",
    );
    assert_eq!(t.write_amplification, None, "{t:?}");
    assert!(t.reads_from_buffer.is_none_or(|r| r < 0.5), "{t:?}");
}

#[test]
fn only_a_resource_the_host_waited_for_is_named_the_bottleneck() {
    let bottleneck = |sim: &mut SimSetup, text: &str| {
        sim.run_job(&job(text), None).unwrap();
        sim.tests().last().unwrap().bottleneck.clone()
    };
    // A short burst of writes that the disk's cache takes whole (fewer than its 128
    // segments): the actuator destages in the background, and the link is what the writes
    // waited for.
    let mut hdd = open("sim:hdd-7200@h67", None).unwrap();
    let burst = "access = \"randwrite\"\nqueue_depth = 32\nios_limit = 100";
    let named = bottleneck(&mut hdd, burst);
    assert!(!named.contains("actuator"), "{named}");
    // Long enough to fill the cache, the writes wait for the actuator.
    let named = bottleneck(
        &mut hdd,
        "access = \"randwrite\"\nqueue_depth = 32\nduration_s = 5",
    );
    assert!(named.contains("actuator"), "{named}");
    // A power limit that leaves NAND work almost nothing holds reads and programs alike (one
    // that holds nothing is not named: see the power limit's tests below). Filled: reads of
    // data never written are answered with zeros, without NAND work.
    let mut cat = Catalog::load(None).unwrap();
    let text = include_str!("../../../catalog/drives/ssd750-400.toml")
        .replace("name = \"ssd750-400\"", "name = \"starved\"")
        .replace("max_w = 25.0", "max_w = 4.5");
    cat.add_drive("user/drives/starved.toml", &text).unwrap();
    let mut ssd = open_with("sim:starved@z97/cpu", cat).unwrap();
    ssd.precondition_fill();
    for access in ["read", "write"] {
        let text = format!(
            "access = \"{access}\"\nblock_size = \"128k\"\nqueue_depth = 32\nduration_s = 1"
        );
        let named = bottleneck(&mut ssd, &text);
        assert!(named.contains("power limit"), "{access}: {named}");
    }
}

/// A small SATA SSD (1 GB on 2 GiB of NAND), for entries built from scratch.
const SMALL_SSD: &str = r#"
name = "small"
title = "A small SATA SSD"
kind = "ssd"
source = "test entry"

[interface]
link = "sata6"
protocol = "ahci"
source = "test entry"

[capacity]
usable_bytes = 1000000000
source = "test entry"

[controller]
command_ns = 20000
latency_ns = 20000
queue_depth = 32
source = "test entry"

[buffer]
bytes = 33554432
source = "test entry"

[nand]
channels = 4
dies = 8
planes = 2
page_bytes = 4096
pages_per_block = 128
blocks_per_plane = 256
read_ns = 50000
program_ns = 1200000
erase_ns = 2000000
bus_mt_per_s = 133.0
source = "test entry"

[ftl]
source = "test entry"
"#;

/// A drive that would never collect (a GC threshold of 0 free blocks: a die's free space is
/// never below it) wrote random data to a full drive at a write amplification of 1.00, more
/// bytes than its NAND holds. It is refused; one block, the least the threshold can be, works.
#[test]
fn a_gc_threshold_of_no_free_blocks_is_refused() {
    let never = SMALL_SSD.replace("[ftl]\n", "[ftl]\ngc_free_blocks = 0\n");
    assert_drive_refused(
        "user/drives/small.toml",
        &never,
        "small.toml: ftl.gc_free_blocks: must be at least 1",
    );
    let mut cat = Catalog::load(None).unwrap();
    let one = SMALL_SSD.replace("[ftl]\n", "[ftl]\ngc_free_blocks = 1\n");
    cat.add_drive("user/drives/small.toml", &one).unwrap();
    let mut sim = open_with("sim:small@z97/sata", cat).unwrap();
    sim.precondition_steady();
    let w = job("access = \"randwrite\"\nqueue_depth = 32\nduration_s = 1");
    sim.run_job(&w, None).unwrap();
    let wa = sim.tests().last().unwrap().write_amplification.unwrap();
    // Half the NAND is spare, so the amplification is low, but there is one (it was 1.00).
    assert!(wa > 1.1, "steady-state write amplification {wa}");
}

/// An interface naming one of the entry's own [links] loaded (the error for an unknown one even
/// said to define [links.X]) and failed when used: "'mylink' is not a standard link". Load and
/// use now agree: it is refused at load, and the message no longer suggests a [links] table.
#[test]
fn an_interface_naming_an_entrys_own_link_is_refused_at_load() {
    let own = SMALL_SSD
        .replace("link = \"sata6\"", "link = \"mylink\"")
        .replace(
            "[capacity]",
            "[links.mylink]\nlink = \"sata6\"\nsource = \"test entry\"\n\n[capacity]",
        );
    assert_drive_refused(
        "user/drives/small.toml",
        &own,
        "small.toml: interface.link: 'mylink' names one of this entry's [links], which serve \
         card.path only",
    );
    let unknown = SMALL_SSD.replace("link = \"sata6\"", "link = \"mylink\"");
    let e = Catalog::default()
        .add_drive("user/drives/small.toml", &unknown)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("small.toml: interface.link: unknown link 'mylink'") && !e.contains("[links."),
        "{e}"
    );
}

/// Loads the built-in catalog with `files` (name, text) as a user directory's `drives/`;
/// `tag` keeps the directories of tests running at once apart.
fn load_user_drives(tag: &str, files: &[(&str, String)]) -> Result<Catalog, String> {
    let dir = std::env::temp_dir().join(format!("iolab-sim-{tag}-{}", std::process::id()));
    let drives = dir.join("drives");
    std::fs::create_dir_all(&drives).unwrap();
    for (name, text) in files {
        std::fs::write(drives.join(name), text).unwrap();
    }
    let cat = Catalog::load(Some(&dir)).map_err(|e| e.to_string());
    std::fs::remove_dir_all(&dir).unwrap();
    cat
}

/// A card whose chip's ports its member cannot train to (a SATA 3 Gb/s SF-1200 behind PCIe)
/// loaded, and on use build.rs said the member "cannot attach to a SATA port": refused at
/// load, naming the card's file and key and the member's interface.
#[test]
fn a_card_member_link_the_member_cannot_train_to_is_refused() {
    let card = include_str!("../../../catalog/drives/revodrive-120.toml")
        .replace("name = \"revodrive-120\"", "name = \"mycard\"")
        .replace("member_link = \"sata3\"", "member_link = \"pcie3x4\"");
    let e = load_user_drives("member-link", &[("card.toml", card)])
        .map(|_| ())
        .unwrap_err();
    assert!(
        e.contains("card.toml: card.member_link: 'pcie3x4' cannot carry the member 'sf1200-60'")
            && e.contains("whose interface is sata3"),
        "{e}"
    );
}

/// A tier whose fast share holds no extent (0, or 4 KiB with 1 MiB extents) loaded and ran as
/// its bare hard disk: the fast drive must hold at least one extent.
#[test]
fn a_tier_whose_fast_share_holds_no_extent_is_refused() {
    let storemi = include_str!("../../../catalog/drives/storemi.toml");
    for fast in ["0", "4096", "1048575"] {
        let text = storemi.replace("fast_bytes = 256000000000", &format!("fast_bytes = {fast}"));
        assert_drive_refused(
            "user/drives/tier.toml",
            &text,
            &format!(
                "tier.toml: tiered.fast_bytes: {fast} holds no extent of tiered.extent_bytes = 1048576"
            ),
        );
    }
    let one = storemi.replace("fast_bytes = 256000000000", "fast_bytes = 1048576");
    Catalog::default()
        .add_drive("user/drives/tier.toml", &one)
        .unwrap();
}

/// A tier promoting after 0 accesses (an extent is counted before it is compared, so it never
/// equals 0) or after more than 255 (the count stops at 255) loaded and never promoted
/// anything: the volume ran as its bare hard disk. Refused naming the key.
#[test]
fn a_tier_promotion_count_the_model_never_reaches_is_refused() {
    let storemi = include_str!("../../../catalog/drives/storemi.toml");
    assert!(storemi.contains("promote_after = 2"));
    for count in ["0", "256", "4000000000"] {
        assert_drive_refused(
            "user/drives/tier.toml",
            &storemi.replace("promote_after = 2", &format!("promote_after = {count}")),
            &format!("tier.toml: tiered.promote_after: {count} "),
        );
    }
    for count in ["1", "255"] {
        let text = storemi.replace("promote_after = 2", &format!("promote_after = {count}"));
        Catalog::default()
            .add_drive("user/drives/tier.toml", &text)
            .unwrap();
    }
}

/// A tier over a disk of 9 EB loaded, and using it aborted the process allocating 68 TB for
/// its table of extents: a tier of more extents than the model keeps is refused naming the
/// file, the key and the slow drive.
#[test]
fn a_tier_of_more_extents_than_the_model_keeps_is_refused() {
    let huge = include_str!("../../../catalog/drives/hdd-7200.toml")
        .replace("name = \"hdd-7200\"", "name = \"huge\"")
        .replace(
            "capacity_bytes = 1000204886016",
            "capacity_bytes = 9000000000000000000",
        );
    let tier = include_str!("../../../catalog/drives/storemi.toml")
        .replace("name = \"storemi\"", "name = \"mytier\"")
        .replace("slow = \"hdd-7200\"", "slow = \"huge\"");
    let e = load_user_drives(
        "tier-extents",
        &[("huge.toml", huge.clone()), ("tier.toml", tier.clone())],
    )
    .map(|_| ())
    .unwrap_err();
    assert!(
        e.contains("tier.toml: tiered.extent_bytes:")
            && e.contains("extents")
            && e.contains("'huge'"),
        "{e}"
    );
    // Replacing the built-in disk with such a one leaves the built-in tiers unusable, not
    // the catalog.
    let cat = load_user_drives(
        "tier-extents-builtin",
        &[(
            "hdd.toml",
            huge.replace("name = \"huge\"", "name = \"hdd-7200\""),
        )],
    )
    .unwrap();
    let e = open_with("sim:storemi@x470", cat)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("tiered.extent_bytes") && e.contains("extents"),
        "{e}"
    );
}

/// A platform RAID volume over a SATA and a PCIe port loaded, though no drive attaches to
/// both and so nothing could use it: refused naming the port's members.
#[test]
fn a_raid_port_over_sata_and_pcie_ports_is_refused() {
    let z97 = include_str!("../../../catalog/platforms/z97.toml");
    let from = "members = [\"sata\", \"sata2\", \"sata3\", \"sata4\"]";
    assert!(z97.contains(from));
    let mixed = z97.replace(from, "members = [\"sata\", \"pch-m2\"]");
    let e = Catalog::default()
        .add_platform("user/platforms/z97.toml", &mixed)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("z97.toml: ports.sata-raid0.raid.members: 'sata' is a")
            && e.contains("'pch-m2' a")
            && e.contains("no drive attaches to both"),
        "{e}"
    );
}

/// A RAID port's own `path`, `slot` and `hba` were silently ignored (a `path` of PCIe 1.0 x1
/// left Z270's RAID-0 reading at 3.6 GB/s): its members attach through their own ports, so
/// each is refused naming the key and where the value belongs.
#[test]
fn a_raid_port_with_a_path_slot_or_hba_of_its_own_is_refused() {
    let z270 = include_str!("../../../catalog/platforms/z270.toml");
    let from = "driver = \"rst\"\nraid =";
    assert!(z270.contains(from));
    for (line, key) in [
        ("path = [\"pcie1x1\"]", "path"),
        ("slot = \"pcie3x4\"", "slot"),
        ("hba = \"pch\"", "hba"),
    ] {
        let text = z270.replace(from, &format!("driver = \"rst\"\n{line}\nraid ="));
        assert_platform_refused(
            "user/platforms/z270.toml",
            &text,
            &format!("z270.toml: ports.raid0.{key}: a RAID port"),
        );
    }
}

/// Link keys the model never reads were silently ignored: `half_duplex` on a standard link
/// (whose standard sets it), a payload size on a custom pipe or a SATA link (no TLPs), and on
/// a tiered drive's interface (its members attach with their own). Each is refused naming the
/// key.
#[test]
fn a_link_key_the_model_would_ignore_is_refused() {
    let z97 = include_str!("../../../catalog/platforms/z97.toml");
    let from = "link = \"dmi2\"\n";
    assert!(z97.contains(from));
    assert_platform_refused(
        "user/platforms/z97.toml",
        &z97.replace(from, "link = \"dmi2\"\nhalf_duplex = true\n"),
        "z97.toml: links.dmi.half_duplex: ",
    );
    assert_platform_refused(
        "user/platforms/z97.toml",
        &z97.replace(from, "link = \"sata6\"\n"),
        "z97.toml: links.dmi.max_payload_bytes: ",
    );
    let ibis = include_str!("../../../catalog/drives/ibis-100.toml");
    let from = "bytes_per_s = 1000000000.0\n";
    assert!(ibis.contains(from));
    assert_drive_refused(
        "user/drives/card.toml",
        &ibis.replace(
            from,
            "bytes_per_s = 1000000000.0\nmax_payload_bytes = 256\n",
        ),
        "card.toml: links.hsdl.max_payload_bytes: ",
    );
    let c300 = include_str!("../../../catalog/drives/c300-256.toml");
    let from = "link = \"sata6\"\n";
    assert!(c300.contains(from));
    assert_drive_refused(
        "user/drives/sata.toml",
        &c300.replace(from, "link = \"sata6\"\nmax_payload_bytes = 256\n"),
        "sata.toml: interface.max_payload_bytes: ",
    );
    let storemi = include_str!("../../../catalog/drives/storemi.toml");
    let from = "link = \"pcie3x4\"\n";
    assert!(storemi.contains(from));
    assert_drive_refused(
        "user/drives/tier.toml",
        &storemi.replace(from, "link = \"pcie3x4\"\nmax_payload_bytes = 256\n"),
        "tier.toml: interface.max_payload_bytes: ",
    );
}

/// A card's `interface.max_payload_bytes` was silently ignored (its PCIe edge always framed
/// 256-byte TLPs): an IBIS 240, held by its PCIe 1.0 x4 edge, read as fast with 128-byte TLPs.
/// Its edge now frames the TLPs its entry gives, as a drive's does.
#[test]
fn a_cards_pcie_edge_frames_the_payload_size_its_entry_gives() {
    // Without its PCI-X bus's bursts, whose overhead would hold the card below its edge.
    let entry = include_str!("../../../catalog/drives/ibis-240.toml");
    assert!(entry.contains(PCIX_BURSTS));
    let entry = entry.replace(PCIX_BURSTS, "");
    let seq_read = |mps: u32| {
        let mut sim = probe(
            "ibis-240",
            &entry,
            "link = \"pcie1x4\"\n",
            &format!("link = \"pcie1x4\"\nmax_payload_bytes = {mps}\n"),
            "x58/ioh-x16",
        );
        // Compressible data: the SF-1200 members' channels carry incompressible data whole,
        // at NAND speed, and would be the limit instead of the edge.
        let fill = job("access = \"write\"\nblock_size = \"1m\"\nqueue_depth = 32\nsize = \"8g\"\ndata = \"zeros\"");
        sim.run_job(&fill, None).unwrap();
        let j = job("access = \"read\"\nblock_size = \"128k\"\nqueue_depth = 32\nsize = \"8g\"\nduration_s = 0.1");
        let r = sim.run_job(&j, None).unwrap().result;
        let limit = sim.tests().last().unwrap().bottleneck.clone();
        (r.read.bytes as f64 / 0.1 / 1e6, limit)
    };
    let (small, limit) = seq_read(128);
    assert!(limit.contains("edge"), "{limit}");
    let (default, _) = seq_read(256);
    assert!(
        small < 0.97 * default,
        "128 B: {small:.0} MB/s, 256 B: {default:.0} MB/s"
    );
}

/// A stripe size on a JBOD (a card's or a platform RAID port's), which concatenates its
/// members and stripes nothing, was silently ignored: refused naming the key.
#[test]
fn a_stripe_size_on_a_jbod_is_refused() {
    let card = include_str!("../../../catalog/drives/revodrive-120-jbod.toml");
    let from = "raid = \"jbod\"\n";
    assert!(card.contains(from));
    assert_drive_refused(
        "user/drives/card.toml",
        &card.replace(from, "raid = \"jbod\"\nstripe_bytes = 65536\n"),
        "card.toml: card.stripe_bytes: a jbod",
    );
    let z270 = include_str!("../../../catalog/platforms/z270.toml");
    let from = "level = \"raid0\"";
    assert!(z270.contains(from));
    assert_platform_refused(
        "user/platforms/z270.toml",
        &z270.replace(from, "level = \"jbod\""),
        "z270.toml: ports.raid0.raid.stripe_bytes: a jbod",
    );
}

/// A table the entry's kind does not read (an [hdd] table on an SSD, a [card] table on a hard
/// disk) was silently ignored: it is refused naming the table and the kind.
#[test]
fn a_table_of_another_kind_of_drive_is_refused() {
    let hdd = include_str!("../../../catalog/drives/hdd-7200.toml");
    let hdd_table = &hdd[hdd.find("[hdd]").unwrap()..hdd.find("[power]").unwrap()];
    let ssd_with_hdd = format!("{SMALL_SSD}\n{hdd_table}");
    assert_drive_refused(
        "user/drives/small.toml",
        &ssd_with_hdd,
        "small.toml: hdd: a drive of kind \"ssd\" has no [hdd] table",
    );
    let card = include_str!("../../../catalog/drives/revodrive-120.toml");
    let card_table = &card[card.find("[card]").unwrap()..card.find("[links.pcix133]").unwrap()];
    let hdd_with_card = format!("{hdd}\n{card_table}");
    assert_drive_refused(
        "user/drives/disk.toml",
        &hdd_with_card,
        "disk.toml: card: a drive of kind \"hdd\" has no [card] table",
    );
    // A card's own links serve its path only.
    let card_links = &card[card.find("[links.pcix133]").unwrap()..];
    let ssd_with_links = format!("{SMALL_SSD}\n{card_links}");
    assert_drive_refused(
        "user/drives/small.toml",
        &ssd_with_links,
        "small.toml: links: a drive of kind \"ssd\" has no [links] table",
    );
}

/// A spindle speed no disk has (0.001 rpm: a revolution of 17 hours, 0 IOPS) and a
/// controller of no cores (taken as 1 without a word) are refused naming the key.
#[test]
fn a_disk_spinning_at_no_sane_speed_and_a_controller_of_no_cores_are_refused() {
    let hdd = include_str!("../../../catalog/drives/hdd-7200.toml");
    for rpm in ["0.001", "500.0", "100000.0"] {
        let text = hdd.replace("rpm = 7200.0", &format!("rpm = {rpm}"));
        assert_drive_refused("user/drives/disk.toml", &text, "disk.toml: hdd.rpm: ");
    }
    for rpm in ["5400.0", "15000.0"] {
        let text = hdd.replace("rpm = 7200.0", &format!("rpm = {rpm}"));
        Catalog::default()
            .add_drive("user/drives/disk.toml", &text)
            .unwrap();
    }
    let no_cores = SMALL_SSD.replace("command_ns = 20000", "command_ns = 20000\ncores = 0");
    assert_drive_refused(
        "user/drives/small.toml",
        &no_cores,
        "small.toml: controller.cores: must be 1 to 256",
    );
}

/// Replacing a built-in drive by name (documented) made every command with that catalog fail:
/// the built-in entries using it were checked against the replacement at load (rst-cache's
/// 60 GB cache on a 1 GB drive), and the error named `catalog/drives/rst-cache.toml`, a file
/// the user does not have. The catalog now loads; such an entry is refused when used, saying
/// it is built in, which of the user's files it depends on, and what to do.
#[test]
fn replacing_a_built_in_drive_breaks_only_the_built_in_entries_that_use_it_when_used() {
    let small = SMALL_SSD.replace("name = \"small\"", "name = \"nvme2018-500\"");
    let cat = load_user_drives("override", &[("nvme.toml", small)]).unwrap();
    // The replacement itself and entries not using it work.
    open_with("sim:nvme2018-500@z270", cat.clone()).unwrap();
    open_with("sim:hdd-7200@z270", cat.clone()).unwrap();
    let e = open_with("sim:rst-cache@z270/sata", cat.clone())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains(
            "drives/nvme.toml: name: replacing the built-in 'nvme2018-500' breaks the \
                    built-in entry rst-cache (catalog/drives/rst-cache.toml, built in)"
        ) && e.contains("tiered.fast_bytes")
            && e.contains("override it too (an entry named rst-cache in ")
            && e.contains("or give your entry another name than 'nvme2018-500'"),
        "{e}"
    );
    let e = open_with("sim:storemi@x470", cat)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("the built-in entry storemi ("), "{e}");
    // A user's own entry that does not fit the replacement is still refused at load: it is
    // the user's file to fix.
    let tier = include_str!("../../../catalog/drives/rst-cache.toml")
        .replace("name = \"rst-cache\"", "name = \"my-cache\"");
    let small = SMALL_SSD.replace("name = \"small\"", "name = \"nvme2018-500\"");
    let e = load_user_drives("override2", &[("nvme.toml", small), ("cache.toml", tier)])
        .map(|_| ())
        .unwrap_err();
    assert!(e.contains("cache.toml: tiered.fast_bytes"), "{e}");
}

/// An empty top-level source was reported as key `.source`, and a missing table as "a Ssd
/// drive needs…" (the Rust variant's name): the key is `source`, the kind as written.
#[test]
fn a_missing_source_or_table_is_named_as_the_entry_writes_it() {
    let no_source = SMALL_SSD.replacen("source = \"test entry\"", "source = \"\"", 1);
    assert_drive_refused(
        "user/drives/small.toml",
        &no_source,
        "small.toml: source: every table must cite",
    );
    let z97 = include_str!("../../../catalog/platforms/z97.toml");
    let top = z97.find("\nsource = ").unwrap() + 1;
    let end = top + z97[top..].find('\n').unwrap();
    let no_source = format!("{}source = \"\"{}", &z97[..top], &z97[end..]);
    assert_platform_refused(
        "user/platforms/z97.toml",
        &no_source,
        "z97.toml: source: every table must cite",
    );
    let start = SMALL_SSD.find("[nand]").unwrap();
    let end = SMALL_SSD.find("[ftl]").unwrap();
    let no_nand = format!("{}{}", &SMALL_SSD[..start], &SMALL_SSD[end..]);
    assert_drive_refused(
        "user/drives/small.toml",
        &no_nand,
        "small.toml: nand: a drive of kind \"ssd\" needs a [nand] table",
    );
}

/// A catalog file named `*.TOML` was skipped without a word, while job files are taken by
/// their extension in any case: catalog files are too.
#[test]
fn catalog_files_are_taken_by_their_extension_in_any_case() {
    let text = SMALL_SSD.replace("name = \"small\"", "name = \"shouting\"");
    let cat = load_user_drives("upper", &[("SMALL.TOML", text.clone())]).unwrap();
    assert!(cat.drives.contains_key("shouting"));
    let cat = load_user_drives("mixed", &[("small.Toml", text)]).unwrap();
    assert!(cat.drives.contains_key("shouting"));
}

/// Runs `f` with a user catalog directory whose `drives/` holds the SSD 750 400GB as entry
/// `name`, its power limit `max_w` (none: no limit); `tag` keeps directories of tests running
/// at once apart. The directory is removed before the result is looked at.
fn with_limited_ssd750<T>(
    tag: &str,
    name: &str,
    max_w: Option<f64>,
    f: impl FnOnce(&std::path::Path) -> T,
) -> T {
    let limit = max_w.map_or(String::new(), |w| format!("max_w = {w:?}"));
    let text = include_str!("../../../catalog/drives/ssd750-400.toml")
        .replace("name = \"ssd750-400\"", &format!("name = \"{name}\""))
        .replace("max_w = 25.0", &limit);
    let dir = std::env::temp_dir().join(format!("iolab-sim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("drives")).unwrap();
    std::fs::write(dir.join(format!("drives/{name}.toml")), text).unwrap();
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&dir)));
    std::fs::remove_dir_all(&dir).unwrap();
    out.unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// 4 KiB random reads at QD32 for `seconds`.
fn rand_read_qd32(seconds: f64) -> Job {
    job(&format!(
        "access = \"randread\"\nqueue_depth = 32\nsize = \"16g\"\nduration_s = {seconds}"
    ))
}

/// IOPS and report of 4 KiB random reads at QD32 for `seconds` on a freshly filled `spec`,
/// then the average power of each of `windows` jobs of 50 ms that follow it.
fn read_qd32_on(
    spec: &str,
    dir: &std::path::Path,
    seconds: f64,
    windows: usize,
) -> (f64, iolab_sim::TestReport, Vec<f64>) {
    let mut sim = open(spec, Some(dir)).unwrap();
    sim.precondition_fill();
    let iops = sim
        .run_job(&rand_read_qd32(seconds), None)
        .unwrap()
        .result
        .read
        .iops;
    let report = sim.tests().last().unwrap().clone();
    let watts = (0..windows)
        .map(|_| {
            sim.run_job(&rand_read_qd32(0.05), None).unwrap();
            sim.tests().last().unwrap().avg_power_w
        })
        .collect();
    (iops, report, watts)
}

/// The watts of `test` in `iolab sim explain`'s table `text`, and its line.
fn explain_watts(text: &str, test: &str) -> (f64, String) {
    let line = text.lines().find(|l| l.contains(test)).unwrap();
    // The test's name, MB/s, IOPS, then watts.
    let words = test.split_whitespace().count();
    let watts = line
        .split_whitespace()
        .nth(words + 2)
        .unwrap()
        .parse()
        .unwrap();
    (watts, line.to_string())
}

#[test]
fn a_power_limit_below_the_read_power_holds_reads_to_it() {
    // The SSD 750 400GB reads 4 KiB at QD32 at about 8.5 W (its spec: 9 W). Limited to 7 W, its
    // reads wait for the power budget as its programs do; charged and never held, they drew
    // 8.5 W against the 7 W limit.
    let max_w = 7.0;
    let (free_iops, free, _) = with_limited_ssd750("read-limit-off", "free750", None, |dir| {
        read_qd32_on("sim:free750@z97/cpu", dir, 1.0, 0)
    });
    let ((held_iops, held, windows), explained) =
        with_limited_ssd750("read-limit-on", "held750", Some(max_w), |dir| {
            let text = iolab_sim::explain("sim:held750@z97/cpu", Some(dir)).unwrap();
            (read_qd32_on("sim:held750@z97/cpu", dir, 1.0, 6), text)
        });
    assert!(free.avg_power_w > max_w + 1.0, "{free:?}");
    assert!(!free.bottleneck.contains("power limit"), "{free:?}");
    assert!(held_iops < 0.85 * free_iops, "{held_iops} vs {free_iops}");
    assert!(held.bottleneck.contains("power limit (7 W)"), "{held:?}");
    // The budget (7 W less the 4 W idle) lets 100 ms of itself through unheld where a job
    // starts on a rested drive, 0.3 J: over a first second, 0.3 W above the limit.
    let burst_w = |seconds: f64| (max_w - 4.0) * 0.1 / seconds;
    assert!(held.avg_power_w <= max_w + burst_w(1.0) + 0.01, "{held:?}");
    // Past it, every 50 ms window keeps to the limit.
    assert!(windows.iter().all(|&w| w <= max_w + 0.01), "{windows:?}");
    let (watts, line) = explain_watts(&explained, "4K random read QD32");
    assert!(line.contains("power limit (7 W)"), "{line}");
    assert!(watts <= max_w + burst_w(1.3) + 0.05, "{line}");
}

#[test]
fn a_power_limit_the_reads_stay_under_is_not_named_the_bottleneck() {
    // The same reads under an 11.5 W limit draw 10.5 W: 6.5 W of the 7.5 W the limit leaves
    // above idle, its budget busy 87 % of the time and more than any other resource, but
    // never holding a read back. The limit changes nothing then, and is not what limits them.
    let (free_iops, free, _) = with_limited_ssd750("under-limit-off", "open750", None, |dir| {
        read_qd32_on("sim:open750@z97/cpu", dir, 0.5, 0)
    });
    let (iops, under, _) = with_limited_ssd750("under-limit-on", "under750", Some(11.5), |dir| {
        read_qd32_on("sim:under750@z97/cpu", dir, 0.5, 0)
    });
    assert_eq!((iops, under.avg_power_w), (free_iops, free.avg_power_w));
    assert!(under.avg_power_w < 11.5, "{under:?}");
    assert!(!under.bottleneck.contains("power limit"), "{under:?}");
}

#[test]
fn a_power_limit_holds_mixes_of_reads_and_writes_to_it() {
    // Reads and programs share the budget: past the first burst, no 50 ms window of a mix
    // draws more than the limit but for a wander of up to 1.4 % (the budget holds work where
    // it starts; a window reports the energy of the work that runs in it). Reads alone keep
    // within 0.01 W (the test above), and 0.25 s windows of these mixes within 0.02 W.
    let windows = with_limited_ssd750("mix-limit", "mixed750", Some(7.0), |dir| {
        let mut sim = open("sim:mixed750@z97/cpu", Some(dir)).unwrap();
        sim.precondition_fill();
        let mix = |access: &str, bs: &str, seconds: f64| {
            job(&format!(
                "access = \"{access}\"\nblock_size = \"{bs}\"\nqueue_depth = 32\nsize = \"16g\"\nduration_s = {seconds}"
            ))
        };
        sim.run_job(&mix("randrw", "4k", 0.3), None).unwrap();
        let mut windows = Vec::new();
        for (access, bs) in [("randrw", "4k"), ("rw", "128k"), ("randrw", "4k")] {
            for _ in 0..3 {
                let r = sim.run_job(&mix(access, bs, 0.05), None).unwrap().result;
                assert!(r.read.ios > 0 && r.write.ios > 0, "{access} {bs}");
                let t = sim.tests().last().unwrap();
                assert!(t.bottleneck.contains("power limit (7 W)"), "{t:?}");
                windows.push(t.avg_power_w);
            }
        }
        windows
    });
    assert!(windows.iter().all(|&w| w <= 7.0 * 1.02), "{windows:?}");
}

/// A catalog file that is empty, or not UTF-8, was refused with the parser's words alone
/// ("missing field `name`", "stream did not contain valid UTF-8"), which said neither what was
/// wrong with the file nor what to do; a hard disk's write cache larger than the disk loaded
/// and turned random writes into link-speed writes.
#[test]
fn an_empty_or_non_text_catalog_file_and_an_oversized_disk_cache_are_refused_plainly() {
    let e = load_user_drives("empty", &[("empty.toml", "# nothing yet\n\n".into())])
        .map(|_| ())
        .unwrap_err();
    assert!(
        e.contains("empty.toml: the file has no entry: a drive needs at least name"),
        "{e}"
    );
    let dir = std::env::temp_dir().join(format!("iolab-sim-latin1-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("platforms")).unwrap();
    std::fs::write(dir.join("platforms/latin1.toml"), b"name = \"caf\xe9\"\n").unwrap();
    let e = Catalog::load(Some(&dir))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        e.contains("latin1.toml: not UTF-8 text (byte 11 is not): save the file as UTF-8"),
        "{e}"
    );
    // One byte more than the 1 TB disk holds.
    let cache = include_str!("../../../catalog/drives/hdd-7200.toml").replace(
        "write_cache_bytes = 67108864",
        "write_cache_bytes = 1000204886017",
    );
    let e = load_user_drives("hdd-cache", &[("hdd.toml", cache)])
        .map(|_| ())
        .unwrap_err();
    assert!(
        e.contains("hdd.toml: hdd.write_cache_bytes:") && e.contains("more than the disk holds"),
        "{e}"
    );
}

/// A hard disk has no erase, fill or wear state to set, and its result does not claim one
/// (`--model-state steady` on sim:hdd-7200@h67 recorded "steady state of random writes
/// (analytic)", a fresh one "empty (secure-erased)"); a tier's SSD still gets its state.
#[test]
fn a_hard_disk_is_not_said_to_be_in_an_ssds_state() {
    let state = |sim: &SimSetup| sim.describe().state;
    let mut hdd = open("sim:hdd-7200@h67", None).unwrap();
    assert!(state(&hdd).starts_with("hard disk"), "{}", state(&hdd));
    hdd.precondition_steady();
    assert!(state(&hdd).starts_with("hard disk"), "{}", state(&hdd));
    hdd.precondition_fill();
    assert!(state(&hdd).starts_with("hard disk"), "{}", state(&hdd));
    let mut tier = open("sim:storemi@x470", None).unwrap();
    assert_eq!(state(&tier), "empty (secure-erased)");
    tier.precondition_steady();
    assert_eq!(state(&tier), "steady state of random writes (analytic)");
}

/// A job stopped before its first I/O (Ctrl-C during the fill before a replay) is not said to
/// be "latency-bound (busiest: none)".
#[test]
fn a_job_stopped_before_it_ran_names_no_bottleneck() {
    let mut sim = open("sim:ssd750-400@z97", None).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(true);
    let r = sim
        .run_job(&job("access = \"randread\"\nduration_s = 1"), Some(&stop))
        .unwrap();
    assert_eq!(r.result.read.ios, 0);
    let t = sim.tests().last().unwrap();
    assert_eq!(t.bottleneck, "none: nothing ran");
    assert_eq!(t.bottleneck_utilisation, 0.0);
}

/// A tier whose member attaches to no port of the platform is the volume refused, saying
/// which member and why, where the error named only the member ("drive 'hdd-7200' cannot be
/// used here: its SATA 6 Gb/s interface cannot attach to a PCIe 3.0 x4 (8 GT/s) port") to a
/// user who asked for sim:storemi@….
#[test]
fn a_tier_whose_member_fits_no_port_names_the_tier_and_the_member() {
    let mut cat = Catalog::load(None).unwrap();
    cat.add_platform(
        "user/platforms/m2only.toml",
        "name = \"m2only\"\ntitle = \"M.2 only\"\nsource = \"test\"\n\
         [drivers.nvme]\nlatency_ns = 2800\nqueue_depth = 4096\nsource = \"test\"\n\
         [ports.m2]\ntitle = \"M.2\"\nslot = \"pcie3x4\"\nsource = \"test\"\n",
    )
    .unwrap();
    let e = open_with("sim:storemi@m2only", cat)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with(
            "drive 'storemi' cannot be used here: its slow drive 'hdd-7200' has a SATA 6 Gb/s \
             interface, which attaches neither to the PCIe 3.0 x4"
        ),
        "{e}"
    );
}

/// A port's `driver` applied to any drive: a RevoDrive (SiI3124) on X470's RAIDXpert port ran
/// under AMD's NVMe RAID driver (`iolab sim explain sim:revodrive-120@x470/cpu-m2a-raidxpert`
/// printed "driver: raidxpert (22.8 µs per I/O)"). A port's driver drives only drives of its
/// `protocol`; any other is refused naming the port and the driver, and the ports that take it.
#[test]
fn a_ports_driver_is_refused_for_a_drive_of_another_protocol() {
    let e = open("sim:revodrive-120@x470/cpu-m2a-raidxpert", None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("port 'cpu-m2a-raidxpert' runs its drive under the 'raidxpert' driver")
            && e.contains("drives nvme drives, not sil3124 ones"),
        "{e}"
    );
    // With the platform given a SiI3124 driver, the plain slots take the card under it.
    let x470 = include_str!("../../../catalog/platforms/x470.toml");
    let with_sil = format!(
        "{x470}\n[drivers.sil3124]\nlatency_ns = 8000\nqueue_depth = 128\nsource = \"test\"\n"
    );
    let mut cat = Catalog::load(None).unwrap();
    cat.add_platform("user/platforms/x470.toml", &with_sil)
        .unwrap();
    let e = open_with("sim:revodrive-120@x470/cpu-m2a-raidxpert", cat.clone())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("'raidxpert' driver")
            && e.contains("ports of x470 that take it: cpu-m2a, cpu-m2b"),
        "{e}"
    );
    let sim = open_with("sim:revodrive-120@x470/cpu-m2a", cat).unwrap();
    assert_eq!(sim.describe().driver, "sil3124");
    // The drives the driver is for still run under it.
    let sim = open("sim:ssd750-400@x470/cpu-m2a-raidxpert", None).unwrap();
    assert_eq!(sim.describe().driver, "raidxpert");
    // A driver without a `protocol` drives drives of its own name's protocol only.
    let no_proto = x470.replace("protocol = \"nvme\"\n", "");
    let mut cat = Catalog::load(None).unwrap();
    cat.add_platform("user/platforms/x470.toml", &no_proto)
        .unwrap();
    let e = open_with("sim:ssd750-400@x470/cpu-m2a-raidxpert", cat)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("which drives raidxpert drives, not nvme ones"),
        "{e}"
    );
}

/// `iolab sim explain` gave the tests' span in GiB with one decimal: a drive under about
/// 4 GiB read "each over the first 0.0 GiB". The span reads right at any size.
#[test]
fn explain_gives_a_small_drives_test_span_in_a_unit_that_fits() {
    let dir = std::env::temp_dir().join(format!("iolab-sim-explain-span-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("drives")).unwrap();
    let text = include_str!("../../../catalog/drives/sf1200-25.toml")
        .replace("usable_bytes = 25000000000", "usable_bytes = 200000000")
        .replace("name = \"sf1200-25\"", "name = \"tiny\"");
    std::fs::write(dir.join("drives/tiny.toml"), text).unwrap();
    let out = iolab_sim::explain("sim:tiny@h67", Some(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
    let out = out.unwrap();
    assert!(
        out.contains("each over the first 47.7 MiB (a quarter"),
        "{out}"
    );
    let out = iolab_sim::explain("sim:ssd750-400@z97", None).unwrap();
    assert!(
        out.contains("each over the first 16.0 GiB (a quarter"),
        "{out}"
    );
}

/// A user's entry with a built-in's name replaced it without a word (a file copied to make a
/// new drive, its name not yet changed, took the original's place wherever it was named): the
/// catalog lists each replacement, and the same text as the built-in's replaces nothing.
#[test]
fn a_users_entry_with_a_built_ins_name_is_listed_as_replacing_it() {
    let original = include_str!("../../../catalog/drives/ssd750-400.toml");
    let changed = original.replace("Intel SSD 750 400GB", "my SSD 750, retuned");
    let cat = load_user_drives(
        "replaced",
        &[
            ("mine.toml", changed),
            (
                "copy.toml",
                include_str!("../../../catalog/drives/c300-256.toml").into(),
            ),
        ],
    )
    .unwrap();
    let replaced = cat.replaced_builtins();
    assert_eq!(replaced.len(), 1, "{replaced:?}");
    let r = &replaced[0];
    assert_eq!((r.kind, r.name.as_str()), ("drive", "ssd750-400"));
    assert!(r.user_file.ends_with("drives/mine.toml"), "{r:?}");
    assert_eq!(r.builtin_file, "catalog/drives/ssd750-400.toml");
    let said = r.to_string();
    assert!(
        said.contains("mine.toml replaces the built-in drive 'ssd750-400'")
            && said.contains("give its entry another name"),
        "{said}"
    );
    assert_eq!(cat.drives["ssd750-400"].1.title, "my SSD 750, retuned");
    // A platform likewise.
    let dir = std::env::temp_dir().join(format!("iolab-sim-replaced-p-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("platforms")).unwrap();
    let z97 = include_str!("../../../catalog/platforms/z97.toml")
        .replace("Intel Z97 + Haswell", "my Z97");
    std::fs::write(dir.join("platforms/z97.toml"), z97).unwrap();
    let cat = Catalog::load(Some(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
    let replaced = cat.unwrap().replaced_builtins().to_vec();
    assert_eq!(replaced.len(), 1, "{replaced:?}");
    assert_eq!(
        (replaced[0].kind, replaced[0].name.as_str()),
        ("platform", "z97")
    );
    // The built-in catalog alone replaces nothing.
    assert!(Catalog::load(None).unwrap().replaced_builtins().is_empty());
}

#[test]
fn a_thinking_job_pauses_in_virtual_time() {
    // 40 reads one at a time, a pause of 10 ms after every 10: 3 pauses between the 4 bursts,
    // so at least 30 ms of virtual time, and the same I/Os as without pauses.
    let run = |think: &str| {
        let mut sim = open("sim:ssd750-400@z97", None).unwrap();
        let j = job(&format!("access = \"randread\"\nios_limit = 40\n{think}"));
        sim.run_job(&j, None).unwrap().result
    };
    let plain = run("");
    let thinking = run("think_s = 0.01\nthink_blocks = 10");
    assert_eq!(thinking.read.ios, plain.read.ios);
    assert!(
        thinking.measured_ns >= plain.measured_ns + 30_000_000,
        "{} vs {}",
        thinking.measured_ns,
        plain.measured_ns
    );
    assert!(thinking.measured_ns < plain.measured_ns + 40_000_000);
}

#[test]
fn trim_jobs_on_a_model_report_their_trims() {
    let mut sim = open("sim:ssd750-400@z97/cpu", None).unwrap();
    sim.precondition_fill();
    let r = sim
        .run_job(
            &job("access = \"randtrim\"\nsize = \"64m\"\nqueue_depth = 8"),
            None,
        )
        .unwrap()
        .result;
    let trim = r.trim.expect("a trim direction");
    assert_eq!(trim.ios, (64 << 20) / 4096, "one pass over the span");
    assert_eq!((r.read.ios, r.write.ios), (0, 0));
    assert!(trim.iops > 0.0 && trim.lat_ns.mean > 0.0);
    let r = sim
        .run_job(
            &job("access = \"trimwrite\"\nsize = \"64m\"\nblock_size = \"128k\""),
            None,
        )
        .unwrap()
        .result;
    assert_eq!(r.trim.map(|t| t.ios), Some(512));
    assert_eq!(r.write.ios, 512);
    // A job without TRIMs has no trim direction in its result, as before.
    let r = sim
        .run_job(
            &job("access = \"randread\"\nsize = \"64m\"\nios_limit = 100"),
            None,
        )
        .unwrap()
        .result;
    assert!(r.trim.is_none());
    assert!(!serde_json::to_string(&r).unwrap().contains("trim"));
}

/// The PCI-X bus of the catalog's SF-1200 cards: 128-byte bursts, 5 clocks of 7.5 ns each
/// beyond their data, and a 6-clock request per 512 bytes the card reads from host memory.
const PCIX_BURSTS: &str =
    "bursts = { bytes = 128, overhead_ns = 37.5, read_request_bytes = 512, read_request_ns = 45.0 }\n";

#[test]
fn a_pci_x_bus_moves_data_in_bursts_and_the_cards_reads_of_host_memory_pay_for_their_requests() {
    // The RevoDrive x2's four SF-1200s could move more than its PCI-X bus: 128 KiB sequential
    // reads and compressible writes at QD32 run at what the bus carries. Each 128-byte burst
    // costs 37.5 ns besides its 120 ns of data; data toward the drives also costs a 45 ns
    // read request per 512 bytes. Without the bursts the card runs into its PCIe 1.0 x4 link.
    let rates = |with_bursts: bool| {
        let changed = if with_bursts { PCIX_BURSTS } else { "" };
        let mut sim = probe(
            "revodrive-x2-100",
            include_str!("../../../catalog/drives/revodrive-x2-100.toml"),
            PCIX_BURSTS,
            changed,
            "x58/ioh-x16",
        );
        // Zeros, which the SandForce members store in an eighth of their size: the members
        // have NAND time to spare, and the reads come back from what the writes left.
        let mut run = |access: &str| {
            let text = format!(
                "access = \"{access}\"\nblock_size = \"128k\"\nqueue_depth = 32\nsize = \"128m\"\n\
                 duration_s = 0.2\ndata = \"zeros\""
            );
            sim.run_job(&job(&text), None).unwrap().result
        };
        let write = run("write").write.bw_bytes_per_s;
        (run("read").read.bw_bytes_per_s, write)
    };
    let ns_per_byte = 1e9 / 1064e6;
    let burst_ns = 128.0 * ns_per_byte + 37.5;
    let toward_host = 128.0 / burst_ns * 1e9;
    let toward_drive = 128.0 / (burst_ns + 45.0 * 128.0 / 512.0) * 1e9;
    let (read, write) = rates(true);
    assert!(
        (read / toward_host - 1.0).abs() < 0.02,
        "read {read:.3e} B/s against {toward_host:.3e}"
    );
    assert!(
        (write / toward_drive - 1.0).abs() < 0.02,
        "write {write:.3e} B/s against {toward_drive:.3e}"
    );
    let (read_whole, write_whole) = rates(false);
    assert!(
        read_whole > 1.08 * read,
        "{read_whole:.3e} against {read:.3e} B/s"
    );
    assert!(
        write_whole > 1.15 * write,
        "{write_whole:.3e} against {write:.3e} B/s"
    );
}
