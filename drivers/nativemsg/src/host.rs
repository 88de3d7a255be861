//! Starting, talking to and reaping a host the way Chromium does: stdin and stdout are
//! pipes, stderr is appended to the run's log (or /dev/null), `argv` is passed as given (the
//! caller puts the origin in argv[1]), the working directory is the directory of the
//! executable, and the child runs on the host CPUs from its first instruction.
//!
//! Every wait is bounded by the trial's deadline: reads and writes wait in poll(2), the exit
//! waits on a pidfd, and a host that overstays is SIGKILLed and reaped (drivers/kit).

use driver_kit::affinity::CpuSet;
use driver_kit::error::{Failure, Result};
use driver_kit::poll::{set_nonblocking, wait_ready};
use driver_kit::process::{self, Child, Exit};
use driver_kit::CommonArgs;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
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
    /// Built once: no per-spawn argument conversion or stderr reopening. A light launcher
    /// (posix_spawn, pinned through the spawning thread's mask: see drivers/kit process.rs),
    /// because spawn mode times every start.
    launcher: process::Launcher,
    stderr_name: Option<String>,
}

impl Launcher {
    /// IMPL_ARGV is the host's program and its arguments, the origin among them; it runs in
    /// --impl-cwd or the program's directory, its stderr appended to --impl-stderr.
    pub fn new(common: &CommonArgs, host_cpus: Option<CpuSet>) -> Result<Self> {
        let (program, args) = common.program()?;
        let program = resolve_program(program)?;
        let cwd = match &common.impl_cwd {
            Some(dir) => std::path::absolute(dir)
                .map_err(|e| Failure::new(format!("--impl-cwd {}: {e}", dir.display())))?,
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
        let (stderr, stderr_name) = process::open_log(common.impl_stderr.as_deref())?;

        let mut command = Command::new(&program);
        command
            .args(args)
            .current_dir(&cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        Ok(Launcher {
            launcher: process::Launcher::light(command, host_cpus)?,
            stderr_name,
        })
    }

    /// Starts one host, pinned to the host CPUs before its first instruction.
    pub fn spawn(&mut self) -> Result<Host> {
        let (child, mut std_child) = self
            .launcher
            .spawn()
            .map_err(|f| f.context("starting the host"))?;
        let host = Host {
            stdin: std_child.stdin.take().map(OwnedFd::from),
            stdout: std_child.stdout.take().map(OwnedFd::from),
            // Dropping `std_child` neither waits for nor kills the process: `child` owns it,
            // and reaps it with wait4 to get its exit status.
            child,
            stderr_name: self.stderr_name.clone(),
        };
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
    child: Child,
    stdin: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    stderr_name: Option<String>,
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

    /// The host's peak resident set in KiB: VmHWM, the high-water mark of the memory image
    /// the host has had since its exec (drivers/kit memory.rs says why not wait4's
    /// ru_maxrss). It covers the host process itself, all its threads, not processes it starts.
    ///
    /// Only a live host has a memory image, so the modes call this after the host has done
    /// its work and before closing its stdin (a host blocked reading its next request is
    /// alive). An error says why there is no number.
    pub fn peak_rss_kb(&self) -> std::result::Result<u64, String> {
        self.child.peak_rss_kb()
    }

    /// The host's CPU time so far, all threads, in ns: the process CPU clock, read while it
    /// is alive (persistent mode reads it with the peak RSS, after the last reply).
    pub fn cpu_time(&self) -> Result<Duration> {
        self.child
            .cpu_time()
            .map_err(|f| f.context("the host's CPU time"))
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
        match self.child.reap_by(deadline)? {
            (exit, true) => Ok(exit),
            (_, false) => Err(Failure::new(format!(
                "the host did not exit after its stdin was closed (the trial's --timeout-s \
                 budget ran out); killed it{}",
                self.stderr_hint()
            ))),
        }
    }

    /// Turns a protocol failure into the trial's error: disconnects, lets the host exit on
    /// its own for a moment (killing it if it does not), and adds how it ended.
    pub fn fail(&mut self, failure: Failure, deadline: Instant) -> Failure {
        self.close_pipes();
        let grace = (Instant::now() + GRACE).min(deadline);
        let ending = match self.child.reap_by(grace) {
            Ok((_, false)) => "the host was still running and was killed".to_string(),
            Ok((exit, true)) => format!("the host then {}", exit.describe()),
            Err(e) => format!("the host could not be reaped: {e}"),
        };
        Failure::new(format!("{failure}; {ending}{}", self.stderr_hint()))
    }

    fn stderr_hint(&self) -> String {
        process::log_hint("stderr", self.stderr_name.as_deref())
    }
}

fn raw(fd: &Option<OwnedFd>) -> Option<RawFd> {
    fd.as_ref().map(AsRawFd::as_raw_fd)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_rss_is_the_childs_own_not_the_spawners() {
        use clap::Parser;
        #[derive(Parser)]
        struct Only {
            #[command(flatten)]
            common: CommonArgs,
        }
        let args = Only::try_parse_from(["d", "--", "cat"]).unwrap();
        let mut launcher = Launcher::new(&args.common, None).unwrap();
        let mut host = launcher.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
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
        let own_kb = driver_kit::memory::vm_hwm_kb(&own).unwrap();
        // cat needs well under 2 MB; the test process, which the child was cloned from, more.
        assert!(
            host_kb > 0 && host_kb < own_kb,
            "cat {host_kb} kB, test {own_kb} kB"
        );
    }
}
