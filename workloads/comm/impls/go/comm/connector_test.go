package comm

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

func dialConnector(t *testing.T, addr string) *Connector {
	t.Helper()
	c, err := Dial(addr, ConnectorOptions{QueueLen: 16, IdleTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConnectorStreamsAndReceivesInOrder(t *testing.T) {
	addr, _, _ := startServer(t, DefaultMaxBody)
	c := dialConnector(t, addr)
	pat := NewPattern(3000)
	const n = 500 // far more than the queues hold: sending and receiving overlap
	go func() {
		for m := range n {
			if err := c.Post(Message{Type: TypeText, Body: pat.Body(0, m)}); err != nil {
				t.Error(err)
				return
			}
		}
		_ = c.Post(Message{Type: TypeEnd})
	}()
	for m := range n {
		got, err := c.Get()
		if err != nil {
			t.Fatalf("reply %d: %v", m, err)
		}
		if got.Type != TypeReply || !bytes.Equal(got.Body, pat.Body(0, m)) {
			t.Fatalf("reply %d: type %d, %d bytes, wrong body", m, got.Type, len(got.Body))
		}
		c.Release(got.Body)
	}
	if end, err := c.Get(); err != nil || end.Type != TypeEnd || len(end.Body) != 0 {
		t.Fatalf("after the replies: %+v, %v", end, err)
	}
	if _, err := c.Get(); err != io.EOF {
		t.Fatalf("after END: %v, want io.EOF", err)
	}
}

func TestConnectorCloseSendEndsTheSessionWithEOF(t *testing.T) {
	addr, _, _ := startServer(t, DefaultMaxBody)
	c := dialConnector(t, addr)
	if err := c.Post(Message{Type: TypeDefault, Body: []byte("last")}); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Get(); err != nil || string(m.Body) != "last" {
		t.Fatalf("%+v, %v", m, err)
	}
	m, err := c.Get()
	if err == nil && m.Type == TypeEnd {
		m, err = c.Get()
	}
	if err != io.EOF {
		t.Fatalf("after the last reply: %+v, %v; want io.EOF", m, err)
	}
	if err := c.Post(Message{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Post after CloseSend: %v", err)
	}
}

func TestConnectorCloseUnblocksGetAndPost(t *testing.T) {
	addr, _, _ := startServer(t, DefaultMaxBody)
	c := dialConnector(t, addr)
	got := make(chan error, 1)
	go func() { _, err := c.Get(); got <- err }()
	time.Sleep(20 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("Get after Close returned a message")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Get still blocked after Close")
	}
	if err := c.Post(Message{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Post after Close: %v", err)
	}
}

func TestConnectorRefusesOversizedReply(t *testing.T) {
	addr, _, _ := startServer(t, DefaultMaxBody)
	c, err := Dial(addr, ConnectorOptions{MaxBody: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Post(Message{Body: make([]byte, 11)}); err != nil {
		t.Fatal(err)
	}
	var tl *TooLargeError
	if _, err := c.Get(); !errors.As(err, &tl) {
		t.Fatalf("Get = %v, want *TooLargeError", err)
	}
}

func TestConnectorReportsTruncatedReply(t *testing.T) {
	// A fake server that sends half a frame and closes.
	ln := listenLoopback(t)
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = s.Write(frame(TypeReply, []byte("abcdef"))[:HeaderLen+3])
		s.Close()
	}()
	c, err := Dial(ln.Addr().String(), ConnectorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Get(); !errors.Is(err, ErrTruncated) {
		t.Fatalf("Get = %v, want ErrTruncated", err)
	}
}
