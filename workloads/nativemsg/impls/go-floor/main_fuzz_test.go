package main

// FuzzHost: the `host` fuzz target of the nativemsg workload (workloads/nativemsg/fuzz) on the
// Go floor. One input is everything the browser writes on stdin; serve runs its real loop over
// it with memory in place of read(2) and write(2), twice: once with every read taking all it
// may, once with reads cut into pieces whose sizes come from the input (with an EINTR now and
// then). As in the C floor's target, the first buffer is 64 bytes instead of 64 KiB, so that
// small inputs reach the moves and the growth only large frames reach in the program.
// Checked, against a walk of the input that shares no code with the floor (SPEC §3-4): one
// reply per complete frame, in order, each the fixed pong, the fixed too-big error or the
// request's own frame when its body starts with {"op":"echo"; then exit status 0 at EOF on a
// frame boundary, or 1 with one line on stderr after EOF inside a frame or a length above
// 64 MiB; both runs give the same stdout, stderr and status; and no panic.
//
// Run: go test ./workloads/nativemsg/impls/go-floor -run '^$' -fuzz '^FuzzHost$' -fuzztime 60s

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"syscall"
	"testing"

	"msgbench/fuzz/go/fuzzseed"
)

// hostMaxLen is the target's max_len in workloads/nativemsg/workload.toml.
const hostMaxLen = 8192

// memIO stands in for the process's stdin, stdout and stderr.
type memIO struct {
	in       []byte
	pos      int
	rng      uint64 // 0: reads take all they may
	reads    int
	code     int // serve's exit status
	out, err bytes.Buffer
	t        *testing.T
}

func (m *memIO) read(fd int, p []byte) (int, error) {
	if fd != 0 {
		m.t.Fatalf("read from fd %d", fd)
	}
	// Each read moves a byte, ends the input or is an EINTR: more calls mean a loop that spins.
	if m.reads++; m.reads > 4*len(m.in)+64 {
		m.t.Fatalf("%d reads for %d bytes of input", m.reads, len(m.in))
	}
	if len(p) == 0 {
		m.t.Fatal("read into an empty buffer")
	}
	take := min(len(p), len(m.in)-m.pos)
	if m.rng != 0 {
		m.rng ^= m.rng << 13
		m.rng ^= m.rng >> 7
		m.rng ^= m.rng << 17
		r := m.rng
		if r%16 == 0 {
			return -1, syscall.EINTR
		}
		piece := 1 + int((r>>8)%300)
		if r&16 != 0 {
			piece = 1 + int((r>>8)%7)
		}
		take = min(take, piece)
	}
	copy(p, m.in[m.pos:m.pos+take])
	m.pos += take
	return take, nil
}

func (m *memIO) write(fd int, p []byte) (int, error) {
	switch fd {
	case 1:
		m.out.Write(p)
	case 2:
		m.err.Write(p)
	default:
		m.t.Fatalf("write to fd %d", fd)
	}
	return len(p), nil
}

func run(t *testing.T, in []byte, rng uint64) *memIO {
	m := &memIO{in: in, rng: rng, t: t}
	m.code = serve(m.read, m.write, make([]byte, 64))
	return m
}

// expected walks the input as SPEC §3-4 define it: the replies, the status and stderr's line.
func expected(in []byte) (out []byte, code int, message string) {
	frame := func(body string) []byte {
		return binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	}
	for {
		switch {
		case len(in) == 0:
			return out, 0, ""
		case len(in) < 4:
			return out, 1, "end of input inside a length prefix"
		}
		n := binary.LittleEndian.Uint32(in)
		if n > 64<<20 {
			return out, 1, "length prefix above the 64 MiB request limit"
		}
		if uint64(len(in)-4) < uint64(n) {
			return out, 1, "end of input inside a message body"
		}
		body := in[4 : 4+n]
		switch {
		case !bytes.HasPrefix(body, []byte(`{"op":"echo"`)):
			out = append(append(out, frame(pongBody)...), pongBody...)
		case n > 1<<20:
			out = append(append(out, frame(tooBigBody)...), tooBigBody...)
		default:
			out = append(out, in[:4+n]...)
		}
		in = in[4+n:]
	}
}

func check(t *testing.T, in []byte) {
	wantOut, wantCode, wantMsg := expected(in)
	whole := run(t, in, 0)
	if whole.code != wantCode {
		t.Fatalf("exit %d, want %d (stderr %q)", whole.code, wantCode, whole.err.Bytes())
	}
	if !bytes.Equal(whole.out.Bytes(), wantOut) {
		t.Fatalf("stdout %q, want %q", whole.out.Bytes(), wantOut)
	}
	wantErr := ""
	if wantMsg != "" {
		wantErr = prefix + wantMsg + "\n"
	}
	if whole.err.String() != wantErr {
		t.Fatalf("stderr %q, want %q", whole.err.String(), wantErr)
	}
	if len(in) == 0 {
		return
	}
	seed := binary.LittleEndian.Uint64(append(append([]byte{}, in...), make([]byte, 8)...)) | 1
	cut := run(t, in, seed)
	if cut.code != whole.code || !bytes.Equal(cut.out.Bytes(), whole.out.Bytes()) ||
		cut.err.String() != whole.err.String() {
		t.Fatalf("read in pieces: exit %d, stdout %q, stderr %q; read whole: exit %d, stdout %q, stderr %q",
			cut.code, cut.out.Bytes(), cut.err.Bytes(), whole.code, whole.out.Bytes(), whole.err.Bytes())
	}
}

func FuzzHost(f *testing.F) {
	fuzzseed.AddCorpus(f, filepath.Join("..", "..", "fuzz", "corpus", "host"))
	f.Fuzz(func(t *testing.T, in []byte) {
		defer fuzzseed.WatchHang(in).Stop()
		if len(in) > hostMaxLen {
			return
		}
		check(t, in)
	})
}

// The fixed frames announce their own bodies' lengths.
func TestFixedFrames(t *testing.T) {
	for _, f := range []struct {
		frame []byte
		body  string
	}{{pong, pongBody}, {tooBig, tooBigBody}} {
		if int(binary.LittleEndian.Uint32(f.frame)) != len(f.body) || string(f.frame[4:]) != f.body {
			t.Errorf("frame %q does not announce its body %q", f.frame, f.body)
		}
	}
}

// Frames above the first buffer, the 1 MiB echo cap and the 64 MiB request cap (too large
// for the fuzzer's inputs).
func TestLargeFrames(t *testing.T) {
	echo := func(n int) []byte {
		body := append([]byte(`{"op":"echo","data":"`), bytes.Repeat([]byte("x"), n)...)
		body = append(body, `"}`...)
		return append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	ping := []byte("\x0d\x00\x00\x00{\"op\":\"ping\"}")
	for _, in := range [][]byte{
		append(echo(200_000), ping...),
		append(echo(1<<20), ping...),
		append(append(ping, echo(1<<20-23)...), echo(1<<20-24)...),
		append(ping, "\x01\x00\x00\x04"...),
		append(ping, "\x00\x00\x00\x04"...),
	} {
		check(t, in)
	}
}
