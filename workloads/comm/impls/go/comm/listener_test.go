package comm

import (
	"io"
	"net"
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
