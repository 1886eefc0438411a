//! A card entry's rules: its members and the hops of its own path.

use super::*;
use crate::SimError;

impl DriveSpec {
    /// The rules of a card entry (its kind's tables are present, checked by the caller).
    pub(super) fn validate_card(&self, file: &str) -> Result<(), SimError> {
        let missing = |table: &str| self.missing(file, table);
        let c = self.card.as_ref().ok_or_else(|| missing("card"))?;
        need_source(file, "card", &c.source)?;
        if parse_std_link(&c.member_link).is_none() {
            return Err(bad(
                file,
                "card.member_link",
                format!(
                    "'{}' must be a standard link (sata1.5, sata3, sata6 or \
                     pcie<gen>x<lanes>): the members' own ports on the card's chip, not \
                     one of the card's [links]",
                    c.member_link
                ),
            ));
        }
        if c.count > MAX_CARD_MEMBERS {
            return Err(bad(
                file,
                "card.count",
                format!("at most {MAX_CARD_MEMBERS} members: each is a whole drive model"),
            ));
        }
        for (i, p) in c.path.iter().enumerate() {
            check_link(file, &format!("card.path[{i}]"), p, &self.links)?;
        }
        if c.count == 0 {
            return Err(bad(file, "card.count", "must be at least 1"));
        }
        if c.used.unwrap_or(c.count) == 0 || c.used.unwrap_or(c.count) > c.count {
            return Err(bad(file, "card.used", "must be between 1 and card.count"));
        }
        if c.queue_depth == Some(0) {
            return Err(bad(
                file,
                "card.queue_depth",
                "must be at least 1 (or left out: as many as the driver sends)",
            ));
        }
        match c.raid.as_str() {
            "raid0" => {
                if c.stripe_bytes.is_none_or(|s| s == 0 || s % 512 != 0) {
                    return Err(bad(
                        file,
                        "card.stripe_bytes",
                        "raid0 needs a stripe size that is a positive multiple of 512",
                    ));
                }
            }
            "jbod" => check_jbod_has_no_stripe(file, "card.stripe_bytes", c.stripe_bytes)?,
            o => {
                return Err(bad(
                    file,
                    "card.raid",
                    format!("unknown RAID level '{o}': use raid0 or jbod"),
                ))
            }
        }
        Ok(())
    }
}
