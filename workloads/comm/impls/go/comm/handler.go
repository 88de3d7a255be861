package comm

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// ReadBufferSize is the size of each connection's read buffer. One read(2) takes in up to
// this much, and every complete frame in it is answered before the next read, so a client
// that streams 4 KiB messages gets ~16 replies per write. A frame larger than the buffer is
// streamed through it.
const ReadBufferSize = 64 << 10

// lingerTimeout bounds how long a closing connection waits for its client to close after
// the server has sent its last byte (see closeGracefully).
const lingerTimeout = time.Second

// ErrTruncated is EOF inside a frame: the connection is closed with nothing more sent.
var ErrTruncated = errors.New("EOF inside a frame")

// sessionEnd says how a session ended when it ended without an error.
type sessionEnd int

const (
	endByEOF     sessionEnd = iota // the client closed (or half-closed) at a frame boundary
	endByMessage                   // the client sent END or QUIT; END has been sent back
)

// readerPool recycles the 64 KiB read buffers of finished connections.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, ReadBufferSize) }}

// handler runs one client's session: frames are read through a large bufio.Reader and each
// is echoed as REPLY through a FrameBatch, in order. Small bodies are copied into the batch;
// larger ones are written straight from the read buffer (zero copy), which is why the batch
// is always flushed before the reader may refill that buffer.
type handler struct {
	conn    net.Conn
	r       *bufio.Reader
	out     *FrameBatch
	maxBody uint64
}

// runSession runs the session on conn until it ends, without closing conn (see
// closeSession). The error is nil for a session that ended by END, QUIT or EOF at a frame
// boundary; otherwise it says why the connection is dropped (a *TooLargeError, ErrTruncated,
// or an I/O error).
func runSession(conn net.Conn, maxBody uint64) (sessionEnd, error) {
	r := readerPool.Get().(*bufio.Reader)
	r.Reset(conn)
	h := handler{conn: conn, r: r, out: NewFrameBatch(conn), maxBody: maxBody}
	end, err := h.run()
	r.Reset(nil)
	readerPool.Put(r)
	return end, err
}

// closeSession closes conn as the way its session ended requires.
func closeSession(conn net.Conn, end sessionEnd, err error) {
	switch {
	case err != nil:
		conn.Close() // at once: a refused or broken session gets nothing more
	case end == endByMessage:
		closeGracefully(conn)
	default:
		conn.Close() // the client has closed its side already: nothing is left to read
	}
}

// run echoes frames until the session ends.
func (h *handler) run() (sessionEnd, error) {
	for {
		// Replies may point into the read buffer: write them out before it can be refilled.
		if h.r.Buffered() < HeaderLen {
			if err := h.out.Flush(); err != nil {
				return 0, err
			}
		}
		hdr, err := h.r.Peek(HeaderLen)
		if err != nil {
			if err == io.EOF && len(hdr) == 0 {
				return endByEOF, nil
			}
			return 0, truncated(err)
		}
		typ, bodyLen := ParseHeader(hdr)
		if err := CheckBodyLen(bodyLen, h.maxBody); err != nil {
			// Replies to the frames before this one are owed; then the connection is dropped
			// without reading (or allocating) anything for the announced body.
			if ferr := h.out.Flush(); ferr != nil {
				return 0, ferr
			}
			return 0, err
		}
		if EndsSession(typ) {
			if err := h.out.Add(TypeEnd, nil); err != nil {
				return 0, err
			}
			return endByMessage, h.out.Flush()
		}
		frameLen := HeaderLen + int(bodyLen) // bodyLen <= maxBody, which main keeps below MaxInt
		if frameLen > h.r.Size() {
			if err := h.stream(int(bodyLen)); err != nil {
				return 0, err
			}
			continue
		}
		if h.r.Buffered() < frameLen {
			if err := h.out.Flush(); err != nil {
				return 0, err
			}
			if _, err := h.r.Peek(frameLen); err != nil {
				return 0, truncated(err)
			}
		}
		frame, _ := h.r.Peek(frameLen) // buffered: no read, no copy
		if err := h.out.Add(TypeReply, frame[HeaderLen:]); err != nil {
			return 0, err
		}
		_, _ = h.r.Discard(frameLen) // frame stays valid until the next refill
	}
}

// stream echoes a frame whose body is larger than the read buffer: the reply header goes out
// with the part of the body already buffered, then the rest is forwarded one buffer-full at
// a time as it arrives, so memory stays bounded by the buffer, not by the body.
func (h *handler) stream(bodyLen int) error {
	if err := h.out.Flush(); err != nil {
		return err
	}
	_, _ = h.r.Discard(HeaderLen)
	var hdr [HeaderLen]byte
	PutHeader(hdr[:], TypeReply, uint64(bodyLen))
	pending := hdr[:] // the header rides along with the first chunk
	for bodyLen > 0 {
		if h.r.Buffered() == 0 {
			if _, err := h.r.Peek(1); err != nil {
				return truncated(err)
			}
		}
		chunk, _ := h.r.Peek(min(h.r.Buffered(), bodyLen))
		var err error
		if pending != nil {
			bufs := net.Buffers{pending, chunk}
			_, err = bufs.WriteTo(h.conn)
			pending = nil
		} else {
			_, err = h.conn.Write(chunk)
		}
		if err != nil {
			return err
		}
		_, _ = h.r.Discard(len(chunk))
		bodyLen -= len(chunk)
	}
	return nil
}

// truncated maps EOF in the middle of a frame to ErrTruncated and keeps other read errors.
func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return ErrTruncated
	}
	return err
}

// closeGracefully ends a session the server chose to end (END/QUIT): it sends FIN after the
// last reply, then reads and discards until the client closes (or lingerTimeout passes)
// before closing. Closing a socket that still has unread input makes the kernel send RST,
// which can destroy replies the client has not read yet.
func closeGracefully(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_ = tc.SetReadDeadline(time.Now().Add(lingerTimeout))
		var sink [4096]byte
		for {
			if _, err := tc.Read(sink[:]); err != nil {
				break
			}
		}
	}
	conn.Close()
}
