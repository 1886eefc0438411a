//! Turning a drive and a platform port from the catalog into a [`World`].

use crate::catalog::{
    negotiate, parse_std_link, Catalog, DriveKind, DriveSpec, DriverSpec, LinkKind, LinkSpec,
    PlatformSpec, PortSpec, RaidSpec,
};
use crate::model::{
    build_hdd, build_ssd, HddParams, Leaf, Pipe, Power, RamCache, Res, ResId, ResKind, SeqStreams,
    SlcCache, SsdParams, Tier, Toward, Vol, World,
};
use crate::SimError;
use iolab_link::{Link, DEFAULT_MAX_PAYLOAD_BYTES};
use std::collections::BTreeMap;

mod port;

pub use port::build;

/// A hop on a path: down and up pipes (the same resource when half-duplex).
#[derive(Clone, Debug)]
struct Hop {
    down: Pipe,
    up: Pipe,
    name: String,
}

/// Where a drive attaches: its slot's link, the hops from there up to the CPU, the command
/// stages and the latency on the way, and how those hops are described.
#[derive(Debug)]
struct Attach {
    slot: Link,
    above: Vec<Hop>,
    stages: Vec<(ResId, u64)>,
    lat_ns: u64,
    describe: Vec<String>,
}

struct Builder<'a> {
    cat: &'a Catalog,
    plat: &'a PlatformSpec,
    plat_file: &'a str,
    res: Vec<Res>,
    leaves: Vec<Leaf>,
    shared: BTreeMap<String, Hop>,
    seed: u64,
}

fn link_kind(spec: &LinkSpec) -> LinkKind {
    match (&spec.link, spec.bytes_per_s) {
        (Some(s), _) => LinkKind::Std(parse_std_link(s).expect("validated")),
        (None, Some(r)) => LinkKind::Raw {
            bytes_per_s: r,
            half_duplex: spec.half_duplex,
            bursts: spec.bursts,
        },
        _ => unreachable!("validated"),
    }
}

impl Builder<'_> {
    fn new_res(&mut self, kind: ResKind, group: String) -> ResId {
        self.res.push(Res {
            busy_until: 0,
            busy_ns: 0,
            kind,
            group,
        });
        (self.res.len() - 1) as ResId
    }

    /// A fresh hop for a link; SATA and half-duplex custom pipes use one resource both ways.
    fn hop(&mut self, kind: LinkKind, mps: u32, latency_ns: u64, name: String) -> Hop {
        let half = match kind {
            LinkKind::Std(Link::Sata { .. }) => true,
            LinkKind::Std(_) => false,
            LinkKind::Raw { half_duplex, .. } => half_duplex,
        };
        let label = match kind {
            LinkKind::Std(l) => format!("{name} ({l})"),
            LinkKind::Raw {
                bytes_per_s,
                bursts,
                ..
            } => format!(
                "{name} ({:.0} MB/s{})",
                bytes_per_s / 1e6,
                bursts.map_or(String::new(), |b| format!(" in {}-byte bursts", b.bytes))
            ),
        };
        // A full-duplex link is two resources, each its own group: a link saturated one way
        // is the bottleneck, not half busy.
        let (d, u) = if half {
            let both = self.new_res(ResKind::Link, label.clone());
            (both, both)
        } else {
            (
                self.new_res(ResKind::Link, format!("{label} toward the drive")),
                self.new_res(ResKind::Link, format!("{label} toward the host")),
            )
        };
        // Hop latency is paid once per direction, half each way.
        Hop {
            down: Pipe::new(d, kind, mps, latency_ns / 2, Toward::Drive),
            up: Pipe::new(u, kind, mps, latency_ns - latency_ns / 2, Toward::Host),
            name: label,
        }
    }

    /// A hop named in a port path: a shared platform link (created once) or a private
    /// standard link.
    fn path_hop(&mut self, name: &str, local: &BTreeMap<String, LinkSpec>, scope: &str) -> Hop {
        if let Some(spec) = local.get(name) {
            let key = format!("{scope}/{name}");
            if let Some(h) = self.shared.get(&key) {
                return h.clone();
            }
            let h = self.hop(
                link_kind(spec),
                spec.max_payload_bytes.unwrap_or(DEFAULT_MAX_PAYLOAD_BYTES),
                spec.latency_ns,
                name.to_string(),
            );
            self.shared.insert(key, h.clone());
            return h;
        }
        let l = parse_std_link(name).expect("validated");
        self.hop(
            LinkKind::Std(l),
            DEFAULT_MAX_PAYLOAD_BYTES,
            0,
            name.to_string(),
        )
    }

    fn port_hops(&mut self, port: &PortSpec) -> Vec<Hop> {
        let links = self.plat.links.clone();
        port.path
            .iter()
            .map(|h| self.path_hop(h, &links, "platform"))
            .collect()
    }

    fn drive(&self, name: &str) -> Result<&DriveSpec, SimError> {
        self.cat
            .drives
            .get(name)
            .map(|(_, d)| d)
            .ok_or_else(|| SimError::UnknownDrive {
                name: name.to_string(),
                known: self
                    .cat
                    .drives
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// A drive in a plain port (its slot link was validated).
    fn attach_at(&mut self, port: &PortSpec) -> Attach {
        let slot = parse_std_link(port.slot.as_deref().expect("validated")).expect("validated");
        let above = self.port_hops(port);
        let (stages, lat_ns) = self.port_stages(port);
        let describe = above.iter().map(|h| h.name.clone()).collect();
        Attach {
            slot,
            above,
            stages,
            lat_ns,
            describe,
        }
    }

    /// Builds `drive` where `at` says: its interface negotiated with the slot's link, behind
    /// the hops above.
    fn build_drive(
        &mut self,
        drive: &DriveSpec,
        at: &Attach,
        label: &str,
    ) -> Result<Vol, SimError> {
        let file = self
            .cat
            .drives
            .get(&drive.name)
            .map_or("", |(f, _)| f.as_str());
        // Validated as a standard link when the entry was loaded.
        let own = parse_std_link(&drive.interface.link).ok_or_else(|| SimError::Catalog {
            file: file.to_string(),
            key: "interface.link".into(),
            message: format!("'{}' is not a standard link", drive.interface.link),
        })?;
        let edge = negotiate(own, at.slot).ok_or_else(|| SimError::Incompatible {
            drive: drive.name.clone(),
            message: format!("its {own} interface cannot attach to a {} port", at.slot),
        })?;
        match drive.kind {
            DriveKind::Ssd | DriveKind::Hdd => self.build_leaf(drive, at, label, edge),
            DriveKind::Card => self.build_card(drive, at, label, edge, file),
            DriveKind::Tiered => self.build_tiered(drive, at, label),
        }
    }

    /// A single SSD or HDD: a leaf behind its negotiated edge link and the hops above.
    fn build_leaf(
        &mut self,
        drive: &DriveSpec,
        at: &Attach,
        label: &str,
        edge: Link,
    ) -> Result<Vol, SimError> {
        let mps = drive
            .interface
            .max_payload_bytes
            .unwrap_or(DEFAULT_MAX_PAYLOAD_BYTES);
        let edge_hop = self.hop(LinkKind::Std(edge), mps, 0, format!("{label} link"));
        let sata_cmd = match edge {
            // Per NCQ command: Register H2D, DMA Setup and Set Device Bits FISes, each
            // with its handshake gap (the SATA transport layer's FIS exchange), on the
            // half-duplex link.
            Link::Sata { gen } => Some((edge_hop.down.res, (3.0 * gen.fis_gap_ns()) as u64)),
            _ => None,
        };
        let mut down = vec![];
        let mut up = vec![edge_hop.up.clone()];
        for h in &at.above {
            up.push(h.up.clone());
        }
        for h in at.above.iter().rev() {
            down.push(h.down.clone());
        }
        down.push(edge_hop.down.clone());
        let mut desc = vec![
            format!("{} [{}]", drive.title, drive.name),
            edge_hop.name.clone(),
        ];
        desc.extend(at.describe.iter().cloned());
        // The drive's own resources are named after it and where it sits, as a spec
        // names them ("ssd750-1200@cpu power limit", not "cpu power limit").
        let group = format!("{}@{label}", drive.name);
        let dev = if drive.kind == DriveKind::Ssd {
            crate::model::Dev::Ssd(Box::new(build_ssd(
                &mut self.res,
                ssd_params(drive),
                &group,
            )))
        } else {
            let h = drive.hdd.as_ref().expect("validated");
            self.seed = self.seed.wrapping_add(0x9E37_79B9);
            crate::model::Dev::Hdd(Box::new(build_hdd(
                &mut self.res,
                HddParams {
                    name: drive.name.clone(),
                    size: h.capacity_bytes,
                    rpm: h.rpm,
                    seek_track_ns: h.seek_track_ns,
                    seek_full_ns: h.seek_full_ns,
                    outer_bps: h.outer_bytes_per_s,
                    inner_bps: h.inner_bytes_per_s,
                    command_ns: h.command_ns,
                    write_cache_bytes: h.write_cache_bytes,
                    write_cache_segments: h.write_cache_segments.unwrap_or(0),
                    queue_depth: h.queue_depth.unwrap_or(32),
                    seed: self.seed,
                    power: power_of(drive),
                },
                &group,
            )))
        };
        let lat_up_ns = at.lat_ns - at.lat_ns / 2;
        self.leaves.push(Leaf {
            status_ns: Leaf::status_ns_of(&up, lat_up_ns),
            down,
            up,
            lat_down_ns: at.lat_ns / 2,
            lat_up_ns,
            cmd_stages: at.stages.clone(),
            sata_cmd,
            dev,
            describe: desc,
        });
        Ok(Vol::Leaf((self.leaves.len() - 1) as u32))
    }

    /// A card (a RAID of members behind a controller chip): its members built behind the chip
    /// and the card's inner path, striped or spanned into one volume.
    fn build_card(
        &mut self,
        drive: &DriveSpec,
        at: &Attach,
        label: &str,
        edge: Link,
        file: &str,
    ) -> Result<Vol, SimError> {
        let c = drive.card.as_ref().expect("validated");
        let member = self.drive(&c.member)?.clone();
        // The card's edge frames TLPs as its entry says, as a drive's interface does.
        let mps = drive
            .interface
            .max_payload_bytes
            .unwrap_or(DEFAULT_MAX_PAYLOAD_BYTES);
        let edge_hop = self.hop(LinkKind::Std(edge), mps, 0, format!("{label} edge"));
        let scope = format!("{label}:{}", drive.name);
        let mut inner: Vec<Hop> = c
            .path
            .iter()
            .map(|h| self.path_hop(h, &drive.links, &scope))
            .collect();
        inner.push(edge_hop);
        inner.extend(at.above.iter().cloned());
        let chip = self.new_res(ResKind::Hba, format!("{label} {}", c.chip));
        let mut stages = vec![(chip, c.chip_command_ns)];
        stages.extend_from_slice(&at.stages);
        let member_link = parse_std_link(&c.member_link).expect("validated");
        let mut desc = vec![format!(
            "{} [{}], {} × {} ({})",
            drive.title,
            drive.name,
            c.used.unwrap_or(c.count),
            member.name,
            c.raid
        )];
        desc.extend(inner.iter().map(|h| h.name.clone()));
        let used = c.used.unwrap_or(c.count);
        let behind_chip = Attach {
            slot: member_link,
            above: inner,
            stages,
            lat_ns: at.lat_ns + c.chip_latency_ns,
            describe: desc,
        };
        let mut members = Vec::new();
        for i in 0..used {
            members.push(self.build_drive(
                &member,
                &behind_chip,
                &format!("{label} member {i}"),
            )?);
        }
        raid_volume(&self.leaves, members, c.raid == "raid0", c.stripe_bytes).map_err(|message| {
            SimError::Catalog {
                file: file.to_string(),
                key: "card.stripe_bytes".into(),
                message,
            }
        })
    }

    /// A tiered volume: a fast and a slow member, with an optional RAM layer in front.
    fn build_tiered(
        &mut self,
        drive: &DriveSpec,
        at: &Attach,
        label: &str,
    ) -> Result<Vol, SimError> {
        let t = drive.tiered.as_ref().expect("validated");
        let fast = self.drive(&t.fast)?.clone();
        let slow = self.drive(&t.slow)?.clone();
        let fv = self.build_member(&fast, at, label, &drive.name, "fast")?;
        let sv = self.build_member(&slow, at, label, &drive.name, "slow")?;
        let size_of = |v: &Vol, b: &Builder| match v {
            Vol::Leaf(i) => b.leaves[*i as usize].dev.size(),
            _ => 0,
        };
        let fast_bytes = t.fast_bytes.min(size_of(&fv, self));
        let slow_bytes = size_of(&sv, self);
        let mut tier = Tier::new(
            fv,
            sv,
            t.mode == "tier",
            t.extent_bytes,
            t.promote_after,
            fast_bytes,
            slow_bytes,
        );
        tier.streams = SeqStreams::new(t.seq_cutoff_bytes);
        if t.promote_bytes_per_s > 0.0 {
            // At least 1 ns, so a very fast rate still paces.
            tier.promote_gap_ns =
                ((t.extent_bytes as f64 / t.promote_bytes_per_s * 1e9) as u64).max(1);
        }
        if t.ram_bytes > 0 {
            let res = self.new_res(ResKind::Memory, format!("{label} RAM layer"));
            let copy = Pipe::rate(res, t.ram_bytes_per_s);
            tier.ram = Some(RamCache::new(copy, t.ram_bytes));
        }
        Ok(Vol::Tier(Box::new(tier)))
    }

    /// Builds a member of a tiered volume on the given port if its interface fits there, or
    /// else on the platform's first plain port that fits it (an HDD and an NVMe SSD of one
    /// StoreMI or RST volume hang off different ports: SATA and M.2).
    fn build_member(
        &mut self,
        drive: &DriveSpec,
        at: &Attach,
        port_label: &str,
        tier: &str,
        role: &str,
    ) -> Result<Vol, SimError> {
        let label = format!("{port_label} {role}");
        let own = parse_std_link(&drive.interface.link);
        if own.is_none_or(|l| negotiate(l, at.slot).is_some()) {
            return self.build_drive(drive, at, &label);
        }
        let own = own.expect("checked");
        let port = self
            .plat
            .ports
            .iter()
            .filter(|(_, p)| p.raid.is_none())
            .find_map(|(n, p)| {
                let s = parse_std_link(p.slot.as_deref()?)?;
                negotiate(own, s).map(|_| (n.clone(), p.clone()))
            });
        let Some((name, port)) = port else {
            // No port fits. The volume asked for is the tier: said as its member's mismatch
            // alone ("drive 'hdd-7200' cannot be used here"), a drive nobody named came up.
            return Err(SimError::Incompatible {
                drive: tier.to_string(),
                message: format!(
                    "its {role} drive '{}' has a {own} interface, which attaches neither to the \
                     {} port the volume is on nor to any other single port of {}; a tiered \
                     volume's members each need a port that takes them",
                    drive.name, at.slot, self.plat.name
                ),
            });
        };
        let there = self.attach_at(&port);
        self.build_drive(drive, &there, &format!("{label} ({name})"))
    }

    fn port_stages(&mut self, port: &PortSpec) -> (Vec<(ResId, u64)>, u64) {
        match &port.hba {
            Some(h) => {
                let hba = &self.plat.hbas[h];
                let (cmd, lat, part) = (hba.command_ns, hba.latency_ns, hba.part.clone());
                let r = self.new_res(ResKind::Hba, format!("{h} {part}"));
                (vec![(r, cmd)], lat + port.latency_ns)
            }
            None => (vec![], port.latency_ns),
        }
    }
}

fn power_of(d: &DriveSpec) -> Power {
    let p = d.power.clone().unwrap_or_default();
    Power {
        idle_w: p.idle_w,
        active_w: p.active_w,
        controller_w: p.controller_w,
        die_read_w: p.die_read_w,
        die_program_w: p.die_program_w,
        die_erase_w: p.die_erase_w,
        channel_w: p.channel_w,
        seek_w: p.seek_w,
        max_w: p.max_w,
    }
}

pub(crate) fn ssd_params(d: &DriveSpec) -> SsdParams {
    let c = d.controller.as_ref().expect("validated");
    let n = d.nand.as_ref().expect("validated");
    let f = d.ftl.as_ref().expect("validated");
    let b = d.buffer.as_ref().expect("validated");
    // A lockstep array is modelled as its ways: each way a die with the channels' pages side by
    // side, on one channel as wide as all of them. A way then reads, programs and erases as
    // one, and its energy is that of all its dies.
    let gang = if n.lockstep { n.channels } else { 1 };
    let chan_bytes_per_transfer = n.bus_bytes.unwrap_or(1) as f64 * gang as f64;
    let mut power = power_of(d);
    for w in [
        &mut power.die_read_w,
        &mut power.die_program_w,
        &mut power.die_erase_w,
        &mut power.channel_w,
    ] {
        *w *= gang as f64;
    }
    SsdParams {
        name: d.name.clone(),
        size: d.capacity.as_ref().expect("validated").usable_bytes,
        cores: c.cores.unwrap_or(1),
        command_ns: c.command_ns,
        write_command_ns: c.write_command_ns.unwrap_or(c.command_ns),
        write_data_in_line: c.write_data_in_line,
        latency_ns: c.latency_ns,
        read_bps: c.read_bytes_per_s,
        write_bps: c.write_bytes_per_s,
        program_bps: c.nand_write_bytes_per_s,
        channels: n.channels / gang,
        dies: n.dies / gang,
        planes: n.planes,
        page_bytes: n.page_bytes * gang,
        pages_per_block: n.pages_per_block,
        blocks_per_plane: crate::catalog::data_blocks_per_plane(n, f),
        // One parity unit per stripe of one unit on every die: after every `dies - 1` units of
        // data (ways of a lockstep array count their dies, as the stripe does).
        parity_every: if f.parity_die { n.dies - 1 } else { 0 },
        read_ns: n.read_ns,
        program_ns: n.program_ns,
        mlc_pages: n.bits_per_cell == Some(2),
        erase_ns: n.erase_ns,
        chan_bps: n.bus_mt_per_s * 1e6 * chan_bytes_per_transfer,
        chan_write_bps: n.bus_write_mt_per_s.unwrap_or(n.bus_mt_per_s)
            * 1e6
            * chan_bytes_per_transfer,
        buffer_bytes: b.bytes,
        gc_free_blocks: f.gc_free_blocks.unwrap_or(2),
        compress: f.compression.as_deref() == Some("sandforce"),
        min_stored: f.min_stored_fraction.unwrap_or(0.1),
        trim: f.trim.unwrap_or(true),
        power,
        slc: d
            .slc_cache
            .as_ref()
            .map(|c| SlcCache::new(c.program_ns, c.static_bytes, c.dynamic_bytes)),
    }
}

/// A RAID-0 (striped) or JBOD (concatenated) volume over `members`: each member contributes
/// as much as the smallest one holds, whole stripes only.
fn raid_volume(
    leaves: &[Leaf],
    members: Vec<Vol>,
    striped: bool,
    stripe_bytes: Option<u64>,
) -> Result<Vol, String> {
    let smallest = members
        .iter()
        .map(|m| match m {
            Vol::Leaf(i) => leaves[*i as usize].dev.size(),
            _ => 0,
        })
        .min()
        .unwrap_or(0);
    let stripe = if striped { stripe_bytes } else { None };
    if let Some(s) = stripe.filter(|&s| s > smallest) {
        return Err(format!(
            "a stripe of {s} bytes is larger than a member ({smallest} bytes): the volume would \
             hold nothing"
        ));
    }
    Ok(Vol::Raid {
        stripe,
        member_bytes: stripe.map_or(smallest, |s| smallest / s * s),
        members,
    })
}
