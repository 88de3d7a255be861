package nmhost

// Framing: one Native Messaging frame is a 4-byte unsigned length in native byte order
// (little-endian on every machine this lab runs on) followed by that many bytes of UTF-8
// JSON. The length counts bytes. This file knows nothing about JSON.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

const (
	// headerSize is the length prefix: exactly 4 bytes (a uint32), never a platform word.
	headerSize = 4
	// maxRequestBody is the browser → host cap (64 MiB). A larger prefix means a broken stream.
	maxRequestBody = 64 << 20
	// maxReplyBody is the host → browser cap (1 MiB): Chromium drops the port at one byte more.
	maxReplyBody = 1 << 20

	// readChunk is the initial size of the input buffer and so the largest single read(2)
	// while frames are small. 64 KiB is a Linux pipe's default capacity, so one read can
	// drain whatever the browser has queued (many small frames at once) without growing.
	readChunk = 64 << 10
	// keepBuffer is the largest buffer kept between frames. A buffer grown for a bigger
	// frame (up to 64 MiB) is dropped once that frame is done, so one huge request does not
	// pin its memory for the rest of a long-lived connection; the benchmark sizes (≤ 1 MiB)
	// keep reusing theirs.
	keepBuffer = 2 << 20
)

// errFrameTooLarge is returned (wrapped) for a length prefix above maxRequestBody.
var errFrameTooLarge = errors.New("frame too large")

// errTruncated is returned (wrapped) when the input ends inside a header or a body.
var errTruncated = errors.New("input ended inside a frame")

// frameReader splits an input stream into frame bodies. It reads in large chunks into one
// reusable buffer and cuts frames out of it, so a burst of small frames costs one read(2)
// and a frame split over many reads is reassembled without per-frame allocations.
//
// It reads only while the frame it is asked for is incomplete: it never blocks waiting for
// input beyond the frame it returns, so a caller that answers each frame before asking for
// the next one never deadlocks against a peer that waits for that answer.
type frameReader struct {
	r     io.Reader
	buf   []byte
	start int // first unconsumed byte in buf
	end   int // one past the last byte read into buf
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: r, buf: make([]byte, readChunk)}
}

// readFrame returns the next frame body. The slice aliases the internal buffer and is valid
// only until the next call. It returns io.EOF (unwrapped) only when the input ends exactly at
// a frame boundary; an end inside a frame wraps errTruncated, an oversized length prefix
// wraps errFrameTooLarge (returned before anything is allocated or read for that body), and
// read errors are passed on.
func (fr *frameReader) readFrame() ([]byte, error) {
	if fr.start == fr.end {
		// Nothing pending: rewind, and drop a buffer grown for an earlier huge frame.
		fr.start, fr.end = 0, 0
		if len(fr.buf) > keepBuffer {
			fr.buf = make([]byte, readChunk)
		}
	}

	if err := fr.fill(headerSize); err != nil {
		if err == io.EOF {
			if have := fr.end - fr.start; have > 0 {
				return nil, fmt.Errorf("%w: got %d of %d length-prefix bytes", errTruncated, have, headerSize)
			}
			return nil, io.EOF
		}
		return nil, err
	}

	n := binary.LittleEndian.Uint32(fr.buf[fr.start:])
	if n > maxRequestBody {
		return nil, fmt.Errorf("%w: the length prefix says %d bytes, the limit is %d (64 MiB)", errFrameTooLarge, n, maxRequestBody)
	}

	frameLen := headerSize + int(n)
	if err := fr.fill(frameLen); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%w: got %d of %d body bytes", errTruncated, fr.end-fr.start-headerSize, n)
		}
		return nil, err
	}

	body := fr.buf[fr.start+headerSize : fr.start+frameLen : fr.start+frameLen]
	fr.start += frameLen
	return body, nil
}

// fill makes at least need bytes available from fr.start, reading as little as it can: it
// returns as soon as need is met, and never reads when it already is. need is at most
// headerSize+maxRequestBody, checked by the caller before it asks.
func (fr *frameReader) fill(need int) error {
	if fr.end-fr.start >= need {
		return nil
	}
	if len(fr.buf)-fr.start < need {
		// The frame does not fit behind fr.start: move the pending bytes to the front, into
		// a bigger buffer if the frame is bigger than the current one.
		buf := fr.buf
		if need > len(buf) {
			buf = make([]byte, need)
		}
		fr.end = copy(buf, fr.buf[fr.start:fr.end])
		fr.start = 0
		fr.buf = buf
	}
	for fr.end-fr.start < need {
		n, err := fr.r.Read(fr.buf[fr.end:])
		fr.end += n
		if err != nil {
			if fr.end-fr.start >= need {
				return nil // got enough; a sticky EOF or error shows up on the next read
			}
			return err
		}
		if n == 0 {
			// A well-behaved reader never returns (0, nil) for a non-empty buffer; a
			// pipe or file never does. Refuse to spin on one that does.
			return io.ErrNoProgress
		}
	}
	return nil
}

// frameBuilder assembles one outgoing frame: the header bytes are reserved up front and the
// body is appended behind them (it is an io.Writer, so a JSON encoder can write straight in),
// so the whole frame goes out in a single write(2) without copying the body again.
type frameBuilder struct {
	buf []byte
}

// reset starts a new frame with an empty body.
func (fb *frameBuilder) reset() {
	if cap(fb.buf) > keepBuffer {
		fb.buf = nil // see keepBuffer: do not hold on to the memory of one huge reply
	}
	fb.buf = append(fb.buf[:0], 0, 0, 0, 0)
}

// Write appends p to the body. It never fails.
func (fb *frameBuilder) Write(p []byte) (int, error) {
	fb.buf = append(fb.buf, p...)
	return len(p), nil
}

// body returns the body written so far (aliasing the builder).
func (fb *frameBuilder) body() []byte {
	return fb.buf[headerSize:]
}

// bodyLen is the number of body bytes written so far.
func (fb *frameBuilder) bodyLen() int {
	return len(fb.buf) - headerSize
}

// grow appends n bytes to the body and returns them for the caller to fill in.
func (fb *frameBuilder) grow(n int) []byte {
	start := len(fb.buf)
	fb.buf = slices.Grow(fb.buf, n)[:start+n]
	return fb.buf[start:]
}

// truncate cuts the body to its first n bytes.
func (fb *frameBuilder) truncate(n int) {
	fb.buf = fb.buf[:headerSize+n]
}

// writeTo fills in the length prefix and writes the whole frame with one Write, so a reader
// never sees a header without its body and each reply costs one system call. os.File's
// Write loops over short writes itself, so a large frame still goes out completely. A body
// over maxReplyBody is refused: the protocol layer must have replaced it with an error
// reply, and sending it would make the browser drop the connection.
func (fb *frameBuilder) writeTo(w io.Writer) error {
	n := fb.bodyLen()
	if n > maxReplyBody {
		return fmt.Errorf("internal error: reply body of %d bytes exceeds the %d-byte limit", n, maxReplyBody)
	}
	binary.LittleEndian.PutUint32(fb.buf, uint32(n))
	_, err := w.Write(fb.buf)
	return err
}
