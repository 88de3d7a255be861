//! The serve loop: read a frame, answer it, write the reply, repeat until EOF; and the exit
//! status that tells the browser how the stream ended.
//!
//! The loop is the rust host's (`../rust/src/host.rs`) over this crate's `protocol`: that one
//! calls its serde_json `protocol::respond` by name, so only the loop is written again here;
//! the frame reader, the reply framing and the error type are its own, imported.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;

use crate::framing::{self, FrameReader};
use crate::protocol;

pub use nativemsg_rust::host::HostError;

/// Serves stdin/stdout until EOF: exit 0 on EOF at a frame boundary, 1 (with a message on
/// stderr, which the browser logs) on a broken stream.
pub fn run() -> ExitCode {
    tune_allocator();
    let result = open_stdio()
        .map_err(HostError::Stdio)
        .and_then(|(input, mut output)| serve(input, &mut output));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not eprintln!: it panics if stderr is a closed pipe, and a panic aborts.
            let _ = writeln!(io::stderr(), "nativemsg-rust-sonic-rs: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Keeps freed heap memory in the process between messages, as the rust host does (its
/// host.rs says why), with higher thresholds. Per message sonic-rs allocates a copy of the
/// request (512 KiB for echo-512k) and a node array of 8 bytes per request byte (4 MiB), of
/// which it touches a few pages. Blocks up to 16 MiB (requests up to 2 MiB) come from the
/// heap, so an echo-512k message makes no mmap/munmap pair (strace: one pair per message at
/// the rust host's 4 MiB threshold); up to 32 MiB of free heap stays mapped, and only the
/// pages once written count in RSS. Larger blocks (a 64 MiB request) still go straight back.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn tune_allocator() {
    const MMAP_THRESHOLD: libc::c_int = 16 << 20;
    const TRIM_THRESHOLD: libc::c_int = 32 << 20;
    // SAFETY: mallopt only sets allocator parameters: it takes two integers, touches no
    // memory of ours, is thread-safe, and runs here before anything else allocates much.
    // A failure (return 0) leaves glibc's defaults, which are correct, only slower.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}

/// Other allocators than glibc's keep their own policy.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}

/// Plain files on fds 0 and 1, duplicated from std's handles: one read(2)/write(2) per call,
/// not std's line-buffered `Stdout` nor its 8 KiB `BufReader` (the rust host's host.rs says
/// why each matters).
fn open_stdio() -> io::Result<(File, File)> {
    let input = io::stdin().as_fd().try_clone_to_owned()?;
    let output = io::stdout().as_fd().try_clone_to_owned()?;
    Ok((File::from(input), File::from(output)))
}

/// Answers every frame of `input` on `output` until `input` ends.
///
/// Each reply is written (one write, nothing buffered) before the next frame is read, so a
/// caller that waits for each reply never waits forever.
pub fn serve<R: Read, W: Write>(input: R, output: &mut W) -> Result<(), HostError> {
    let mut frames = FrameReader::new(input);
    // One reply buffer for the life of the host: after the first few messages no reply
    // allocates. protocol::respond shrinks it again after an oversized reply.
    let mut reply = Vec::with_capacity(4096);
    loop {
        let request = match frames.next_frame() {
            Ok(Some(body)) => body,
            Ok(None) => return Ok(()),
            Err(e) => return Err(HostError::Read(e)),
        };
        framing::begin_frame(&mut reply);
        protocol::respond(request, &mut reply);
        framing::write_frame(output, &mut reply).map_err(HostError::Write)?;
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of the serve loop: EOF rules, stream errors, and a reply out before each read.

    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::framing::FrameError;
    use serde_json::{json, Value};
    use std::cell::RefCell;
    use std::io::Cursor;
    use std::rc::Rc;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut v = (body.len() as u32).to_ne_bytes().to_vec();
        v.extend_from_slice(body);
        v
    }

    fn replies(mut wire: &[u8]) -> Vec<Value> {
        let mut out = Vec::new();
        while !wire.is_empty() {
            let len = u32::from_ne_bytes(wire[..4].try_into().unwrap()) as usize;
            out.push(serde_json::from_slice(&wire[4..4 + len]).unwrap());
            wire = &wire[4 + len..];
        }
        out
    }

    #[test]
    fn serves_until_clean_eof() {
        let mut input = frame(br#"{"op":"ping"}"#);
        input.extend(frame(b"garbage"));
        input.extend(frame(br#"{"op":"echo","data":[1,"two"]}"#));
        let mut out = Vec::new();
        serve(Cursor::new(input), &mut out).unwrap();
        let r = replies(&out);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0], json!({"op": "pong"}));
        assert!(r[1]["error"].is_string());
        assert_eq!(r[2], json!({"op": "echo", "data": [1, "two"]}));
    }

    #[test]
    fn no_input_no_output() {
        let mut out = Vec::new();
        serve(Cursor::new(Vec::new()), &mut out).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn eof_mid_frame_fails_after_answering_earlier_frames() {
        let mut input = frame(br#"{"op":"ping"}"#);
        input.extend_from_slice(&[1, 0]);
        let mut out = Vec::new();
        let err = serve(Cursor::new(input), &mut out).unwrap_err();
        assert!(matches!(
            err,
            HostError::Read(FrameError::EofInHeader { got: 2 })
        ));
        assert_eq!(replies(&out), vec![json!({"op": "pong"})]);
    }

    #[test]
    fn oversized_length_stops_the_host() {
        let input = (64u32 * 1024 * 1024 + 1).to_ne_bytes().to_vec();
        let mut out = Vec::new();
        let err = serve(Cursor::new(input), &mut out).unwrap_err();
        assert!(matches!(err, HostError::Read(FrameError::TooLarge(_))));
        assert!(err.to_string().contains("exceeds"));
        assert!(out.is_empty());
    }

    #[test]
    fn write_errors_stop_the_host() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = serve(Cursor::new(frame(br#"{"op":"ping"}"#)), &mut Closed).unwrap_err();
        assert!(matches!(err, HostError::Write(_)));
    }

    /// Input that hands out one frame per read and checks, before each read, that every
    /// earlier request already has its reply on the output.
    struct Lockstep {
        frames: Vec<Vec<u8>>,
        next: usize,
        written: Rc<RefCell<Vec<u8>>>,
    }

    impl Read for Lockstep {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            assert_eq!(replies(&self.written.borrow()).len(), self.next);
            let Some(f) = self.frames.get(self.next) else {
                return Ok(0);
            };
            buf[..f.len()].copy_from_slice(f);
            self.next += 1;
            Ok(f.len())
        }
    }

    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn each_reply_is_out_before_the_next_read() {
        let written = Rc::new(RefCell::new(Vec::new()));
        let input = Lockstep {
            frames: (0..5)
                .map(|i| frame(format!(r#"{{"op":"echo","data":{i}}}"#).as_bytes()))
                .collect(),
            next: 0,
            written: Rc::clone(&written),
        };
        serve(input, &mut Shared(Rc::clone(&written))).unwrap();
        assert_eq!(replies(&written.borrow()).len(), 5);
    }
}
