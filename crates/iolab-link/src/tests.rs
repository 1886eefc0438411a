//! The figures the SATA and PCIe specifications and the reviews quote for line rates and ceilings.

use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn sata_after_8b10b() {
    let mb = |g| Link::sata(g).after_encoding().mb_per_s();
    assert!(close(mb(SataGen::Gen1), 150.0, 1e-9));
    assert!(close(mb(SataGen::Gen2), 300.0, 1e-9));
    assert!(close(mb(SataGen::Gen3), 600.0, 1e-9));
    assert!(close(
        Link::sata(SataGen::Gen3).line_rate().bits_per_s(),
        6e9,
        1e-3
    ));
}

#[test]
fn sata_fis_factor_matches_reviews() {
    // 6 Gb/s drives top out at 550–557 MB/s, 3 Gb/s ones at 275–285 MB/s (§3.1 [14]).
    let six = Link::sata(SataGen::Gen3).effective(8192).mb_per_s();
    assert!((545.0..=560.0).contains(&six), "{six}");
    let three = Link::sata(SataGen::Gen2).effective(8192).mb_per_s();
    assert!((270.0..=286.0).contains(&three), "{three}");
    // Payloads above one FIS are clamped to 8 KiB; small FISes pay the gap more often.
    assert_eq!(
        Link::sata(SataGen::Gen3).effective(1 << 20),
        Link::sata(SataGen::Gen3).effective(8192)
    );
    assert!(Link::sata(SataGen::Gen3).effective(512).mb_per_s() < 300.0);
}

#[test]
fn pcie_per_lane_and_x4() {
    let gb = |g, l| Link::pcie(g, l).after_encoding().gb_per_s();
    assert!(close(gb(PcieGen::Gen1, 1), 0.25, 1e-9)); // PCIe 1.0 x1 = 250 MB/s
    assert!(close(gb(PcieGen::Gen2, 1), 0.5, 1e-9));
    assert!(close(gb(PcieGen::Gen3, 1), 0.985, 0.001));
    assert!(close(gb(PcieGen::Gen3, 4), 3.94, 0.002)); // ≈3.94 GB/s before TLP overhead
    assert!(close(gb(PcieGen::Gen4, 4), 7.88, 0.005));
    assert!(close(gb(PcieGen::Gen5, 4), 15.75, 0.01));
    assert!(close(gb(PcieGen::Gen1, 4), 1.0, 1e-9));
}

#[test]
fn dmi_is_its_pcie_equivalent() {
    let dmi2 = Link::dmi(DmiGen::Dmi2);
    assert!(close(dmi2.after_encoding().gb_per_s(), 2.0, 1e-9)); // DMI 2.0 ≈ 2 GB/s
    assert_eq!(
        dmi2.after_encoding(),
        Link::pcie(PcieGen::Gen2, 4).after_encoding()
    );
    let dmi3 = Link::dmi(DmiGen::Dmi3);
    assert_eq!(
        dmi3.after_encoding(),
        Link::pcie(PcieGen::Gen3, 4).after_encoding()
    );
    // Observed DMI 2.0 ceilings are 1.6–1.8 GB/s; TLP framing alone leaves us just above that.
    let eff = dmi2.effective(128).gb_per_s();
    assert!((1.6..=1.9).contains(&eff), "{eff}");
}

#[test]
fn tlp_efficiency_table() {
    let three = TlpParams::default();
    let four = TlpParams {
        header: TlpHeader::FourDw,
        ecrc: false,
    };
    assert_eq!(three.overhead_bytes(), 20);
    assert_eq!(four.overhead_bytes(), 24);
    assert!(close(three.efficiency(128), 0.865, 0.001));
    assert!(close(three.efficiency(256), 0.928, 0.001));
    assert!(close(four.efficiency(128), 0.842, 0.001));
    assert!(close(four.efficiency(256), 0.914, 0.001));
    assert_eq!(three.efficiency(0), 0.0);
}

#[test]
fn transfer_time_agrees_with_effective() {
    let l = Link::pcie(PcieGen::Gen3, 4);
    let f = Framing::with_payload(256);
    let bytes = 256 * 1000;
    let rate = bytes as f64 / (l.transfer_ns(bytes, &f) / 1e9);
    assert!(close(rate, l.effective(256).bytes_per_s(), 1.0));
    let s = Link::sata(SataGen::Gen3);
    let f = Framing::with_payload(8192);
    let rate = 8192.0 * 100.0 / (s.transfer_ns(8192 * 100, &f) / 1e9);
    assert!(close(rate, s.effective(8192).bytes_per_s(), 1.0));
    // A 4 KiB read over PCIe needs 16 TLPs of 256 B.
    assert!(l.transfer_ns(4096, &Framing::with_payload(256)) > l.after_encoding().time_ns(4096));
    assert_eq!(l.transfer_ns(0, &f), 0.0);
}

#[test]
fn bottleneck_picks_the_narrowest_hop() {
    // Testbed A: a 6 Gb/s drive behind a Marvell bridge on PCIe 1.0 x1.
    let sata = Link::sata(SataGen::Gen3);
    let pcie = Link::pcie(PcieGen::Gen1, 1);
    let (i, r) = bottleneck([
        (&sata, Framing::with_payload(8192)),
        (&pcie, Framing::with_payload(128)),
    ])
    .unwrap();
    assert_eq!(i, 1);
    assert!(r.mb_per_s() < 250.0);
    assert!(bottleneck(std::iter::empty()).is_none());
}

#[test]
fn parse_helpers_and_display() {
    assert_eq!(SataGen::from_gbps(1.5), Some(SataGen::Gen1));
    assert_eq!(SataGen::from_gbps(4.0), None);
    assert_eq!(PcieGen::from_gt_per_s(8.0), Some(PcieGen::Gen3));
    assert_eq!(PcieGen::from_gt_per_s(2.5), Some(PcieGen::Gen1));
    assert_eq!(
        Link::pcie(PcieGen::Gen3, 4).to_string(),
        "PCIe 3.0 x4 (8 GT/s)"
    );
    assert_eq!(Link::sata(SataGen::Gen3).to_string(), "SATA 6 Gb/s");
    assert_eq!(
        Link::dmi(DmiGen::Dmi2).to_string(),
        "DMI 2.0 (= PCIe 2.0 x4)"
    );
    assert!(Link::pcie(PcieGen::Gen1, 1).is_slower_than(&Link::pcie(PcieGen::Gen3, 4)));
}

#[test]
fn serde_shape_is_stable() {
    let j = serde_json::to_string(&Link::pcie(PcieGen::Gen3, 4)).unwrap();
    assert_eq!(j, r#"{"kind":"pcie","gen":"gen3","lanes":4}"#);
    let j = serde_json::to_string(&Link::sata(SataGen::Gen3)).unwrap();
    assert_eq!(j, r#"{"kind":"sata","gen":"sata_6gbps"}"#);
    let back: Link = serde_json::from_str(&j).unwrap();
    assert_eq!(back, Link::sata(SataGen::Gen3));
}

#[test]
fn skp_ordered_sets_take_a_fixed_share_of_each_lane() {
    // 4 symbols in every 1,542 up to 2.x; one 16-symbol block in every 376 from 3.0.
    assert!(close(PcieGen::Gen1.skp_fraction(), 0.002594, 0.000001));
    assert_eq!(PcieGen::Gen1.skp_fraction(), PcieGen::Gen2.skp_fraction());
    assert!(close(PcieGen::Gen3.skp_fraction(), 0.002660, 0.000001));
    assert_eq!(PcieGen::Gen3.skp_fraction(), PcieGen::Gen5.skp_fraction());
}

#[test]
fn host_memory_writes_carry_64_bit_addresses_and_completions_do_not() {
    assert_eq!(TlpParams::HOST_MEMORY_WRITE.overhead_bytes(), 24);
    assert_eq!(TlpParams::COMPLETION.overhead_bytes(), 20);
}
