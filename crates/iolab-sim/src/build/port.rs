//! A drive on a platform's port: the port chosen, a platform RAID volume over several ports,
//! the driver and the host's queue depth.

use super::*;

/// What a built model is, for descriptions.
pub struct Built {
    /// The world.
    pub world: World,
    /// Driver used.
    pub driver: String,
    /// Port used.
    pub port: String,
}

/// Builds `drive` on `platform`'s `port`. Without a port: on the platform's default port, or,
/// when the drive cannot attach there (a card or an NVMe drive on a platform whose default is
/// its SATA port), on the port nearest the CPU that takes it, as one would plug it in.
pub fn build(
    cat: &Catalog,
    drive: &str,
    platform: &str,
    port: Option<&str>,
    seed: u64,
) -> Result<Built, SimError> {
    // A built-in entry a user's replacement of its member broke is refused here, when used.
    if let Some(e) = cat.unusable_error(drive) {
        return Err(e);
    }
    let (_, plat) = cat
        .platforms
        .get(platform)
        .ok_or_else(|| SimError::UnknownPlatform {
            name: platform.to_string(),
            known: cat.platforms.keys().cloned().collect::<Vec<_>>().join(", "),
        })?;
    // Nearest the CPU first (fewest hops), single ports before RAID volumes.
    let mut nearest: Vec<(&String, &PortSpec)> = plat.ports.iter().collect();
    nearest.sort_by_key(|(n, p)| (p.raid.is_some(), p.path.len(), n.as_str()));
    // `default` is optional: without one, the port nearest the CPU is tried first.
    let default = plat
        .ports
        .iter()
        .find(|(_, p)| p.default)
        .map(|(n, _)| n.as_str())
        .or_else(|| nearest.first().map(|(n, _)| n.as_str()));
    let asked = match (port, default) {
        (Some(p), _) => p,
        (None, Some(d)) => d,
        (None, None) => unreachable!("validated: a platform has a port"),
    };
    let (drive_name, message) = match build_on(cat, drive, platform, asked, seed) {
        Err(SimError::Incompatible { drive, message }) => (drive, message),
        other => return other,
    };
    let others = nearest.into_iter().filter(|(n, _)| *n != asked);
    // Without a port asked for, the first that fits; with one, every port that fits, for the
    // hint. A port the drive attaches to that fails for another reason (the platform has no
    // driver for it) is said too: "no port takes it" would hide that.
    let mut fitting = Vec::new();
    let mut blocked = None;
    for (n, _) in others {
        match build_on(cat, drive, platform, n, seed) {
            Ok(built) => {
                fitting.push(built);
                if port.is_none() {
                    break;
                }
            }
            Err(SimError::Incompatible { .. }) => {}
            Err(e) => {
                blocked.get_or_insert(format!("its port '{n}' would, but {e}"));
            }
        }
    }
    let no_port = |lead: &str| match &blocked {
        Some(why) => format!("{lead} {platform} takes it: {why}"),
        None => format!("{lead} {platform} takes it"),
    };
    match (port, fitting.is_empty()) {
        (None, false) => Ok(fitting.swap_remove(0)),
        (None, true) => Err(SimError::Incompatible {
            message: format!("{message}, and {}", no_port("no other port of")),
            drive: drive_name,
        }),
        (Some(_), _) => {
            let hint = if fitting.is_empty() {
                no_port("no port of")
            } else {
                let names: Vec<String> = fitting.into_iter().map(|b| b.port).collect();
                format!("ports of {platform} that take it: {}", names.join(", "))
            };
            Err(SimError::Incompatible {
                message: format!("{message}; {hint}"),
                drive: drive_name,
            })
        }
    }
}

/// Builds `drive` on `platform`'s port `port_name`.
fn build_on(
    cat: &Catalog,
    drive: &str,
    platform: &str,
    port_name: &str,
    seed: u64,
) -> Result<Built, SimError> {
    let (plat_file, plat) = &cat.platforms[platform];
    let port_name = port_name.to_string();
    let port_spec = plat
        .ports
        .get(&port_name)
        .ok_or_else(|| SimError::UnknownPort {
            platform: platform.to_string(),
            name: port_name.clone(),
            known: plat.ports.keys().cloned().collect::<Vec<_>>().join(", "),
        })?;
    let mut b = Builder {
        cat,
        plat,
        plat_file,
        res: Vec::new(),
        leaves: Vec::new(),
        shared: BTreeMap::new(),
        seed,
    };
    let dspec = b.drive(drive)?.clone();
    let vol = match &port_spec.raid {
        Some(r) => build_port_raid(&mut b, &dspec, port_spec, r, &port_name)?,
        None => {
            let at = b.attach_at(port_spec);
            b.build_drive(&dspec, &at, &port_name)?
        }
    };
    check_port_driver(plat, port_spec, &dspec, &port_name)?;
    let driver = port_spec
        .driver
        .clone()
        .unwrap_or_else(|| dspec.interface.protocol.clone());
    let dr = plat
        .drivers
        .get(&driver)
        .ok_or_else(|| unknown_driver(cat, drive, plat_file, plat, port_spec, &dspec, &driver))?;
    let qd = host_queue_depth(dr, &dspec, port_spec);
    let world = World::new(b.res, b.leaves, vol, dr.latency_ns, qd);
    Ok(Built {
        world,
        driver,
        port: port_name,
    })
}

/// The volume of a platform's RAID port `r`: `dspec` built on each member port (a card or a
/// tiered drive, volumes of their own, are refused), striped or spanned.
fn build_port_raid(
    b: &mut Builder,
    dspec: &DriveSpec,
    port_spec: &PortSpec,
    r: &RaidSpec,
    port_name: &str,
) -> Result<Vol, SimError> {
    if matches!(dspec.kind, DriveKind::Card | DriveKind::Tiered) {
        return Err(SimError::Incompatible {
            drive: dspec.name.clone(),
            message: format!(
                "a {} is a volume of its own and cannot be a member of the RAID volume \
                 '{port_name}'",
                if dspec.kind == DriveKind::Card {
                    "card with its own RAID chip"
                } else {
                    "tiered drive"
                }
            ),
        });
    }
    let mut members = Vec::new();
    for m in &r.members {
        let mut at = b.attach_at(&b.plat.ports[m]);
        at.lat_ns += port_spec.latency_ns;
        members.push(b.build_drive(dspec, &at, m)?);
    }
    raid_volume(&b.leaves, members, r.level == "raid0", r.stripe_bytes).map_err(|message| {
        SimError::Catalog {
            file: b.plat_file.to_string(),
            key: format!("ports.{port_name}.raid.stripe_bytes"),
            message,
        }
    })
}

/// Refuses a drive whose protocol the port's own driver does not drive.
fn check_port_driver(
    plat: &PlatformSpec,
    port_spec: &PortSpec,
    dspec: &DriveSpec,
    port_name: &str,
) -> Result<(), SimError> {
    // A port's own driver drives only drives of its protocol (AMD's NVMe RAIDXpert does not
    // drive a RevoDrive's SiI3124): any other drive is refused there, as one that does not
    // attach is, so a port left unnamed is one it can use.
    if let Some(d) = &port_spec.driver {
        if let Some(spec) = plat.drivers.get(d) {
            let drives = spec.drives_protocol(d);
            if drives != dspec.interface.protocol {
                return Err(SimError::Incompatible {
                    drive: dspec.name.clone(),
                    message: format!(
                        "port '{port_name}' runs its drive under the '{d}' driver, which drives \
                         {drives} drives, not {} ones (a port's driver is for drives of its \
                         [drivers.{d}] protocol)",
                        dspec.interface.protocol
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The error for a driver the platform does not have: the drive's protocol when no platform
/// has it, else the platform's file, with the platforms that have it and how to add it.
fn unknown_driver(
    cat: &Catalog,
    drive: &str,
    plat_file: &str,
    plat: &PlatformSpec,
    port_spec: &PortSpec,
    dspec: &DriveSpec,
    driver: &str,
) -> SimError {
    // Which platforms of the era have it, and how to give this one the driver.
    let with: Vec<&str> = cat
        .platforms
        .iter()
        .filter(|(_, (_, p))| p.drivers.contains_key(driver))
        .map(|(n, _)| n.as_str())
        .collect();
    if with.is_empty() && port_spec.driver.is_none() {
        // No platform knows it: the drive's protocol is what is wrong.
        let known: std::collections::BTreeSet<&str> = cat
            .platforms
            .values()
            .flat_map(|(_, p)| p.drivers.keys().map(String::as_str))
            .collect();
        return SimError::Catalog {
            file: cat.drives[drive].0.clone(),
            key: "interface.protocol".into(),
            message: format!(
                "no platform has a driver for '{driver}'; the catalog's protocols: {}",
                known.into_iter().collect::<Vec<_>>().join(", ")
            ),
        };
    }
    SimError::Catalog {
        file: plat_file.to_string(),
        key: format!("drivers.{driver}"),
        message: format!(
            "unknown driver '{driver}' (drive '{}' speaks {}); known: {}. Platforms with it: \
             {}; or copy this platform's file into the platforms/ of a --catalog directory \
             and add a [drivers.{driver}] table (latency_ns, queue_depth, source)",
            dspec.name,
            dspec.interface.protocol,
            plat.drivers.keys().cloned().collect::<Vec<_>>().join(", "),
            if with.is_empty() {
                "none".to_string()
            } else {
                with.join(", ")
            },
        ),
    }
}

/// How many commands the host keeps in flight.
fn host_queue_depth(dr: &DriverSpec, dspec: &DriveSpec, port_spec: &PortSpec) -> u32 {
    // The host keeps as many commands in flight as the driver sends and the device takes:
    // the least of the driver's queue, the drive's (an SSD controller's or a disk's NCQ
    // depth) and a card's RAID layer. Each member of a platform's RAID volume has its own
    // queue, so the drive's depth counts once per member (four SATA SSDs on RST take 4 × 32,
    // not 32).
    let members = port_spec
        .raid
        .as_ref()
        .map_or(1, |r| r.members.len() as u32);
    let drive_qd = [
        dspec.controller.as_ref().and_then(|c| c.queue_depth),
        dspec.hdd.as_ref().and_then(|h| h.queue_depth),
    ]
    .into_iter()
    .flatten()
    .min()
    .map(|q| q.saturating_mul(members));
    [
        dr.queue_depth,
        drive_qd,
        dspec.card.as_ref().and_then(|c| c.queue_depth),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(1024)
}
