//! A program the driver starts (the server, or the implementation's own client) and must
//! never leave behind.
//!
//! Each child gets a process group of its own (so that a stray grandchild is killed with it),
//! `PR_SET_PDEATHSIG` = SIGKILL (so that it dies with the driver even if the driver itself is
//! killed) and the driver's original open-file limit, and the server is pinned to its CPUs
//! before its first instruction. All of it is set between fork and exec, in a `pre_exec`
//! hook; that makes std fork rather than posix_spawn, which costs a few hundred µs once per
//! trial, before anything is measured. The hook runs while the driver has one thread, so fork
//! copies no other thread's state.
//!
//! Waits are bounded: the exit is awaited by polling a pidfd with a deadline, and a child
//! that overstays is SIGKILLed (with its group) and reaped. Dropping a [`Child`] that has not
//! been reaped does the same, so every exit path of the driver, a failure included, cleans
//! up.

use crate::affinity::CpuSet;
use crate::error::{Failure, Result};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The driver's soft limit on open files before [`raise_fd_limit`], which every child gets
/// back: a server must raise its own limit (SPEC §2), not inherit the driver's.
static ORIGINAL_NOFILE: OnceLock<libc::rlimit> = OnceLock::new();

/// Raises the driver's soft limit on open files to the hard limit: each client holds three
/// descriptors of its connection (send, receive, watchdog), so 1024 clients need more than
/// the usual soft limit of 1024.
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

pub struct Child {
    pid: libc::pid_t,
    pidfd: OwnedFd,
    reaped: bool,
}

impl Child {
    /// Starts `command` in a process group of its own, pinned to `cpus` when given. Returns
    /// the std child too, for its pipes; it is not used to wait (that is [`Child::reap`]).
    pub fn spawn(
        command: &mut Command,
        cpus: Option<CpuSet>,
    ) -> io::Result<(Child, std::process::Child)> {
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
        let std_child = command.spawn()?;
        let pid = std_child.id() as libc::pid_t;
        // The child is not reaped yet, so its pid cannot have been reused.
        let pidfd = match pidfd_open(pid) {
            Ok(fd) => fd,
            Err(e) => {
                // SAFETY: plain syscalls on our unreaped child's group and pid.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                    libc::waitpid(pid, std::ptr::null_mut(), 0);
                }
                return Err(e);
            }
        };
        Ok((
            Child {
                pid,
                pidfd,
                reaped: false,
            },
            std_child,
        ))
    }

    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The pidfd, readable once the child has exited (for poll loops that also wait on pipes).
    pub fn pidfd(&self) -> RawFd {
        self.pidfd.as_raw_fd()
    }

    /// Whether the child has exited (it is not reaped: its pid stays ours).
    pub fn has_exited(&self) -> bool {
        self.reaped || wait_readable(self.pidfd(), Instant::now()).is_ok()
    }

    /// Waits until the child exits or `until` passes; true if it exited.
    pub fn wait_exit(&self, until: Instant) -> bool {
        self.reaped || wait_readable(self.pidfd(), until).is_ok()
    }

    pub fn signal(&self, signal: libc::c_int) {
        if !self.reaped {
            // SAFETY: plain syscall; an unreaped child keeps its pid.
            unsafe { libc::kill(self.pid, signal) };
        }
    }

    /// SIGKILLs the child's whole process group (its pgid is its pid). Safe while the child
    /// is unreaped: even as a zombie it holds the pid, so the group id cannot be reused.
    pub fn kill_group(&self) {
        if !self.reaped {
            // SAFETY: plain syscall.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        }
    }

    /// Kills what is left of the group and reaps the child: call once it has exited (or to
    /// end it). Blocks only until the kill takes effect.
    pub fn reap(&mut self) -> Result<Exit> {
        if self.reaped {
            return Err(Failure::new("internal error: the child was already reaped"));
        }
        self.kill_group();
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
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.reap();
        }
    }
}

/// How a child ended, and the CPU time it used over its life.
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

    /// User + system CPU time of the child and its threads (µs resolution).
    pub fn cpu(&self) -> Duration {
        let us =
            |tv: &libc::timeval| (tv.tv_sec.max(0) as u64) * 1_000_000 + tv.tv_usec.max(0) as u64;
        Duration::from_micros(us(&self.rusage.ru_utime) + us(&self.rusage.ru_stime))
    }
}

/// Waits until `fd` is readable (or hung up, or in error), for at most what is left until
/// `until`; an `until` in the past polls once without waiting.
pub fn wait_readable(fd: RawFd, until: Instant) -> io::Result<()> {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        // Round up, so a wait never ends just short of the deadline and spins.
        let timeout = i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX);
        let mut pollfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
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
            return Ok(());
        }
        if Instant::now() >= until {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"));
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
    fn a_dropped_child_and_its_group_are_killed() {
        // sh starts a grandchild in the same group and waits: both must go.
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 60 & echo $! ; wait"]);
        command.stdout(std::process::Stdio::piped());
        let (child, mut std_child) = Child::spawn(&mut command, None).unwrap();
        let mut line = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(std_child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: libc::pid_t = line.trim().parse().unwrap();
        assert!(!child.has_exited());
        drop(child);
        // The grandchild was SIGKILLed; init (or a subreaper) reaps it soon after.
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            let gone = std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true);
            if gone {
                break;
            }
            assert!(Instant::now() < until, "the grandchild survived");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn exit_statuses_are_reported() {
        let (mut child, _) = Child::spawn(Command::new("sh").args(["-c", "exit 3"]), None).unwrap();
        assert!(child.wait_exit(Instant::now() + Duration::from_secs(5)));
        let exit = child.reap().unwrap();
        assert!(!exit.success());
        assert_eq!(
            (exit.code(), exit.describe()),
            (3, "exited with status 3".to_string())
        );

        let (mut child, _) = Child::spawn(Command::new("sleep").arg("60"), None).unwrap();
        assert!(!child.wait_exit(Instant::now() + Duration::from_millis(50)));
        child.signal(libc::SIGTERM);
        assert!(child.wait_exit(Instant::now() + Duration::from_secs(5)));
        let exit = child.reap().unwrap();
        assert_eq!(exit.code(), 128 + libc::SIGTERM);
        assert!(exit.describe().contains("SIGTERM"));
    }
}
