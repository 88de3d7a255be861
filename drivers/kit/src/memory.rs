//! Peak resident set: `VmHWM` from /proc/<pid>/status, the high-water mark of the memory image
//! the process has had since its exec.
//!
//! Not wait4's `ru_maxrss`: on Linux, when a process execs, the kernel folds the peak RSS of
//! the image it leaves behind into the process's `ru_maxrss` (`setmax_mm_hiwater_rss` in
//! `exec_mmap`). For a child started by posix_spawn or fork that image is the driver's own,
//! so every implementation would report at least the driver's RSS. VmHWM is read while the
//! process is alive: a zombie has no memory image.

/// The peak RSS of live process `pid`, in KiB, or why there is no number.
pub fn peak_rss_kb(pid: libc::pid_t) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    vm_hwm_kb(&status).map_err(|why| format!("{path}: {why}"))
}

/// The `VmHWM:   1234 kB` line of a /proc/<pid>/status text, in KiB.
pub fn vm_hwm_kb(status: &str) -> Result<u64, String> {
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .ok_or(
            "no VmHWM line (the process had exited, and a zombie has no memory image; or this \
             /proc does not report it)",
        )?;
    match line.split_whitespace().collect::<Vec<_>>()[..] {
        [kb, "kB"] => kb
            .parse()
            .map_err(|e| format!("VmHWM {kb:?} is not a number: {e}")),
        _ => Err(format!("unexpected VmHWM line {:?}", line.trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_hwm_is_parsed_from_a_status_text() {
        let status = "Name:\tcat\nVmPeak:\t    8000 kB\nVmHWM:\t     812 kB\nVmRSS:\t     800 kB\n";
        assert_eq!(vm_hwm_kb(status), Ok(812));
        let zombie = "Name:\tcat\nState:\tZ (zombie)\nThreads:\t1\n";
        assert!(vm_hwm_kb(zombie).unwrap_err().contains("had exited"));
        assert!(vm_hwm_kb("VmHWM:\t 12 MB\n").is_err());
        assert!(vm_hwm_kb("VmHWM:\t x kB\n").is_err());
    }

    #[test]
    fn the_peak_grows_with_what_is_touched() {
        // SAFETY: plain syscall.
        let pid = unsafe { libc::getpid() };
        let before = peak_rss_kb(pid).unwrap();
        // 64 MiB, every page written, so resident: the peak must cover it.
        let ballast = std::hint::black_box(vec![1u8; 64 << 20]);
        let after = peak_rss_kb(pid).unwrap();
        assert!(after >= before.max(64 * 1024), "{before} -> {after} KiB");
        drop(ballast);
        assert!(peak_rss_kb(i32::MAX).unwrap_err().contains("cannot read"));
    }
}
