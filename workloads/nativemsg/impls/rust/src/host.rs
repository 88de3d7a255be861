//! The serve loop: read a frame, answer it, write the reply, repeat until EOF; and the exit
//! status that tells the browser how the stream ended.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;

use crate::framing::{self, FrameError, FrameReader};
use crate::protocol;

/// Why the host stopped before a clean EOF. Each one is exit status 1.
#[derive(Debug)]
pub enum HostError {
    /// stdin or stdout could not be set up.
    Stdio(io::Error),
    /// The input stream broke: EOF inside a frame, an oversized length, a read error.
    Read(FrameError),
    /// A reply could not be written (the browser went away, most likely).
    Write(io::Error),
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdio(e) => write!(f, "cannot open stdin/stdout: {e}"),
            Self::Read(e) => e.fmt(f),
            Self::Write(e) => write!(f, "cannot write a reply: {e}"),
        }
    }
}

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
            let _ = writeln!(io::stderr(), "nativemsg-rust: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Keeps freed heap memory in the process between messages.
///
/// glibc's defaults give a freed block of more than ~128 KiB back to the kernel (`munmap`, or
/// trimming the heap top), and its dynamic thresholds settle at about twice the largest block
/// seen. An echo of a few hundred KiB allocates its parsed strings afresh on every message,
/// so each message paid for fresh zeroed pages again: about 230 page faults, half the host's
/// CPU time, for a 512 KiB echo. With fixed thresholds, blocks up to 4 MiB come from the heap
/// and up to 8 MiB of free heap stay mapped; larger blocks (a 64 MiB request) still go
/// straight back to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn tune_allocator() {
    const MMAP_THRESHOLD: libc::c_int = 4 << 20;
    const TRIM_THRESHOLD: libc::c_int = 8 << 20;
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

/// Plain files on fds 0 and 1, duplicated from std's handles.
///
/// Not `io::stdout()`: it is line-buffered, so a reply holding a 0x0A byte (in its body or in
/// its length prefix) would leave in two writes, the second only at the flush. Not
/// `io::stdin()`: its 8 KiB BufReader copies what it reads once more whenever the frame
/// reader asks for less than 8 KiB. A `File` is one read(2)/write(2) per call. `dup` costs a
/// syscall per stream at start-up and, unlike adopting the raw fds, needs no `unsafe`.
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
    // allocates. Its size is bounded by the 1 MiB reply cap.
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
    /// earlier request already has its reply on the output: the host never holds a reply
    /// back while it waits for more input.
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
