package comm

import (
	"bytes"
	"io"
	"log"
	"net"
	"sync"
	"testing"
	"time"
)

// readFull reads exactly len(b) bytes.
func readFull(c net.Conn, b []byte) (int, error) { return io.ReadFull(c, b) }

func TestShutdownClosesConnectionsAndStopsAccepting(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{MaxBody: DefaultMaxBody}
	served := make(chan struct{})
	go func() { srv.Serve(ln); close(served) }()

	idle := dial(t, ln.Addr().String())
	if _, err := idle.Write(frame(TypeText, []byte("hi"))); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, HeaderLen+2)
	if _, err := readFull(idle, buf); err != nil {
		t.Fatal(err)
	}
	// A client in the middle of a frame: its handler is blocked in a read.
	if _, err := idle.Write([]byte{TypeText, 0, 0}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if !srv.Shutdown(2 * time.Second) {
		t.Fatal("handlers did not return")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	<-served
	if n, err := idle.Read(buf); err == nil {
		t.Fatalf("connection still open after Shutdown (read %d bytes)", n)
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Fatal("still accepting after Shutdown")
	}
}

func TestServeAfterShutdownReturnsAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{}
	srv.Shutdown(time.Second)
	srv.Serve(ln) // must not block
}

// Helpers shared by the package's tests: a Server on a loopback port and clients of it.

// syncBuffer is a log destination safe for concurrent writers and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer runs a Server on a free loopback port until the test ends.
func startServer(t *testing.T, maxBody uint64) (addr string, srv *Server, logs *syncBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs = &syncBuffer{}
	srv = &Server{MaxBody: maxBody, ErrorLog: log.New(logs, "", 0)}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	t.Cleanup(func() {
		if !srv.Shutdown(2 * time.Second) {
			t.Error("handlers still running 2 s after Shutdown")
		}
		<-done
	})
	return ln.Addr().String(), srv, logs
}

func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c.(*net.TCPConn)
}

// readAll reads until EOF in a goroutine (so that the server never blocks on a full socket
// while the test is still writing) and returns a channel that delivers the bytes.
func readAll(c net.Conn) <-chan []byte {
	ch := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(c)
		ch <- b
	}()
	return ch
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}
