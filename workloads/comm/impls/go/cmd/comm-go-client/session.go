package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"msgbench/workloads/comm/impls/go/comm"
)

// idleTimeout fails a client whose server goes silent, rather than hanging the run.
const idleTimeout = 30 * time.Second

// fleet is the set of connections of one run and its first error: any failure closes every
// connection, which unblocks all the other goroutines.
type fleet struct {
	conns []*comm.Connector
	once  sync.Once
	err   error
}

func dialFleet(opt options) (*fleet, error) {
	f := &fleet{conns: make([]*comm.Connector, 0, opt.clients)}
	copt := comm.ConnectorOptions{
		MaxBody:     uint64(max(opt.size, 0)),
		IdleTimeout: idleTimeout,
		QueueLen:    queueLen(opt.size),
	}
	for range opt.clients {
		c, err := comm.Dial(opt.addr, copt)
		if err != nil {
			f.close()
			return nil, fmt.Errorf("connect %s: %w", opt.addr, err)
		}
		f.conns = append(f.conns, c)
	}
	return f, nil
}

// queueBytes bounds the bodies one connection's receive queue holds. The receive goroutine
// runs ahead of the checker by up to a queue of replies, each in its own body buffer: with the
// Connector's default of 1024 messages nearly every 4 KiB reply of Test4 landed in freshly
// allocated heap (a page fault and a cleared page per message, half the client's CPU time),
// where a queue of 64 lets the bodies given back by Release carry the replies that follow.
const queueBytes = 256 << 10

// queueLen is the Connector's queue length for bodies of size bytes: queueBytes of bodies,
// at least 16 messages (large bodies) and at most the default 1024 (small ones).
func queueLen(size int) int {
	return min(max(queueBytes/max(size, 1), 16), 1024)
}

// fail records the first error and closes every connection.
func (f *fleet) fail(err error) {
	f.once.Do(func() {
		f.err = err
		f.close()
	})
}

func (f *fleet) close() {
	for _, c := range f.conns {
		c.Close()
	}
}

// checkReply gets the reply to message msg of client client and compares it with the body
// that was sent.
func checkReply(c *comm.Connector, pat *comm.Pattern, client, msg int) error {
	m, err := c.Get()
	if err == io.EOF {
		return fmt.Errorf("client %d: connection closed before reply %d", client, msg)
	}
	if err != nil {
		return fmt.Errorf("client %d: reply %d: %w", client, msg, err)
	}
	want := pat.Body(client, msg)
	switch {
	case m.Type != comm.TypeReply:
		return fmt.Errorf("client %d: reply %d has type %d, want REPLY (2)", client, msg, m.Type)
	case len(m.Body) != len(want):
		return fmt.Errorf("client %d: reply %d has %d body bytes, want %d", client, msg,
			len(m.Body), len(want))
	case !bytes.Equal(m.Body, want):
		return fmt.Errorf("client %d: reply %d differs from the message sent", client, msg)
	}
	c.Release(m.Body)
	return nil
}

// endSession sends the session end chosen by --end (END, QUIT, or a half-close).
func endSession(c *comm.Connector, end string) error {
	switch end {
	case "quit":
		return c.Post(comm.Message{Type: comm.TypeQuit})
	case "eof":
		return c.CloseSend()
	default:
		return c.Post(comm.Message{Type: comm.TypeEnd})
	}
}

// expectEnd accepts the server's END or EOF after the last reply, and nothing else.
func expectEnd(c *comm.Connector, client int) error {
	m, err := c.Get()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return fmt.Errorf("client %d: after the last reply: %w", client, err)
	case m.Type != comm.TypeEnd:
		return fmt.Errorf("client %d: unexpected message of type %d after the last reply",
			client, m.Type)
	}
	return nil
}
