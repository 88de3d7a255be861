//! One benchmark program of a trial: started pinned through the kit's guarded launcher (own
//! process group, dies with the driver), its output pipes drained by threads so that it never
//! blocks on a full pipe, awaited within the trial's deadline, reaped with wait4's rusage, and
//! its stderr appended to the implementation's log afterwards.

use driver_kit::process::{log_hint, Child, Exit, Launcher};
use driver_kit::{Failure, Result};
use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Output kept per stream: the reports are one line; beyond this only the end is kept (a
/// report is the last line of stderr in client mode).
const KEEP: usize = 1 << 20;
/// After a program exits, how long its output may take to reach end of file.
const DRAIN: Duration = Duration::from_secs(2);
/// Characters of output that an error message shows.
const EXCERPT_CHARS: usize = 400;

/// Where a program's stdin and stdout go.
pub enum Wiring {
    /// stdin from /dev/null, stdout captured (object, bytes: the report).
    Alone,
    /// stdin and stdout piped to the driver, which hands them to the client (server).
    Serving,
    /// stdin from the server's stdout, stdout to the server's stdin (client).
    Client(ChildStdout, ChildStdin),
}

/// A started program whose output is being drained.
pub struct Program {
    pub name: String,
    pub shown: String,
    pub child: Child,
    pub started: Instant,
    pub stdin: Option<ChildStdin>,
    pub stdout_pipe: Option<ChildStdout>,
    stdout: Option<mpsc::Receiver<Vec<u8>>>,
    stderr: mpsc::Receiver<Vec<u8>>,
}

/// How a program ended, with what it printed.
pub struct Ended {
    pub name: String,
    pub shown: String,
    pub exit: Exit,
    /// Spawn to exit.
    pub wall: Duration,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Program {
    /// Starts `argv` on `cpus` with `wiring`, in `cwd` when given.
    pub fn start(
        name: &str,
        argv: &[OsString],
        cpus: Option<driver_kit::affinity::CpuSet>,
        cwd: Option<&Path>,
        wiring: Wiring,
    ) -> Result<Program> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| Failure::new(format!("{name}: empty command line")))?;
        let shown = argv
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        let mut command = Command::new(program);
        command.args(args).stderr(Stdio::piped());
        match wiring {
            Wiring::Alone => command.stdin(Stdio::null()).stdout(Stdio::piped()),
            Wiring::Serving => command.stdin(Stdio::piped()).stdout(Stdio::piped()),
            Wiring::Client(from_server, to_server) => command
                .stdin(Stdio::from(from_server))
                .stdout(Stdio::from(to_server)),
        };
        if let Some(dir) = cwd {
            command.current_dir(dir);
        }
        let started = Instant::now();
        // The launcher (and with it the command, which holds the driver's copies of the pipe
        // ends handed to a client) is dropped at the end of this statement, so that a server
        // sees end of input as soon as its client's stdout closes.
        let (child, mut std_child) = Launcher::guarded(command, cpus)
            .spawn()
            .map_err(|f| f.context(format!("starting {name} {shown}")))?;
        let stderr = drain(std_child.stderr.take());
        let stdin = std_child.stdin.take();
        let (stdout, stdout_pipe) = match stdin {
            // Serving: stdout goes to the client, not to the driver.
            Some(_) => (None, std_child.stdout.take()),
            None => (Some(drain(std_child.stdout.take())), None),
        };
        Ok(Program {
            name: name.to_string(),
            shown,
            child,
            started,
            stdin,
            stdout_pipe,
            stdout,
            stderr,
        })
    }

    /// Waits for the exit until `until` (killing the program if it has not exited), reaps
    /// it and collects its output. Err only for the driver's own failures; a program that
    /// had to be killed is reported by `killed`.
    pub fn finish(mut self, until: Instant) -> Result<(Ended, bool)> {
        let exited = self.child.wait_exit(until);
        let wall = self.started.elapsed();
        let (exit, _) = self.child.reap_by(Instant::now())?;
        let stdout = match self.stdout.take() {
            Some(rx) => rx.recv_timeout(DRAIN).unwrap_or_default(),
            None => Vec::new(),
        };
        let stderr = self.stderr.recv_timeout(DRAIN).unwrap_or_default();
        Ok((
            Ended {
                name: self.name,
                shown: self.shown,
                exit,
                wall,
                stdout,
                stderr,
            },
            !exited,
        ))
    }
}

impl Ended {
    /// Appends this program's stderr to the implementation's log, under a header that names
    /// it, so that every trial's messages stay with the run.
    pub fn keep_stderr(&self, log: Option<&Path>) {
        let Some(path) = log else { return };
        if let Ok(mut file) = OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(
                file,
                "--- {}: {} ({})",
                self.name,
                self.shown,
                self.exit.describe()
            );
            let _ = file.write_all(&self.stderr);
        }
    }

    /// The last non-empty line of stderr (a client's report, a server's `{"served": N}`).
    pub fn last_stderr_line(&self) -> &[u8] {
        self.stderr
            .split(|b| *b == b'\n')
            .rev()
            .find(|line| !line.iter().all(u8::is_ascii_whitespace))
            .unwrap_or(&[])
    }

    /// "NAME exited with status 1 (ARGV): STDERR EXCERPT (its stderr: LOG)".
    pub fn failure(&self, log: Option<&Path>) -> Failure {
        let log_name = log.map(|p| p.display().to_string());
        Failure::new(format!(
            "{} {} ({}): {}{}",
            self.name,
            self.exit.describe(),
            self.shown,
            excerpt(&self.stderr),
            log_hint("stderr", log_name.as_deref())
        ))
    }
}

/// The end of a stream's text, cut to [`EXCERPT_CHARS`] characters, quoted.
pub fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let trimmed = text.trim();
    let count = trimmed.chars().count();
    if count <= EXCERPT_CHARS {
        format!("{trimmed:?}")
    } else {
        let tail: String = trimmed.chars().skip(count - EXCERPT_CHARS).collect();
        format!("…{tail:?}")
    }
}

/// A thread that reads `pipe` to its end, keeping the last [`KEEP`] bytes.
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        thread::spawn(move || {
            let mut kept = Vec::new();
            let mut chunk = [0u8; 64 * 1024];
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                kept.extend_from_slice(&chunk[..n]);
                if kept.len() > 2 * KEEP {
                    kept.drain(..kept.len() - KEEP);
                }
            }
            let _ = tx.send(kept);
        });
    } else {
        let _ = tx.send(Vec::new());
    }
    rx
}
