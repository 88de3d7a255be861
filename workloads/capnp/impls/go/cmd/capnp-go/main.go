// Command capnp-go is the Go program of the msgbench capnp workload: Cap'n Proto's carsales,
// catrank and eval benchmarks on capnproto.org/go/capnp/v3 (workloads/capnp/SPEC.md §5).
//
// Usage: capnp-go CASE MODE REUSE COMPRESSION ITERS
//
// object, bytes and pipe print their report as one line of JSON on stdout; client writes
// requests to stdout, reads responses from stdin and prints its report as the last line of
// stderr; server answers requests from stdin on stdout until its input ends, then prints
// {"served": N} on stderr. Exit 0: done, every check passed; 1: a failure at run time, one
// line on stderr; 2: a bad command line, with the usage on stderr.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"msgbench/workloads/capnp/impls/go/capnpbench"
)

const program = "capnp-go"

const usage = `usage: capnp-go CASE MODE REUSE COMPRESSION ITERS
    CASE         carsales | catrank | eval
    MODE         object | bytes | pipe | client | server
    REUSE        reuse | no-reuse
    COMPRESSION  none | packed          (object: none only)
    ITERS        1 .. 1000000000        (timed iterations; ITERS/20 more warm up first)
`

const libraryModule = "capnproto.org/go/capnp/v3"

func main() {
	started := time.Now()
	// A write to a closed pipe on stdout would otherwise kill the program with SIGPIPE; ignored,
	// it is an EPIPE error, reported as one line with exit status 1 (SPEC §5).
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], started, os.Stdin, os.Stdout, os.Stderr))
}

// usageError is a bad command line: exit status 2 with the usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func parseArgs(args []string) (capnpbench.Config, error) {
	var cfg capnpbench.Config
	if len(args) != 5 {
		return cfg, usageError{fmt.Sprintf("expected 5 arguments, got %d", len(args))}
	}
	cfg.Case, cfg.Mode = args[0], args[1]
	if !oneOf(cfg.Case, capnpbench.Cases...) {
		return cfg, usageError{fmt.Sprintf("unknown case %q", cfg.Case)}
	}
	if !oneOf(cfg.Mode, "object", "bytes", "pipe", "client", "server") {
		return cfg, usageError{fmt.Sprintf("unknown mode %q", cfg.Mode)}
	}
	switch args[2] {
	case "reuse":
		cfg.Reuse = true
	case "no-reuse":
	default:
		return cfg, usageError{fmt.Sprintf("unknown reuse setting %q", args[2])}
	}
	switch args[3] {
	case "packed":
		cfg.Packed = true
	case "none":
	default:
		return cfg, usageError{fmt.Sprintf("unknown compression %q", args[3])}
	}
	if cfg.Mode == "object" && cfg.Packed {
		return cfg, usageError{"object mode serialises nothing: compression must be none"}
	}
	// Decimal digits only: ParseUint takes no sign, no spaces and no base prefix.
	n, err := strconv.ParseUint(args[4], 10, 32)
	if err != nil || n < 1 || n > 1_000_000_000 {
		return cfg, usageError{fmt.Sprintf("ITERS must be an integer from 1 to 1000000000, got %q", args[4])}
	}
	cfg.Iterations = int(n)
	return cfg, nil
}

func oneOf(s string, set ...string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// report is the JSON of SPEC §5, members in its order.
type report struct {
	Program       string   `json:"program"`
	Library       string   `json:"library"`
	Case          string   `json:"case"`
	Mode          string   `json:"mode"`
	Reuse         string   `json:"reuse"`
	Compression   string   `json:"compression"`
	Iterations    int      `json:"iterations"`
	Warmup        int      `json:"warmup"`
	SetupS        float64  `json:"setup_s"`
	WarmupS       float64  `json:"warmup_s"`
	ElapsedS      float64  `json:"elapsed_s"`
	CPUS          float64  `json:"cpu_s"`
	RequestBytes  int64    `json:"request_bytes"`
	ResponseBytes int64    `json:"response_bytes"`
	Checked       int      `json:"checked"`
	ServerCPUS    *float64 `json:"server_cpu_s,omitempty"`
}

// library names the Cap'n Proto module and the version this binary was built with.
func library() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == libraryModule {
				return libraryModule + " " + dep.Version
			}
		}
	}
	return libraryModule
}

func run(args []string, started time.Time, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	cfg, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n%s", program, err, usage)
		return 2
	}
	// The library is not expected to panic on any input, but if it ever does, the program
	// still ends with one line and exit status 1, not a goroutine dump (SPEC §5).
	defer func() {
		if p := recover(); p != nil {
			fail(stderr, cfg.Mode, fmt.Errorf("internal error: %v", p))
			code = 1
		}
	}()

	if cfg.Mode == "server" {
		served, err := capnpbench.RunServer(cfg, stdin, stdout)
		if err != nil {
			fail(stderr, cfg.Mode, err)
			return 1
		}
		fmt.Fprintf(stderr, "{\"served\": %d}\n", served)
		return 0
	}

	var rep capnpbench.Report
	switch cfg.Mode {
	case "object":
		rep, err = capnpbench.RunObject(cfg, started)
	case "bytes":
		rep, err = capnpbench.RunBytes(cfg, started)
	case "pipe":
		rep, err = capnpbench.RunPipe(cfg, started)
	case "client":
		rep, err = capnpbench.RunClient(cfg, started, stdin, stdout)
	}
	if err != nil {
		fail(stderr, cfg.Mode, err)
		return 1
	}
	words := cfg.Args(cfg.Mode)
	doc := report{
		Program: program, Library: library(), Case: cfg.Case, Mode: cfg.Mode,
		Reuse: words[2], Compression: words[3], Iterations: cfg.Iterations, Warmup: cfg.Warmup(),
		SetupS: rep.SetupS, WarmupS: rep.WarmupS, ElapsedS: rep.ElapsedS, CPUS: rep.CPUS,
		RequestBytes: rep.RequestBytes, ResponseBytes: rep.ResponseBytes, Checked: rep.Checked,
	}
	if cfg.Mode == "pipe" {
		doc.ServerCPUS = &rep.ServerCPUS
	}
	line, err := json.Marshal(doc)
	if err != nil {
		fail(stderr, cfg.Mode, err)
		return 1
	}
	// The client's stdout carries its requests: its report is the last line of stderr.
	out := stdout
	if cfg.Mode == "client" {
		out = stderr
	}
	if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
		fail(stderr, cfg.Mode, fmt.Errorf("writing the report: %w", err))
		return 1
	}
	return 0
}

// fail writes err as one line on stderr.
func fail(stderr io.Writer, mode string, err error) {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if errors.Is(err, syscall.EPIPE) {
		msg += " (the peer closed its end of the pipe)"
	}
	fmt.Fprintf(stderr, "%s: %s: %s\n", program, mode, msg)
}
