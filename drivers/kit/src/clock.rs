//! The one CPU clock of the drivers, and the names of the methods a report may carry
//! (`impl.cpu_clock`, docs/driver-contract.md).
//!
//! Wherever the measured process is alive, its CPU time is read from the kernel's process CPU
//! clock (`clock_getcpuclockid` + `clock_gettime`): `thread_group_cputime`, the runtime of the
//! live threads to the nanosecond, including the slice running right now, plus what every
//! exited thread left in the process's totals. One system call, exact, complete. The
//! alternatives are worse: utime + stime in /proc/<pid>/stat count 10 ms ticks (tens of percent
//! off on a trial that costs the implementation 20-60 ms), and a sum over
//! /proc/<pid>/task/*/schedstat misses threads that ended in between.

use serde::Serialize;
use std::io;
use std::time::Duration;

/// How a report's CPU figure was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CpuClock {
    /// [`process_cpu_time`]: ns, all threads, read while the process is alive.
    #[serde(rename = "process-cpu-clock")]
    ProcessCpuClock,
    /// wait4's rusage (µs): only where the measured process has already exited, e.g. hosts
    /// spawned and reaped once per operation.
    #[serde(rename = "wait4-rusage")]
    Wait4Rusage,
    /// A parent's cutime + cstime in /proc (1/CLK_TCK s): only where nothing better exists,
    /// e.g. processes another program forks and reaps.
    #[serde(rename = "proc-children-ticks")]
    ProcChildrenTicks,
    /// The program's own measurement (getrusage(RUSAGE_SELF) or its process CPU clock) over
    /// the span it timed itself, as its report states: for benchmark programs that time their
    /// own iterations after start-up and warm-up (capnp), whose whole-life CPU would include
    /// both.
    #[serde(rename = "self-reported")]
    SelfReported,
}

/// CPU time (user + system) of every thread process `pid` has had, to the nanosecond. The
/// process must be alive (or an unreaped zombie of ours); a reaped one is an error.
pub fn process_cpu_time(pid: libc::pid_t) -> io::Result<Duration> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: a valid out-pointer; returns an error number rather than setting errno.
    let rc = unsafe { libc::clock_getcpuclockid(pid, &mut clock) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    read_clock(clock)
}

/// The calling process's own CPU time so far (every thread, exited ones included).
pub fn own_cpu_time() -> Duration {
    // This clock cannot fail on Linux; a zero would only understate the driver's own cost.
    read_clock(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or_default()
}

fn read_clock(clock: libc::clockid_t) -> io::Result<Duration> {
    // SAFETY: all-zero is a valid timespec; clock_gettime fills it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread_cpu() -> Duration {
        read_clock(libc::CLOCK_THREAD_CPUTIME_ID).unwrap()
    }

    /// Spins until this thread has used `cpu` of CPU (not of wall time: on a busy machine it
    /// may get much less of it).
    fn spin(cpu: Duration) {
        let until = thread_cpu() + cpu;
        let mut x = 0u64;
        while thread_cpu() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    }

    #[test]
    fn the_names_are_the_contracts() {
        let names = serde_json::to_string(&[
            CpuClock::ProcessCpuClock,
            CpuClock::Wait4Rusage,
            CpuClock::ProcChildrenTicks,
        ])
        .unwrap();
        assert_eq!(
            names,
            r#"["process-cpu-clock","wait4-rusage","proc-children-ticks"]"#
        );
    }

    #[test]
    fn the_clock_counts_threads_that_have_exited() {
        // SAFETY: plain syscall.
        let pid = unsafe { libc::getpid() };
        let before = process_cpu_time(pid).unwrap();
        std::thread::spawn(|| spin(Duration::from_millis(30)))
            .join()
            .unwrap();
        let after = process_cpu_time(pid).unwrap();
        assert!(
            after - before >= Duration::from_millis(30),
            "{:?}",
            after - before
        );
        assert!(own_cpu_time() >= after);
    }

    #[test]
    fn the_clock_of_another_process_advances_and_ends_with_it() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        // It advances while the child spins, as fast as a busy machine lets it; the bound is
        // generous because the child may get little CPU.
        let started = std::time::Instant::now();
        let mut last = Duration::ZERO;
        while last < Duration::from_millis(20) {
            let now = process_cpu_time(pid).unwrap();
            assert!(now >= last);
            last = now;
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "stuck at {last:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        // Reaped: no such process any more (pids are not reused this soon).
        assert!(process_cpu_time(pid).is_err());
    }
}
