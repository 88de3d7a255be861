package nmhost

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// splitFrames cuts a stream of frames into bodies, failing on a malformed stream.
func splitFrames(t *testing.T, out []byte) []string {
	t.Helper()
	var bodies []string
	for len(out) > 0 {
		if len(out) < headerSize {
			t.Fatalf("stray bytes on stdout: % x", out)
		}
		n := int(binary.LittleEndian.Uint32(out))
		if len(out) < headerSize+n {
			t.Fatalf("truncated frame on stdout")
		}
		bodies = append(bodies, string(out[headerSize:headerSize+n]))
		out = out[headerSize+n:]
	}
	return bodies
}

// forEachHost runs test once per codec, with a host of that codec.
func forEachHost(t *testing.T, test func(t *testing.T, h Host)) {
	t.Helper()
	forEachCodec(t, func(t *testing.T, c Codec) { test(t, Host{Name: "nativemsg-test", Codec: c}) })
}

func TestServeAnswersEveryFrameAndExitsZeroAtABoundary(t *testing.T) {
	forEachHost(t, func(t *testing.T, h Host) {
		in := append(append(frame(`{"op":"ping"}`), frame(`{"op":"frob"}`)...), frame(`{"op":"echo","data":"é"}`)...)
		var out, log bytes.Buffer
		if code := h.Serve(iotest.OneByteReader(bytes.NewReader(in)), &out, &log, nil); code != exitOK {
			t.Fatalf("exit %d, want 0 (stderr %q)", code, log.String())
		}
		got := splitFrames(t, out.Bytes())
		if len(got) != 3 || got[0] != `{"op":"pong"}` || !strings.Contains(got[1], `"error"`) || got[2] != `{"op":"echo","data":"é"}` {
			t.Fatalf("replies %q", got)
		}
		if log.Len() != 0 {
			t.Fatalf("stderr %q on a clean run", log.String())
		}
	})
}

// The runtime tuning is for persistent connections only: one call, when the second frame
// has arrived, and none for a one-message (sendNativeMessage) host or a broken stream.
func TestServeTunesOnceOnTheSecondFrame(t *testing.T) {
	forEachHost(t, func(t *testing.T, h Host) {
		ping := frame(`{"op":"ping"}`)
		for _, tc := range []struct {
			name string
			in   []byte
			want int
		}{
			{"no frame", nil, 0},
			{"one frame", ping, 0},
			{"one frame then a truncated one", append(append([]byte{}, ping...), 9, 0), 0},
			{"two frames", append(append([]byte{}, ping...), ping...), 1},
			{"three frames", bytes.Repeat(ping, 3), 1},
		} {
			var out, log bytes.Buffer
			calls := 0
			h.Serve(bytes.NewReader(tc.in), &out, &log, func() { calls++ })
			if calls != tc.want {
				t.Errorf("%s: tune called %d times, want %d", tc.name, calls, tc.want)
			}
		}
	})
}

func TestServeEmptyInput(t *testing.T) {
	forEachHost(t, func(t *testing.T, h Host) {
		var out, log bytes.Buffer
		if code := h.Serve(bytes.NewReader(nil), &out, &log, nil); code != exitOK || out.Len() != 0 {
			t.Fatalf("exit %d, %d bytes out; want 0 and nothing", code, out.Len())
		}
	})
}

func TestServeBrokenStreams(t *testing.T) {
	forEachHost(t, func(t *testing.T, h Host) {
		ping := frame(`{"op":"ping"}`)
		cases := map[string][]byte{
			"EOF inside a header":  append(append([]byte{}, ping...), 5, 0),
			"EOF inside a body":    append(append([]byte{}, ping...), ping[:8]...),
			"oversized length":     append(append([]byte{}, ping...), 0x01, 0x00, 0x00, 0x04), // 64 MiB + 1
			"2^32-1 length prefix": append(append([]byte{}, ping...), 0xff, 0xff, 0xff, 0xff),
		}
		for name, in := range cases {
			t.Run(name, func(t *testing.T) {
				var out, log bytes.Buffer
				code := h.Serve(bytes.NewReader(in), &out, &log, nil)
				if code != exitBroken {
					t.Fatalf("exit %d, want 1", code)
				}
				if got := splitFrames(t, out.Bytes()); len(got) != 1 || got[0] != `{"op":"pong"}` {
					t.Fatalf("stdout %q: want only the first reply", got)
				}
				if !strings.HasPrefix(log.String(), h.Name+": ") {
					t.Fatalf("stderr %q: want a message", log.String())
				}
			})
		}
	})
}

// failingWriter is a stdout whose reader has gone away.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestServeWriteErrorExitsOne(t *testing.T) {
	forEachHost(t, func(t *testing.T, h Host) {
		var log bytes.Buffer
		if code := h.Serve(bytes.NewReader(frame(`{"op":"ping"}`)), failingWriter{}, &log, nil); code != exitBroken {
			t.Fatalf("exit %d, want 1", code)
		}
		if !strings.Contains(log.String(), "broken pipe") {
			t.Fatalf("stderr %q", log.String())
		}
	})
}
