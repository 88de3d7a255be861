//! Bounded waits on file descriptors: a pipe to or from the implementation, or its pidfd
//! (readable once the process has exited). Every wait of a trial ends by its deadline.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::time::Instant;

/// Waits until `fd` is ready for `events` (or hung up, or in error: the next read or write
/// says which), for at most what is left until `until`; an `until` in the past polls once
/// without waiting. A timeout is an `ErrorKind::TimedOut` error naming --timeout-s.
pub fn wait_ready(fd: RawFd, events: libc::c_short, until: Instant) -> io::Result<()> {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        // Round up, so a wait never ends just short of the deadline and spins.
        let timeout = i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX);
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
        if Instant::now() >= until {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the trial's --timeout-s budget ran out",
            ));
        }
    }
}

/// A pidfd for `pid`: it becomes readable when the process exits, so an exit can be awaited
/// in poll(2) with a timeout. The caller must make sure the pid is still the process it means
/// (an unreaped child's pid cannot be reused).
pub fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall; on success it returns a new fd that we own.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the fd was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Sets O_NONBLOCK: a write that does not fit in a pipe then waits in [`wait_ready`], with the
/// deadline, instead of blocking in write(2) on a reader that stopped reading.
pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on an open fd.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::time::Duration;

    #[test]
    fn waits_until_ready_or_times_out() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let fd = reader.as_raw_fd();
        let started = Instant::now();
        let err = wait_ready(fd, libc::POLLIN, started + Duration::from_millis(50)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(err.to_string().contains("--timeout-s"), "{err}");
        assert!(started.elapsed() >= Duration::from_millis(50));
        writer.write_all(b"x").unwrap();
        // Ready data is seen even with a deadline already past.
        wait_ready(fd, libc::POLLIN, started).unwrap();
    }

    #[test]
    fn a_nonblocking_pipe_does_not_block() {
        let (reader, _writer) = std::io::pipe().unwrap();
        set_nonblocking(reader.as_raw_fd()).unwrap();
        let mut buf = [0u8; 1];
        let err = std::io::Read::read(&mut &reader, &mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
    }
}
