package nmhost

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// frame encodes body the way a browser does: 4-byte little-endian byte count, then the body.
func frame(body string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	return append(b, body...)
}

// readAll reads frames until an error and returns the bodies and that error.
func readAll(t *testing.T, r io.Reader) ([]string, error) {
	t.Helper()
	fr := newFrameReader(r)
	var bodies []string
	for {
		body, err := fr.readFrame()
		if err != nil {
			return bodies, err
		}
		bodies = append(bodies, string(body))
		if len(bodies) > 10000 {
			t.Fatal("runaway frame loop")
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReadFrameLittleEndianFourByteLength(t *testing.T) {
	// 0x0d 00 00 00 = 13 little-endian. Read big-endian it is 218,103,808 (over the cap),
	// and an 8-byte length would swallow the first four body bytes.
	input := append([]byte{0x0d, 0, 0, 0}, `{"op":"ping"}`...)
	bodies, err := readAll(t, bytes.NewReader(input))
	if err != io.EOF {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	if len(bodies) != 1 || bodies[0] != `{"op":"ping"}` {
		t.Fatalf("bodies = %q", bodies)
	}
}

func TestReadFrameBackToBackFrames(t *testing.T) {
	// Frames follow each other with nothing in between: a reader that takes 8 bytes of
	// length, or skips padding, gets these wrong.
	want := []string{"a", "bc", "", "def", `{"op":"ping"}`}
	var input []byte
	for _, b := range want {
		input = append(input, frame(b)...)
	}
	bodies, err := readAll(t, bytes.NewReader(input))
	if err != io.EOF || !equalStrings(bodies, want) {
		t.Fatalf("got %q, %v; want %q, io.EOF", bodies, err, want)
	}
}

func TestReadFrameLengthCountsBytesNotCharacters(t *testing.T) {
	body := `{"op":"echo","data":"é€😀"}` // 26 characters, 32 bytes
	if len(body) == len([]rune(body)) {
		t.Fatal("test body must have multi-byte characters")
	}
	want := []string{body, "next"}
	input := append(frame(body), frame("next")...)
	bodies, err := readAll(t, bytes.NewReader(input))
	if err != io.EOF || !equalStrings(bodies, want) {
		t.Fatalf("got %q, %v; want %q, io.EOF", bodies, err, want)
	}
}

func TestReadFrameSplitReads(t *testing.T) {
	want := []string{`{"op":"ping"}`, strings.Repeat("y", 200_000), "", `{"op":"echo","data":"é"}`}
	var input []byte
	for _, b := range want {
		input = append(input, frame(b)...)
	}
	readers := map[string]func() io.Reader{
		"one byte per read": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(input)) },
		"half reads":        func() io.Reader { return iotest.HalfReader(bytes.NewReader(input)) },
		"data with EOF":     func() io.Reader { return iotest.DataErrReader(bytes.NewReader(input)) },
		"all at once":       func() io.Reader { return bytes.NewReader(input) },
	}
	for name, mk := range readers {
		t.Run(name, func(t *testing.T) {
			bodies, err := readAll(t, mk())
			if err != io.EOF || !equalStrings(bodies, want) {
				t.Fatalf("got %d frames, %v; want %d frames, io.EOF", len(bodies), err, len(want))
			}
		})
	}
}

// countingReader counts Read calls.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

func TestReadFrameManyFramesInOneRead(t *testing.T) {
	var input []byte
	for range 1000 {
		input = append(input, frame(`{"op":"ping"}`)...)
	}
	cr := &countingReader{r: bytes.NewReader(input)}
	bodies, err := readAll(t, cr)
	if err != io.EOF || len(bodies) != 1000 {
		t.Fatalf("got %d frames, %v", len(bodies), err)
	}
	// 17 KB fits one 64 KiB read; one more read sees EOF.
	if cr.reads != 2 {
		t.Fatalf("%d reads for 17 KB of frames, want 2 (one chunk, then EOF)", cr.reads)
	}
}

// stallReader hands out its chunks one per Read and fails the test if asked for more: a
// stand-in for a pipe whose writer is waiting for a reply before it sends anything else.
type stallReader struct {
	t      *testing.T
	chunks [][]byte
}

func (s *stallReader) Read(p []byte) (int, error) {
	if len(s.chunks) == 0 {
		s.t.Fatal("Read called although a whole frame was already buffered: a real pipe would block here")
	}
	n := copy(p, s.chunks[0])
	s.chunks[0] = s.chunks[0][n:]
	if len(s.chunks[0]) == 0 {
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

func TestReadFrameNeverReadsPastACompleteFrame(t *testing.T) {
	two := append(frame("first"), frame("second")...)
	fr := newFrameReader(&stallReader{t: t, chunks: [][]byte{two}})
	for _, want := range []string{"first", "second"} {
		body, err := fr.readFrame()
		if err != nil || string(body) != want {
			t.Fatalf("got %q, %v; want %q", body, err, want)
		}
	}
}

func TestReadFrameEOFRules(t *testing.T) {
	ping := frame(`{"op":"ping"}`)
	cases := []struct {
		name      string
		input     []byte
		frames    int
		truncated bool
	}{
		{"empty input", nil, 0, false},
		{"EOF at a frame boundary", ping, 1, false},
		{"EOF inside the first header", ping[:2], 0, true},
		{"EOF after one header byte", ping[:1], 0, true},
		{"EOF after the header", ping[:4], 0, true},
		{"EOF inside the body", ping[:10], 0, true},
		{"EOF inside the second header", append(append([]byte{}, ping...), 1, 0, 0), 1, true},
		{"EOF inside the second body", append(append([]byte{}, ping...), ping[:16]...), 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(c.input), iotest.OneByteReader(bytes.NewReader(c.input))} {
				bodies, err := readAll(t, r)
				if len(bodies) != c.frames {
					t.Fatalf("got %d frames, want %d", len(bodies), c.frames)
				}
				if c.truncated {
					if !errors.Is(err, errTruncated) {
						t.Fatalf("err = %v, want errTruncated", err)
					}
				} else if err != io.EOF {
					t.Fatalf("err = %v, want io.EOF exactly", err)
				}
			}
		})
	}
}

// headerOnlyReader returns a header and then fails the test if read again: a host that
// waits for the body of an oversized frame would hang on a real pipe.
type headerOnlyReader struct {
	t      *testing.T
	header []byte
	done   bool
}

func (h *headerOnlyReader) Read(p []byte) (int, error) {
	if h.done {
		h.t.Fatal("read past an oversized length prefix")
	}
	h.done = true
	return copy(p, h.header), nil
}

func TestReadFrameRejectsOversizedLengthBeforeReadingOrAllocating(t *testing.T) {
	for _, n := range []uint32{maxRequestBody + 1, 1 << 31, 1<<32 - 1, 1<<31 + 23} {
		header := binary.LittleEndian.AppendUint32(nil, n)
		fr := newFrameReader(&headerOnlyReader{t: t, header: header})
		_, err := fr.readFrame()
		if !errors.Is(err, errFrameTooLarge) {
			t.Fatalf("length %d: err = %v, want errFrameTooLarge", n, err)
		}
		if len(fr.buf) > readChunk {
			t.Fatalf("length %d: buffer grew to %d bytes before the cap check", n, len(fr.buf))
		}
	}
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadFrameAcceptsExactly64MiB(t *testing.T) {
	header := binary.LittleEndian.AppendUint32(nil, maxRequestBody)
	r := io.MultiReader(bytes.NewReader(header), io.LimitReader(zeros{}, maxRequestBody))
	fr := newFrameReader(r)
	body, err := fr.readFrame()
	if err != nil || len(body) != maxRequestBody {
		t.Fatalf("got %d bytes, %v; want %d bytes", len(body), err, maxRequestBody)
	}
	if _, err := fr.readFrame(); err != io.EOF {
		t.Fatalf("after the frame: err = %v, want io.EOF", err)
	}
	if len(fr.buf) > keepBuffer {
		t.Fatalf("a %d-byte buffer was kept after the huge frame", len(fr.buf))
	}
}

func TestReadFramePassesReadErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := readAll(t, iotest.ErrReader(boom))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
}

// countingWriter records each Write call separately.
type countingWriter struct {
	writes [][]byte
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte{}, p...))
	return len(p), nil
}

func TestWriteFrameIsOneLittleEndianWrite(t *testing.T) {
	var fb frameBuilder
	fb.reset()
	body := `{"op":"echo","data":"é"}`
	fb.Write([]byte(body))
	var w countingWriter
	if err := fb.writeTo(&w); err != nil {
		t.Fatal(err)
	}
	if len(w.writes) != 1 {
		t.Fatalf("%d writes, want header and body in one", len(w.writes))
	}
	if got, want := w.writes[0], frame(body); !bytes.Equal(got, want) {
		t.Fatalf("wrote % x, want % x", got, want)
	}
	if got := binary.LittleEndian.Uint32(w.writes[0]); got != uint32(len(body)) {
		t.Fatalf("length prefix %d, want the byte count %d", got, len(body))
	}
}

func TestWriteFrameReplyCap(t *testing.T) {
	var fb frameBuilder
	var w countingWriter

	fb.reset()
	fb.grow(maxReplyBody)
	if err := fb.writeTo(&w); err != nil || len(w.writes) != 1 || len(w.writes[0]) != headerSize+maxReplyBody {
		t.Fatalf("exactly 1 MiB must be written whole: err = %v", err)
	}

	fb.reset()
	fb.grow(maxReplyBody + 1)
	if err := fb.writeTo(&w); err == nil {
		t.Fatal("a 1,048,577-byte body was accepted")
	}
	if len(w.writes) != 1 {
		t.Fatal("an over-cap frame reached the writer")
	}
}

func TestFrameBuilderResetStartsEmpty(t *testing.T) {
	var fb frameBuilder
	fb.reset()
	fb.Write([]byte("something long"))
	fb.reset()
	fb.Write([]byte("ab"))
	var w countingWriter
	if err := fb.writeTo(&w); err != nil || !bytes.Equal(w.writes[0], frame("ab")) {
		t.Fatalf("wrote %q, %v", w.writes, err)
	}
}
