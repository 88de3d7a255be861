package main

// The server: what all clients share (the keyspace, CONFIG values, client counts) and the
// accept loop that gives each new client its goroutine.

import (
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
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
