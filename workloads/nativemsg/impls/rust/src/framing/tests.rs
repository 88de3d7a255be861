//! Unit tests of the framing: each would fail on one of the classic Native Messaging bugs
//! (8-byte or big-endian length, character count, no cap, EOF mid-frame, split reads).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use std::io::Cursor;

/// One frame: the 4-byte native-order length, then the body.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut v = (body.len() as u32).to_ne_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

/// A reader that returns at most `step` bytes per `read`, like a pipe fed byte by byte.
struct Trickle {
    data: Vec<u8>,
    pos: usize,
    step: usize,
    reads: usize,
}

impl Read for Trickle {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        let n = self.step.min(out.len()).min(self.data.len() - self.pos);
        out[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn trickle(data: Vec<u8>, step: usize) -> Trickle {
    Trickle {
        data,
        pos: 0,
        step,
        reads: 0,
    }
}

fn all_frames<R: Read>(r: &mut FrameReader<R>) -> Result<Vec<Vec<u8>>, FrameError> {
    let mut out = Vec::new();
    while let Some(body) = r.next_frame()? {
        out.push(body.to_vec());
    }
    Ok(out)
}

#[test]
fn reads_one_frame_then_clean_eof() {
    let mut r = FrameReader::new(Cursor::new(frame(br#"{"op":"ping"}"#)));
    assert_eq!(r.next_frame().unwrap(), Some(&br#"{"op":"ping"}"#[..]));
    assert_eq!(r.next_frame().unwrap(), None);
}

#[test]
fn eof_before_any_frame_is_clean() {
    let mut r = FrameReader::new(Cursor::new(Vec::new()));
    assert!(matches!(r.next_frame(), Ok(None)));
}

#[test]
fn empty_body_is_a_frame() {
    let mut r = FrameReader::new(Cursor::new(frame(b"")));
    assert_eq!(r.next_frame().unwrap(), Some(&b""[..]));
    assert_eq!(r.next_frame().unwrap(), None);
}

#[test]
#[cfg(target_endian = "little")]
fn length_is_four_bytes_little_endian() {
    // 5 as little-endian u32, then 5 bytes, then a second frame: an 8-byte or big-endian
    // reader would see a different length and fail.
    let mut data = vec![5, 0, 0, 0];
    data.extend_from_slice(b"hello");
    data.extend_from_slice(&[2, 0, 0, 0]);
    data.extend_from_slice(b"[]");
    let mut r = FrameReader::new(Cursor::new(data));
    assert_eq!(
        all_frames(&mut r).unwrap(),
        vec![b"hello".to_vec(), b"[]".to_vec()]
    );
}

#[test]
#[cfg(target_endian = "little")]
fn big_endian_length_is_read_as_native() {
    // A big-endian 1 is 16 MiB in native (little-endian) order: the reader must wait for
    // 16 MiB of body, and so reports EOF inside the body.
    let mut data = vec![0, 0, 0, 1];
    data.push(b'x');
    let mut r = FrameReader::new(Cursor::new(data));
    match r.next_frame() {
        Err(FrameError::EofInBody { got: 1, want }) => assert_eq!(want, 1 << 24),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn length_counts_bytes_not_characters() {
    let body = "{\"data\":\"é€😀\"}".as_bytes();
    assert_eq!(body.len(), 9 + 2 + 3 + 4 + 2);
    let mut data = frame(body);
    data.extend(frame(b"{}"));
    let mut r = FrameReader::new(Cursor::new(data));
    assert_eq!(
        all_frames(&mut r).unwrap(),
        vec![body.to_vec(), b"{}".to_vec()]
    );
}

#[test]
fn many_frames_in_one_read() {
    let mut data = Vec::new();
    for i in 0..1000 {
        data.extend(frame(format!("{{\"seq\":{i}}}").as_bytes()));
    }
    let mut src = trickle(data, usize::MAX);
    let frames = all_frames(&mut FrameReader::new(&mut src)).unwrap();
    assert_eq!(frames.len(), 1000);
    assert_eq!(frames[999], b"{\"seq\":999}");
    // 1000 small frames (14 KB) fit in a handful of chunked reads, not one per frame:
    // the buffer doubles from 4 KiB as each read fills it.
    assert!(src.reads <= 5, "{} reads", src.reads);
}

#[test]
fn buffer_grows_to_the_read_chunk_on_a_fast_stream_only() {
    let one = frame(br#"{"op":"ping"}"#);
    let mut r = FrameReader::new(Cursor::new(one.repeat(3)));
    assert_eq!(all_frames(&mut r).unwrap().len(), 3);
    assert_eq!(r.buf.len(), FIRST_CHUNK);

    let mut r = FrameReader::new(Cursor::new(one.repeat(20_000)));
    assert_eq!(all_frames(&mut r).unwrap().len(), 20_000);
    assert_eq!(r.buf.len(), READ_CHUNK);
}

#[test]
fn split_reads_one_byte_at_a_time() {
    let bodies: Vec<Vec<u8>> = vec![
        b"{\"op\":\"ping\"}".to_vec(),
        vec![b'a'; 70_000], // larger than the initial buffer: forces a grow
        b"".to_vec(),
        b"[1,2,3]".to_vec(),
    ];
    let data: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
    for step in [1, 2, 3, 5, 4096, 65_536, 100_000] {
        let mut r = FrameReader::new(trickle(data.clone(), step));
        assert_eq!(all_frames(&mut r).unwrap(), bodies, "step {step}");
    }
}

#[test]
fn eof_inside_header_is_an_error() {
    for got in 1..HEADER_LEN {
        let data = frame(b"{}")[..got].to_vec();
        let mut r = FrameReader::new(trickle(data, 1));
        match r.next_frame() {
            Err(FrameError::EofInHeader { got: g }) => assert_eq!(g, got),
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn eof_inside_body_is_an_error() {
    let mut data = frame(b"{\"op\":\"ping\"}");
    data.truncate(HEADER_LEN + 5);
    let mut r = FrameReader::new(Cursor::new(data));
    match r.next_frame() {
        Err(FrameError::EofInBody { got: 5, want: 13 }) => {}
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn eof_inside_body_after_a_good_frame() {
    let mut data = frame(b"{}");
    data.extend_from_slice(&100u32.to_ne_bytes());
    let mut r = FrameReader::new(Cursor::new(data));
    assert_eq!(r.next_frame().unwrap(), Some(&b"{}"[..]));
    assert!(matches!(
        r.next_frame(),
        Err(FrameError::EofInBody { got: 0, want: 100 })
    ));
}

/// A source that holds just a header claiming `len` bytes and fails the test if the
/// reader asks for more: an oversized length must be refused without waiting.
struct HeaderOnly {
    header: Option<[u8; 4]>,
}

impl Read for HeaderOnly {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let h = self
            .header
            .take()
            .expect("reader waited for the body of a huge frame");
        out[..4].copy_from_slice(&h);
        Ok(4)
    }
}

#[test]
fn length_over_cap_is_refused_at_once() {
    for len in [MAX_REQUEST as u32 + 1, u32::MAX, 0x8000_0000] {
        let mut r = FrameReader::new(HeaderOnly {
            header: Some(len.to_ne_bytes()),
        });
        match r.next_frame() {
            Err(FrameError::TooLarge(l)) => assert_eq!(l, len),
            other => panic!("unexpected {other:?}"),
        }
        // Nothing was allocated for the claimed length.
        assert_eq!(r.buf.len(), FIRST_CHUNK);
        assert_eq!(r.buf.capacity(), READ_CHUNK);
    }
}

#[test]
fn length_at_cap_is_accepted() {
    let body = vec![b'x'; MAX_REQUEST];
    let mut r = FrameReader::new(Cursor::new(frame(&body)));
    assert_eq!(r.next_frame().unwrap().map(<[u8]>::len), Some(MAX_REQUEST));
    assert_eq!(r.next_frame().unwrap(), None);
    // And the 64 MiB buffer is given back afterwards.
    assert_eq!(r.buf.len(), READ_CHUNK);
}

#[test]
fn read_errors_are_reported_and_interrupts_retried() {
    struct Flaky(u32);
    impl Read for Flaky {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            self.0 += 1;
            if self.0 < 3 {
                Err(io::ErrorKind::Interrupted.into())
            } else {
                Err(io::Error::other("boom"))
            }
        }
    }
    let mut r = FrameReader::new(Flaky(0));
    assert!(matches!(r.next_frame(), Err(FrameError::Io(e)) if e.to_string() == "boom"));
}

/// A writer that records each `write` call separately.
#[derive(Default)]
struct Calls(Vec<Vec<u8>>);

impl Write for Calls {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.push(b.to_vec());
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn write_frame_is_one_write_with_a_four_byte_length() {
    let mut frame_buf = Vec::new();
    begin_frame(&mut frame_buf);
    frame_buf.extend_from_slice("{\"s\":\"é\"}".as_bytes());
    let mut out = Calls::default();
    write_frame(&mut out, &mut frame_buf).unwrap();
    assert_eq!(out.0.len(), 1);
    let written = &out.0[0];
    assert_eq!(written.len(), 4 + 10);
    assert_eq!(&written[..4], &10u32.to_ne_bytes());
    assert_eq!(&written[4..], "{\"s\":\"é\"}".as_bytes());
}

#[test]
fn write_frame_round_trips_through_the_reader() {
    let mut wire = Vec::new();
    let mut f = Vec::new();
    for body in [&b"{}"[..], b"", &[b'y'; MAX_REPLY]] {
        begin_frame(&mut f);
        f.extend_from_slice(body);
        write_frame(&mut wire, &mut f).unwrap();
    }
    let frames = all_frames(&mut FrameReader::new(Cursor::new(wire))).unwrap();
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[2].len(), MAX_REPLY);
}

#[test]
fn write_frame_refuses_a_reply_over_one_mib() {
    let mut f = Vec::new();
    begin_frame(&mut f);
    f.resize(HEADER_LEN + MAX_REPLY + 1, b'x');
    let mut out = Calls::default();
    assert!(write_frame(&mut out, &mut f).is_err());
    assert!(out.0.is_empty());
}
