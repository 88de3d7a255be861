// Package nmhosttest is the body of the Go hosts' FuzzHost, the `host` fuzz target of the
// nativemsg workload (workloads/nativemsg/fuzz); each host's host_fuzz_test.go runs it on its
// own Host. One input is everything the host reads on stdin; Host.Serve runs its real
// read–handle–write loop over it in memory, replies to a buffer, diagnostics to another.
// Checked per input:
//   - every reply on stdout is a well-formed frame: a 4-byte length ≤ 1 MiB, then a JSON
//     object that is one of the replies of SPEC §2 (pong, echo, fill or error);
//   - one reply per complete frame whose length prefix is within the 64 MiB cap, and the exit
//     status is 0 exactly when the input ends on a frame boundary (SPEC §3);
//   - reading the input in chunks (sizes drawn from the input's own bytes) gives the same
//     stdout, stderr and exit status as reading it whole.
//
// It is a package of its own, not test code of nmhost, so that the hosts' tests can call it;
// and not part of nmhost, so that the hosts' programs do not link package testing.
package nmhosttest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"msgbench/fuzz/go/fuzzseed"
	"msgbench/workloads/nativemsg/impls/go/nmhost"
)

// The stream's limits and exit statuses, from SPEC §1 and §3 (the checks state them
// themselves rather than take them from the code under test).
const (
	headerSize     = 4
	maxRequestBody = 64 << 20
	maxReplyBody   = 1 << 20
	exitOK         = 0
	exitBroken     = 1
)

// hostMaxLen is the target's max_len in workloads/nativemsg/workload.toml: longer inputs are
// skipped, as libFuzzer's -max_len would keep them out of the other languages' campaigns.
const hostMaxLen = 8192

// chunkReader hands out its input in pieces whose sizes (1 to 64 bytes) cycle through the
// input's own bytes, so each input is also read split at input-dependent boundaries; it ends
// with io.EOF, as a pipe does.
type chunkReader struct {
	data []byte
	pos  int
	i    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.pos == len(c.data) {
		return 0, io.EOF
	}
	n := 1 + int(c.data[c.i%len(c.data)])%64
	c.i += 7
	n = min(n, len(p), len(c.data)-c.pos)
	copy(p, c.data[c.pos:c.pos+n])
	c.pos += n
	return n, nil
}

// runHost is one pass of h over in; it returns stdout, stderr and the exit status.
func runHost(h nmhost.Host, in []byte, chunked bool) ([]byte, []byte, int) {
	var out, log bytes.Buffer
	var r io.Reader = bytes.NewReader(in)
	if chunked {
		r = &chunkReader{data: in}
	}
	code := h.Serve(r, &out, &log, nil)
	return out.Bytes(), log.Bytes(), code
}

// expectedFrames walks the input as the protocol defines it: the number of complete frames
// before the stream ends or breaks, and whether it ends cleanly on a frame boundary.
func expectedFrames(in []byte) (frames int, clean bool) {
	for {
		if len(in) == 0 {
			return frames, true
		}
		if len(in) < headerSize {
			return frames, false
		}
		n := binary.LittleEndian.Uint32(in)
		if n > maxRequestBody || uint64(len(in)-headerSize) < uint64(n) {
			return frames, false
		}
		in = in[headerSize+int(n):]
		frames++
	}
}

// wellFormedReply reports whether a decoded reply is one SPEC §2 defines: {"op":"pong"},
// {"op":"echo","data":…}, {"op":"fill","data":"xx…"} or {"error":"…"}.
func wellFormedReply(obj map[string]any) bool {
	if msg, ok := obj["error"].(string); ok {
		return msg != "" && len(obj) == 1
	}
	_, hasData := obj["data"]
	switch obj["op"] {
	case "pong":
		return len(obj) == 1
	case "echo":
		return hasData && len(obj) == 2
	case "fill":
		data, ok := obj["data"].(string)
		return ok && strings.Trim(data, "x") == "" && len(obj) == 2
	}
	return false
}

// FuzzHost runs the fuzz target on h; the caller has added the shared seed corpus.
func FuzzHost(f *testing.F, h nmhost.Host) {
	f.Fuzz(func(t *testing.T, in []byte) {
		defer fuzzseed.WatchHang(in).Stop()
		if len(in) > hostMaxLen {
			return
		}
		out, log, code := runHost(h, in, false)

		frames, clean := expectedFrames(in)
		wantCode := exitBroken
		if clean {
			wantCode = exitOK
		}
		if code != wantCode {
			t.Fatalf("exit %d, want %d (stderr %q)", code, wantCode, log)
		}
		if clean != (len(log) == 0) {
			t.Fatalf("exit %d with stderr %q", code, log)
		}
		replies := 0
		for rest := out; len(rest) > 0; replies++ {
			if len(rest) < headerSize {
				t.Fatalf("stray %d bytes on stdout after %d replies", len(rest), replies)
			}
			n := binary.LittleEndian.Uint32(rest)
			if n > maxReplyBody || uint64(len(rest)-headerSize) < uint64(n) {
				t.Fatalf("reply %d: length prefix %d with %d bytes behind it", replies, n, len(rest)-headerSize)
			}
			body := rest[headerSize : headerSize+int(n)]
			var obj map[string]any
			if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
				t.Fatalf("reply %d is not a JSON object: %q (%v)", replies, body, err)
			}
			if !wellFormedReply(obj) {
				t.Fatalf("reply %d is none of the replies of SPEC §2: %q", replies, body)
			}
			rest = rest[headerSize+int(n):]
		}
		if replies != frames {
			t.Fatalf("%d replies to %d complete frames", replies, frames)
		}

		if len(in) == 0 {
			return
		}
		cout, clog, ccode := runHost(h, in, true)
		if ccode != code || !bytes.Equal(cout, out) || !bytes.Equal(clog, log) {
			t.Fatalf("read in chunks: exit %d, %d bytes out, stderr %q; read whole: exit %d, %d bytes out, stderr %q",
				ccode, len(cout), clog, code, len(out), log)
		}
	})
}
