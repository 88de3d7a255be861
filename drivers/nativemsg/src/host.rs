//! Starting, talking to and reaping a host the way Chromium does: stdin and stdout are
//! pipes, stderr is appended to the run's log (or /dev/null), `argv` is passed as given (the
//! caller puts the origin in argv[1]), the working directory is the directory of the
//! executable, and the child runs on the host CPUs from its first instruction.
//!
//! Every wait is bounded by the trial's deadline: reads and writes wait in poll(2), the exit
//! waits on a pidfd, and a host that overstays is SIGKILLed and reaped.

use crate::affinity::CpuSet;
use crate::error::{Failure, Result};
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a host that broke the protocol may take to exit on its own (so its exit status
/// can be reported) before it is killed.
const GRACE: Duration = Duration::from_millis(500);

/// Everything needed to start the same host again and again (spawn mode starts thousands).
pub struct Launcher {
    /// Built once: `Command::spawn` can be called repeatedly, so no per-spawn argument
    /// conversion or stderr reopening.
    command: Command,
    stderr_name: String,
    pinning: Option<Pinning>,
}

/// The host's CPU mask, and the driver's, to return to after each spawn.
struct Pinning {
    host: CpuSet,
    driver: CpuSet,
}

impl Launcher {
    /// `argv` is HOST_ARGV: the program and its arguments, the origin among them.
    pub fn new(
        argv: &[OsString],
        cwd: Option<&Path>,
        stderr_path: Option<&Path>,
        host_cpus: Option<CpuSet>,
    ) -> Result<Self> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| Failure::new("no host command given after --"))?;
        let program = resolve_program(program)?;
        let cwd = match cwd {
            Some(dir) => std::path::absolute(dir)
                .map_err(|e| Failure::new(format!("--host-cwd {}: {e}", dir.display())))?,
            None => program
                .parent()
                .map(Path::to_path_buf)
                .ok_or_else(|| Failure::new("the host program has no parent directory"))?,
        };
        if !cwd.is_dir() {
            return Err(Failure::new(format!(
                "the host's working directory {} is not a directory",
                cwd.display()
            )));
        }
        let (stderr, stderr_name) = open_stderr(stderr_path)?;

        let mut command = Command::new(&program);
        command
            .args(args)
            .current_dir(&cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);

        let pinning = match host_cpus {
            None => None,
            Some(host) => {
                let driver = CpuSet::of_current_thread()
                    .map_err(|e| Failure::new(format!("sched_getaffinity: {e}")))?;
                Some(Pinning { host, driver })
            }
        };
        Ok(Launcher {
            command,
            stderr_name,
            pinning,
        })
    }

    /// Starts one host, pinned to the host CPUs before its first instruction.
    pub fn spawn(&mut self) -> Result<Host> {
        // How the child gets its CPU mask. A child inherits the mask of the thread that
        // creates it, so the driver's thread switches to the host CPUs for the duration of
        // the spawn and back afterwards. The alternative, setting the mask in a `pre_exec`
        // hook, forces std onto fork+exec, while without a hook std uses posix_spawn
        // (clone(CLONE_VM|CLONE_VFORK) in glibc), which copies no page tables. Measured
        // against the C baseline, spawn-to-reaped p50 over interleaved runs: 449 µs with the
        // switch vs 564 µs with pre_exec when driver and host share CPU 1, and a lower
        // minimum (476 vs 604 µs) when the switch migrates the thread from CPU 0 to 1 and back.
        // Both migrations are skipped when the two masks are the same.
        let mut restored = Ok(());
        let spawned = match &self.pinning {
            None => self.command.spawn(),
            Some(pinning) => {
                let switched = !pinning.host.same_as(&pinning.driver);
                if switched {
                    pinning
                        .host
                        .apply_to_current_thread()
                        .map_err(|e| Failure::new(format!("pinning to the host CPUs: {e}")))?;
                }
                let spawned = self.command.spawn();
                if switched {
                    restored = pinning.driver.apply_to_current_thread();
                }
                spawned
            }
        };
        let mut child = spawned.map_err(|e| {
            Failure::new(format!(
                "cannot start the host {:?}: {e}",
                self.command.get_program()
            ))
        })?;

        let pid = child.id() as libc::pid_t;
        let stdin = child.stdin.take().map(OwnedFd::from);
        let stdout = child.stdout.take().map(OwnedFd::from);
        // Dropping `child` neither waits for nor kills the process: from here on the Host
        // owns it, and reaps it with wait4 to get its exit status and CPU time.
        drop(child);
        let mut host = Host {
            pid,
            pidfd: None,
            stdin,
            stdout,
            reaped: false,
            stderr_name: self.stderr_name.clone(),
        };
        // Checked once the Host owns the child, so that a failure here still reaps it.
        restored.map_err(|e| Failure::new(format!("pinning back to the driver CPUs: {e}")))?;
        // The child is not reaped yet, so its pid cannot have been reused.
        host.pidfd = Some(pidfd_open(pid).map_err(|e| Failure::new(format!("pidfd_open: {e}")))?);
        if let Some(stdin) = &host.stdin {
            // Non-blocking writes let a request that does not fit in the pipe wait in poll,
            // with the deadline, instead of blocking in write(2) on a host that stopped
            // reading.
            set_nonblocking(stdin.as_raw_fd())
                .map_err(|e| Failure::new(format!("fcntl(O_NONBLOCK) on the host's stdin: {e}")))?;
        }
        Ok(host)
    }
}

/// A running host. Dropping it kills and reaps the process if that has not happened yet.
pub struct Host {
    pid: libc::pid_t,
    pidfd: Option<OwnedFd>,
    stdin: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    reaped: bool,
    stderr_name: String,
}

/// How a host ended, and the CPU time it used.
///
/// The rusage's `ru_maxrss` is deliberately not used: on Linux, when a process execs, the
/// kernel folds the peak RSS of the memory image it leaves behind into the process's
/// `ru_maxrss` (`setmax_mm_hiwater_rss` in `exec_mmap`). For a host started by posix_spawn
/// (clone(CLONE_VM|CLONE_VFORK)) that image is the driver's own (several MB, its 1 MiB reply
/// buffer resident), and after fork it would be a copy of it, so every host would report at
/// least the driver's RSS. The host's peak RSS is read from /proc instead
/// ([`Host::peak_rss_kb`]). CPU time has no such problem: the child's few µs between clone
/// and exec are all it inherits.
pub struct Exit {
    /// The raw wait status.
    status: libc::c_int,
    rusage: libc::rusage,
}

impl Exit {
    pub fn success(&self) -> bool {
        libc::WIFEXITED(self.status) && libc::WEXITSTATUS(self.status) == 0
    }

    /// The exit status, or 128 + the signal number for a killed host (the shell's habit).
    pub fn code(&self) -> i32 {
        if libc::WIFEXITED(self.status) {
            libc::WEXITSTATUS(self.status)
        } else {
            128 + libc::WTERMSIG(self.status)
        }
    }

    pub fn describe(&self) -> String {
        if libc::WIFEXITED(self.status) {
            format!("exited with status {}", libc::WEXITSTATUS(self.status))
        } else if libc::WIFSIGNALED(self.status) {
            let signal = libc::WTERMSIG(self.status);
            format!("was killed by signal {signal} ({})", signal_name(signal))
        } else {
            format!("ended with wait status {:#x}", self.status)
        }
    }

    /// User CPU time in µs (the kernel's resolution).
    pub fn user_us(&self) -> u64 {
        micros(&self.rusage.ru_utime)
    }

    /// System CPU time in µs.
    pub fn sys_us(&self) -> u64 {
        micros(&self.rusage.ru_stime)
    }
}

impl Host {
    /// Writes all of `data` to the host's stdin: one write(2) when it fits in the pipe,
    /// otherwise as the host drains it.
    pub fn write_all(&mut self, data: &[u8], deadline: Instant) -> Result<()> {
        let fd = raw(&self.stdin).ok_or_else(|| Failure::new("the host's stdin is closed"))?;
        let mut written = 0;
        while written < data.len() {
            let rest = &data[written..];
            // SAFETY: writes from a valid slice of the given length to an open fd.
            let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
            if n >= 0 {
                written += n as usize;
                continue;
            }
            let error = io::Error::last_os_error();
            match error.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => {
                    wait_ready(fd, libc::POLLOUT, deadline).map_err(|e| {
                        Failure::new(format!(
                            "writing the request ({written} of {} bytes taken): {e}",
                            data.len()
                        ))
                    })?
                }
                io::ErrorKind::BrokenPipe => {
                    return Err(Failure::new(format!(
                        "the host closed its stdin after taking {written} of the {} request bytes",
                        data.len()
                    )))
                }
                _ => {
                    return Err(Failure::new(format!(
                        "writing the request ({written} of {} bytes taken): {error}",
                        data.len()
                    )))
                }
            }
        }
        Ok(())
    }

    /// One read(2) from the host's stdout, after waiting in poll(2) for at most what is left
    /// of the budget. Returns 0 at end of file.
    pub fn read_some(&mut self, buf: &mut [u8], deadline: Instant) -> io::Result<usize> {
        let fd = raw(&self.stdout)
            .ok_or_else(|| io::Error::other("the host's stdout is already closed"))?;
        wait_ready(fd, libc::POLLIN, deadline)?;
        loop {
            // SAFETY: reads into a valid mutable slice of the given length from an open fd.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }

    /// The host's peak resident set in KiB: `VmHWM` from /proc/<pid>/status, the high-water
    /// mark of the memory image the host has had since its exec (so it excludes the driver's
    /// image the child ran in until then; see [`Exit`] for why wait4's `ru_maxrss` does not).
    /// It covers the host process itself, all its threads, not processes it starts.
    ///
    /// Only a live host has a memory image, so the modes call this after the host has done
    /// its work and before closing its stdin (a host blocked reading its next request is
    /// alive). An error says why there is no number: /proc unreadable, or a host that had
    /// already exited (a zombie's status has no VmHWM).
    pub fn peak_rss_kb(&self) -> std::result::Result<u64, String> {
        if self.reaped {
            return Err("the host was already reaped".to_string());
        }
        // The pid cannot have been reused: the host is our child and not reaped yet.
        let path = format!("/proc/{}/status", self.pid);
        let status =
            std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
        vm_hwm_kb(&status).map_err(|why| format!("{path}: {why}"))
    }

    /// Disconnects as the browser does: closes the host's stdin (the host sees EOF) and stops
    /// reading its stdout.
    pub fn close_pipes(&mut self) {
        self.stdin = None;
        self.stdout = None;
    }

    /// Waits for the host to exit (within the budget) and reaps it. A host still running at
    /// the deadline is killed and the trial fails.
    pub fn reap(&mut self, deadline: Instant) -> Result<Exit> {
        let pidfd = raw(&self.pidfd).ok_or_else(|| Failure::new("the host has no pidfd"))?;
        match wait_ready(pidfd, libc::POLLIN, deadline) {
            Ok(()) => self.wait4(),
            Err(e) => {
                self.kill();
                let _ = self.wait4();
                Err(Failure::new(format!(
                    "the host did not exit after its stdin was closed ({e}); killed it{}",
                    self.stderr_hint()
                )))
            }
        }
    }

    /// Turns a protocol failure into the trial's error: disconnects, lets the host exit on
    /// its own for a moment (killing it if it does not), and adds how it ended.
    pub fn fail(&mut self, failure: Failure, deadline: Instant) -> Failure {
        if self.reaped {
            return failure;
        }
        self.close_pipes();
        let grace = (Instant::now() + GRACE).min(deadline);
        let exited = raw(&self.pidfd).is_some_and(|fd| wait_ready(fd, libc::POLLIN, grace).is_ok());
        if !exited {
            self.kill();
        }
        let ending = match self.wait4() {
            Ok(_) if !exited => "the host was still running and was killed".to_string(),
            Ok(exit) => format!("the host then {}", exit.describe()),
            Err(e) => format!("the host could not be reaped: {e}"),
        };
        Failure::new(format!("{failure}; {ending}{}", self.stderr_hint()))
    }

    fn stderr_hint(&self) -> String {
        if self.stderr_name == "/dev/null" {
            " (its stderr was not kept: pass --host-stderr)".to_string()
        } else {
            format!(" (its stderr: {})", self.stderr_name)
        }
    }

    fn kill(&self) {
        if !self.reaped {
            // SAFETY: plain syscall. The pid is still ours: an unreaped child keeps it.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
    }

    fn wait4(&mut self) -> Result<Exit> {
        if self.reaped {
            return Err(Failure::new("the host was already reaped"));
        }
        // SAFETY: all-zero is a valid rusage; wait4 fills it and the status.
        let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
        let mut status = 0;
        loop {
            // SAFETY: valid pointers to locals.
            let rc = unsafe { libc::wait4(self.pid, &mut status, 0, &mut rusage) };
            if rc == self.pid {
                break;
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(Failure::new(format!("wait4: {error}")));
            }
        }
        self.reaped = true;
        self.pidfd = None;
        Ok(Exit { status, rusage })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if !self.reaped {
            self.close_pipes();
            self.kill();
            let _ = self.wait4();
        }
    }
}

fn raw(fd: &Option<OwnedFd>) -> Option<RawFd> {
    fd.as_ref().map(AsRawFd::as_raw_fd)
}

/// Waits until `fd` is ready for `events` (or hung up, or in error: the next read or write
/// reports which), for at most what is left until `deadline`.
fn wait_ready(fd: RawFd, events: libc::c_short, deadline: Instant) -> io::Result<()> {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the trial's --timeout-s budget ran out",
            ));
        }
        // Round up, so a wait never ends just short of the deadline and spins.
        let left_ms = (deadline - now).as_nanos().div_ceil(1_000_000);
        let timeout = i32::try_from(left_ms).unwrap_or(i32::MAX);
        let mut pollfd = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut pollfd, 1, timeout) };
        if rc < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        if rc > 0 {
            if pollfd.revents & libc::POLLNVAL != 0 {
                return Err(io::Error::other("poll: invalid file descriptor"));
            }
            return Ok(());
        }
    }
}

fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall; on success it returns a new fd that we own.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the fd was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on an open fd.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The program as an absolute path. Chromium runs the manifest's absolute path; a relative
/// one is made absolute against the driver's cwd (it must not be resolved against the host's
/// cwd), and a bare name is looked up in PATH.
fn resolve_program(program: &OsStr) -> Result<PathBuf> {
    let unusable = |why: String| Failure::new(format!("host program {program:?}: {why}"));
    if program.as_bytes().contains(&b'/') {
        let absolute = std::path::absolute(program).map_err(|e| unusable(e.to_string()))?;
        if !absolute.exists() {
            return Err(unusable("no such file".to_string()));
        }
        return Ok(absolute);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            candidate
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .and_then(|found| std::path::absolute(found).ok())
        .ok_or_else(|| unusable("not found in PATH".to_string()))
}

/// The host's stderr: appended to the given log, as a browser appends to its own, or
/// /dev/null.
fn open_stderr(path: Option<&Path>) -> Result<(File, String)> {
    let path = path.unwrap_or(Path::new("/dev/null"));
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Failure::new(format!("--host-stderr {}: {e}", path.display())))?;
    Ok((file, path.display().to_string()))
}

/// The `VmHWM:   1234 kB` line of a /proc/<pid>/status text, in KiB.
fn vm_hwm_kb(status: &str) -> std::result::Result<u64, String> {
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .ok_or(
            "no VmHWM line (the host had exited, and a zombie has no memory image; or this \
             /proc does not report it)",
        )?;
    match line.split_whitespace().collect::<Vec<_>>()[..] {
        [kb, "kB"] => kb
            .parse()
            .map_err(|e| format!("VmHWM {kb:?} is not a number: {e}")),
        _ => Err(format!("unexpected VmHWM line {:?}", line.trim())),
    }
}

fn micros(tv: &libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64) * 1_000_000 + tv.tv_usec.max(0) as u64
}

fn signal_name(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "see kill -l",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_hwm_is_parsed_from_a_status_text() {
        let status = "Name:\tcat\nVmPeak:\t    8000 kB\nVmHWM:\t     812 kB\nVmRSS:\t     800 kB\n";
        assert_eq!(vm_hwm_kb(status), Ok(812));
        // A zombie: no memory image, no Vm* lines.
        let zombie = "Name:\tcat\nState:\tZ (zombie)\nThreads:\t1\n";
        assert!(vm_hwm_kb(zombie).unwrap_err().contains("had exited"));
        assert!(vm_hwm_kb("VmHWM:\t 12 MB\n").is_err());
        assert!(vm_hwm_kb("VmHWM:\t x kB\n").is_err());
    }

    #[test]
    fn peak_rss_is_the_childs_own_not_the_spawners() {
        let argv = [OsString::from("cat")];
        let mut launcher = Launcher::new(&argv, None, None, None).unwrap();
        let mut host = launcher.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        host.write_all(b"x", deadline).unwrap();
        let mut buf = [0u8; 1];
        assert_eq!(host.read_some(&mut buf, deadline).unwrap(), 1);
        let host_kb = host.peak_rss_kb().unwrap();
        host.close_pipes();
        assert!(host.reap(deadline).unwrap().success());
        assert!(
            host.peak_rss_kb().is_err(),
            "a reaped host has no peak RSS to read"
        );

        let own = std::fs::read_to_string("/proc/self/status").unwrap();
        let own_kb = vm_hwm_kb(&own).unwrap();
        // cat needs well under 2 MB; the test process, which the child was cloned from, more.
        assert!(
            host_kb > 0 && host_kb < own_kb,
            "cat {host_kb} kB, test {own_kb} kB"
        );
    }
}
