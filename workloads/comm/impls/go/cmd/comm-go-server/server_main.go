// Command comm-go-server is the Go server of the msgbench comm workload: it echoes every
// message as REPLY (workloads/comm/SPEC.md).
//
// Usage: comm-go-server --port PORT [--host ADDR] [--pool N] [--max-body BYTES]
//
// It listens on ADDR:PORT only (ADDR an IPv4 address, 127.0.0.1 by default).
// A listener goroutine accepts connections and runs each session in a goroutine of its own;
// --pool sets how many OS threads run those goroutines at once (GOMAXPROCS), capped by the
// CPUs the process may use. Standard library only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"msgbench/workloads/comm/impls/go/comm"
)

const name = "comm-go-server"

// shutdownWait is how long SIGTERM waits for handlers after closing their connections (the
// contract allows 2 s for the whole exit).
const shutdownWait = 1500 * time.Millisecond

type config struct {
	host    string
	port    int
	pool    int
	maxBody uint64
}

func parseArgs(args []string) (config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // one line on stderr, written by main
	port := fs.Int("port", 0, "TCP port to listen on")
	host := fs.String("host", comm.DefaultHost, "IPv4 address to listen on")
	pool := fs.Int("pool", 8, "OS threads running handler goroutines at once (GOMAXPROCS)")
	maxBody := fs.Uint64("max-body", comm.DefaultMaxBody, "largest accepted body length")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	switch {
	case fs.NArg() > 0:
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *port < 1 || *port > 65535:
		return config{}, errors.New("--port PORT (1-65535) is required")
	case *pool < 1:
		return config{}, errors.New("--pool must be at least 1")
	case *maxBody > math.MaxInt32:
		// A frame is buffered or streamed by int offsets; 2 GiB keeps every size an int on
		// any platform and is far above what the workload sends.
		return config{}, errors.New("--max-body must be at most 2147483647")
	}
	addr, err := comm.ParseHost(*host)
	if err != nil {
		return config{}, err
	}
	return config{host: addr, port: *port, pool: *pool, maxBody: *maxBody}, nil
}

func main() {
	cfg, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v (usage: %s --port PORT [--host ADDR] [--pool N] [--max-body BYTES])\n", name, err, name)
		os.Exit(2)
	}
	// The pool: at most --pool OS threads execute goroutines at once. More threads than the
	// CPUs this process may run on (the runtime's default GOMAXPROCS follows the affinity
	// mask) would only add context switches, so the smaller of the two is used.
	runtime.GOMAXPROCS(min(cfg.pool, runtime.GOMAXPROCS(0)))

	raiseFileLimit()

	// Go's listener sets SO_REUSEADDR and passes the kernel's somaxconn as backlog (which
	// caps any larger value anyway).
	ln, err := net.Listen("tcp4", net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}

	srv := &comm.Server{MaxBody: cfg.maxBody, ErrorLog: log.New(os.Stderr, name+": ", 0)}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	stopped := make(chan struct{})
	go func() {
		<-ctx.Done()
		srv.Shutdown(shutdownWait)
		close(stopped)
	}()

	srv.Serve(ln) // returns once the signal goroutine has closed the listener
	<-stopped
}

// raiseFileLimit lifts the soft RLIMIT_NOFILE to the hard limit, so that hundreds of clients
// do not run out of descriptors. The Go runtime already raises it at start-up, but to one
// below the hard limit (os/rlimit.go); the contract asks for the hard limit itself.
func raiseFileLimit() {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) // best effort: the default may do
	}
}
