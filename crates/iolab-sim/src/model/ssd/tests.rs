use super::*;

#[test]
fn sectors_covered_counts_only_whole_sectors_of_the_lpn() {
    assert_eq!(sectors_covered(3, 3 * 4096, 4096), WHOLE_LPN);
    assert_eq!(sectors_covered(3, 0, 1 << 20), WHOLE_LPN);
    assert_eq!(sectors_covered(3, 3 * 4096 + 512, 4096), 0b1111_1110);
    assert_eq!(sectors_covered(4, 3 * 4096 + 512, 4096), 0b0000_0001);
    assert_eq!(sectors_covered(3, 3 * 4096 + 1024, 1536), 0b0001_1100);
    // A sector written in part is not covered: its rest comes from the old copy.
    assert_eq!(sectors_covered(3, 3 * 4096 + 100, 400), 0b0000_0000);
    assert_eq!(sectors_covered(3, 3 * 4096 + 100, 1000), 0b0000_0010);
    // A read needs every sector it touches.
    assert_eq!(sectors_touched(3, 3 * 4096 + 100, 1000), 0b0000_0111);
    assert_eq!(sectors_touched(3, 3 * 4096 + 1024, 1536), 0b0001_1100);
    assert_eq!(sectors_touched(4, 3 * 4096 + 512, 4096), 0b0000_0001);
}

#[test]
fn a_read_held_by_the_budget_waits_for_the_program_in_progress_when_it_is_let_go() {
    let booked: VecDeque<(u64, u64)> = [(100, 200), (300, 400)].into_iter().collect();
    assert_eq!(
        past_the_one_in_progress_at(&booked, 50),
        50,
        "nothing started yet"
    );
    assert_eq!(past_the_one_in_progress_at(&booked, 100), 200);
    assert_eq!(
        past_the_one_in_progress_at(&booked, 250),
        250,
        "between two programs"
    );
    assert_eq!(past_the_one_in_progress_at(&booked, 399), 400);
    assert_eq!(past_the_one_in_progress_at(&booked, 400), 400, "all over");
}

#[test]
fn a_read_fits_in_a_gap_before_later_programs_or_waits_for_the_one_it_would_overlap() {
    let mut booked: VecDeque<(u64, u64)> = [(100, 200), (300, 400)].into_iter().collect();
    // Fits before the first program.
    assert_eq!(fit_before_booked(&mut booked, 0, 10, 50), 10);
    // Would overlap the first: after it, and the gap to the second is wide enough.
    assert_eq!(fit_before_booked(&mut booked, 0, 80, 50), 200);
    // Too long for that gap: after the second.
    assert_eq!(fit_before_booked(&mut booked, 0, 80, 150), 400);
    // Programs over by `now` are forgotten.
    assert_eq!(fit_before_booked(&mut booked, 250, 250, 10), 250);
    assert_eq!(booked.len(), 1);
}

#[test]
fn a_full_buffer_admits_writes_in_order_as_programs_free_it() {
    let mut b = WriteBuffer::new(8);
    b.used = 8;
    b.release_at(200, 4);
    b.release_at(100, 4);
    assert_eq!(b.admit(10, 1), 100, "waits for the first program to end");
    // The three units that program freed beyond the first write's need: not before it.
    for _ in 0..3 {
        assert_eq!(b.admit(20, 1), 100);
    }
    assert_eq!(b.admit(30, 1), 200, "the next program's space");
    assert_eq!(b.admit(250, 1), 250, "space free by then");
}

#[test]
fn a_page_register_serves_its_unit_until_the_die_is_used_again() {
    let (mut res, mut ssd) = probe_ssd("ssd750-400");
    let (unit, t_r) = ((5, 9), 50_000);
    let mut read = |unit, at| ssd.read_unit(&mut res, 0, unit, at, t_r);
    assert_eq!(read(unit, 0), 50_000, "the first read of a unit takes tR");
    assert_eq!(
        read(unit, 10_000),
        50_000,
        "while it is read: waits for that tR"
    );
    assert_eq!(read(unit, 60_000), 60_000, "held: no tR");
    assert_eq!(read((5, 10), 60_000), 110_000, "another unit takes tR");
    assert_eq!(read(unit, 120_000), 170_000, "and replaced the first");
    ssd.replace_register_at(0, 200_000); // a program booked from then
    let mut read = |unit, at| ssd.read_unit(&mut res, 0, unit, at, t_r);
    assert_eq!(
        read(unit, 190_000),
        190_000,
        "held until the program starts"
    );
    assert_eq!(read(unit, 200_000), 250_000, "gone once it has");
}

#[test]
fn a_read_waits_for_the_collection_operation_in_progress_only() {
    let mut gc = GcWork {
        start: 1_000,
        copy_ns: 100,
        copies_end: 1_500,
        erase_ns: 300,
        end: 2_100,
        carried: false,
        reclaim_units: 0,
    };
    assert_eq!(gc.op_end(900), 900, "before the collection");
    assert_eq!(gc.op_end(1_000), 1_000, "at an operation's boundary");
    assert_eq!(gc.op_end(1_050), 1_100, "inside a copy");
    assert_eq!(gc.op_end(1_600), 1_800, "inside an erase");
    assert_eq!(gc.op_end(2_100), 2_100, "after the collection");
    gc.delay(20);
    assert_eq!((gc.start, gc.copies_end, gc.end), (1_020, 1_520, 2_120));
    assert_eq!(gc.op_end(1_050), 1_120, "the rest moved back with it");
}

#[test]
fn the_slc_cache_holds_lpns_and_folds_only_current_copies() {
    let mut c = SlcCache::new(200_000, 3 * 4096, 0);
    c.note_write(7, true);
    c.note_write(7, true); // an overwrite in the cache: still one LPN held
    c.note_write(9, true);
    assert_eq!(c.used(), 2 * 4096);
    assert!(c.has_room(4096, 0) && !c.has_room(2 * 4096, 0));
    c.note_write(7, false); // rewritten to the array: the cached copy is stale
    assert_eq!(c.used(), 4096 + 4096, "stale until folding reaches it");
    c.fold(4096); // 7's stale entry is skipped for free, 9 folds
    assert_eq!(c.used(), 0);
    assert!(!c.is_held(7) && !c.is_held(9));
}

#[test]
fn an_idle_drive_folds_its_slc_cache_at_the_arrays_sustained_program_rate() {
    // Folding programs the array as a host write does: each die loads a unit over its
    // channel, then programs it. The 2018 drive's array is Samsung's 600 MB/s after
    // TurboWrite (970 EVO 500 GB), over 16 dies.
    let (_, mut ssd) = probe_ssd("nvme2018-500");
    let held = 1_000_000u64; // 4.1 GB, more than a second of folding
    let slc = ssd.slc.as_mut().expect("the 2018 drive has an SLC cache");
    for lpn in 0..held {
        slc.note_write(lpn, true);
    }
    ssd.fold_slc(1_000_000_000); // every die idle for a second
    let folded = held * 4096 - ssd.slc.as_ref().unwrap().used();
    let unit = ssd.unit_bytes as f64;
    let per_unit_ns = mean_of(ssd.program_ns) as f64 + unit * ssd.chan_load_ns_per_byte;
    let expected = 1e9 / per_unit_ns * unit * ssd.dies.len() as f64;
    assert!(
        (folded as f64 - expected).abs() <= 4096.0,
        "folded {folded} B, expected {expected}"
    );
    assert!(
        (folded as f64 / 1e6 - 600.0).abs() < 1.0,
        "{} MB/s",
        folded as f64 / 1e6
    );
}

#[test]
fn the_2018_drives_slc_array_keeps_up_with_its_write_datapath() {
    // Samsung's 2,300 MB/s inside TurboWrite (970 EVO 500 GB): every die loading a unit over
    // its channel and programming it in SLC mode writes at least that, so a long burst is
    // held by the controller's datapath, not by the dies.
    let cat = crate::catalog::Catalog::load(None).unwrap();
    let (_, drive) = cat.drives.get("nvme2018-500").unwrap();
    let mut res = Vec::new();
    let ssd = build_ssd(&mut res, crate::build::ssd_params(drive), "probe");
    let slc = ssd.slc.as_ref().expect("the 2018 drive has an SLC cache");
    let unit = ssd.unit_bytes as f64;
    let per_unit_ns = slc.program_ns as f64 + unit * ssd.chan_load_ns_per_byte;
    let dies_bps = ssd.dies.len() as f64 * unit / per_unit_ns * 1e9;
    let datapath_bps = drive
        .controller
        .as_ref()
        .unwrap()
        .write_bytes_per_s
        .unwrap();
    assert!(
        dies_bps >= datapath_bps * 0.999,
        "SLC array {dies_bps} B/s against the datapath's {datapath_bps}"
    );
}

#[test]
fn mlc_page_times_keep_the_typical_time_as_their_mean() {
    assert_eq!(page_times(80_000, false, MLC_READ_US), [80_000, 80_000]);
    let [lower, upper] = page_times(1_300_000, true, MLC_PROGRAM_US);
    assert!(lower < upper);
    assert!(((lower + upper) / 2).abs_diff(1_300_000) <= 1);
    assert!((upper as f64 / lower as f64 - 1300.0 / 500.0).abs() < 1e-5);
}

#[test]
fn a_collection_carries_each_copy_through_the_channel_where_other_dies_loads_wait_for_it() {
    let (mut res, mut ssd) = probe_ssd("ssd750-400");
    let lpns_per_unit = ssd.unit_bytes / 4096;
    let copies = 20;
    let cost = crate::ftl::GcCost {
        moved_units: copies * lpns_per_unit,
        erased_units: 0,
    };
    let (gc, energy) = ssd.collection(&cost, 1_000);
    let xfer = (ssd.unit_bytes as f64 * ssd.chan_ns_per_byte) as u64;
    assert!(xfer > 0);
    let (t_r, t_prog) = (mean_of(ssd.read_ns), mean_of(ssd.program_ns));
    assert_eq!(
        gc.copy_ns,
        t_r + 2 * xfer + t_prog,
        "tR, out to the controller, back in, tPROG"
    );
    assert_eq!(gc.copies_end, 1_000 + copies * gc.copy_ns);
    assert_eq!(copies_of(&gc), copies);
    assert_eq!(
        (energy.read_ns, energy.program_ns),
        (copies * t_r, copies * t_prog),
        "the transfers are channel time, not array time"
    );
    let chan = ssd.chan_of(0);
    let before = res[chan as usize].busy_ns;
    ssd.book_copy_transfers(&mut res, 0, &gc, gc.start);
    assert_eq!(
        res[chan as usize].busy_ns - before,
        copies * 2 * xfer,
        "each copy crosses the channel twice"
    );
    // A program load for another die of the channel, ready when the collection starts, waits
    // for the first slice of transfers and then fits before the next.
    let other = ssd.chans.len() as u32;
    assert_eq!(ssd.chan_of(other), chan);
    let slice = (gc::COPY_SLICE_NS / (2 * xfer)).clamp(1, copies) * 2 * xfer;
    assert_eq!(
        ssd.load_channel(&mut res, chan, 0, 1_000, xfer),
        1_000 + slice + xfer
    );
    // Copies booked from part-way through the collection (the carried tail of one): only
    // those still to run.
    let before = res[chan as usize].busy_ns;
    ssd.book_copy_transfers(&mut res, 0, &gc, gc.copies_end - 3 * gc.copy_ns);
    assert_eq!(res[chan as usize].busy_ns - before, 3 * 2 * xfer);
}

#[test]
fn program_data_goes_in_at_the_write_rate_where_a_controller_feeds_it_slower() {
    // The SF-1200 drives read random data back at 26.55 MB/s per channel and write it at
    // 18.05 (catalog sf1200-120.toml): a copy takes its data out at the one and back in at
    // the other, and a host program's load runs at the write rate.
    let (_, ssd) = probe_ssd("sf1200-120");
    let unit = ssd.unit_bytes as f64;
    let (out, load) = (
        (unit * ssd.chan_ns_per_byte) as u64,
        (unit * ssd.chan_load_ns_per_byte) as u64,
    );
    let at_mb_per_s = |rate: f64| (unit * (1e9 / (rate * 1e6))) as u64;
    assert_eq!((out, load), (at_mb_per_s(26.55), at_mb_per_s(18.05)));
    assert_eq!(ssd.unit_load_ns(), load);
    assert_eq!(ssd.copy_transfer_ns(), out + load);
    // Where an entry gives no write rate, both ways run at the bus rate.
    let (_, symmetric) = probe_ssd("ssd750-400");
    assert_eq!(symmetric.chan_ns_per_byte, symmetric.chan_load_ns_per_byte);
}

#[test]
fn a_collection_gives_back_its_space_as_it_runs() {
    // Only its span and what it gives back matter here.
    let gc = GcWork {
        start: 1_000,
        end: 2_000,
        reclaim_units: 100,
        ..GcWork::default()
    };
    assert_eq!(gc.unreclaimed(500), 100, "before it starts: all of it owed");
    assert_eq!(gc.unreclaimed(1_500), 50, "half way: half");
    assert_eq!(gc.unreclaimed(2_000), 0, "over: none");
    assert_eq!(
        gc.reclaimed_by(1_000, 30),
        1_300,
        "30 of 100 units: 30 % of its time"
    );
    assert_eq!(gc.reclaimed_by(1_500, 10), 1_600, "10 more of the 50 left");
    assert_eq!(
        gc.reclaimed_by(1_500, 80),
        2_000,
        "more than it owes: its end"
    );
    assert_eq!(gc.reclaimed_by(1_200, 0), 1_200, "nothing needed: no wait");
}

#[test]
fn a_host_program_goes_between_a_collections_operations_while_the_die_has_room() {
    let (_, mut ssd) = probe_ssd("ssd750-400");
    let lpns_per_unit = ssd.unit_bytes / 4096;
    let cost = crate::ftl::GcCost {
        moved_units: 40 * lpns_per_unit,
        erased_units: 0,
    };
    let (mut gc, _) = ssd.collection(&cost, 1_000_000);
    let free = ssd.ftl.free_units(0);
    assert!(free > 0, "an empty drive has room");
    // Owing less than the die has free: the program waits for the copy in progress only.
    gc.reclaim_units = free / 2;
    ssd.gc[0] = gc;
    let mid_copy = gc.start + gc.copy_ns / 2;
    assert_eq!(ssd.program_may_start(0, mid_copy), gc.start + gc.copy_ns);
    assert!(gc.start + gc.copy_ns < gc.end);
    // Owing more than the die has free: it waits until the collection has given back the
    // difference, and then for the operation in progress.
    gc.reclaim_units = 2 * free;
    ssd.gc[0] = gc;
    let room = gc.reclaimed_by(gc.start, free);
    let start = ssd.program_may_start(0, gc.start);
    assert_eq!(start, gc.op_end(room));
    assert!(
        gc.start < start && start < gc.end,
        "part way through: {start}"
    );
    // A collection booked behind it gives back after it: owing more than both hold waits for
    // the end of the first.
    let (mut later, _) = ssd.collection(&cost, gc.end);
    later.reclaim_units = free;
    ssd.gc_replaced.push((0, gc));
    ssd.gc[0] = later;
    assert_eq!(
        ssd.program_may_start(0, gc.start),
        later.op_end(gc.end.max(room))
    );
}

/// A catalog drive's model on its own, with its resources.
fn probe_ssd(drive: &str) -> (Vec<Res>, Ssd) {
    let cat = crate::catalog::Catalog::load(None).unwrap();
    let (_, spec) = cat.drives.get(drive).unwrap();
    let mut res = Vec::new();
    let ssd = build_ssd(&mut res, crate::build::ssd_params(spec), "probe");
    (res, ssd)
}
