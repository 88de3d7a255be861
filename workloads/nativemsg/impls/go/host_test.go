package main

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

func TestServeAnswersEveryFrameAndExitsZeroAtABoundary(t *testing.T) {
	in := append(append(frame(`{"op":"ping"}`), frame(`{"op":"frob"}`)...), frame(`{"op":"echo","data":"é"}`)...)
	var out, log bytes.Buffer
	if code := serve(iotest.OneByteReader(bytes.NewReader(in)), &out, &log); code != exitOK {
		t.Fatalf("exit %d, want 0 (stderr %q)", code, log.String())
	}
	got := splitFrames(t, out.Bytes())
	if len(got) != 3 || got[0] != `{"op":"pong"}` || !strings.Contains(got[1], `"error"`) || got[2] != `{"op":"echo","data":"é"}` {
		t.Fatalf("replies %q", got)
	}
	if log.Len() != 0 {
		t.Fatalf("stderr %q on a clean run", log.String())
	}
}

func TestServeEmptyInput(t *testing.T) {
	var out, log bytes.Buffer
	if code := serve(bytes.NewReader(nil), &out, &log); code != exitOK || out.Len() != 0 {
		t.Fatalf("exit %d, %d bytes out; want 0 and nothing", code, out.Len())
	}
}

func TestServeBrokenStreams(t *testing.T) {
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
			code := serve(bytes.NewReader(in), &out, &log)
			if code != exitBroken {
				t.Fatalf("exit %d, want 1", code)
			}
			if got := splitFrames(t, out.Bytes()); len(got) != 1 || got[0] != `{"op":"pong"}` {
				t.Fatalf("stdout %q: want only the first reply", got)
			}
			if !strings.HasPrefix(log.String(), "nativemsg-go: ") {
				t.Fatalf("stderr %q: want a message", log.String())
			}
		})
	}
}

// failingWriter is a stdout whose reader has gone away.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestServeWriteErrorExitsOne(t *testing.T) {
	var log bytes.Buffer
	if code := serve(bytes.NewReader(frame(`{"op":"ping"}`)), failingWriter{}, &log); code != exitBroken {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(log.String(), "broken pipe") {
		t.Fatalf("stderr %q", log.String())
	}
}
