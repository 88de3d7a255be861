package main

import (
	"bytes"
	"strings"
	"testing"
)

// parseAll feeds input to a fresh reader in chunks of the given size (0: all at once) and
// returns every request found (arguments joined by "|"), the protocol error if any, and
// whether input was left waiting for more bytes.
func parseAll(input string, chunk int) (reqs []string, protoErr string) {
	r := newRequestReader()
	for len(input) > 0 {
		n := len(input)
		if chunk > 0 {
			n = min(n, chunk)
		}
		space := r.readSpace()
		n = min(n, len(space))
		copy(space, input[:n])
		r.filled(n)
		input = input[n:]
		for {
			st := r.next()
			if st == needMore {
				break
			}
			if st == protocolError {
				return reqs, r.protoErr
			}
			if len(r.args) == 0 {
				continue
			}
			parts := make([]string, len(r.args))
			for i, a := range r.args {
				parts[i] = string(a)
			}
			reqs = append(reqs, strings.Join(parts, "|"))
		}
	}
	return reqs, ""
}

func TestParseRequests(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		err      string
	}{
		{"multibulk", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", []string{"GET|k"}, ""},
		{"binary-safe", "*2\r\n$4\r\nECHO\r\n$5\r\na\x00\r\nb\r\n", []string{"ECHO|a\x00\r\nb"}, ""},
		{"empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", []string{"ECHO|"}, ""},
		{"pipelined", "PING\r\n*1\r\n$4\r\nPING\r\nPING\n", []string{"PING", "PING", "PING"}, ""},
		{"zero and negative counts", "*0\r\n*-1\r\n*-5\r\nPING\r\n", []string{"PING"}, ""},
		{"empty lines", "\r\n\n  \r\nPING\r\n", []string{"PING"}, ""},
		{"trailing bytes unchecked", "*1\r\n$4\r\nPINGxx*1\rX$4\r\nPING\r\n", []string{"PING", "PING"}, ""},
		{"inline quoting", `SET a "x\x41\n" 'it\'s' "q\"" ` + "\r\n", []string{"SET|a|xA\n|it's|q\""}, ""},
		{"inline quote mid-argument", "ECHO a\"b c\"\r\n", []string{"ECHO|ab c"}, ""},
		{"inline bad hex kept", `ECHO "\xZZ" "\x4"` + "\r\n", []string{`ECHO|xZZ|x4`}, ""},
		{"inline vertical tab", "\t\vPING a\vb\r\n", []string{"PING|a\vb"}, ""},
		{"unbalanced", "\"abc\r\n", nil, "Protocol error: unbalanced quotes in request"},
		{"closing quote glued", "ECHO \"a\"b\r\n", nil, "Protocol error: unbalanced quotes in request"},
		{"bad count", "*abc\r\n", nil, "Protocol error: invalid multibulk length"},
		{"leading zero count", "*01\r\n", nil, "Protocol error: invalid multibulk length"},
		{"minus zero count", "*-0\r\n", nil, "Protocol error: invalid multibulk length"},
		{"count over INT_MAX", "*2147483648\r\n", nil, "Protocol error: invalid multibulk length"},
		{"expected dollar", "*1\r\n+PING\r\n", nil, "Protocol error: expected '$', got '+'"},
		{"negative bulk", "*2\r\n$4\r\nPING\r\n$-1\r\n", nil, "Protocol error: invalid bulk length"},
		{"bulk over 512 MiB", "*1\r\n$536870913\r\n", nil, "Protocol error: invalid bulk length"},
		{"after a good request", "PING\r\n*x\r\n", []string{"PING"}, "Protocol error: invalid multibulk length"},
	} {
		for _, chunk := range []int{0, 1, 3} {
			got, err := parseAll(tc.in, chunk)
			if strings.Join(got, "/") != strings.Join(tc.want, "/") || err != tc.err {
				t.Errorf("%s (chunk %d): got %q %q, want %q %q", tc.name, chunk, got, err, tc.want, tc.err)
			}
		}
	}
}

// Any request stream split at any byte offset parses as it does whole.
func TestParseSplitAtEveryOffset(t *testing.T) {
	stream := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\nPING\r\nECHO \"a\\x41 b\" 'c d'\r\n*0\r\n\r\n" +
		"*2\r\n$4\r\nECHO\r\n$20\r\n" + strings.Repeat("z", 20) + "\r\n"
	want, wantErr := parseAll(stream, 0)
	for i := 1; i < len(stream); i++ {
		r := newRequestReader()
		var got []string
		for _, part := range []string{stream[:i], stream[i:]} {
			r.filled(copy(r.readSpace(), part))
			for st := r.next(); st == gotRequest; st = r.next() {
				if len(r.args) > 0 {
					got = append(got, string(bytes.Join(r.args, []byte("|"))))
				}
			}
		}
		if strings.Join(got, "/") != strings.Join(want, "/") || wantErr != "" {
			t.Fatalf("split at %d: got %q want %q", i, got, want)
		}
	}
}

func TestPartialRequestWaits(t *testing.T) {
	for _, in := range []string{"*2\r\n$3\r\nGET\r\n$1\r\n", "*1\r", "PING", "*1\r\n$536870912\r\n", "*2147483647\r\n"} {
		r := newRequestReader()
		r.filled(copy(r.readSpace(), in))
		if st := r.next(); st != needMore {
			t.Errorf("%q: status %v, want needMore", in, st)
		}
	}
}

// A NUL byte hides a line terminator from redis (it searches with strchr): the request
// waits, and fails once the line passes the inline limit.
func TestNulBeforeTerminator(t *testing.T) {
	r := newRequestReader()
	r.filled(copy(r.readSpace(), "FOO a\x00b\r\n"))
	if st := r.next(); st != needMore {
		t.Fatalf("status %v, want needMore", st)
	}
	big := strings.Repeat("x", inlineMax+1)
	for len(big) > 0 {
		n := copy(r.readSpace(), big)
		r.filled(n)
		big = big[n:]
	}
	if st := r.next(); st != protocolError || r.protoErr != "Protocol error: too big inline request" {
		t.Fatalf("status %v %q", st, r.protoErr)
	}
}

func TestTooBigHeaders(t *testing.T) {
	for _, tc := range []struct{ prefix, err string }{
		{"*", "Protocol error: too big mbulk count string"},
		{"*1\r\n$", "Protocol error: too big bulk count string"},
		{"", "Protocol error: too big inline request"},
	} {
		_, err := parseAll(tc.prefix+strings.Repeat("1", inlineMax+10), 4096)
		if err != tc.err {
			t.Errorf("%q: got %q want %q", tc.prefix, err, tc.err)
		}
	}
}

// Announcing a huge bulk or argument count allocates nothing until the bytes arrive.
func TestAnnouncedSizesAreNotAllocated(t *testing.T) {
	r := newRequestReader()
	r.filled(copy(r.readSpace(), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\nxyz"))
	r.next()
	r.readSpace()
	if cap(r.buf) > 4*readChunk {
		t.Errorf("buffer grew to %d bytes for a few bytes of a 512 MiB bulk", cap(r.buf))
	}
	r = newRequestReader()
	r.filled(copy(r.readSpace(), "*2147483647\r\n$1\r\na\r\n"))
	r.next()
	if cap(r.spans) > argsAhead {
		t.Errorf("%d argument slots reserved", cap(r.spans))
	}
}

// A large request arriving in pieces grows the buffer with it and leaves it usable.
func TestLargeBulkAcrossReads(t *testing.T) {
	value := strings.Repeat("v", 3*readChunk+17)
	got, err := parseAll("*2\r\n$4\r\nECHO\r\n$"+itoa(int64(len(value)))+"\r\n"+value+"\r\nPING\r\n", 1000)
	if err != "" || len(got) != 2 || got[0] != "ECHO|"+value || got[1] != "PING" {
		t.Fatalf("got %d requests, err %q", len(got), err)
	}
}

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"-1", -1, true}, {"123", 123, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"", 0, false}, {"-", 0, false}, {"-0", 0, false}, {"01", 0, false}, {"+1", 0, false},
		{" 1", 0, false}, {"1 ", 0, false}, {"1a", 0, false}, {"000000000000000000001", 0, false},
	} {
		if v, ok := parseInt(tc.in); v != tc.v || ok != tc.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tc.in, v, ok, tc.v, tc.ok)
		}
	}
}

func TestReplyEncoding(t *testing.T) {
	var b []byte
	b = appendSimple(b, "OK")
	b = appendError(b, "ERR bad\r\nthing")
	b = appendInt(b, -42)
	b = appendBulkString(b, "hello")
	b = appendBulk(b, []byte{})
	b = appendNull(b)
	b = appendArrayLen(b, 12)
	b = appendDouble(b, 0.1)
	b = appendDouble(b, 3)
	b = appendDouble(b, negInf())
	want := "+OK\r\n-ERR bad  thing\r\n:-42\r\n$5\r\nhello\r\n$0\r\n\r\n$-1\r\n*12\r\n" +
		"$19\r\n0.10000000000000001\r\n$1\r\n3\r\n$4\r\n-inf\r\n"
	if string(b) != want {
		t.Errorf("got %q\nwant %q", b, want)
	}
}

func BenchmarkParseMultibulk(b *testing.B) {
	batch := strings.Repeat("*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nVXK\r\n", 16)
	r := newRequestReader()
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		r.filled(copy(r.readSpace(), batch))
		for r.next() == gotRequest {
		}
	}
}

// FuzzRequestReader: no input makes the parser panic, and splitting the input in two
// never changes what it parses.
func FuzzRequestReader(f *testing.F) {
	for _, seed := range []string{
		"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "PING\r\n", `ECHO "a\x41" 'b\'c'` + "\r\n", "*1\r\n+x\r\n",
		"*-1\r\n*0\r\n\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\n", "\"unbalanced\r\n",
	} {
		f.Add(seed, 3)
	}
	f.Fuzz(func(t *testing.T, in string, cut int) {
		whole, wholeErr := parseAll(in, 0)
		if len(in) == 0 {
			return
		}
		cut = 1 + (cut&0xffff)%len(in)
		split, splitErr := parseAll(in, cut)
		if strings.Join(whole, "/") != strings.Join(split, "/") || wholeErr != splitErr {
			t.Fatalf("chunks of %d: %q %q, whole: %q %q", cut, split, splitErr, whole, wholeErr)
		}
	})
}
