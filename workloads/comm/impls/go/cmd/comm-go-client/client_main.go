// Command comm-go-client is the Go client program of the msgbench comm workload (the seed's
// Test4 and test3) around comm.Connector: see workloads/comm/SPEC.md, section 3.
//
// Usage: comm-go-client --port PORT [--host ADDR] [--clients N] [--messages M]
//
//	[--size BYTES] [--type T] [--mode stream|rtt] [--end end|quit|eof] [--warmup W]
//
// It prints one JSON object on stdout: the throughput figures, or {"error": "..."} with exit
// status 1 when anything failed (every reply is checked against what was sent).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"

	"msgbench/workloads/comm/impls/go/comm"
)

const name = "comm-go-client"

const usage = "usage: " + name + " --port PORT [--host ADDR] [--clients N] [--messages M] " +
	"[--size BYTES] [--type T] [--mode stream|rtt] [--end end|quit|eof] [--warmup W]"

type options struct {
	addr     string
	clients  int
	messages int
	size     int
	typ      byte
	mode     string
	end      string
	warmup   int // rtt mode: round trips before the measured ones (not part of the figures)
}

func parseArgs(args []string) (options, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	port := fs.Int("port", 0, "server port")
	host := fs.String("host", comm.DefaultHost, "server's IPv4 address")
	clients := fs.Int("clients", 16, "concurrent connections")
	messages := fs.Int("messages", 1000, "messages per connection")
	size := fs.Int("size", 4096, "body bytes per message")
	typ := fs.Int("type", int(comm.TypeDefault), "message type byte")
	mode := fs.String("mode", "stream", "stream or rtt")
	end := fs.String("end", "end", "session end: end, quit or eof")
	warmup := fs.Int("warmup", 0, "rtt: unmeasured round trips first")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	switch {
	case fs.NArg() > 0:
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *port < 1 || *port > 65535:
		return options{}, errors.New("--port PORT (1-65535) is required")
	case *clients < 1:
		return options{}, errors.New("--clients must be at least 1")
	case *messages < 0 || *warmup < 0:
		return options{}, errors.New("--messages and --warmup must not be negative")
	case *size < 0 || *size > comm.DefaultMaxBody:
		return options{}, fmt.Errorf("--size must be within 0..%d", comm.DefaultMaxBody)
	case *typ < 0 || *typ > 255:
		return options{}, errors.New("--type must be within 0..255")
	case comm.EndsSession(byte(*typ)):
		return options{}, errors.New("--type must not be END (4) or QUIT (8): they end the session")
	case *mode != "stream" && *mode != "rtt":
		return options{}, fmt.Errorf("--mode must be stream or rtt, not %q", *mode)
	case *end != "end" && *end != "quit" && *end != "eof":
		return options{}, fmt.Errorf("--end must be end, quit or eof, not %q", *end)
	}
	addr, err := comm.ParseHost(*host)
	if err != nil {
		return options{}, err
	}
	return options{
		addr:     net.JoinHostPort(addr, strconv.Itoa(*port)),
		clients:  *clients,
		messages: *messages,
		size:     *size,
		typ:      byte(*typ),
		mode:     *mode,
		end:      *end,
		warmup:   *warmup,
	}, nil
}

// result is the JSON object printed on success (latency_us in rtt mode only).
type result struct {
	Clients   int        `json:"clients"`
	Messages  int        `json:"messages"`
	Size      int        `json:"size"`
	Bytes     int64      `json:"bytes"`
	ElapsedS  float64    `json:"elapsed_s"`
	MBPerS    float64    `json:"mb_per_s"`
	MsgsPerS  float64    `json:"msgs_per_s"`
	LatencyUS *latencyUS `json:"latency_us,omitempty"`
}

func main() {
	opt, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v (%s)\n", name, err, usage)
		os.Exit(2)
	}
	var res result
	if opt.mode == "rtt" {
		res, err = runRTT(opt)
	} else {
		res, err = runStream(opt)
	}
	enc := json.NewEncoder(os.Stdout)
	if err != nil {
		_ = enc.Encode(map[string]string{"error": err.Error()})
		os.Exit(1)
	}
	if err := enc.Encode(res); err != nil {
		os.Exit(1)
	}
}

// figures fills in the throughput of n messages per client (all clients together) that took
// elapsedS seconds.
func figures(opt options, elapsedS float64) result {
	total := int64(opt.clients) * int64(opt.messages)
	bytes := total * int64(opt.size)
	r := result{Clients: opt.clients, Messages: opt.messages, Size: opt.size, Bytes: bytes,
		ElapsedS: elapsedS}
	if elapsedS > 0 {
		r.MBPerS = round(float64(bytes) / 1e6 / elapsedS)
		r.MsgsPerS = round(float64(total) / elapsedS)
	}
	return r
}

// round keeps three decimals: enough for MB/s, messages/s and microseconds.
func round(x float64) float64 { return math.Round(x*1000) / 1000 }
