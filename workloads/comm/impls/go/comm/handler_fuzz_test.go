package comm

// FuzzServer: the `server` fuzz target of the comm workload (workloads/comm/fuzz). One input
// is the bytes of one client. runSession (handler.go) — the server's real per-connection
// frame decoder and session rules, with its FrameBatch writer — runs over an in-memory
// connection whose reads hand out the input and whose writes are collected, with a 1 MiB body
// cap so that the cap path is reachable (and bodies above the 64 KiB read buffer take the
// streaming path). Checked per input:
//   - what was sent is exactly what the SPEC asks for, from an independent walk of the input:
//     each complete frame echoed as REPLY with its body, in order; END or QUIT answered with
//     one header-only END and nothing after it; a length above the cap ends the session with
//     a *TooLargeError; EOF inside a frame with ErrTruncated (a streamed body's reply having
//     forwarded the bytes that came); EOF at a frame boundary ends it cleanly;
//   - reading the input in chunks of 1 to 64 bytes (sizes drawn from the input's own bytes)
//     sends the same bytes and ends the same way as reading it whole.
//
// Run: go test ./workloads/comm/impls/go/comm -run '^$' -fuzz '^FuzzServer$' -fuzztime 60s

import (
	"bytes"
	"errors"
	"io"
	"msgbench/fuzz/go/fuzzseed"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// serverMaxLen is the target's max_len in workloads/comm/workload.toml: longer inputs are
// skipped, as libFuzzer's -max_len would keep them out of the other languages' campaigns.
const serverMaxLen = 4096

// fuzzMaxBody is the --max-body of the fuzzed server: small enough that a few header bytes
// reach the cap, above ReadBufferSize so that bodies between the two are streamed.
const fuzzMaxBody = 1 << 20

// memConn is a connection in memory: reads hand out in (all at once, or in chunks whose
// sizes are drawn from its bytes), then io.EOF; writes are collected in out.
type memConn struct {
	in      []byte
	pos     int
	chunked bool
	step    int
	out     bytes.Buffer
}

func (c *memConn) Read(p []byte) (int, error) {
	if c.pos == len(c.in) {
		return 0, io.EOF
	}
	n := len(c.in) - c.pos
	if c.chunked {
		c.step += 7
		n = min(n, 1+int(c.in[c.step%len(c.in)])%64)
	}
	n = copy(p, c.in[c.pos:c.pos+n])
	c.pos += n
	return n, nil
}

func (c *memConn) Write(p []byte) (int, error)      { return c.out.Write(p) }
func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// outcome is how a session ended, comparable between runs and with the model.
type outcome struct {
	end      sessionEnd
	tooLarge bool
	trunc    bool
}

func outcomeOf(t *testing.T, end sessionEnd, err error) outcome {
	var tl *TooLargeError
	switch {
	case err == nil:
		return outcome{end: end}
	case errors.As(err, &tl):
		if tl.Length <= tl.Max || tl.Max != fuzzMaxBody {
			t.Fatalf("TooLargeError %+v", *tl)
		}
		return outcome{tooLarge: true}
	case err == ErrTruncated:
		return outcome{trunc: true}
	default:
		t.Fatalf("session ended with an unexpected error: %v", err)
		return outcome{}
	}
}

// expectedSession walks in as SPEC §1–§2 define a session: what the server must send and how
// the session ends.
func expectedSession(in []byte) ([]byte, outcome) {
	var out []byte
	hdr := make([]byte, HeaderLen)
	for {
		if len(in) == 0 {
			return out, outcome{end: endByEOF}
		}
		if len(in) < HeaderLen {
			return out, outcome{trunc: true}
		}
		typ, n := ParseHeader(in)
		if n > fuzzMaxBody {
			return out, outcome{tooLarge: true}
		}
		if EndsSession(typ) {
			PutHeader(hdr, TypeEnd, 0)
			return append(out, hdr...), outcome{end: endByMessage}
		}
		body := in[HeaderLen:]
		if uint64(len(body)) < n {
			// EOF inside the body. A body larger than the read buffer is streamed: its reply
			// header and the body bytes that came have been forwarded already.
			if HeaderLen+n > ReadBufferSize && len(body) > 0 {
				PutHeader(hdr, TypeReply, n)
				out = append(append(out, hdr...), body...)
			}
			return out, outcome{trunc: true}
		}
		PutHeader(hdr, TypeReply, n)
		out = append(append(out, hdr...), body[:n]...)
		in = body[n:]
	}
}

func runFuzzSession(t *testing.T, in []byte, chunked bool) ([]byte, outcome) {
	c := &memConn{in: in, chunked: chunked}
	end, err := runSession(c, fuzzMaxBody)
	return c.out.Bytes(), outcomeOf(t, end, err)
}

func FuzzServer(f *testing.F) {
	fuzzseed.AddCorpus(f, filepath.Join("..", "..", "..", "fuzz", "corpus", "server"))
	f.Fuzz(func(t *testing.T, in []byte) {
		defer fuzzseed.WatchHang(in).Stop()
		if len(in) > serverMaxLen {
			return
		}
		out, how := runFuzzSession(t, in, false)
		wantOut, wantHow := expectedSession(in)
		if how != wantHow || !bytes.Equal(out, wantOut) {
			t.Fatalf("sent %d bytes, ended %+v; want %d bytes, %+v\nsent % x\nwant % x",
				len(out), how, len(wantOut), wantHow, out, wantOut)
		}
		if len(in) == 0 {
			return
		}
		cout, chow := runFuzzSession(t, in, true)
		if chow != how || !bytes.Equal(cout, out) {
			t.Fatalf("read in chunks: sent %d bytes, ended %+v; read whole: %d bytes, %+v",
				len(cout), chow, len(out), how)
		}
	})
}
