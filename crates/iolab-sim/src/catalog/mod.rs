//! The catalog: drives and platforms as TOML data, every table citing its public source.
//!
//! Built-in entries live in `catalog/drives/*.toml` and `catalog/platforms/*.toml` at the top of
//! the workspace and are embedded at compile time; a user directory with the same layout adds or
//! overrides entries without touching code. Parsing is strict (`deny_unknown_fields`) and every
//! cross-field rule is checked after parsing, so an inconsistent entry is refused with the file
//! and the key at fault — never run with a silently wrong parameter (MQSim's lenient XML parser
//! is the cautionary tale: a misspelt key there silently keeps its default).
//!
//! Rooms: `spec` (the tables an entry has), `links` (standard links and what a port and a drive
//! negotiate), `validate` (the cross-field rules, per kind of drive and for platforms) and here
//! the built-in entries and loading.

mod links;
mod spec;
mod validate;

pub use links::*;
pub use spec::*;
use validate::*;
pub use validate::{block_bytes, nand_raw_bytes};

use crate::SimError;
use std::collections::BTreeMap;
use std::path::Path;

/// Built-in drive files, embedded so the binary needs no data directory.
const BUILTIN_DRIVES: &[(&str, &str)] = &[
    (
        "c300-256.toml",
        include_str!("../../../../catalog/drives/c300-256.toml"),
    ),
    (
        "vertex-le-100.toml",
        include_str!("../../../../catalog/drives/vertex-le-100.toml"),
    ),
    (
        "force3-120.toml",
        include_str!("../../../../catalog/drives/force3-120.toml"),
    ),
    (
        "force3-240.toml",
        include_str!("../../../../catalog/drives/force3-240.toml"),
    ),
    (
        "forcegt-120.toml",
        include_str!("../../../../catalog/drives/forcegt-120.toml"),
    ),
    (
        "forcegt-240.toml",
        include_str!("../../../../catalog/drives/forcegt-240.toml"),
    ),
    (
        "ssd750-400.toml",
        include_str!("../../../../catalog/drives/ssd750-400.toml"),
    ),
    (
        "ssd750-1200.toml",
        include_str!("../../../../catalog/drives/ssd750-1200.toml"),
    ),
    (
        "sm951-512.toml",
        include_str!("../../../../catalog/drives/sm951-512.toml"),
    ),
    (
        "nvme2018-500.toml",
        include_str!("../../../../catalog/drives/nvme2018-500.toml"),
    ),
    (
        "sf1200-6ch.toml",
        include_str!("../../../../catalog/drives/sf1200-6ch.toml"),
    ),
    (
        "sf1200-4ch.toml",
        include_str!("../../../../catalog/drives/sf1200-4ch.toml"),
    ),
    (
        "sf1200-25.toml",
        include_str!("../../../../catalog/drives/sf1200-25.toml"),
    ),
    (
        "sf1200-40.toml",
        include_str!("../../../../catalog/drives/sf1200-40.toml"),
    ),
    (
        "sf1200-60.toml",
        include_str!("../../../../catalog/drives/sf1200-60.toml"),
    ),
    (
        "sf1200-120.toml",
        include_str!("../../../../catalog/drives/sf1200-120.toml"),
    ),
    (
        "revodrive-50.toml",
        include_str!("../../../../catalog/drives/revodrive-50.toml"),
    ),
    (
        "revodrive-80.toml",
        include_str!("../../../../catalog/drives/revodrive-80.toml"),
    ),
    (
        "revodrive-120.toml",
        include_str!("../../../../catalog/drives/revodrive-120.toml"),
    ),
    (
        "revodrive-240.toml",
        include_str!("../../../../catalog/drives/revodrive-240.toml"),
    ),
    (
        "revodrive-120-jbod.toml",
        include_str!("../../../../catalog/drives/revodrive-120-jbod.toml"),
    ),
    (
        "revodrive-x2-100.toml",
        include_str!("../../../../catalog/drives/revodrive-x2-100.toml"),
    ),
    (
        "ibis-100.toml",
        include_str!("../../../../catalog/drives/ibis-100.toml"),
    ),
    (
        "ibis-160.toml",
        include_str!("../../../../catalog/drives/ibis-160.toml"),
    ),
    (
        "ibis-240.toml",
        include_str!("../../../../catalog/drives/ibis-240.toml"),
    ),
    (
        "hdd-7200.toml",
        include_str!("../../../../catalog/drives/hdd-7200.toml"),
    ),
    (
        "storemi.toml",
        include_str!("../../../../catalog/drives/storemi.toml"),
    ),
    (
        "storemi-ram.toml",
        include_str!("../../../../catalog/drives/storemi-ram.toml"),
    ),
    (
        "rst-cache.toml",
        include_str!("../../../../catalog/drives/rst-cache.toml"),
    ),
];

/// Built-in platform files.
const BUILTIN_PLATFORMS: &[(&str, &str)] = &[
    (
        "x58.toml",
        include_str!("../../../../catalog/platforms/x58.toml"),
    ),
    (
        "p55.toml",
        include_str!("../../../../catalog/platforms/p55.toml"),
    ),
    (
        "h55.toml",
        include_str!("../../../../catalog/platforms/h55.toml"),
    ),
    (
        "890gx.toml",
        include_str!("../../../../catalog/platforms/890gx.toml"),
    ),
    (
        "h67.toml",
        include_str!("../../../../catalog/platforms/h67.toml"),
    ),
    (
        "z97.toml",
        include_str!("../../../../catalog/platforms/z97.toml"),
    ),
    (
        "z270.toml",
        include_str!("../../../../catalog/platforms/z270.toml"),
    ),
    (
        "x470.toml",
        include_str!("../../../../catalog/platforms/x470.toml"),
    ),
];

/// Every drive and platform known, with the file each came from.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// Drives by name, with their file.
    pub drives: BTreeMap<String, (String, DriveSpec)>,
    /// Platforms by name, with their file.
    pub platforms: BTreeMap<String, (String, PlatformSpec)>,
    /// Built-in drives a user file's replacement of a drive they use made inconsistent, by
    /// name, with why (a [`SimError::Catalog`]'s file, key and message): refused when used.
    /// Failing the whole load would break every command for an override the README offers,
    /// over entries the user may never use.
    pub unusable: BTreeMap<String, (String, String, String)>,
    /// Names of the built-in drives.
    builtin: std::collections::BTreeSet<String>,
    /// Built-in drive names a user file replaced, with that file.
    overridden: BTreeMap<String, String>,
    /// The names under which the built-in files were added (`catalog/drives/c300-256.toml`):
    /// embedded in the binary, not files on disk.
    builtin_files: std::collections::BTreeSet<String>,
    /// The files read from a user's catalog directory (one of which may share a built-in's
    /// name, under `--catalog catalog`).
    user_files: std::collections::BTreeSet<String>,
    /// The built-in entries by kind ("drive", "platform") and name, with their file and text.
    builtin_texts: BTreeMap<(&'static str, String), (String, &'static str)>,
    /// Built-in entries a user's file replaced with different contents (see
    /// [`Catalog::replaced_builtins`]).
    replaced: Vec<ReplacedBuiltin>,
}

/// A built-in entry that an entry of the same name in a user's catalog directory replaces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplacedBuiltin {
    /// "drive" or "platform".
    pub kind: &'static str,
    /// The entry's name.
    pub name: String,
    /// The user's file.
    pub user_file: String,
    /// The built-in's file (`catalog/drives/…`, as in iolab's source tree).
    pub builtin_file: String,
}

impl std::fmt::Display for ReplacedBuiltin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} replaces the built-in {} '{}' ({} in iolab's source): its entry is used \
             wherever '{}' is named; remove the file, or give its entry another name, to use \
             the built-in",
            self.user_file, self.kind, self.name, self.builtin_file, self.name
        )
    }
}

impl Catalog {
    /// The built-in catalog, plus every `drives/*.toml` and `platforms/*.toml` under `dir`
    /// (a user entry with a built-in's name replaces it).
    pub fn load(dir: Option<&Path>) -> Result<Catalog, SimError> {
        let mut c = Catalog::default();
        for (f, text) in BUILTIN_DRIVES {
            let file = format!("catalog/drives/{f}");
            let name = c.add_drive(&file, text)?;
            c.builtin_texts.insert(("drive", name), (file, text));
        }
        for (f, text) in BUILTIN_PLATFORMS {
            let file = format!("catalog/platforms/{f}");
            let name = c.add_platform(&file, text)?;
            c.builtin_texts.insert(("platform", name), (file, text));
        }
        c.builtin = c.drives.keys().cloned().collect();
        c.builtin_files = c
            .drives
            .values()
            .map(|(f, _)| f)
            .chain(c.platforms.values().map(|(f, _)| f))
            .cloned()
            .collect();
        if let Some(dir) = dir {
            // A mistyped directory must not silently fall back to the built-in catalog.
            if !dir.join("drives").is_dir() && !dir.join("platforms").is_dir() {
                return Err(SimError::Io {
                    path: dir.display().to_string(),
                    cause: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no drives/ or platforms/ directory with catalog TOML files here",
                    ),
                });
            }
            for (sub, is_drive) in [("drives", true), ("platforms", false)] {
                let mut user_files = BTreeMap::new();
                let d = dir.join(sub);
                if !d.is_dir() {
                    continue;
                }
                let mut files: Vec<_> = std::fs::read_dir(&d)
                    .map_err(|e| SimError::Io {
                        path: d.display().to_string(),
                        cause: e,
                    })?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    // `.toml` in any case (`SSD.TOML`), as job files are taken: a file the
                    // user put here must not be skipped without a word.
                    .filter(|p| {
                        p.extension()
                            .and_then(|x| x.to_str())
                            .is_some_and(|x| x.eq_ignore_ascii_case("toml"))
                    })
                    .collect();
                // Sorted, so that which file wins a name clash never depends on the directory.
                files.sort();
                for p in files {
                    let bytes = std::fs::read(&p).map_err(|e| SimError::Io {
                        path: p.display().to_string(),
                        cause: e,
                    })?;
                    let file = p.display().to_string();
                    let text = utf8_text(&file, bytes)?;
                    c.user_files.insert(file.clone());
                    let entry = if is_drive {
                        let name = c.add_drive(&file, &text)?;
                        if c.builtin.contains(&name) {
                            c.overridden.insert(name.clone(), file.clone());
                        }
                        name
                    } else {
                        c.add_platform(&file, &text)?
                    };
                    // Replacing a built-in is what a user's file may do, but not unsaid: a
                    // file copied to make a new drive and not yet renamed replaced the
                    // original wherever it was named. The same text (`--catalog catalog`, the
                    // source tree's own) replaces nothing.
                    let kind = if is_drive { "drive" } else { "platform" };
                    if let Some((builtin_file, builtin_text)) =
                        c.builtin_texts.get(&(kind, entry.clone()))
                    {
                        if *builtin_text != text {
                            c.replaced.push(ReplacedBuiltin {
                                kind,
                                name: entry.clone(),
                                user_file: file.clone(),
                                builtin_file: builtin_file.clone(),
                            });
                        }
                    }
                    // Replacing a built-in entry is what a user file is for; two of the
                    // user's own files naming one entry is a mistake that would otherwise
                    // hide one of them.
                    if let Some(other) = user_files.insert(entry, file.clone()) {
                        return Err(SimError::Catalog {
                            file,
                            key: "name".into(),
                            message: format!(
                                "{other} already defines an entry of this name; rename one of them"
                            ),
                        });
                    }
                }
            }
        }
        c.cross_check()?;
        Ok(c)
    }

    /// The built-in entries the user's catalog directory replaces (with entries of the same
    /// name and other contents), in the order they were read: what a command loading it says.
    pub fn replaced_builtins(&self) -> &[ReplacedBuiltin] {
        &self.replaced
    }

    /// Whether `file`, an entry's file, is one of the built-in files embedded in the binary
    /// (its name, `catalog/drives/…`, is where it was in the source tree, not a file on disk).
    pub fn is_builtin_file(&self, file: &str) -> bool {
        self.builtin_files.contains(file) && !self.user_files.contains(file)
    }

    /// Parses and validates one drive file; returns the entry's name. An entry of the same
    /// name is replaced.
    pub fn add_drive(&mut self, file: &str, text: &str) -> Result<String, SimError> {
        not_empty(
            file,
            text,
            "a drive needs at least name, title, kind, source and the tables its kind reads",
            "drives",
        )?;
        let d: DriveSpec = toml::from_str(text).map_err(|e| SimError::Parse {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        check_numbers(file, &raw_table(file, text)?, "")?;
        check_name(file, "name", &d.name)?;
        d.validate(file)?;
        let name = d.name.clone();
        self.drives.insert(name.clone(), (file.to_string(), d));
        Ok(name)
    }

    /// Parses and validates one platform file; returns the entry's name. An entry of the same
    /// name is replaced.
    pub fn add_platform(&mut self, file: &str, text: &str) -> Result<String, SimError> {
        not_empty(
            file,
            text,
            "a platform needs at least name, title, source, its drivers and its ports",
            "platforms",
        )?;
        let p: PlatformSpec = toml::from_str(text).map_err(|e| SimError::Parse {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        check_numbers(file, &raw_table(file, text)?, "")?;
        check_name(file, "name", &p.name)?;
        for port in p.ports.keys() {
            check_name(file, &format!("ports.{port}"), port)?;
        }
        p.validate(file)?;
        let name = p.name.clone();
        self.platforms.insert(name.clone(), (file.to_string(), p));
        Ok(name)
    }

    /// The error for using drive `name`, if a user file's replacement of a drive it uses made
    /// it inconsistent (see [`Catalog::unusable`]).
    pub fn unusable_error(&self, name: &str) -> Option<SimError> {
        self.unusable
            .get(name)
            .map(|(file, key, message)| SimError::Catalog {
                file: file.clone(),
                key: key.clone(),
                message: message.clone(),
            })
    }

    /// Rules that span entries: card members and tier members must exist and be SSDs/HDDs, a
    /// card's members must train to its `member_link`, stripes and extents must fit them.
    ///
    /// A built-in entry broken by a user's replacement of a drive it uses is not an error
    /// here: it goes to [`Catalog::unusable`] and is refused when used, naming the user's file.
    pub fn cross_check(&mut self) -> Result<(), SimError> {
        let mut unusable = BTreeMap::new();
        for (name, (file, d)) in &self.drives {
            let Err(e) = self.check_against_others(file, d) else {
                continue;
            };
            let replaced = [
                d.card.as_ref().map(|c| &c.member),
                d.tiered.as_ref().map(|t| &t.fast),
                d.tiered.as_ref().map(|t| &t.slow),
            ]
            .into_iter()
            .flatten()
            .find_map(|m| Some((m, self.overridden.get(m)?)));
            let builtin = self.builtin.contains(name) && !self.overridden.contains_key(name);
            let (Some((member, user_file)), true) = (replaced, builtin) else {
                return Err(e);
            };
            let why = match e {
                SimError::Catalog { key, message, .. } => format!("{key}: {message}"),
                other => other.to_string(),
            };
            let dir = Path::new(user_file)
                .parent()
                .map_or_else(|| "drives/".to_string(), |p| p.display().to_string());
            unusable.insert(
                name.clone(),
                (
                    user_file.clone(),
                    "name".to_string(),
                    format!(
                        "replacing the built-in '{member}' breaks the built-in entry {name} \
                         ({file}, built in), which depends on it ({why}). To use {name} with \
                         this catalog, override it too (an entry named {name} in {dir}), or give \
                         your entry another name than '{member}'"
                    ),
                ),
            );
        }
        self.unusable = unusable;
        Ok(())
    }

    /// The rules of [`Catalog::cross_check`] for one drive entry.
    fn check_against_others(&self, file: &str, d: &DriveSpec) -> Result<(), SimError> {
        if let Some(c) = &d.card {
            match self.drives.get(&c.member) {
                Some((member_file, m)) if m.kind == DriveKind::Ssd => {
                    // The members attach to the chip's ports as a drive to a platform's:
                    // their interface negotiates with member_link, or nothing is built (and
                    // the error on use would blame the port, not this key).
                    let own = parse_std_link(&m.interface.link);
                    let chip = parse_std_link(&c.member_link);
                    if let (Some(own), Some(chip)) = (own, chip) {
                        if negotiate(own, chip).is_none() {
                            return Err(bad(
                                file,
                                "card.member_link",
                                format!(
                                    "'{}' cannot carry the member '{}' ({member_file}), whose \
                                         interface is {}: use a link its interface trains to \
                                         (a SATA link for a SATA drive, PCIe for PCIe)",
                                    c.member_link, c.member, m.interface.link
                                ),
                            ));
                        }
                    }
                    let member = m.capacity.as_ref().map_or(0, |c| c.usable_bytes);
                    if c.stripe_bytes.is_some_and(|s| s > member) {
                        return Err(bad(
                            file,
                            "card.stripe_bytes",
                            format!(
                                "larger than a member '{}' ({member_file}: {member} bytes): \
                                     the volume would hold nothing",
                                c.member
                            ),
                        ));
                    }
                }
                _ => {
                    return Err(bad(
                        file,
                        "card.member",
                        format!("'{}' is not an SSD in the catalog", c.member),
                    ))
                }
            }
        }
        if let Some(t) = &d.tiered {
            for (k, n) in [("tiered.fast", &t.fast), ("tiered.slow", &t.slow)] {
                match self.drives.get(n) {
                    Some((_, m)) if matches!(m.kind, DriveKind::Ssd | DriveKind::Hdd) => {}
                    _ => {
                        return Err(bad(
                            file,
                            k,
                            format!("'{n}' is not an SSD or HDD in the catalog"),
                        ))
                    }
                }
            }
            // The drives named may be a user's replacements of built-in ones: the message
            // says which file holds each.
            let size_of = |name: &str| {
                let (f, d) = &self.drives[name];
                let size = d
                    .capacity
                    .as_ref()
                    .map(|c| c.usable_bytes)
                    .or(d.hdd.as_ref().map(|h| h.capacity_bytes));
                (size, f.as_str())
            };
            if let (Some(size), slow_file) = size_of(&t.slow) {
                if t.extent_bytes > size {
                    return Err(bad(
                        file,
                        "tiered.extent_bytes",
                        format!(
                            "{} is more than the slow drive '{}' ({slow_file}) holds ({size}): \
                                 the volume would have no extent",
                            t.extent_bytes, t.slow
                        ),
                    ));
                }
            }
            if let (Some(size), fast_file) = size_of(&t.fast) {
                if t.fast_bytes > size {
                    return Err(bad(
                        file,
                        "tiered.fast_bytes",
                        format!(
                            "{} is more than the fast drive '{}' ({fast_file}) holds ({size}); \
                                 use at most that",
                            t.fast_bytes, t.fast
                        ),
                    ));
                }
            }
            // The tier keeps a table entry for every extent of the slow drive and every slot
            // of the fast share, indexed by u32: a huge disk under small extents would not fit.
            if let (Some(slow), slow_file) = size_of(&t.slow) {
                let extents = slow / t.extent_bytes + t.fast_bytes / t.extent_bytes;
                if extents > MAX_TIER_EXTENTS {
                    return Err(bad(
                        file,
                        "tiered.extent_bytes",
                        format!(
                            "{} makes {extents} extents of the slow drive '{}' ({slow_file}: \
                             {slow} bytes) and the fast share: the model keeps at most \
                             {MAX_TIER_EXTENTS}, a few bytes each in memory; use larger extents \
                             or a smaller drive",
                            t.extent_bytes, t.slow
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
