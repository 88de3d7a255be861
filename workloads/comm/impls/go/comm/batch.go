package comm

import (
	"io"
	"net"
	"sync"
)

// copyLimit is the body size below which a frame is copied into the staging buffer rather
// than referenced: for small bodies a memcpy is cheaper than another iovec, and a run of
// small frames then goes out as one contiguous iovec.
const copyLimit = 1024

// stageSize is the size of a staging buffer; it holds the headers of large frames and whole
// small frames until the next Flush.
const stageSize = 64 << 10

// stagePool shares staging buffers between connections: a FrameBatch holds one only between
// its first Add and its Flush, never while its goroutine waits for input, so an idle
// connection costs no staging memory.
var stagePool = sync.Pool{New: func() any { b := make([]byte, 0, stageSize); return &b }}

// FrameBatch collects outgoing frames and writes them with one writev(2) per Flush
// (net.Buffers on a *net.TCPConn), so header and body, and many frames, share a system call.
//
// A large body is referenced, not copied: the caller must leave it unchanged until the next
// Flush (or until the Add that flushes because the staging buffer is full).
type FrameBatch struct {
	w     io.Writer
	stage *[]byte     // from stagePool while frames are pending; its capacity never grows
	mark  int         // start of the staged bytes no iovec covers yet
	iov   [][]byte    // the pending iovecs, in order
	bufs  net.Buffers // WriteTo consumes its receiver; a field so that it does not escape per call
	size  int         // bytes pending
}

// NewFrameBatch returns a batch writing to w.
func NewFrameBatch(w io.Writer) *FrameBatch { return &FrameBatch{w: w} }

// Pending returns the number of bytes added since the last Flush.
func (b *FrameBatch) Pending() int { return b.size }

// Add appends one frame. It may Flush first when the staging buffer is full.
func (b *FrameBatch) Add(typ byte, body []byte) error {
	small := len(body) < copyLimit
	need := HeaderLen
	if small {
		need += len(body)
	}
	if b.stage != nil && cap(*b.stage)-len(*b.stage) < need {
		if err := b.Flush(); err != nil {
			return err
		}
	}
	if b.stage == nil {
		b.stage = stagePool.Get().(*[]byte)
	}
	s := *b.stage
	n := len(s)
	s = s[:n+HeaderLen]
	PutHeader(s[n:], typ, uint64(len(body)))
	if small {
		s = append(s, body...) // within capacity: checked above
	} else {
		b.iov = append(b.iov, s[b.mark:], body)
		b.mark = len(s)
	}
	*b.stage = s
	b.size += HeaderLen + len(body)
	return nil
}

// Flush writes every pending frame (one writev, or one write when the frames are contiguous)
// and releases the staging buffer.
func (b *FrameBatch) Flush() error {
	if b.stage == nil {
		return nil
	}
	s := *b.stage
	if b.mark < len(s) {
		b.iov = append(b.iov, s[b.mark:])
	}
	var err error
	if len(b.iov) == 1 {
		_, err = b.w.Write(b.iov[0])
	} else {
		b.bufs = b.iov
		_, err = b.bufs.WriteTo(b.w)
		b.bufs = nil
	}
	clear(b.iov) // drop references to the callers' bodies
	b.iov = b.iov[:0]
	*b.stage = s[:0]
	stagePool.Put(b.stage)
	b.stage, b.mark, b.size = nil, 0, 0
	return err
}
