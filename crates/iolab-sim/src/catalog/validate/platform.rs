//! A platform entry's rules: its drivers, links, HBAs, RAID chips and ports.

use super::*;
use crate::SimError;
use iolab_link::Link;

impl PlatformSpec {
    /// Checks every cross-field rule: the tables of drivers, links and HBAs, then each port.
    pub fn validate(&self, file: &str) -> Result<(), SimError> {
        need_source(file, "", &self.source)?;
        for (n, d) in &self.drivers {
            need_source(file, &format!("drivers.{n}"), &d.source)?;
        }
        for (n, l) in &self.links {
            check_link_spec(file, &format!("links.{n}"), l)?;
        }
        for (n, h) in &self.hbas {
            need_source(file, &format!("hbas.{n}"), &h.source)?;
        }
        if self.ports.is_empty() {
            return Err(bad(file, "ports", "a platform needs at least one port"));
        }
        if self.ports.values().filter(|p| p.default).count() > 1 {
            return Err(bad(file, "ports", "at most one port may be the default"));
        }
        for (n, p) in &self.ports {
            self.check_port(file, &format!("ports.{n}"), p)?;
        }
        Ok(())
    }

    /// One port (`key`: `ports.<name>`): its slot, path, HBA, driver and RAID volume.
    fn check_port(&self, file: &str, key: &str, p: &PortSpec) -> Result<(), SimError> {
        need_source(file, key, &p.source)?;
        if let Some(s) = &p.slot {
            if parse_std_link(s).is_none() {
                return Err(bad(
                    file,
                    format!("{key}.slot"),
                    format!(
                        "unknown link '{s}': a slot is a standard link the drive negotiates \
                         with: sata1.5, sata3, sata6 or pcie<gen>x<lanes> (gen 1–5, \
                         x1/x2/x4/x8/x16); the hops behind it go in path"
                    ),
                ));
            }
        }
        for (i, h) in p.path.iter().enumerate() {
            check_link(file, &format!("{key}.path[{i}]"), h, &self.links)?;
        }
        if let Some(h) = &p.hba {
            if !self.hbas.contains_key(h) {
                let known = if self.hbas.is_empty() {
                    "none".to_string()
                } else {
                    self.hbas.keys().cloned().collect::<Vec<_>>().join(", ")
                };
                return Err(bad(
                    file,
                    format!("{key}.hba"),
                    format!(
                        "unknown hba '{h}' (this platform's: {known}): define [hbas.{h}] \
                         (part, command_ns, latency_ns, source) or name one of them"
                    ),
                ));
            }
        }
        if let Some(d) = &p.driver {
            if !self.drivers.contains_key(d) {
                return Err(bad(
                    file,
                    format!("{key}.driver"),
                    format!("unknown driver '{d}': define [drivers.{d}]"),
                ));
            }
        }
        match (&p.raid, &p.slot) {
            (Some(r), _) => self.check_raid(file, key, p, r),
            (None, None) => Err(bad(
                file,
                format!("{key}.slot"),
                "a port needs a slot or a raid",
            )),
            _ => Ok(()),
        }
    }

    /// A port's RAID volume (`r`, of port `p` at `key`): its level, members and stripe.
    fn check_raid(
        &self,
        file: &str,
        key: &str,
        p: &PortSpec,
        r: &RaidSpec,
    ) -> Result<(), SimError> {
        check_raid_port_has_no_link(file, key, p)?;
        if !matches!(r.level.as_str(), "raid0" | "jbod") {
            return Err(bad(file, format!("{key}.raid.level"), "use raid0 or jbod"));
        }
        if r.members.is_empty() {
            return Err(bad(file, format!("{key}.raid.members"), "needs members"));
        }
        self.check_raid_members(file, key, r)?;
        if r.level == "jbod" {
            check_jbod_has_no_stripe(file, &format!("{key}.raid.stripe_bytes"), r.stripe_bytes)?;
        }
        if r.level == "raid0" && r.stripe_bytes.is_none_or(|s| s == 0 || s % 512 != 0) {
            return Err(bad(
                file,
                format!("{key}.raid.stripe_bytes"),
                "raid0 needs a positive stripe size, a multiple of 512",
            ));
        }
        Ok(())
    }

    /// A RAID volume's members: each a plain port of this platform, listed once, all of one
    /// kind of slot.
    fn check_raid_members(&self, file: &str, key: &str, r: &RaidSpec) -> Result<(), SimError> {
        for (i, m) in r.members.iter().enumerate() {
            if r.members[..i].contains(m) {
                return Err(bad(
                    file,
                    format!("{key}.raid.members"),
                    format!("'{m}' is listed twice: a port holds one drive"),
                ));
            }
            match self.ports.get(m) {
                Some(mp) if mp.raid.is_none() && mp.slot.is_some() => {}
                _ => {
                    return Err(bad(
                        file,
                        format!("{key}.raid.members"),
                        format!("'{m}' is not a plain port of this platform"),
                    ))
                }
            }
        }
        // One drive model fills every member port, so one drive must attach to
        // each: a SATA and a PCIe slot in one volume leave no drive that fits (a
        // slot that is no link at all is reported at its own port).
        let slots: Vec<(&String, Link)> = r
            .members
            .iter()
            .filter_map(|m| Some((m, parse_std_link(self.ports[m].slot.as_deref()?)?)))
            .collect();
        if let Some(((first, a), rest)) = slots.split_first() {
            if let Some((m, b)) = rest.iter().find(|(_, b)| negotiate(*a, *b).is_none()) {
                return Err(bad(
                    file,
                    format!("{key}.raid.members"),
                    format!(
                        "'{first}' is a {a} port and '{m}' a {b} one: no drive \
                         attaches to both, so none could fill the volume; list \
                         ports of one kind (all SATA or all PCIe)"
                    ),
                ));
            }
        }
        Ok(())
    }
}
