package comm

import (
	"errors"
	"fmt"
	"log"
	"net"
	"net/netip"
	"sync"
	"time"
)

// DefaultHost is the address a server listens on, and a client connects to, without --host.
const DefaultHost = "127.0.0.1"

// ParseHost checks a --host value: an IPv4 address literal in dotted-decimal form. Anything
// else is refused, the empty string too (the socket API would take it as every address), and
// so is an IPv4-mapped IPv6 literal such as "::ffff:127.0.0.1".
func ParseHost(s string) (string, error) {
	addr, err := netip.ParseAddr(s)
	if err != nil || !addr.Is4() {
		return "", fmt.Errorf("--host must be an IPv4 address such as 127.0.0.1, not %q", s)
	}
	return addr.String(), nil
}

// Server is the comm echo server: a listener goroutine accepts connections and starts one
// handler goroutine per connection. Go's runtime multiplexes those goroutines over its pool
// of OS threads (GOMAXPROCS of them run Go code at once) with the netpoller (epoll): a
// goroutine waiting for input parks without holding a thread, so every connected client is
// served at once however small the pool.
type Server struct {
	// MaxBody is the largest body length accepted; a larger one drops the connection.
	MaxBody uint64
	// ErrorLog gets one line per refused connection (nil: the log package's default logger).
	ErrorLog *log.Logger

	mu       sync.Mutex
	ln       net.Listener
	conns    map[net.Conn]struct{}
	shutdown bool
	active   sync.WaitGroup
}

// Serve accepts connections on ln until Shutdown closes it. An accept error (out of file
// descriptors, say) is logged and retried after a pause: the clients already connected
// keep being served.
func (s *Server) Serve(ln net.Listener) {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		ln.Close()
		return
	}
	s.ln = ln
	s.mu.Unlock()

	backoff := time.Duration(0)
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.isShutdown() || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors or a connection reset in the backlog: wait a little
			// and go on rather than spin or give up on the clients already connected.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.logf("accept: %v (retrying in %v)", err, backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if tc, ok := conn.(*net.TCPConn); ok {
			// Go sets TCP_NODELAY on accepted sockets already; the contract requires it, so
			// it is stated here rather than left to a default.
			_ = tc.SetNoDelay(true)
		}
		if !s.track(conn) {
			conn.Close()
			continue
		}
		go s.serve(conn)
	}
}

func (s *Server) serve(conn net.Conn) {
	defer s.active.Done()
	defer s.untrack(conn)
	end, err := runSession(conn, s.MaxBody)
	var tooLarge *TooLargeError
	if errors.As(err, &tooLarge) {
		s.logf("closing connection from %v: %v", conn.RemoteAddr(), err)
	}
	closeSession(conn, end, err)
}

// Shutdown stops accepting, closes every connection (their handlers then end on an I/O
// error) and waits up to timeout for the handlers to return. It reports whether they did.
func (s *Server) Shutdown(timeout time.Duration) bool {
	s.mu.Lock()
	s.shutdown = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()

	done := make(chan struct{})
	go func() { s.active.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// track registers a new connection; false once shutting down.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return false
	}
	if s.conns == nil {
		s.conns = make(map[net.Conn]struct{})
	}
	s.conns[c] = struct{}{}
	s.active.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *Server) isShutdown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shutdown
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}
