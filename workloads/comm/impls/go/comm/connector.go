package comm

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Message is one frame: its type and its body.
type Message struct {
	Type byte
	Body []byte
}

// ErrClosed is returned by Post after Close, CloseSend or a failed write.
var ErrClosed = errors.New("connector closed")

// ConnectorOptions tunes a Connector; the zero value gives the defaults.
type ConnectorOptions struct {
	// QueueLen is the capacity of the send and the receive queue (default 1024 messages).
	QueueLen int
	// MaxBody caps the body length of an incoming message (default DefaultMaxBody).
	MaxBody uint64
	// IdleTimeout fails the receive side when nothing arrives for this long (0: wait forever).
	IdleTimeout time.Duration
}

// maxSendBatch bounds the bytes one writev of the send goroutine carries, so the first
// messages leave before a long queue has been gathered.
const maxSendBatch = 256 << 10

// outgoing is an entry of the send queue: a message, or the request to half-close.
type outgoing struct {
	msg      Message
	shutdown bool
}

// Connector is the client side (the seed's Connector): Post puts a message on the send
// queue, a send goroutine writes queued messages (as many as are waiting, in one writev), a
// receive goroutine reads replies into the receive queue, and Get takes them from it.
type Connector struct {
	conn    *net.TCPConn
	maxBody uint64

	sendQ    chan outgoing
	sendDone chan struct{} // closed when the send goroutine has returned
	sendErr  error         // set before sendDone is closed

	recvQ    chan Message // closed when the receive goroutine has returned
	recvErr  error        // set before recvQ is closed; nil means EOF
	recvDone chan struct{}
	free     chan []byte // bodies given back by Release, reused for later replies

	sendClosed atomic.Bool // CloseSend or Close was called: Post refuses
	closing    chan struct{}
	closeOnce  sync.Once
	shutOnce   sync.Once
	closeErr   error
}

// Dial connects to addr (host:port) with TCP_NODELAY and starts a Connector on it.
func Dial(addr string, opt ConnectorOptions) (*Connector, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	if err := tc.SetNoDelay(true); err != nil {
		tc.Close()
		return nil, err
	}
	return NewConnector(tc, opt), nil
}

// NewConnector starts the send and the receive goroutine on an established connection.
func NewConnector(conn *net.TCPConn, opt ConnectorOptions) *Connector {
	if opt.QueueLen <= 0 {
		opt.QueueLen = 1024
	}
	if opt.MaxBody == 0 {
		opt.MaxBody = DefaultMaxBody
	}
	c := &Connector{
		conn:     conn,
		maxBody:  opt.MaxBody,
		sendQ:    make(chan outgoing, opt.QueueLen),
		sendDone: make(chan struct{}),
		recvQ:    make(chan Message, opt.QueueLen),
		recvDone: make(chan struct{}),
		free:     make(chan []byte, opt.QueueLen),
		closing:  make(chan struct{}),
	}
	go c.sendLoop()
	go c.recvLoop(opt.IdleTimeout)
	return c
}

// Post queues a message for sending; it blocks while the send queue is full. The body is
// not copied: it must stay unchanged until the message has been written.
func (c *Connector) Post(m Message) error {
	if c.sendClosed.Load() {
		return ErrClosed
	}
	return c.enqueue(outgoing{msg: m})
}

// CloseSend half-closes the connection (shutdown of the write side, the peer sees EOF)
// once every message posted before it has been written.
func (c *Connector) CloseSend() error {
	err := ErrClosed
	c.shutOnce.Do(func() {
		c.sendClosed.Store(true)
		err = c.enqueue(outgoing{shutdown: true})
	})
	return err
}

func (c *Connector) enqueue(o outgoing) error {
	// Fast path while the send goroutine runs and the queue has room: one-case selects are
	// a plain non-blocking receive (lock-free on an open channel) and send, where the
	// three-case select below locks all three channels (a tenth of the client's own CPU time
	// in a Test4 profile).
	select {
	case <-c.sendDone: // stopped: the select below says why
	default:
		select {
		case c.sendQ <- o:
			return nil
		default:
		}
	}
	select {
	case c.sendQ <- o:
		return nil
	case <-c.sendDone:
		if c.sendErr != nil { // written before sendDone was closed
			return c.sendErr
		}
		return ErrClosed
	case <-c.closing:
		return ErrClosed
	}
}

// Get returns the next received message. At the end of the session (the peer closed the
// connection) it returns io.EOF; a broken connection or a malformed frame returns its error.
// END is returned as a message like any other.
func (c *Connector) Get() (Message, error) {
	m, ok := <-c.recvQ
	if ok {
		return m, nil
	}
	if c.recvErr != nil {
		return Message{}, c.recvErr
	}
	return Message{}, io.EOF
}

// Release gives the body of a message returned by Get back to the connector, which may
// reuse its memory for a later message. The caller must not use the body afterwards.
func (c *Connector) Release(body []byte) {
	if cap(body) == 0 {
		return
	}
	select {
	case c.free <- body[:0]:
	default:
	}
}

// Close closes the connection and waits for both goroutines to return. Messages still in
// the send queue are dropped; use CloseSend or an END message first for an orderly end.
func (c *Connector) Close() error {
	c.closeOnce.Do(func() {
		c.sendClosed.Store(true)
		close(c.closing)
		c.closeErr = c.conn.Close()
	})
	<-c.sendDone
	<-c.recvDone
	return c.closeErr
}

func (c *Connector) sendLoop() {
	defer close(c.sendDone)
	out := NewFrameBatch(c.conn)
	for {
		var o outgoing
		select {
		case o = <-c.sendQ:
		case <-c.closing:
			return
		}
		// Gather whatever else is already queued into the same writev.
		for !o.shutdown {
			if c.sendErr = out.Add(o.msg.Type, o.msg.Body); c.sendErr != nil {
				return
			}
			if out.Pending() >= maxSendBatch {
				break
			}
			select {
			case o = <-c.sendQ:
				continue
			default:
			}
			break
		}
		if c.sendErr = out.Flush(); c.sendErr != nil {
			return
		}
		if o.shutdown {
			c.sendErr = c.conn.CloseWrite()
			return
		}
	}
}

func (c *Connector) recvLoop(idle time.Duration) {
	defer close(c.recvDone)
	defer close(c.recvQ)
	var src io.Reader = c.conn
	if idle > 0 {
		src = &idleReader{conn: c.conn, idle: idle}
	}
	r := bufio.NewReaderSize(src, ReadBufferSize)
	var hdr [HeaderLen]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err != io.EOF {
				c.recvErr = c.readErr(truncated(err))
			}
			return
		}
		typ, bodyLen := ParseHeader(hdr[:])
		if c.recvErr = CheckBodyLen(bodyLen, c.maxBody); c.recvErr != nil {
			return
		}
		body := c.bodyBuffer(int(bodyLen))
		if _, err := io.ReadFull(r, body); err != nil {
			c.recvErr = c.readErr(truncated(err))
			return
		}
		m := Message{Type: typ, Body: body}
		select { // the non-blocking send first, as in enqueue
		case c.recvQ <- m:
			continue
		default:
		}
		select {
		case c.recvQ <- m:
		case <-c.closing:
			return
		}
	}
}

// readErr reports a read that failed because Close closed the socket as ErrClosed.
func (c *Connector) readErr(err error) error {
	select {
	case <-c.closing:
		return ErrClosed
	default:
		return err
	}
}

// bodyBuffer returns n bytes for an incoming body, reusing a released body when one fits.
func (c *Connector) bodyBuffer(n int) []byte {
	select {
	case b := <-c.free:
		if cap(b) >= n {
			return b[:n]
		}
	default:
	}
	return make([]byte, n)
}

// idleReader renews the read deadline before every read, so that only silence (not a long
// session) fails the receive side.
type idleReader struct {
	conn *net.TCPConn
	idle time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	if err := r.conn.SetReadDeadline(time.Now().Add(r.idle)); err != nil {
		return 0, err
	}
	return r.conn.Read(p)
}
