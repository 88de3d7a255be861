// Command redis-go is the Go implementation of the msgbench redis workload: a RESP2 server
// that answers like redis-server 7.0.15 (see workloads/redis/SPEC.md).
//
// Usage: redis-go --port PORT [--host ADDR]
//
// It listens on ADDR:PORT only (ADDR an IPv4 address, 127.0.0.1 by default) and serves each
// client from its own goroutine (connection.go), accepted by server.go; the keyspace
// (store.go) is shared under one lock. Standard library only.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = "usage: redis-go --port PORT [--host ADDR]"

// parseArgs accepts `--port PORT` (required) and `--host ADDR` (an IPv4 address literal,
// 127.0.0.1 by default), in any order, each also as `--name=VALUE`; it returns the address to
// listen on.
func parseArgs(args []string) (host string, port int, err error) {
	host, portArg := "127.0.0.1", ""
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		if name != "--port" && name != "--host" {
			return "", 0, errors.New(usage)
		}
		if !inline {
			if i+1 == len(args) {
				return "", 0, fmt.Errorf("%s needs a value (%s)", name, usage)
			}
			i++
			value = args[i]
		}
		if name == "--port" {
			portArg = value
		} else {
			host = value
		}
	}
	if portArg == "" {
		return "", 0, errors.New(usage)
	}
	port, err = strconv.Atoi(portArg)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("invalid port %q", portArg)
	}
	// An IPv4 literal only: "" would listen on every address, and a name or an IPv6
	// address (an IPv4-mapped one too) is not what the harness passes.
	addr, err := netip.ParseAddr(host)
	if err != nil || !addr.Is4() {
		return "", 0, fmt.Errorf("invalid --host %q: an IPv4 address such as 127.0.0.1", host)
	}
	return addr.String(), port, nil
}

func main() {
	host, port, err := parseArgs(os.Args[1:])
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
	ln, err := lc.Listen(context.Background(), "tcp4", net.JoinHostPort(host, strconv.Itoa(port)))
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
