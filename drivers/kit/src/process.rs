//! The implementation's process: started pinned, with its stderr in a file and its working
//! directory set; reaped within a bound; its exit described; stopped with SIGTERM, then SIGKILL.
//!
//! Two ways to start it, because they cost differently:
//!
//! - [`Launcher::light`]: no `pre_exec` hook, so std uses posix_spawn (clone(CLONE_VM |
//!   CLONE_VFORK) in glibc), which copies no page tables. The child gets its CPU mask from the
//!   spawning thread, which switches to the implementation's CPUs for the spawn and back. For
//!   drivers that start a process per operation (nativemsg's spawn mode): against the C host,
//!   spawn-to-reaped p50 was 449 µs this way vs 564 µs with a pre_exec hook.
//! - [`Launcher::guarded`]: a `pre_exec` hook (so fork + exec, a few hundred µs once per trial)
//!   pins the child, gives it a process group of its own (a stray grandchild dies with it),
//!   `PR_SET_PDEATHSIG` = SIGKILL (it dies with the driver, even a SIGKILLed driver) and the
//!   driver's original open-file limit. For long-lived servers and client programs.
//!
//! Every wait is bounded: the exit is awaited by polling a pidfd with a deadline, and a child
//! that overstays is SIGKILLed and reaped. Dropping a [`Child`] that has not been reaped does
//! the same, so every exit path of a driver, a failure included, cleans up.

use crate::affinity::CpuSet;
use crate::clock;
use crate::error::{Failure, Result};
use crate::memory;
use crate::poll::{pidfd_open, wait_ready};
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The driver's soft limit on open files before [`raise_fd_limit`], which guarded children get
/// back: an implementation must raise its own limit, not inherit the driver's.
static ORIGINAL_NOFILE: OnceLock<libc::rlimit> = OnceLock::new();

/// Raises the driver's soft limit on open files to the hard limit (a load of 1024 connections
/// needs more than the usual 1024 descriptors). Guarded children get the original back.
pub fn raise_fd_limit() -> io::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let _ = ORIGINAL_NOFILE.set(limit);
    let raised = libc::rlimit {
        rlim_cur: limit.rlim_max,
        rlim_max: limit.rlim_max,
    };
    // SAFETY: a valid pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Opens the file the implementation's stderr is appended to (as a browser appends a host's
/// to its own log), or /dev/null. Returns the file and the name to show in error messages
/// (None when discarded).
pub fn open_log(path: Option<&Path>) -> Result<(File, Option<String>)> {
    let target = path.unwrap_or(Path::new("/dev/null"));
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(target)
        .map_err(|e| Failure::new(format!("--impl-stderr {}: {e}", target.display())))?;
    Ok((file, path.map(|p| p.display().to_string())))
}

/// " (its stderr: FILE)" or a hint to keep it, for the end of an error message.
pub fn log_hint(what: &str, log_name: Option<&str>) -> String {
    match log_name {
        Some(name) => format!(" (its {what}: {name})"),
        None => format!(" (its {what} was not kept: pass --impl-stderr)"),
    }
}

/// A command made ready to start again and again.
pub struct Launcher {
    command: Command,
    /// Light launchers: the mask to spawn under and the driver's to return to.
    switch: Option<(CpuSet, CpuSet)>,
    group: bool,
}

impl Launcher {
    /// posix_spawn, pinned through the spawning thread's mask (see the module's comment).
    pub fn light(command: Command, cpus: Option<CpuSet>) -> Result<Self> {
        let switch = match cpus {
            None => None,
            Some(target) => {
                let driver = CpuSet::of_current_thread()
                    .map_err(|e| Failure::new(format!("sched_getaffinity: {e}")))?;
                Some((target, driver))
            }
        };
        Ok(Launcher {
            command,
            switch,
            group: false,
        })
    }

    /// fork + exec with a pre_exec hook: pinned, in a group of its own, dies with the driver.
    pub fn guarded(mut command: Command, cpus: Option<CpuSet>) -> Self {
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        command.process_group(0);
        // SAFETY: the hook only makes async-signal-safe system calls and does not allocate.
        unsafe {
            command.pre_exec(move || {
                if let Some(set) = &cpus {
                    if set.apply_raw() != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if let Some(limit) = ORIGINAL_NOFILE.get() {
                    if libc::setrlimit(libc::RLIMIT_NOFILE, limit) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The driver may have died before the prctl: then nobody would kill us.
                if libc::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            })
        };
        Launcher {
            command,
            switch: None,
            group: true,
        }
    }

    pub fn program(&self) -> &OsStr {
        self.command.get_program()
    }

    /// Starts one process. Returns the std child too, for its pipes; it is not used to wait
    /// (that is [`Child::reap`]).
    pub fn spawn(&mut self) -> Result<(Child, std::process::Child)> {
        let mut restored = Ok(());
        let spawned = match &self.switch {
            None => self.command.spawn(),
            Some((target, driver)) => {
                // Both migrations are skipped when the two masks are the same.
                let switched = !target.same_as(driver);
                if switched {
                    target.apply_to_current_thread().map_err(|e| {
                        Failure::new(format!("pinning to the implementation's CPUs: {e}"))
                    })?;
                }
                let spawned = self.command.spawn();
                if switched {
                    restored = driver.apply_to_current_thread();
                }
                spawned
            }
        };
        let std_child = spawned.map_err(|e| {
            Failure::new(format!(
                "cannot start {:?}: {e}",
                self.command.get_program()
            ))
        })?;
        let pid = std_child.id() as libc::pid_t;
        // The child is not reaped yet, so its pid cannot have been reused.
        let pidfd = match pidfd_open(pid) {
            Ok(fd) => fd,
            Err(e) => {
                let signal_target = if self.group { -pid } else { pid };
                // SAFETY: plain syscalls on our unreaped child (and its group).
                unsafe {
                    libc::kill(signal_target, libc::SIGKILL);
                    libc::waitpid(pid, std::ptr::null_mut(), 0);
                }
                return Err(Failure::new(format!("pidfd_open: {e}")));
            }
        };
        let child = Child {
            pid,
            pidfd,
            reaped: false,
            group: self.group,
        };
        // Checked once `child` owns the process, so that this failure still reaps it.
        restored.map_err(|e| Failure::new(format!("pinning back to the driver's CPUs: {e}")))?;
        Ok((child, std_child))
    }
}

/// A process the driver started and must never leave behind.
pub struct Child {
    pid: libc::pid_t,
    pidfd: OwnedFd,
    reaped: bool,
    /// Leader of a process group of its own: signals and the final kill go to the group.
    group: bool,
}

impl Child {
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The pidfd, readable once the child has exited (for poll loops that also wait on pipes).
    pub fn pidfd(&self) -> RawFd {
        self.pidfd.as_raw_fd()
    }

    /// Whether the child has exited (an unreaped child's pid stays ours).
    pub fn has_exited(&self) -> bool {
        self.wait_exit(Instant::now())
    }

    /// Waits until the child exits or `until` passes; true if it exited.
    pub fn wait_exit(&self, until: Instant) -> bool {
        self.reaped || wait_ready(self.pidfd(), libc::POLLIN, until).is_ok()
    }

    pub fn signal(&self, signal: libc::c_int) {
        if !self.reaped {
            // SAFETY: plain syscall; an unreaped child keeps its pid.
            unsafe { libc::kill(self.pid, signal) };
        }
    }

    /// SIGKILLs the child, and its whole group if it leads one. Safe while it is unreaped:
    /// even a zombie holds its pid, so neither the pid nor the group id can be reused.
    pub fn kill(&self) {
        if !self.reaped {
            let target = if self.group { -self.pid } else { self.pid };
            // SAFETY: plain syscall.
            unsafe { libc::kill(target, libc::SIGKILL) };
        }
    }

    /// The child's CPU time so far, all threads, from the process CPU clock (ns); it must be
    /// alive (see [`clock::process_cpu_time`]).
    pub fn cpu_time(&self) -> Result<Duration> {
        if self.reaped {
            return Err(Failure::new(
                "internal error: the CPU clock of a reaped process",
            ));
        }
        clock::process_cpu_time(self.pid)
            .map_err(|e| Failure::new(format!("reading the process CPU clock: {e}")))
    }

    /// The child's peak RSS in KiB (VmHWM), or why there is none; it must be alive.
    pub fn peak_rss_kb(&self) -> std::result::Result<u64, String> {
        if self.reaped {
            return Err("the process was already reaped".to_string());
        }
        memory::peak_rss_kb(self.pid)
    }

    /// Reaps the child: call once it has exited, or to end it. What is left of its group is
    /// killed first (a group leader that exited may leave members behind). Blocks only until
    /// the child is gone, so a caller that has not seen it exit must kill it first.
    pub fn reap(&mut self) -> Result<Exit> {
        if self.reaped {
            return Err(Failure::new(
                "internal error: the process was already reaped",
            ));
        }
        if self.group {
            self.kill();
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
        Ok(Exit { status, rusage })
    }

    /// Waits for the child to exit until `until`, SIGKILLs it if it has not, and reaps it.
    /// Returns how it ended and whether it exited on its own in time.
    pub fn reap_by(&mut self, until: Instant) -> Result<(Exit, bool)> {
        let exited = self.wait_exit(until);
        if !exited {
            self.kill();
        }
        Ok((self.reap()?, exited))
    }

    /// SIGTERM, then [`Child::reap_by`] with `grace`: (how it ended, whether it exited within
    /// the grace or had to be killed).
    pub fn stop(&mut self, grace: Duration) -> Result<(Exit, bool)> {
        self.signal(libc::SIGTERM);
        self.reap_by(Instant::now() + grace)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill();
            let _ = self.reap();
        }
    }
}

/// How a child ended, and the CPU time it used over its whole life (wait4's rusage).
pub struct Exit {
    /// The raw wait status.
    status: libc::c_int,
    rusage: libc::rusage,
}

impl Exit {
    pub fn success(&self) -> bool {
        libc::WIFEXITED(self.status) && libc::WEXITSTATUS(self.status) == 0
    }

    /// The exit status, or 128 + the signal number for a killed child (the shell's habit).
    pub fn code(&self) -> i32 {
        if libc::WIFEXITED(self.status) {
            libc::WEXITSTATUS(self.status)
        } else {
            128 + libc::WTERMSIG(self.status)
        }
    }

    /// "exited with status 3", "was killed by signal 9 (SIGKILL)".
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

    /// User + system CPU time of the child and its threads over its life (µs resolution):
    /// the [`clock::CpuClock::Wait4Rusage`] method.
    pub fn cpu(&self) -> Duration {
        self.user_cpu() + self.system_cpu()
    }

    /// The user part of [`Exit::cpu`], for reports that show the split (the seed's `time`).
    pub fn user_cpu(&self) -> Duration {
        duration_of(&self.rusage.ru_utime)
    }

    /// The system part of [`Exit::cpu`].
    pub fn system_cpu(&self) -> Duration {
        duration_of(&self.rusage.ru_stime)
    }

    /// Peak RSS over the child's life in KiB (wait4's ru_maxrss): for processes that run to
    /// their end while the driver waits, where VmHWM can no longer be read.
    pub fn maxrss_kb(&self) -> u64 {
        self.rusage.ru_maxrss.max(0) as u64
    }
}

fn duration_of(tv: &libc::timeval) -> Duration {
    Duration::from_micros((tv.tv_sec.max(0) as u64) * 1_000_000 + tv.tv_usec.max(0) as u64)
}

/// The name of a signal that commonly ends an implementation.
pub fn signal_name(signal: libc::c_int) -> &'static str {
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
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGALRM => "SIGALRM",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGUSR2 => "SIGUSR2",
        _ => "see kill -l",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::process::Stdio;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    fn gone_or_zombie(pid: libc::pid_t) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.starts_with(" Z"))
            })
            .unwrap_or(true)
    }

    #[test]
    fn a_dropped_guarded_child_takes_its_group_with_it() {
        // sh starts a grandchild in the same group and waits: both must go.
        let mut command = sh("sleep 60 & echo $! ; wait");
        command.stdout(Stdio::piped());
        let (child, mut std_child) = Launcher::guarded(command, None).spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(std_child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: libc::pid_t = line.trim().parse().unwrap();
        assert!(!child.has_exited());
        drop(child);
        // The grandchild was SIGKILLed; init (or a subreaper) reaps it when it gets to it, so
        // the bound is generous.
        let until = Instant::now() + Duration::from_secs(60);
        while !gone_or_zombie(grandchild) {
            assert!(Instant::now() < until, "the grandchild survived");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn exits_are_described() {
        let (mut child, _) = Launcher::guarded(sh("exit 3"), None).spawn().unwrap();
        let (exit, exited) = child
            .reap_by(Instant::now() + Duration::from_secs(30))
            .unwrap();
        assert!(exited && !exit.success());
        assert_eq!(
            (exit.code(), exit.describe()),
            (3, "exited with status 3".to_string())
        );
        assert!(child.reap().is_err(), "reaped twice");
        assert!(child.cpu_time().is_err() && child.peak_rss_kb().is_err());

        let mut sleeper = Command::new("sleep");
        sleeper.arg("60");
        let (mut child, _) = Launcher::light(sleeper, None).unwrap().spawn().unwrap();
        assert!(!child.wait_exit(Instant::now() + Duration::from_millis(50)));
        let (exit, exited) = child.stop(Duration::from_secs(30)).unwrap();
        assert!(exited, "sleep ends on SIGTERM");
        assert_eq!(exit.code(), 128 + libc::SIGTERM);
        assert!(exit.describe().contains("SIGTERM"), "{}", exit.describe());
    }

    #[test]
    fn a_child_that_ignores_sigterm_is_killed_at_the_bound() {
        let (mut child, _) = Launcher::guarded(sh("trap '' TERM; sleep 60"), None)
            .spawn()
            .unwrap();
        // Let the shell install its trap before it is signalled.
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        let (exit, exited) = child.stop(Duration::from_millis(300)).unwrap();
        assert!(!exited);
        assert!(started.elapsed() < Duration::from_secs(30));
        assert_eq!(exit.describe(), "was killed by signal 9 (SIGKILL)");
    }

    #[test]
    fn children_are_pinned_both_ways() {
        let allowed = CpuSet::of_current_thread().unwrap().cpus();
        let last = *allowed.last().unwrap();
        let target = CpuSet::from_list(&[last]).unwrap();
        let command = || {
            let mut command = sh("grep Cpus_allowed_list /proc/self/status");
            command.stdout(Stdio::piped());
            command
        };
        let launchers = [
            Launcher::light(command(), Some(target)).unwrap(),
            Launcher::guarded(command(), Some(target)),
        ];
        for mut launcher in launchers {
            let (mut child, std_child) = launcher.spawn().unwrap();
            let out = std::io::read_to_string(std_child.stdout.unwrap()).unwrap();
            let (exit, _) = child
                .reap_by(Instant::now() + Duration::from_secs(30))
                .unwrap();
            assert!(exit.success());
            assert!(out.trim().ends_with(&format!("\t{last}")), "{out:?}");
        }
        // The spawning thread is back on its own mask.
        assert_eq!(CpuSet::of_current_thread().unwrap().cpus(), allowed);
    }

    #[test]
    fn cpu_and_rss_of_a_live_child() {
        // A busy child: its CPU clock advances while it is alive and it has a VmHWM.
        let (mut child, _) = Launcher::guarded(sh("while :; do :; done"), None)
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(60);
        while child.cpu_time().unwrap() < Duration::from_millis(20) {
            assert!(Instant::now() < until, "the child got no CPU");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(child.peak_rss_kb().unwrap() > 0);
        let alive = child.cpu_time().unwrap();
        let (exit, _) = child.stop(Duration::from_secs(30)).unwrap();
        // wait4's total covers the life the clock saw (µs resolution).
        assert!(exit.cpu() + Duration::from_micros(1) >= alive);
        assert_eq!(exit.cpu(), exit.user_cpu() + exit.system_cpu());
        assert!(
            exit.user_cpu() > Duration::ZERO,
            "a busy loop runs in user mode"
        );
    }

    #[test]
    fn logs_are_appended_or_discarded() {
        let dir = std::env::temp_dir().join(format!("driver-kit-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("impl.log");
        std::fs::write(&path, "before\n").unwrap();
        let (file, name) = open_log(Some(&path)).unwrap();
        let mut command = sh("echo after >&2");
        command.stderr(file);
        let (mut child, _) = Launcher::guarded(command, None).spawn().unwrap();
        child
            .reap_by(Instant::now() + Duration::from_secs(30))
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "before\nafter\n");
        assert!(log_hint("stderr", name.as_deref()).contains("impl.log"));
        assert_eq!(open_log(None).unwrap().1, None);
        assert!(log_hint("stderr", None).contains("--impl-stderr"));
        assert!(open_log(Some(&dir.join("no/such/dir")))
            .unwrap_err()
            .message()
            .starts_with("--impl-stderr"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
