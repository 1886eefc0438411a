//! Table-driven: a built-in entry with one key changed is refused naming that key, for each
//! rule of each table; the entry unchanged loads.

use super::super::{Catalog, BUILTIN_DRIVES, BUILTIN_PLATFORMS};
use crate::SimError;

/// The built-in entry whose file name ends with `name`.
fn builtin(list: &[(&str, &str)], name: &str) -> toml::Table {
    let (_, text) = list
        .iter()
        .find(|(f, _)| f.ends_with(name))
        .unwrap_or_else(|| panic!("no built-in {name}"));
    text.parse().expect("a built-in parses")
}

/// Sets `path` (dotted: `table.key`, or deeper: `ports.sata.raid.level`) in `entry` to `value`
/// (a TOML value), or removes it.
fn with(mut entry: toml::Table, path: &str, value: Option<&str>) -> String {
    let mut tables: Vec<&str> = path.split('.').collect();
    let key = tables.pop().expect("a key");
    let mut t = &mut entry;
    for name in tables {
        t = t
            .get_mut(name)
            .and_then(|v| v.as_table_mut())
            .unwrap_or_else(|| panic!("no [{name}] in {path}"));
    }
    match value {
        Some(v) => {
            let parsed: toml::Table = format!("x = {v}").parse().expect("a TOML value");
            t.insert(key.into(), parsed["x"].clone());
        }
        None => {
            t.remove(key);
        }
    }
    toml::to_string(&entry).expect("serialises")
}

/// The key an error names, if it is a catalog rule's.
fn key_of(e: &SimError) -> Option<&str> {
    match e {
        SimError::Catalog { key, .. } => Some(key),
        _ => None,
    }
}

#[test]
fn the_built_in_entries_load_unchanged() {
    for (file, text) in BUILTIN_DRIVES {
        Catalog::default().add_drive(file, text).expect(file);
    }
    for (file, text) in BUILTIN_PLATFORMS {
        Catalog::default().add_platform(file, text).expect(file);
    }
}

#[test]
fn each_drive_rule_refuses_its_key() {
    // (entry, key changed, new value or None to remove it, the key the error names, words it says)
    let cases: &[(&str, &str, Option<&str>, &str, &str)] = &[
        (
            "ssd750-1200.toml",
            "source",
            Some("\"\""),
            "source",
            "source",
        ),
        (
            "ssd750-1200.toml",
            "interface.link",
            Some("\"usb3\""),
            "interface.link",
            "unknown link",
        ),
        (
            "ssd750-1200.toml",
            "kind",
            Some("\"hdd\""),
            "capacity",
            "no [capacity] table",
        ),
        (
            "ssd750-1200.toml",
            "nand.channels",
            Some("0"),
            "nand.channels",
            "",
        ),
        ("ssd750-1200.toml", "nand.dies", Some("91"), "nand.dies", ""),
        (
            "ssd750-1200.toml",
            "nand.page_bytes",
            Some("6000"),
            "nand.page_bytes",
            "4096",
        ),
        (
            "ssd750-1200.toml",
            "nand.bits_per_cell",
            Some("3"),
            "nand.bits_per_cell",
            "",
        ),
        (
            "ssd750-1200.toml",
            "capacity.usable_bytes",
            Some("1000"),
            "capacity.usable_bytes",
            "",
        ),
        (
            "ssd750-1200.toml",
            "capacity.usable_bytes",
            Some("1500000000000"),
            "capacity.usable_bytes",
            "raw NAND",
        ),
        (
            "ssd750-1200.toml",
            "ftl.gc_free_blocks",
            Some("0"),
            "ftl.gc_free_blocks",
            "at least 1",
        ),
        (
            "ssd750-1200.toml",
            "ftl.compression",
            Some("\"zip\""),
            "ftl.compression",
            "unknown compression",
        ),
        (
            "ssd750-1200.toml",
            "controller.cores",
            Some("0"),
            "controller.cores",
            "",
        ),
        (
            "ssd750-1200.toml",
            "nand.read_ns",
            Some("0"),
            "nand.read_ns",
            "positive",
        ),
        (
            "ssd750-1200.toml",
            "nand.bus_bytes",
            Some("9"),
            "nand.bus_bytes",
            "1 to 8",
        ),
        (
            "ssd750-1200.toml",
            "nand.planes",
            Some("32"),
            "nand.planes",
            "more than any NAND",
        ),
        (
            "ssd750-1200.toml",
            "ftl.min_stored_fraction",
            Some("0.0"),
            "ftl.min_stored_fraction",
            "above 0",
        ),
        (
            "ssd750-1200.toml",
            "nand.bus_mt_per_s",
            Some("0.0"),
            "nand.bus_mt_per_s",
            "MT/s",
        ),
        (
            "sf1200-120.toml",
            "nand.bus_write_mt_per_s",
            Some("0.0"),
            "nand.bus_write_mt_per_s",
            "MT/s",
        ),
        ("hdd-7200.toml", "hdd.rpm", Some("10"), "hdd.rpm", ""),
    ];
    for &(entry, path, value, key, says) in cases {
        let text = with(builtin(BUILTIN_DRIVES, entry), path, value);
        let e = Catalog::default()
            .add_drive(entry, &text)
            .expect_err(&format!("{entry} with {path} = {value:?} loaded"));
        assert_eq!(key_of(&e), Some(key), "{entry} {path}: {e}");
        assert!(e.to_string().contains(says), "{entry} {path}: {e}");
    }
}

#[test]
fn each_platform_rule_refuses_its_key() {
    // (key changed, new value or None to remove it, the key the error names, words it says),
    // each on the Z97 entry, whose RAID-0 port spans its four SATA ports.
    let raid = "ports.sata-raid0.raid";
    let cases: &[(&str, Option<&str>, &str, &str)] = &[
        ("source", Some("\"\""), "source", "public source"),
        (
            "ports.sata.slot",
            Some("\"usb3\""),
            "ports.sata.slot",
            "unknown link",
        ),
        (
            "ports.sata.slot",
            None,
            "ports.sata.slot",
            "a slot or a raid",
        ),
        (
            "ports.sata.hba",
            Some("\"nope\""),
            "ports.sata.hba",
            "unknown hba",
        ),
        (
            "ports.sata.driver",
            Some("\"nope\""),
            "ports.sata.driver",
            "unknown driver",
        ),
        (
            &format!("{raid}.level"),
            Some("\"raid5\""),
            &format!("{raid}.level"),
            "raid0 or jbod",
        ),
        (
            &format!("{raid}.members"),
            Some("[]"),
            &format!("{raid}.members"),
            "needs members",
        ),
        (
            &format!("{raid}.members"),
            Some("[\"sata\", \"sata\"]"),
            &format!("{raid}.members"),
            "listed twice",
        ),
        (
            &format!("{raid}.members"),
            Some("[\"sata\", \"nope\"]"),
            &format!("{raid}.members"),
            "not a plain port",
        ),
        (
            &format!("{raid}.stripe_bytes"),
            Some("1000"),
            &format!("{raid}.stripe_bytes"),
            "multiple of 512",
        ),
    ];
    for &(path, value, key, says) in cases {
        let text = with(builtin(BUILTIN_PLATFORMS, "z97.toml"), path, value);
        let e = Catalog::default()
            .add_platform("z97.toml", &text)
            .expect_err(&format!("z97 with {path} = {value:?} loaded"));
        assert_eq!(key_of(&e), Some(key), "{path}: {e}");
        assert!(e.to_string().contains(says), "{path}: {e}");
    }
}
