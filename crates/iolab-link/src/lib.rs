//! Interface math for iolab: the bandwidth a SATA, PCIe or DMI link can carry.
//!
//! One module shared by the prober (`iolab probe` computes the ceiling of a real host path) and
//! by the hardware model (`iolab-sim` uses the same links as pipes), so a measured path and a
//! modelled one are judged by the same numbers.
//!
//! Every link has three rates, each one direction:
//!
//! 1. [`Link::line_rate`]: the raw signalling rate over all lanes (6 Gb/s, 8 GT/s × 4).
//! 2. [`Link::after_encoding`]: what the line code leaves (8b/10b → 80 %, 128b/130b → 98.5 %);
//!    the figure spec sheets quote (600 MB/s, 3.94 GB/s).
//! 3. [`Link::effective`]: after protocol framing — TLP headers on PCIe/DMI, FIS framing and
//!    handshakes on SATA — for a given payload per packet.
//!
//! Sources for every constant are cited in the module docs of [`sata`] and [`pcie`]; they come
//! from the interface specifications and the reviews named there.
//!
//! ```
//! use iolab_link::{Link, PcieGen, SataGen};
//!
//! let sata = Link::sata(SataGen::Gen3);
//! assert_eq!(sata.after_encoding().mb_per_s().round(), 600.0);
//! let nvme = Link::pcie(PcieGen::Gen3, 4);
//! assert!((nvme.after_encoding().gb_per_s() - 3.94).abs() < 0.01);
//! // 256-byte TLPs with a 3-DW header: 92.8 % of that.
//! assert!((nvme.effective(256).gb_per_s() - 3.65).abs() < 0.01);
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod encoding;
mod link;
pub mod pcie;
mod rate;
pub mod sata;

pub use encoding::Encoding;
pub use link::{DmiGen, Framing, Link};
pub use pcie::{PcieGen, TlpHeader, TlpParams, DEFAULT_MAX_PAYLOAD_BYTES};
pub use rate::Rate;
pub use sata::{SataGen, SATA_MAX_FIS_PAYLOAD_BYTES};

/// The narrowest of a chain of links (by effective rate with the given framing per link),
/// with its index; `None` for an empty chain. A path's ceiling is the minimum over its hops.
pub fn bottleneck<'a, I>(links: I) -> Option<(usize, Rate)>
where
    I: IntoIterator<Item = (&'a Link, Framing)>,
{
    links
        .into_iter()
        .map(|(l, f)| l.effective_with(&f))
        .enumerate()
        .fold(None, |best: Option<(usize, Rate)>, (i, r)| match best {
            Some((_, b)) if b.bytes_per_s() <= r.bytes_per_s() => best,
            _ => Some((i, r)),
        })
}

#[cfg(test)]
mod tests;
