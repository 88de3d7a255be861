package main

// connection.go: one goroutine per client connection, the Go way to write a server: the runtime's
// netpoller (epoll) parks a goroutine whose socket has nothing to read, and a goroutine
// switch on one CPU costs about what an event-loop callback does.
//
// Each turn of a client's loop is one read(2) into the client's buffer, then every complete
// request in it executed under the keyspace lock (taken once per batch, not per command),
// with the replies appended to one output buffer, then one write(2) of that buffer. So a
// pipelined batch of N requests costs one read, one lock and one write, like redis's
// readQueryFromClient / processInputBuffer / writeToClient.
//
// Fairness: a batch is at most one read's worth of requests and is cut short once its
// replies pass outputChunk bytes (they are sent before the rest runs); the Go scheduler also
// preempts a goroutine that runs for more than 10 ms. So a client pipelining 10,000 requests
// cannot keep the others waiting for long.
//
// Slow readers: a client that stops reading must not block anybody, and, as in redis with
// `client-output-buffer-limit normal 64mb 0 0`, it is disconnected once 64 MiB of replies
// are waiting for it. The write of a batch is therefore attempted without blocking; what the
// socket does not take is handed over (not copied) to a writer goroutine, started only for
// such clients, while the client's loop goes on reading and executing until the replies
// waiting pass the limit.

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
)

const (
	// outputLimit is the most reply bytes allowed to wait for a client that does not read.
	outputLimit = 64 << 20
	// outputChunk: a batch whose replies reach this size stops and sends them before the
	// next request runs, so one batch cannot build an arbitrarily large buffer.
	outputChunk = 256 << 10
	// keepOutputBuffer is the largest output buffer kept for the next batch.
	keepOutputBuffer = 4 << 20
)

type client struct {
	srv  *server
	conn *net.TCPConn
	raw  syscall.RawConn
	id   int64
	name string

	dbIndex int
	db      *db
	resp    int // protocol version: 2, or 3 after HELLO 3

	multi    *transaction // non-nil between MULTI and EXEC/DISCARD
	watched  []watch
	dirtyCAS bool // a watched key changed: the next EXEC fails

	in  *requestReader
	out []byte // replies not yet sent

	// quit is set by QUIT and by protocol errors: send what is pending, then close.
	quit bool
	// overflow is set when pending replies pass outputLimit: close without sending more.
	overflow bool

	// tryWrite is the non-blocking write attempt, built once so that a flush allocates
	// nothing; it reports through wrote and writeErr.
	tryWrite func(fd uintptr) bool
	wrote    int
	writeErr error

	slow *slowWriter // non-nil once a write could not complete at once
}

func newClient(srv *server, conn *net.TCPConn) (*client, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	c := &client{
		srv:  srv,
		conn: conn,
		raw:  raw,
		id:   srv.nextClientID.Add(1),
		db:   &srv.ks.dbs[0],
		resp: 2,
		in:   getRequestReader(),
	}
	c.tryWrite = func(fd uintptr) bool {
		for {
			n, err := syscall.Write(int(fd), c.out[c.wrote:])
			if err == syscall.EINTR {
				continue
			}
			if n > 0 {
				c.wrote += n
			}
			if err != nil && err != syscall.EAGAIN {
				c.writeErr = err
			}
			return true // never wait for writability here: that is the slow writer's job
		}
	}
	return c, nil
}

// serve runs the client's loop until it disconnects, errs or is told to go.
func (c *client) serve() {
	defer c.close()
	for {
		n, err := c.conn.Read(c.in.readSpace())
		if n > 0 {
			c.in.filled(n)
			for {
				cut := c.processInput()
				if c.overflow || c.flush() != nil {
					return
				}
				if !cut {
					break
				}
			}
		}
		if err != nil || c.quit {
			return
		}
	}
}

// processInput executes the complete requests in the read buffer. It reports true when it
// stopped early because the replies reached outputChunk (requests may remain).
func (c *client) processInput() (cut bool) {
	ks := &c.srv.ks
	ks.mu.Lock()
	defer ks.mu.Unlock()
	for !c.quit {
		switch c.in.next() {
		case needMore:
			return false
		case protocolError:
			c.out = appendError(c.out, "ERR "+c.in.protoErr)
			c.quit = true
			return false
		}
		if len(c.in.args) == 0 {
			continue
		}
		c.execute(c.in.args)
		if len(c.out) >= outputChunk {
			c.overflow = len(c.out)+c.pendingSlow() > outputLimit
			return true
		}
	}
	return false
}

// errOutputLimit closes a client whose unsent replies passed outputLimit.
var errOutputLimit = errors.New("output buffer limit reached")

// flush sends the pending replies: at once if the socket takes them, else through the slow
// writer.
func (c *client) flush() error {
	if len(c.out) == 0 {
		return nil
	}
	if c.slow != nil && c.slow.pushIfBusy(c.out) {
		c.out = make([]byte, 0, min(cap(c.out), keepOutputBuffer))
		if c.slow.pending() > outputLimit {
			c.overflow = true
			return errOutputLimit
		}
		return nil
	}
	c.wrote, c.writeErr = 0, nil
	if err := c.raw.Write(c.tryWrite); err != nil {
		return err
	}
	if c.writeErr != nil {
		return c.writeErr
	}
	if c.wrote < len(c.out) {
		if c.slow == nil {
			c.slow = newSlowWriter(c.conn)
		}
		c.slow.push(c.out[c.wrote:])
		c.out = make([]byte, 0, min(cap(c.out), keepOutputBuffer))
		return nil
	}
	if cap(c.out) > keepOutputBuffer {
		c.out = nil // a huge reply's buffer is not kept for the life of the connection
	} else {
		c.out = c.out[:0]
	}
	return nil
}

func (c *client) pendingSlow() int {
	if c.slow == nil {
		return 0
	}
	return c.slow.pending()
}

func (c *client) close() {
	if len(c.watched) > 0 {
		c.srv.ks.mu.Lock()
		c.unwatchAll()
		c.srv.ks.mu.Unlock()
	}
	c.srv.clientGone(c)
	putRequestReader(c.in)
	c.in = nil
	if c.slow != nil {
		if c.quit && !c.overflow {
			c.slow.closeAfterDrain()
			return
		}
		c.slow.stop()
	}
	c.conn.Close()
}

// --- The slow path --------------------------------------------------------------------

// slowWriter writes, in order, the replies a client's socket could not take at once, in a
// goroutine of its own that blocks in writev(2) while the client's loop goes on. Reply
// buffers are handed over, not copied, so what waits costs its own size and no more. While
// the writer has anything queued or in hand every later reply queues behind it; once it is
// idle the client writes directly again.
type slowWriter struct {
	conn *net.TCPConn

	mu      sync.Mutex
	wake    *sync.Cond
	queue   net.Buffers // replies waiting, in order
	writing bool        // the goroutine holds buffers it is writing
	done    bool        // stop: the connection is finished
	// closeWhenDrained: the client has quit; close the connection after the last byte.
	closeWhenDrained bool

	size atomic.Int64 // bytes queued or being written, read by the client's loop
}

func newSlowWriter(conn *net.TCPConn) *slowWriter {
	w := &slowWriter{conn: conn}
	w.wake = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// push queues b (taking ownership) behind anything still unwritten.
func (w *slowWriter) push(b []byte) {
	w.mu.Lock()
	w.queue = append(w.queue, b)
	w.size.Add(int64(len(b)))
	w.wake.Signal()
	w.mu.Unlock()
}

// pushIfBusy queues b (taking ownership) and reports true if the writer still has bytes to
// write; if it is idle it reports false and the caller writes directly.
func (w *slowWriter) pushIfBusy(b []byte) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.writing && len(w.queue) == 0 {
		return false
	}
	w.queue = append(w.queue, b)
	w.size.Add(int64(len(b)))
	w.wake.Signal()
	return true
}

// pending is the number of reply bytes not yet written.
func (w *slowWriter) pending() int { return int(w.size.Load()) }

func (w *slowWriter) run() {
	var batch net.Buffers
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.done {
			w.writing = false
			if w.closeWhenDrained {
				w.mu.Unlock()
				w.conn.Close()
				return
			}
			w.wake.Wait()
		}
		if w.done {
			w.mu.Unlock()
			return
		}
		batch, w.queue = w.queue, batch[:0]
		w.writing = true
		w.mu.Unlock()

		var total int64
		for _, b := range batch {
			total += int64(len(b))
		}
		bufs := batch // WriteTo consumes its receiver; keep batch's array for reuse
		_, err := bufs.WriteTo(w.conn)
		clear(batch) // let the written buffers go
		w.size.Add(-total)
		if err != nil {
			w.conn.Close() // also wakes the client's loop from its read
			w.stop()
			return
		}
	}
}

// stop ends the writer, dropping whatever is queued.
func (w *slowWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.queue = nil
	w.wake.Signal()
	w.mu.Unlock()
}

// closeAfterDrain hands the connection to the writer: it closes it after the last queued
// byte is written (QUIT and protocol errors answer before closing).
func (w *slowWriter) closeAfterDrain() {
	w.mu.Lock()
	w.closeWhenDrained = true
	w.wake.Signal()
	w.mu.Unlock()
}
