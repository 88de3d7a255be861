// Command redis-go is the Go implementation of the msgbench redis workload: a RESP2 server
// that answers like redis-server 7.0.15 (see workloads/redis/SPEC.md).
//
// Usage: redis-go --port PORT
//
// It listens on 127.0.0.1:PORT and serves each client from its own goroutine (connection.go), accepted by server.go;
// the keyspace (store.go) is shared under one lock. Standard library only.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// parseArgs accepts exactly `--port PORT` (or `--port=PORT`).
func parseArgs(args []string) (int, error) {
	var value string
	switch {
	case len(args) == 2 && args[0] == "--port":
		value = args[1]
	case len(args) == 1 && len(args[0]) > 7 && args[0][:7] == "--port=":
		value = args[0][7:]
	default:
		return 0, errors.New("usage: redis-go --port PORT")
	}
	port, err := strconv.Atoi(value)
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("invalid port %q", value)
	}
	return port, nil
}

func main() {
	port, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "redis-go:", err)
		os.Exit(2)
	}
	// What the spec asks of start-up, the Go runtime and net package already do: the soft
	// RLIMIT_NOFILE is raised to the hard limit before main (since Go 1.19), the listener
	// sets SO_REUSEADDR and takes the kernel's somaxconn as backlog (4096 here, >= 1024),
	// and every accepted TCP connection gets TCP_NODELAY. Keep-alive probes start after
	// 300 s idle, redis's default tcp-keepalive (Go's own default would be 15 s).
	lc := net.ListenConfig{KeepAlive: 300 * time.Second}
	ln, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "redis-go:", err)
		os.Exit(1)
	}
	srv := newServer(port)
	go srv.ks.activeExpire()

	// SIGTERM / SIGINT: stop accepting and exit; the kernel closes every connection as the
	// process ends. Nothing is persisted, so there is nothing else to do.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigs
		ln.Close()
		os.Exit(0)
	}()

	srv.acceptLoop(ln.(*net.TCPListener))
}
