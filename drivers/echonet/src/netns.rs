//! Network namespaces made by `ip netns add` (msgbench.topology): a file in /run/netns that
//! `setns(2)` enters. The driver enters its own (--ctl-netns) on its main thread before any
//! socket or thread exists, so everything it makes afterwards lives there; a node enters its
//! own (--node-netns) in the child between fork and exec, so the process that runs is the node
//! itself (its pid, CPU clock and exit status), not a wrapper such as `ip netns exec`.

use driver_kit::error::{Failure, Result};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

/// Where `ip netns add NAME` puts the namespace's handle.
const NETNS_DIR: &str = "/run/netns";

pub struct Netns {
    name: String,
    handle: OwnedFd,
}

impl Netns {
    /// Opens the handle of namespace `name` (close-on-exec, as std opens every file).
    pub fn open(name: &str) -> Result<Netns> {
        let path = PathBuf::from(NETNS_DIR).join(name);
        let file = File::open(&path).map_err(|e| {
            Failure::new(format!(
                "network namespace {name}: cannot open {}: {e}",
                path.display()
            ))
        })?;
        Ok(Netns {
            name: name.to_string(),
            handle: file.into(),
        })
    }

    /// Moves the calling thread into the namespace: sockets it opens and threads it starts
    /// from now on are there. Needs CAP_SYS_ADMIN.
    pub fn enter(&self) -> Result<()> {
        if setns(&self.handle) != 0 {
            let e = io::Error::last_os_error();
            return Err(Failure::new(format!(
                "entering network namespace {}: setns: {e}",
                self.name
            )));
        }
        Ok(())
    }

    /// Makes `command`'s child enter the namespace before it execs. A failure is the spawn's
    /// error (std reports a pre_exec error as the spawn's).
    pub fn enter_in_child(&self, command: &mut Command) -> Result<()> {
        // The hook owns its own handle, so it stays open for as long as the command exists.
        let handle = self.handle.try_clone().map_err(|e| {
            Failure::new(format!(
                "network namespace {}: duplicating its handle: {e}",
                self.name
            ))
        })?;
        // SAFETY: the hook makes one async-signal-safe system call and does not allocate.
        unsafe {
            command.pre_exec(move || match setns(&handle) {
                0 => Ok(()),
                _ => Err(io::Error::last_os_error()),
            })
        };
        Ok(())
    }
}

fn setns(handle: &OwnedFd) -> libc::c_int {
    // SAFETY: a valid open descriptor; CLONE_NEWNET makes the kernel check that it is one of
    // a network namespace.
    unsafe { libc::setns(handle.as_raw_fd(), libc::CLONE_NEWNET) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_namespace_is_named() {
        let err = Netns::open("mbdrv-no-such-namespace").err().unwrap();
        assert!(
            err.message().contains("/run/netns/mbdrv-no-such-namespace"),
            "{err}"
        );
    }
}
