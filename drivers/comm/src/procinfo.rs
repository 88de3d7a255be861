//! What the kernel says about the server process: its CPU time, its peak RSS, and whether a
//! listening socket on the trial's port is its own.

use std::collections::HashSet;
use std::io;
use std::time::Duration;

/// CPU time (user + system) of every thread the process has had, to the nanosecond.
///
/// Why this clock and not `/proc/<pid>/stat`: utime + stime there are in clock ticks (10 ms
/// at USER_HZ = 100), while the server's CPU for a Test4 trial can be well under 100 ms, so
/// the tick error would be tens of percent. Summing `/proc/<pid>/task/*/schedstat` is
/// nanosecond-precise but misses threads that exited between the two readings (a server
/// that starts a thread per connection and ends it at END). The process CPU clock
/// (`clock_getcpuclockid` + `clock_gettime`) is the kernel's `thread_group_cputime`: the
/// runtime of the live threads, including the slice running right now, plus what every
/// exited thread left in the process's totals. One system call, exact, complete.
pub fn process_cpu_time(pid: libc::pid_t) -> io::Result<Duration> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: a valid out-pointer; returns an error number rather than setting errno.
    let rc = unsafe { libc::clock_getcpuclockid(pid, &mut clock) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    // SAFETY: all-zero is a valid timespec; clock_gettime fills it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    ))
}

/// The driver's own CPU time so far (every thread, exited ones included).
pub fn own_cpu_time() -> Duration {
    // SAFETY: all-zero is a valid timespec; clock_gettime fills it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and out-pointer; this clock cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// The process's peak resident set in KiB: `VmHWM` from /proc/<pid>/status, the high-water
/// mark since its exec. Read while the process is alive (a zombie has no memory image).
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
        .ok_or("no VmHWM line (the process had exited: a zombie has no memory image)")?;
    match line.split_whitespace().collect::<Vec<_>>()[..] {
        [kb, "kB"] => kb
            .parse()
            .map_err(|e| format!("VmHWM {kb:?} is not a number: {e}")),
        _ => Err(format!("unexpected VmHWM line {:?}", line.trim())),
    }
}

/// Whether a socket listening on `port` (IPv4 or IPv6, any address) is open in a process of
/// the process group `pgid`. The harness picks a free port and releases it before the
/// server binds it, so another program can take it in between; then the port accepts but
/// the load would go to the other program. Comparing socket inodes tells the two apart.
pub fn group_listens_on(pgid: libc::pid_t, port: u16) -> bool {
    let mut listening = HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            listening.extend(listening_inodes(&text, port));
        }
    }
    !listening.is_empty()
        && group_members(pgid)
            .iter()
            .any(|&pid| socket_inodes(pid).iter().any(|i| listening.contains(i)))
}

/// Inodes of the sockets in a /proc/net/tcp{,6} table that listen on `port`.
pub fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    const LISTEN: &str = "0A";
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local_port = fields.get(1)?.rsplit(':').next()?;
            let listens =
                u16::from_str_radix(local_port, 16).ok()? == port && *fields.get(3)? == LISTEN;
            listens.then(|| fields.get(9)?.parse().ok()).flatten()
        })
        .collect()
}

/// The processes whose process group is `pgid` (the leader included).
fn group_members(pgid: libc::pid_t) -> Vec<libc::pid_t> {
    let mut members = vec![pgid];
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return members;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if pid == pgid {
            continue;
        }
        let in_group = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                // pid (comm) state ppid pgrp ...: comm may contain spaces and parentheses.
                let after_comm = stat.rsplit_once(')')?.1;
                after_comm
                    .split_whitespace()
                    .nth(2)?
                    .parse::<libc::pid_t>()
                    .ok()
            })
            == Some(pgid);
        if in_group {
            members.push(pid);
        }
    }
    members
}

/// The socket inodes among a process's open files (`socket:[12345]` links).
fn socket_inodes(pid: libc::pid_t) -> Vec<u64> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let target = std::fs::read_link(entry.path()).ok()?;
            let inode = target
                .to_str()?
                .strip_prefix("socket:[")?
                .strip_suffix(']')?;
            inode.parse().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

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
    fn listening_sockets_are_found_in_a_tcp_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
            0: 0100007F:1DB0 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0 100 0 0 10 0\n   \
            1: 0100007F:1DB0 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0 20 4 30 10 -1\n   \
            2: 00000000:1DB1 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0 100 0 0 10 0\n";
        // 0x1DB0 = 7600: the listener, not the established connection on the same port.
        assert_eq!(listening_inodes(table, 7600), vec![4242]);
        assert_eq!(listening_inodes(table, 7601), vec![4444]);
        assert!(listening_inodes(table, 7602).is_empty());
    }

    #[test]
    fn our_own_listener_is_ours() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // SAFETY: plain syscalls.
        let (pid, pgid) = unsafe { (libc::getpid(), libc::getpgrp()) };
        assert!(!socket_inodes(pid).is_empty());
        assert!(group_listens_on(pgid, port));
        drop(listener);
        assert!(!group_listens_on(pgid, port));
    }

    #[test]
    fn the_cpu_clock_of_a_process_counts_its_threads() {
        // SAFETY: plain syscall.
        let pid = unsafe { libc::getpid() };
        let before = process_cpu_time(pid).unwrap();
        // Spins until the thread itself has used 30 ms of CPU (not 30 ms of wall time: on a
        // busy machine it may get much less of it).
        let spin = || {
            let thread_cpu = || {
                let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
                unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
                Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
            };
            let until = thread_cpu() + Duration::from_millis(30);
            let mut x = 0u64;
            while thread_cpu() < until {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        };
        // A thread that has exited by the second reading still counts.
        std::thread::spawn(spin).join().unwrap();
        let after = process_cpu_time(pid).unwrap();
        assert!(
            after - before >= Duration::from_millis(25),
            "{:?}",
            after - before
        );
        assert!(own_cpu_time() >= after);
    }

    #[test]
    fn the_cpu_clock_of_another_process() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        // Its clock advances while it spins (as fast as a busy machine lets it).
        let started = std::time::Instant::now();
        let mut last = Duration::ZERO;
        while last < Duration::from_millis(20) {
            let now = process_cpu_time(pid).unwrap();
            assert!(now >= last);
            last = now;
            assert!(
                started.elapsed() < Duration::from_secs(20),
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
