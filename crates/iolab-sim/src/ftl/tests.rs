use super::*;

fn small() -> Ftl {
    // 4 dies × 64 blocks × 64 units; 80 % of raw is user space.
    let lpns = 4 * 64 * 64 * 8 / 10;
    Ftl::new(lpns, 4, 64 * 4096, 64, 2, false)
}

#[test]
fn random_overwrites_keep_counts_exact_and_amplify() {
    let mut f = small();
    let mut rng = iolab_core::rng::Rng::new(3);
    let lpns = f.lpns();
    for i in 0..lpns * 6 {
        let lpn = if i < lpns { i } else { rng.below(lpns) };
        let die = (i % 4) as u32;
        if f.write(lpn, die, 1) {
            f.collect(die);
        }
    }
    assert_eq!(f.valid_units(), lpns);
    assert_eq!(f.mapped_lpns(), lpns);
    let wa = (f.counters.host_units + f.counters.gc_units) as f64 / f.counters.host_units as f64;
    assert!(wa > 1.3 && wa < 4.0, "write amplification {wa}");
}

#[test]
fn steady_fill_matches_user_data_and_needs_gc_at_once() {
    let mut f = small();
    f.fill_steady(8);
    assert_eq!(f.valid_units(), f.lpns());
    for l in 0..f.lpns() {
        assert!(f.die_of(l).is_some());
    }
    let mut rng = iolab_core::rng::Rng::new(5);
    let lpns = f.lpns();
    let mut gc_runs = 0;
    for i in 0..2000u64 {
        let die = (i % 4) as u32;
        if f.write(rng.below(lpns), die, 1) {
            f.collect(die);
            gc_runs += 1;
        }
    }
    assert!(gc_runs > 0);
    assert_eq!(f.valid_units(), lpns);
}

#[test]
fn a_steady_fill_scatters_consecutive_lpns_over_the_blocks_and_dies() {
    // Which blocks (and dies) the first tenth of the LPNs sit in.
    let spread = |f: &mut Ftl| {
        let mut blocks = std::collections::HashSet::new();
        let mut dies = std::collections::HashSet::new();
        for l in 0..f.lpns() / 10 {
            let (node, die) = f.block_of(l).expect("mapped");
            blocks.insert(node);
            dies.insert(die);
        }
        (blocks.len(), dies.len())
    };
    let mut sequential = small();
    sequential.fill_sequential(8);
    let mut steady = small();
    steady.fill_steady(8);
    let holding = steady.nodes.iter().filter(|n| n.valid > 0).count();
    let (seq_blocks, _) = spread(&mut sequential);
    let (steady_blocks, steady_dies) = spread(&mut steady);
    // In LPN order a tenth of the drive fills a tenth of the blocks; after random writes
    // it is in nearly every block that holds data, on every die.
    assert!(seq_blocks <= holding / 8, "{seq_blocks} of {holding}");
    assert!(
        steady_blocks * 10 >= holding * 9,
        "{steady_blocks} of {holding}"
    );
    assert_eq!(steady_dies, 4);
    // Rewriting that tenth in order then costs collections at once, as random writes do.
    let lpns = steady.lpns();
    let (host_before, gc_before) = (steady.counters.host_units, steady.counters.gc_units);
    for l in 0..lpns / 10 {
        let die = (l % 4) as u32;
        if steady.write(l, die, 1) {
            steady.collect(die);
        }
    }
    let moved = steady.counters.gc_units - gc_before;
    let written = steady.counters.host_units - host_before;
    assert!(moved > written, "{moved} units moved for {written} written");
    assert_eq!(steady.valid_units(), lpns);
}

#[test]
fn compaction_renumbers_nodes_and_changes_nothing_the_ftl_decides() {
    let mut plain = small();
    plain.set_compaction(Compaction {
        growth: f64::INFINITY,
        min_nodes: usize::MAX,
    });
    let mut compacted = small();
    compacted.set_compaction(Compaction {
        growth: 1.0,
        min_nodes: 8,
    });
    let mut rng = iolab_core::rng::Rng::new(11);
    let lpns = plain.lpns();
    for i in 0..lpns * 6 {
        let lpn = if i < lpns { i } else { rng.below(lpns) };
        let die = (i % 4) as u32;
        if i % 97 == 0 {
            plain.invalidate(lpn); // TRIM
            compacted.invalidate(lpn);
            continue;
        }
        let low = plain.write(lpn, die, 1);
        assert_eq!(compacted.write(lpn, die, 1), low, "write {i}");
        if !low {
            continue;
        }
        let (a, b) = (plain.collect(die), compacted.collect(die));
        assert_eq!(
            (a.moved_units, a.erased_units),
            (b.moved_units, b.erased_units)
        );
        if compacted.wants_compaction() {
            // An id held outside the FTL: the node an LPN's map entry names, which may
            // have been collected into another since.
            let probe = rng.below(lpns);
            let named = compacted.map.get(probe);
            let was_root = compacted.nodes[named as usize].parent == named;
            let ids = compacted.compact([named]);
            let now = compacted.block_of(probe).map_or(UNMAPPED, |(node, _)| node);
            assert_eq!(ids.holder(named), now, "probe {probe}");
            let same = if was_root { now } else { UNMAPPED };
            assert_eq!(ids.same(named), same, "probe {probe}");
        }
    }
    assert!(compacted.compactions >= 5, "{}", compacted.compactions);
    assert!(
        compacted.nodes.len() * 2 < plain.nodes.len(),
        "{} nodes against {}",
        compacted.nodes.len(),
        plain.nodes.len()
    );
    assert_eq!(compacted.counters, plain.counters);
    assert_eq!(compacted.valid_units(), plain.valid_units());
    assert_eq!(compacted.mapped_lpns(), plain.mapped_lpns());
    for die in 0..4 {
        assert_eq!(compacted.free_units(die), plain.free_units(die));
    }
    for lpn in 0..lpns {
        assert_eq!(compacted.die_of(lpn), plain.die_of(lpn), "lpn {lpn}");
    }
}

#[test]
fn an_analytic_map_resolves_every_lpn_as_a_stored_map_does() {
    // 4 dies x 256 blocks x 64 units: 52K LPNs, 13 chunks of the map.
    let new = || {
        let mut f = Ftl::new(4 * 256 * 64 * 8 / 10, 4, 64 * 4096, 256, 2, false);
        f.set_compaction(Compaction {
            growth: 1.0,
            min_nodes: 64,
        });
        f
    };
    for steady in [false, true] {
        let (mut lazy, mut stored) = (new(), new());
        for f in [&mut lazy, &mut stored] {
            if steady {
                f.fill_steady(8);
            } else {
                f.fill_sequential(8);
            }
        }
        stored.map.store_all();
        assert_eq!(lazy.map.stored_entries(), 0, "a fill stores nothing");
        let lpns = lazy.lpns();
        let mut rng = iolab_core::rng::Rng::new(7);
        // A few scattered writes (sparse chunks), then the first chunk whole (dense), with
        // trims, collections and compactions in between.
        let mut writes: Vec<u64> = (0..200).map(|_| rng.below(lpns)).collect();
        writes.extend(0..5000);
        // A stretch written in order, a program unit's 8 LPNs per die (runs), then
        // scattered writes over everything.
        let in_order = writes.len();
        writes.extend(lpns / 2..lpns / 2 + 6000);
        writes.extend((0..3000).map(|_| rng.below(lpns)));
        for (i, &lpn) in writes.iter().enumerate() {
            let die = (if i < in_order { i % 4 } else { (i / 8) % 4 }) as u32;
            if i % 53 == 0 {
                lazy.invalidate(lpn);
                stored.invalidate(lpn);
                continue;
            }
            let low = lazy.write(lpn, die, 1);
            assert_eq!(stored.write(lpn, die, 1), low);
            if low {
                lazy.collect(die);
                stored.collect(die);
            }
            if lazy.wants_compaction() {
                lazy.compact([]);
                stored.compact([]);
            }
        }
        assert!(lazy.compactions > 0);
        assert!(
            (lazy.map.stored_entries() as u64) < lpns / 2,
            "{} entries stored of {lpns}",
            lazy.map.stored_entries()
        );
        for lpn in 0..lpns {
            assert_eq!(lazy.block_of(lpn), stored.block_of(lpn), "lpn {lpn}");
        }
        assert_eq!(lazy.counters, stored.counters);
        assert_eq!(lazy.valid_units(), stored.valid_units());
        // A TRIM of the whole drive counts the untouched LPNs per block.
        lazy.invalidate_all();
        for lpn in 0..lpns {
            stored.invalidate(lpn);
        }
        assert_eq!(lazy.mapped_lpns(), 0);
        assert_eq!(lazy.valid_units(), 0);
        assert_eq!(stored.valid_units(), 0);
        assert_eq!(lazy.die_of(lpns / 2), None);
    }
}

#[test]
fn trim_frees_valid_units() {
    let mut f = small();
    f.fill_sequential(8);
    for l in 0..100 {
        f.invalidate(l);
    }
    assert_eq!(f.valid_units(), f.lpns() - 100);
    assert_eq!(f.mapped_lpns(), f.lpns() - 100);
    f.invalidate(5); // already unmapped: no change
    assert_eq!(f.mapped_lpns(), f.lpns() - 100);
    assert_eq!(f.die_of(5), None);
}
