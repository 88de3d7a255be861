package main

// FuzzRESP: the `resp` fuzz target of the redis workload (workloads/redis/fuzz). One input is
// the bytes of one client. They go through the server's own request parser (requestReader in
// protocol.go) exactly as client.serve feeds it — readSpace, a read into that space, filled,
// then next until it needs more bytes or reports a protocol error — once with the whole input
// in one read and once split into reads of 1 to 64 bytes whose sizes are drawn from the input's
// own bytes. Both must give the same requests (empty ones included: `*0`, blank lines) and the
// same protocol error. Commands are not executed.
//
// Run: go test ./workloads/redis/impls/go -run '^$' -fuzz '^FuzzRESP$' -fuzztime 60s

import (
	"msgbench/fuzz/go/fuzzseed"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// respMaxLen is the target's max_len in workloads/redis/workload.toml: longer inputs are
// skipped, as libFuzzer's -max_len would keep them out of the other languages' campaigns.
const respMaxLen = 4096

// parseReads runs in through a fresh requestReader, split into reads by chunk (the size of the
// next read; 0: everything left). It returns every request found, each as its quoted
// arguments, and the protocol error ("" if none).
func parseReads(t *testing.T, in []byte, chunk func() int) (reqs []string, protoErr string) {
	r := newRequestReader()
	for pos := 0; pos < len(in); {
		space := r.readSpace()
		if len(space) == 0 {
			t.Fatalf("readSpace offered no room at offset %d", pos)
		}
		n := len(in) - pos
		if c := chunk(); c > 0 {
			n = min(n, c)
		}
		n = copy(space, in[pos:pos+n])
		r.filled(n)
		pos += n
		for st := r.next(); st != needMore; st = r.next() {
			if st == protocolError {
				if !strings.HasPrefix(r.protoErr, "Protocol error: ") {
					t.Fatalf("protocol error reply %q", r.protoErr)
				}
				return reqs, r.protoErr
			}
			var b strings.Builder
			for i, a := range r.args {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(strconv.Quote(string(a)))
			}
			reqs = append(reqs, b.String())
		}
	}
	return reqs, ""
}

func FuzzRESP(f *testing.F) {
	fuzzseed.AddCorpus(f, filepath.Join("..", "..", "fuzz", "corpus", "resp"))
	f.Fuzz(func(t *testing.T, in []byte) {
		defer fuzzseed.WatchHang(in).Stop()
		if len(in) > respMaxLen || len(in) == 0 {
			return
		}
		whole, wholeErr := parseReads(t, in, func() int { return 0 })
		step := 0
		split, splitErr := parseReads(t, in, func() int {
			step++
			return 1 + int(in[(step*7)%len(in)])%64
		})
		if wholeErr != splitErr || strings.Join(whole, "\n") != strings.Join(split, "\n") {
			t.Fatalf("read in chunks: %q, error %q\nread whole: %q, error %q", split, splitErr, whole, wholeErr)
		}
	})
}
