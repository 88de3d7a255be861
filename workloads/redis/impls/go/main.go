// Command redis-go is the Go implementation of the msgbench redis workload: a RESP2 server
// that answers like redis-server 7.0.15 (see workloads/redis/SPEC.md).
//
// Usage: redis-go --port PORT
//
// It listens on 127.0.0.1:PORT and serves each client from its own goroutine (conn.go);
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
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type server struct {
	ks      keyspace
	port    int
	started time.Time

	nextClientID atomic.Int64
	connected    atomic.Int64

	configMu  sync.Mutex
	configSet map[string]string // CONFIG SET values (no effect beyond CONFIG GET)
}

func newServer(port int) *server {
	s := &server{port: port, started: time.Now()}
	s.ks.init()
	return s
}

func (s *server) config(name string) string {
	s.configMu.Lock()
	defer s.configMu.Unlock()
	if v, ok := s.configSet[name]; ok {
		return v
	}
	if name == "port" {
		return strconv.Itoa(s.port)
	}
	return configDefaults[name]
}

func (s *server) setConfig(name, value string) {
	s.configMu.Lock()
	defer s.configMu.Unlock()
	if s.configSet == nil {
		s.configSet = map[string]string{}
	}
	s.configSet[name] = value
}

func (s *server) clientGone(*client) { s.connected.Add(-1) }

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

func (s *server) acceptLoop(ln *net.TCPListener) {
	for {
		conn, err := ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				select {} // shutting down: the signal goroutine exits the process
			}
			// Out of file descriptors or similar: back off briefly rather than spin.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		c, err := newClient(s, conn)
		if err != nil {
			conn.Close()
			continue
		}
		s.connected.Add(1)
		go c.serve()
	}
}
