//! Resources ("busy until" a time) and pipes: links with a transfer-time law.

use crate::catalog::LinkKind;
use iolab_link::{Framing, Link, TlpParams};

/// Index of a resource.
pub type ResId = u32;

/// What a resource is, for power and bottleneck reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ResKind {
    /// A link pipe (SATA, PCIe, DMI, PCI-X, cable).
    Link,
    /// A host bus adapter or RAID chip.
    Hba,
    /// SSD controller cores.
    Controller,
    /// SSD internal datapath.
    DataPath,
    /// NAND channel.
    Channel,
    /// NAND die.
    Die,
    /// HDD actuator.
    Disk,
    /// Host memory (a tiered volume's RAM layer).
    Memory,
    /// A drive's power budget (its NVMe power state's sustained maximum).
    Power,
}

/// One resource: busy until a time, with its accumulated busy time.
#[derive(Clone, Debug)]
pub struct Res {
    /// Time it is busy until.
    pub busy_until: u64,
    /// Total busy time.
    pub busy_ns: u64,
    /// Kind.
    pub kind: ResKind,
    /// Group name (resources of one kind in one component share it).
    pub group: String,
}

/// Which way a pipe carries data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toward {
    /// Commands and written data, from the host to the drive.
    Drive,
    /// Read data and completions, from the drive to the host.
    Host,
}

/// A pipe: a resource with a transfer-time law `bytes × ns_per_byte + packets × per_packet_ns`.
#[derive(Clone, Debug)]
pub struct Pipe {
    /// Its resource.
    pub res: ResId,
    ns_per_byte: f64,
    packet: u64,
    /// `log2(packet)` when the packet is a power of two, as in every link of the catalog (PCIe
    /// payload sizes, the 8 KiB SATA data FIS, 4 KiB datapath chunks): packets are then
    /// counted with a shift, where the division drew more perf samples than any other
    /// instruction of a request's path.
    packet_shift: Option<u32>,
    per_packet_ns: f64,
    /// Time of one full packet (every transfer's first hop on to the next pipe).
    pub(super) packet_ns: u64,
    /// Time of a 4 KiB transfer, the size of every random test: looked up instead of worked
    /// out in floating point, which cost 32 instructions per modelled 4 KiB write.
    time_4k: u64,
    /// Latency of crossing the hop.
    pub hop_ns: u64,
}

impl Pipe {
    /// A pipe for a link, with the link math of `iolab-link` (encoding, TLP or FIS framing).
    /// `toward` says which way it carries data: PCIe data toward the drive travels as
    /// completions to the device's reads of host memory (3-DW headers), data toward the host
    /// as the device's memory writes to 64-bit addresses (4-DW headers); SKP ordered sets take
    /// their share of every PCIe lane either way.
    pub fn new(res: ResId, kind: LinkKind, mps: u32, hop_ns: u64, toward: Toward) -> Pipe {
        match kind {
            LinkKind::Std(link) => {
                let tlp = match toward {
                    Toward::Drive => TlpParams::COMPLETION,
                    Toward::Host => TlpParams::HOST_MEMORY_WRITE,
                };
                let framing = Framing {
                    payload_bytes: match link {
                        Link::Sata { .. } => iolab_link::SATA_MAX_FIS_PAYLOAD_BYTES,
                        _ => mps,
                    },
                    tlp,
                    fis_gap_ns: None,
                };
                // The share of symbol times left to TLPs once SKP ordered sets are sent.
                let left = link
                    .pcie_equivalent()
                    .map_or(1.0, |(gen, _)| 1.0 - gen.skp_fraction());
                let packet = framing.payload_bytes as u64;
                let ns_per_byte = link.after_encoding().time_ns(1) / left;
                let per_packet_ns =
                    link.transfer_ns(packet, &framing) / left - packet as f64 * ns_per_byte;
                Pipe::with(res, ns_per_byte, packet, per_packet_ns, hop_ns)
            }
            // Without bursts data flows whole, counted in 4 KiB packets of no overhead. With
            // them each burst costs its overhead, and toward the drive the device also spends
            // a request transaction per `read_request_bytes`, shared out over the bursts it
            // brings back.
            LinkKind::Raw {
                bytes_per_s,
                bursts,
                ..
            } => {
                let (packet, per_packet_ns) = bursts.map_or((4096, 0.0), |b| {
                    let requests = match toward {
                        Toward::Drive => {
                            b.read_request_ns * b.bytes as f64 / b.read_request_bytes as f64
                        }
                        Toward::Host => 0.0,
                    };
                    (b.bytes as u64, b.overhead_ns + requests)
                });
                Pipe::with(res, 1e9 / bytes_per_s, packet, per_packet_ns, hop_ns)
            }
        }
    }

    /// A pure rate pipe (SSD datapath).
    pub fn rate(res: ResId, bytes_per_s: f64) -> Pipe {
        Pipe::with(res, 1e9 / bytes_per_s, 4096, 0.0, 0)
    }

    fn with(res: ResId, ns_per_byte: f64, packet: u64, per_packet_ns: f64, hop_ns: u64) -> Pipe {
        let mut p = Pipe {
            res,
            ns_per_byte,
            packet,
            packet_shift: packet.is_power_of_two().then(|| packet.trailing_zeros()),
            per_packet_ns,
            packet_ns: 0,
            time_4k: 0,
            hop_ns,
        };
        p.packet_ns = p.time_of(packet);
        p.time_4k = p.time_of(4096);
        p
    }

    #[inline]
    fn time(&self, bytes: u64) -> u64 {
        if bytes == 4096 {
            self.time_4k
        } else {
            self.time_of(bytes)
        }
    }

    /// The transfer-time law.
    #[inline]
    fn time_of(&self, bytes: u64) -> u64 {
        let packets = match self.packet_shift {
            Some(shift) => (bytes + self.packet - 1) >> shift,
            None => bytes.div_ceil(self.packet),
        };
        (bytes as f64 * self.ns_per_byte + packets as f64 * self.per_packet_ns) as u64
    }

    /// Time of the first packet of a `bytes` transfer, given the transfer's time `whole`.
    #[inline]
    fn first_packet(&self, bytes: u64, whole: u64) -> u64 {
        if bytes >= self.packet {
            self.packet_ns
        } else {
            whole
        }
    }

    /// Payload rate in bytes/s for large transfers.
    pub fn bytes_per_s(&self) -> f64 {
        self.packet as f64 / (self.packet as f64 * self.ns_per_byte + self.per_packet_ns) * 1e9
    }
}

/// Moves `bytes` through a chain of pipes arriving at `t`; cut-through: a hop starts once the
/// first packet has crossed the previous one, ends no earlier than the previous hop's end plus
/// one packet, and is occupied only for its own transfer time (other flows' packets interleave
/// on a packet link). Returns when the last byte has crossed the chain.
#[inline]
pub fn transfer(res: &mut [Res], chain: &[Pipe], t: u64, bytes: u64) -> u64 {
    transfer_through(res, chain.iter(), t, t, bytes)
}

/// [`transfer`] over any sequence of pipes (a host path followed by a drive's datapath), for
/// data whose first bytes are available at `head` and whose last bytes arrive at `tail` (data
/// still streaming in from a NAND channel).
#[inline]
pub(super) fn transfer_through<'p>(
    res: &mut [Res],
    chain: impl Iterator<Item = &'p Pipe>,
    head: u64,
    tail: u64,
    bytes: u64,
) -> u64 {
    stream_through(res, chain, head, tail, bytes).1
}

/// [`transfer_through`], returning where the stream is after the chain: when its first bytes
/// and when its last bytes have crossed it (the `head` and `tail` of a next chain).
#[inline]
pub(super) fn stream_through<'p>(
    res: &mut [Res],
    chain: impl Iterator<Item = &'p Pipe>,
    head: u64,
    tail: u64,
    bytes: u64,
) -> (u64, u64) {
    let mut head = head;
    let mut tail = tail.max(head);
    for p in chain {
        let d = p.time(bytes);
        let first = p.first_packet(bytes, d);
        let r = &mut res[p.res as usize];
        let start = head.max(r.busy_until);
        r.busy_until = start + d;
        r.busy_ns += d;
        let end = (start + d).max(tail + first);
        head = start + first + p.hop_ns;
        tail = end + p.hop_ns;
    }
    (head, tail)
}

/// Reserves `dur` on the earliest-free of `ids` from `t`; returns the end.
#[inline]
pub(super) fn reserve_any(res: &mut [Res], ids: &[ResId], t: u64, dur: u64) -> u64 {
    reserve(res, earliest_free(res, ids), t, dur)
}

/// The first of `ids` to be free (the first listed on a tie).
#[inline]
pub(super) fn earliest_free(res: &[Res], ids: &[ResId]) -> ResId {
    let mut best = ids[0];
    for &i in &ids[1..] {
        if res[i as usize].busy_until < res[best as usize].busy_until {
            best = i;
        }
    }
    best
}

/// Marks resource `id` busy for `dur` from `start`, a time already chosen (in a gap, or after
/// what it waits for); returns the end.
#[inline]
pub(super) fn occupy(res: &mut [Res], id: ResId, start: u64, dur: u64) -> u64 {
    let r = &mut res[id as usize];
    r.busy_until = r.busy_until.max(start + dur);
    r.busy_ns += dur;
    start + dur
}

#[inline]
pub(super) fn reserve(res: &mut [Res], id: ResId, t: u64, dur: u64) -> u64 {
    let start = t.max(res[id as usize].busy_until);
    occupy(res, id, start, dur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_link::PcieGen;

    fn pipe(link: Link, mps: u32, toward: Toward) -> Pipe {
        Pipe::new(0, LinkKind::Std(link), mps, 0, toward)
    }

    #[test]
    fn read_data_pays_64_bit_write_headers_and_written_data_completion_headers() {
        let link = Link::pcie(PcieGen::Gen2, 4);
        let skp = 1.0 - PcieGen::Gen2.skp_fraction();
        // 2,000 MB/s after 8b/10b; 256-byte TLPs with 24 bytes (host) or 20 (drive) around them.
        let up = pipe(link, 256, Toward::Host).bytes_per_s() / 1e6;
        let down = pipe(link, 256, Toward::Drive).bytes_per_s() / 1e6;
        assert!((up - 2000.0 * 256.0 / 280.0 * skp).abs() < 0.01, "{up}");
        assert!((down - 2000.0 * 256.0 / 276.0 * skp).abs() < 0.01, "{down}");
        assert!(up < down);
    }

    #[test]
    fn sata_has_no_tlps_or_skp_ordered_sets() {
        let link = Link::sata(iolab_link::SataGen::Gen3);
        let up = pipe(link, 256, Toward::Host);
        let down = pipe(link, 256, Toward::Drive);
        assert_eq!(up.bytes_per_s(), down.bytes_per_s());
        assert_eq!(up.time(8192), down.time(8192));
    }
}
