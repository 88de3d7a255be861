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

/// glibc malloc thresholds a host sets at start-up, before it reads anything.
///
/// glibc's defaults give a freed block of more than ~128 KiB back to the kernel (`munmap`, or
/// trimming the heap top), and its dynamic thresholds settle at about twice the largest block
/// seen, so a host that allocates a large parse tree afresh for every message pays for fresh
/// zeroed pages every time. Fixed thresholds keep those blocks on the heap; each host picks
/// them for what its JSON library allocates per message.
#[derive(Clone, Copy, Debug)]
pub struct HeapTuning {
    /// Blocks up to this many bytes come from the heap, larger ones from `mmap`.
    pub mmap_threshold: i32,
    /// Free heap up to this many bytes stays mapped.
    pub trim_threshold: i32,
}

/// This host's thresholds. An echo of a few hundred KiB allocates its parsed strings afresh
/// on every message, so with glibc's defaults each message paid for fresh zeroed pages again:
/// about 230 page faults, half the host's CPU time, for a 512 KiB echo. With these, blocks up
/// to 4 MiB come from the heap and up to 8 MiB of free heap stay mapped; larger blocks (a
/// 64 MiB request) still go straight back to the kernel.
pub const HEAP: HeapTuning = HeapTuning {
    mmap_threshold: 4 << 20,
    trim_threshold: 8 << 20,
};

/// Serves stdin/stdout until EOF: exit 0 on EOF at a frame boundary, 1 (with a message on
/// stderr, which the browser logs) on a broken stream.
pub fn run() -> ExitCode {
    run_host("nativemsg-rust", HEAP, protocol::respond)
}

/// `run` for a host of the same framing and loop with its own responder (a request body in,
/// the reply body appended to the buffer) and heap thresholds; `name` starts its error
/// messages.
pub fn run_host<F>(name: &str, heap: HeapTuning, respond: F) -> ExitCode
where
    F: FnMut(&[u8], &mut Vec<u8>),
{
    tune_allocator(heap);
    let result = open_stdio()
        .map_err(HostError::Stdio)
        .and_then(|(input, mut output)| serve_with(input, &mut output, respond));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not eprintln!: it panics if stderr is a closed pipe, and a panic aborts.
            let _ = writeln!(io::stderr(), "{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Keeps freed heap memory in the process between messages (see `HeapTuning`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn tune_allocator(heap: HeapTuning) {
    // SAFETY: mallopt only sets allocator parameters: it takes two integers, touches no
    // memory of ours, is thread-safe, and runs here before anything else allocates much.
    // A failure (return 0) leaves glibc's defaults, which are correct, only slower.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, heap.mmap_threshold);
        libc::mallopt(libc::M_TRIM_THRESHOLD, heap.trim_threshold);
    }
}

/// Other allocators than glibc's keep their own policy.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator(_: HeapTuning) {}

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
    serve_with(input, output, protocol::respond)
}

/// `serve` with another responder: `respond` appends the reply body to a request body to the
/// buffer it is given, at most `framing::MAX_REPLY` bytes. Generic, so each host's loop is
/// compiled with its own responder called directly.
pub fn serve_with<R, W, F>(input: R, output: &mut W, mut respond: F) -> Result<(), HostError>
where
    R: Read,
    W: Write,
    F: FnMut(&[u8], &mut Vec<u8>),
{
    let mut frames = FrameReader::new(input);
    // One reply buffer for the life of the host: after the first few messages no reply
    // allocates. The reply cap bounds what a reply leaves in it, unless the responder lets it
    // grow further before refusing a reply (then it shrinks the buffer itself).
    let mut reply = Vec::with_capacity(4096);
    loop {
        let request = match frames.next_frame() {
            Ok(Some(body)) => body,
            Ok(None) => return Ok(()),
            Err(e) => return Err(HostError::Read(e)),
        };
        framing::begin_frame(&mut reply);
        respond(request, &mut reply);
        framing::write_frame(output, &mut reply).map_err(HostError::Write)?;
    }
}

/// The serve loop's checks, for any responder of the nativemsg protocol: EOF rules, stream
/// errors, and a reply out before each read. This crate runs them on its own
/// `protocol::respond`; a host that reuses the loop with another JSON library runs them on
/// its responder with `serve_loop_tests!` (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub mod loop_checks {
    use super::*;
    use crate::framing::FrameError;
    use serde_json::{json, Value};
    use std::cell::RefCell;
    use std::io::Cursor;
    use std::rc::Rc;

    /// A responder under test.
    pub type Respond = fn(&[u8], &mut Vec<u8>);

    pub fn frame(body: &[u8]) -> Vec<u8> {
        let mut v = (body.len() as u32).to_ne_bytes().to_vec();
        v.extend_from_slice(body);
        v
    }

    pub fn replies(mut wire: &[u8]) -> Vec<Value> {
        let mut out = Vec::new();
        while !wire.is_empty() {
            let len = u32::from_ne_bytes(wire[..4].try_into().unwrap()) as usize;
            out.push(serde_json::from_slice(&wire[4..4 + len]).unwrap());
            wire = &wire[4 + len..];
        }
        out
    }

    pub fn serves_until_clean_eof(respond: Respond) {
        let mut input = frame(br#"{"op":"ping"}"#);
        input.extend(frame(b"garbage"));
        input.extend(frame(br#"{"op":"echo","data":[1,"two"]}"#));
        let mut out = Vec::new();
        serve_with(Cursor::new(input), &mut out, respond).unwrap();
        let r = replies(&out);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0], json!({"op": "pong"}));
        assert!(r[1]["error"].is_string());
        assert_eq!(r[2], json!({"op": "echo", "data": [1, "two"]}));
    }

    pub fn no_input_no_output(respond: Respond) {
        let mut out = Vec::new();
        serve_with(Cursor::new(Vec::new()), &mut out, respond).unwrap();
        assert!(out.is_empty());
    }

    pub fn eof_mid_frame_fails_after_answering_earlier_frames(respond: Respond) {
        let mut input = frame(br#"{"op":"ping"}"#);
        input.extend_from_slice(&[1, 0]);
        let mut out = Vec::new();
        let err = serve_with(Cursor::new(input), &mut out, respond).unwrap_err();
        assert!(matches!(
            err,
            HostError::Read(FrameError::EofInHeader { got: 2 })
        ));
        assert_eq!(replies(&out), vec![json!({"op": "pong"})]);
    }

    pub fn oversized_length_stops_the_host(respond: Respond) {
        let input = (64u32 * 1024 * 1024 + 1).to_ne_bytes().to_vec();
        let mut out = Vec::new();
        let err = serve_with(Cursor::new(input), &mut out, respond).unwrap_err();
        assert!(matches!(err, HostError::Read(FrameError::TooLarge(_))));
        assert!(err.to_string().contains("exceeds"));
        assert!(out.is_empty());
    }

    pub fn write_errors_stop_the_host(respond: Respond) {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = serve_with(
            Cursor::new(frame(br#"{"op":"ping"}"#)),
            &mut Closed,
            respond,
        )
        .unwrap_err();
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

    pub fn each_reply_is_out_before_the_next_read(respond: Respond) {
        let written = Rc::new(RefCell::new(Vec::new()));
        let input = Lockstep {
            frames: (0..5)
                .map(|i| frame(format!(r#"{{"op":"echo","data":{i}}}"#).as_bytes()))
                .collect(),
            next: 0,
            written: Rc::clone(&written),
        };
        serve_with(input, &mut Shared(Rc::clone(&written)), respond).unwrap();
        assert_eq!(replies(&written.borrow()).len(), 5);
    }
}

/// One `#[test]` per check of `host::loop_checks`, each run on the responder given.
#[cfg(any(test, feature = "test-support"))]
#[macro_export]
macro_rules! serve_loop_tests {
    ($respond:expr) => {
        $crate::__tests_of_checks!(host::loop_checks, $respond;
            serves_until_clean_eof,
            no_input_no_output,
            eof_mid_frame_fails_after_answering_earlier_frames,
            oversized_length_stops_the_host,
            write_errors_stop_the_host,
            each_reply_is_out_before_the_next_read,
        );
    };
}

#[cfg(test)]
mod tests {
    //! The serve loop's checks (`loop_checks`) on this host's responder.

    crate::serve_loop_tests!(crate::protocol::respond);
}
