//! What becomes of each fio option: translated into iolab job keys, accepted as having no
//! effect on the I/O issued (said in the result), or refused with the reason.

/// The option's canonical name, for fio's aliases.
pub fn canonical(key: &str) -> &str {
    match key {
        "blocksize" => "bs",
        "readwrite" => "rw",
        "ba" => "blockalign",
        "blocksize_range" => "bsrange",
        "timeout" => "runtime",
        "ratemin" => "rate_min",
        "wait_for_previous" => "stonewall",
        "nr_files" => "nrfiles",
        "io_limit" => "io_size",
        "iodepth_batch" => "iodepth_batch_submit",
        "rwmixwrite" => "rwmixwrite",
        "threads" => "thread",
        "fileoffset" => "offset",
        "allrandrepeat" => "randrepeat",
        "blocksize_unaligned" => "bs_unaligned",
        "ratecycle" => "rate_cycle",
        "disable_bw" => "disable_bw_measurement",
        "iomem" => "mem",
        "mem_align" => "iomem_align",
        "ss" => "steadystate",
        "ss_dur" => "steadystate_duration",
        "ss_ramp" => "steadystate_ramp_time",
        "ss_interval" => "steadystate_check_interval",
        other => other,
    }
}

/// Options of `zonemode=zbd` only.
pub const ZBD_ONLY: [&str; 5] = [
    "max_open_zones",
    "job_max_open_zones",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "read_beyond_wp",
];

/// Options the translation reads (see `translate`).
pub const TRANSLATED: &[&str] = &[
    "name",
    "rw",
    "bs",
    "bsrange",
    "bssplit",
    "blockalign",
    "iodepth",
    "size",
    "io_size",
    "number_ios",
    "offset",
    "offset_increment",
    "filesize",
    "filename",
    "directory",
    "nrfiles",
    "runtime",
    "time_based",
    "ramp_time",
    "startdelay",
    "loops",
    "direct",
    "buffered",
    "ioengine",
    "rwmixread",
    "rwmixwrite",
    "percentage_random",
    "random_distribution",
    "norandommap",
    "randrepeat",
    "randseed",
    "zonemode",
    "zonesize",
    "zonerange",
    "zoneskip",
    "max_open_zones",
    "job_max_open_zones",
    "zone_reset_threshold",
    "zone_reset_frequency",
    "read_beyond_wp",
    "rate",
    "rate_iops",
    "rate_min",
    "rate_iops_min",
    "rate_process",
    "thinktime",
    "thinktime_blocks",
    "thinktime_spin",
    "thinktime_blocks_type",
    "exitall",
    "exit_what",
    "flow",
    "flow_id",
    "flow_sleep",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "cpus_allowed",
    "cpus_allowed_policy",
    "fsync",
    "fdatasync",
    "end_fsync",
    "refill_buffers",
    "zero_buffers",
    "scramble_buffers",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "dedupe_percentage",
    "numjobs",
    "stonewall",
    "new_group",
    "wait_for",
    "group_reporting",
    "kb_base",
    "continue_on_error",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "verify",
    "do_verify",
    "verify_backlog",
    "verify_pattern",
    "sprandom",
    "spr_op",
    "spr_num_regions",
    "steadystate",
    "steadystate_duration",
    "steadystate_ramp_time",
    "steadystate_check_interval",
    "prio",
    "prioclass",
    "priohint",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_hint",
    "cmdprio_bssplit",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "fsync_on_close",
    "ignore_error",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "fill_device",
    "fill_fs",
];

/// Options that change how fio runs or reports, not which I/Os reach the target: accepted,
/// and listed in the result's notes.
pub fn no_effect(key: &str) -> Option<&'static str> {
    Some(match key {
        "description" => "a description",
        "thread" => "fio's threads instead of processes; iolab's workers are threads",
        "iodepth_batch_submit"
        | "iodepth_batch_complete"
        | "iodepth_batch_complete_min"
        | "iodepth_batch_complete_max"
        | "iodepth_low" => "batching of submissions; iolab keeps the queue full",
        "log_avg_msec" | "log_offset" | "log_prio" | "per_job_logs" | "log_hist_msec" => {
            "fio's log files; iolab keeps per-second series in the result"
        }
        "unit_base"
        | "lat_percentiles"
        | "clat_percentiles"
        | "slat_percentiles"
        | "percentile_list"
        | "stats"
        | "disable_lat"
        | "disable_clat"
        | "disable_slat"
        | "disable_bw_measurement"
        | "gtod_reduce"
        | "clocksource" => "how fio measures or reports; iolab records its own percentiles",
        "allow_file_create" | "create_serialize" | "create_on_open" | "fallocate" | "unlink"
        | "overwrite" => "how fio lays out its files; iolab lays out a new file itself",
        "error_dump" => "how fio logs errors",
        "random_generator" => "the generator behind uniform draws",
        "file_service_type" => "how I/O is spread over several files; iolab measures one",
        "invalidate" => "dropping the file's page cache before the job",
        "verify_fatal"
        | "verify_dump"
        | "verify_async"
        | "verify_async_cpus"
        | "verify_backlog_batch"
        | "verify_interval"
        | "verify_offset"
        | "verify_header_seed"
        | "verify_state_save"
        | "verify_write_sequence"
        | "experimental_verify" => {
            "how fio checks; iolab stamps and checks every sector, counts every failure, and \
             exits with 3 if any"
        }
        "io_submit_mode" => {
            "iolab's paced I/Os go out at their intended times and count latency from them, \
             which is what offloaded submission is for"
        }
        "mem" | "iomem_align" => "the kind of memory I/O buffers live in",
        _ => return None,
    })
}

/// Why an option iolab does not honour is refused.
pub fn refusal(key: &str) -> &'static str {
    let starts = |p: &str| key.starts_with(p);
    if key == "verify_only" {
        return "checking what an earlier run wrote, without writing, is `iolab verify TARGET`";
    }
    if key == "verify_state_load" {
        return "iolab keeps no verify state between runs; its --verify-journal records what a \
                run wrote for `iolab verify TARGET --journal FILE`";
    }
    if key == "cpumask" {
        return "iolab takes the CPUs as a list, cpus_allowed (cpumask=0x5 is cpus_allowed=0,2)";
    }
    if starts("numa_") {
        return "iolab places a job's threads by CPU list (cpus_allowed, cpus_allowed_policy) \
                or NUMA node (numa_cpu_nodes) and its memory by numa_mem_policy";
    }
    if key == "zonecapacity" || key == "recover_zbd_write_error" {
        return "iolab's emulated zones (zonemode=zbd) have a capacity of their size and no \
                write errors to recover from";
    }
    if starts("spr_") {
        return "an SPRandom setting iolab does not have (it takes sprandom, spr_op and \
                spr_num_regions; not a write cache size)";
    }
    if key == "atomic" {
        return "iolab does not issue untorn writes (RWF_ATOMIC); fio fails such a job on a \
                device whose atomic write limits are 0";
    }
    if starts("fdp") || starts("pi_") || starts("apptag") || key == "md_per_io_size" {
        return "NVMe passthrough features (FDP, protection information) are not supported";
    }
    match key {
        "exec_prerun" | "exec_postrun" => "iolab runs no commands from a job file",
        "ioscheduler" => "iolab does not change the device's I/O scheduler",
        "sync" | "o_sync" => "iolab does not open the target with O_SYNC",
        "bs_unaligned" => "iolab issues only aligned blocks",
        "buffer_pattern" => {
            "iolab writes random, compressible or zero data, its verify stamps on top"
        }
        "pre_read" => "reading the file into the cache first is not supported",
        "ramp_size" => "a ramp by bytes is not supported; use ramp_time",
        "rate_cycle" | "rate_ignore_thinktime" => "fine control of rate limits",
        "thinktime_iotime" => "pauses by time of I/O; iolab pauses by I/O count (thinktime_blocks)",
        "serialize_overlap" => "iolab does not serialise overlapping I/Os",
        "lockfile" => "file locking between jobs",
        "create_only" => "laying out files without I/O",
        _ => "iolab has no equivalent of this option",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_option_is_both_translated_and_without_effect() {
        for key in TRANSLATED {
            assert!(no_effect(key).is_none(), "{key}");
            assert_eq!(canonical(key), *key, "{key} is an alias");
        }
        assert_eq!(canonical("blocksize"), "bs");
        assert!(refusal("verify_only").contains("iolab verify"));
    }
}
