package capnpbench

// FuzzRequest: the `request` fuzz target of the capnp workload (workloads/capnp/fuzz). Input
// byte 0 is the case (modulo 3: carsales, catrank, eval), byte 1 the flags (bit 0 packed; bit
// 1, which this implementation adds, reuse: the other builder path of the response), and the
// rest what the `server` mode reads on stdin. RunServer — the program's server mode: the frame
// reader with the SPEC §6 limits, the case's Serve, the response's encoder — runs over it in
// memory until the input ends or the first error. Checked per input:
//   - the server answers or returns an error, and never panics;
//   - what it wrote is exactly one well-framed message per request served, each readable with
//     the same limits (the client's frame reader and message reader), and nothing else;
//   - reading its input in chunks of 1 to 64 bytes (sizes drawn from the input's own bytes),
//     which moves the packed unpacker between its buffered and its word-at-a-time paths and
//     splits frames at every place, serves the same requests, writes the same bytes and ends
//     with the same error as reading it whole.
//
// The same bytes then go to the client's side: its frame reader, message reader and the
// case's Check read them as the server's responses to the case's first request (built once
// per case: the generator is seeded the same in every run, and building a catrank request
// costs more than all the rest), frame after frame until the stream ends or does not read;
// Check must return (an error for a wrong response) and never panic.
// Run: go test ./workloads/capnp/impls/go/capnpbench -run '^$' -fuzz '^FuzzRequest$' -fuzztime 60s

import (
	"bytes"
	"io"
	"msgbench/fuzz/go/fuzzseed"
	"path/filepath"
	"testing"
)

// requestMaxLen is the target's max_len in workloads/capnp/workload.toml: longer inputs are
// skipped, as libFuzzer's -max_len would keep them out of the other languages' campaigns.
const requestMaxLen = 16384

// chunkReader hands out data in pieces of 1 to 64 bytes whose sizes cycle through data's own
// bytes, then io.EOF.
type chunkReader struct {
	data []byte
	pos  int
	step int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.pos == len(c.data) {
		return 0, io.EOF
	}
	c.step += 7
	n := min(len(c.data)-c.pos, 1+int(c.data[c.step%len(c.data)])%64)
	n = copy(p, c.data[c.pos:c.pos+n])
	c.pos += n
	return n, nil
}

// serveAll runs the server mode over in and returns what it wrote, the requests it served and
// its error ("" for a clean end).
func serveAll(cfg Config, in io.Reader) ([]byte, int, string) {
	var out bytes.Buffer
	served, err := RunServer(cfg, in, &out)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return out.Bytes(), served, msg
}

func FuzzRequest(f *testing.F) {
	fuzzseed.AddCorpus(f, filepath.Join("..", "..", "..", "fuzz", "corpus", "request"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer fuzzseed.WatchHang(data).Stop()
		if len(data) > requestMaxLen || len(data) < 2 {
			return
		}
		cfg := Config{Case: Cases[int(data[0])%len(Cases)], Mode: "server",
			Packed: data[1]&1 != 0, Reuse: data[1]&2 != 0, Iterations: 1}
		stream := data[2:]

		out, served, errMsg := serveAll(cfg, bytes.NewReader(stream))

		// The responses, read back as a client reads them.
		responses := newFrameReader(bytes.NewReader(out), cfg.Packed)
		reader := newMessageReader()
		for i := range served {
			frame, err := responses.next()
			if err == nil {
				_, err = reader.read(frame)
			}
			if err != nil {
				t.Fatalf("response %d of %d does not read back: %v", i+1, served, err)
			}
		}
		if _, err := responses.next(); err != io.EOF {
			t.Fatalf("more than the %d responses served on the output (%v)", served, err)
		}

		if len(stream) > 0 {
			cout, cserved, cerrMsg := serveAll(cfg, &chunkReader{data: stream})
			if cserved != served || cerrMsg != errMsg || !bytes.Equal(cout, out) {
				t.Fatalf("read in chunks: %d served, %d bytes out, error %q; read whole: %d served, %d bytes out, error %q",
					cserved, len(cout), cerrMsg, served, len(out), errMsg)
			}
		}

		// The client's response reader on the same bytes.
		c := checkingCase(t, cfg.Case)
		in, respIn := newFrameReader(bytes.NewReader(stream), cfg.Packed), newMessageReader()
		for {
			frame, err := in.next()
			if err != nil {
				break
			}
			resp, err := respIn.read(frame)
			if err != nil {
				break
			}
			_ = c.Check(resp)
		}
	})
}

// checkingCases holds, per case, a Case that has built its first request: what the client
// checks the first response against.
var checkingCases = map[string]Case{}

func checkingCase(t *testing.T, name string) Case {
	if c, ok := checkingCases[name]; ok {
		return c
	}
	c, err := NewCase(name)
	if err != nil {
		t.Fatal(err)
	}
	_, seg, err := (&builder{}).next()
	if err == nil {
		err = c.Request(seg)
	}
	if err != nil {
		t.Fatal(err)
	}
	checkingCases[name] = c
	return c
}
