package capnpbench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	capnp "capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/packed"
)

// The reader limits of SPEC §6, which are libcapnp's defaults (ReaderOptions and
// serialize.c++), set explicitly here rather than left to go-capnp's own defaults: the
// library counts the traversal limit in bytes, and its stream Decoder counts the size cap
// with the segment table and lets 512 segments through, so the frame readers below check
// the table themselves before anything is allocated for the message.
const (
	maxSegments    = 511     // segments per message: fewer than 512, as libcapnp
	maxWords       = 8 << 20 // words per message, summed from the segment table (64 MiB)
	traversalLimit = maxWords * 8
	nestingLimit   = 64
)

// maxHeaderBytes is the largest segment table: a count word and 511 sizes.
const maxHeaderBytes = (4 + 4*maxSegments + 7) &^ 7

// ioBufferSize is the buffer of each end of a pipe: large enough that most messages move in
// one write(2) and one read(2).
const ioBufferSize = 64 << 10

var (
	errTruncated = errors.New("end of input inside a message")
	errPackedRun = errors.New("packed run continues past the end of the message")
)

// frameSize checks a segment table against the limits and returns the size of the whole
// framed message (table and segments) in bytes. hdr holds at least the table's first word;
// need > 0 asks for that many bytes of table first.
func frameSize(hdr []byte) (total, need int, err error) {
	count := uint64(binary.LittleEndian.Uint32(hdr)) + 1
	if count > maxSegments {
		return 0, 0, fmt.Errorf("segment table of %d segments (the limit is %d)", count, maxSegments)
	}
	hdrLen := int((4 + 4*count + 7) &^ 7)
	if len(hdr) < hdrLen {
		return 0, hdrLen, nil
	}
	var words uint64
	for i := range count {
		words += uint64(binary.LittleEndian.Uint32(hdr[4+4*i:]))
	}
	if words > maxWords {
		return 0, 0, fmt.Errorf("message of %d words (the limit is %d)", words, maxWords)
	}
	return hdrLen + int(words)*8, 0, nil
}

// messageReader reads framed messages in place, without copying their bytes, as messages
// with the traversal and nesting limits set. A message it returns stays valid until its next
// read.
type messageReader struct {
	// One-segment messages (every one this program writes) are read through one Message over
	// one read-only arena, both reused, as the library's own BenchmarkUnmarshal_Reuse does:
	// nothing is allocated per message.
	msg   capnp.Message
	arena *capnp.ReadOnlySingleSegment
	// Other messages go through capnp.Unmarshal, which splits the segments in place too.
	multi *capnp.Message
}

func newMessageReader() *messageReader {
	r := &messageReader{arena: capnp.NewReadOnlySingleSegment(nil)}
	setLimits(&r.msg) // kept by Message.Reset
	return r
}

func setLimits(m *capnp.Message) {
	m.TraverseLimit = traversalLimit
	m.DepthLimit = nestingLimit
}

// read checks the segment table of frame against the limits and returns the message.
func (r *messageReader) read(frame []byte) (*capnp.Message, error) {
	if r.multi != nil {
		r.multi.Release()
		r.multi = nil
	}
	r.msg.Release() // also empties the arena, which ReplaceData requires
	if len(frame) < 8 {
		return nil, errTruncated
	}
	total, need, err := frameSize(frame)
	if err == nil && need > 0 {
		if len(frame) < need {
			return nil, errTruncated
		}
		total, _, err = frameSize(frame)
	}
	if err != nil {
		return nil, err
	}
	if len(frame) != total {
		return nil, fmt.Errorf("%d bytes framed as a message of %d", len(frame), total)
	}
	if binary.LittleEndian.Uint32(frame) == 0 {
		r.arena.ReplaceData(frame[8:])
		if _, err := r.msg.Reset(r.arena); err != nil {
			return nil, err
		}
		return &r.msg, nil
	}
	m, err := capnp.Unmarshal(frame)
	if err != nil {
		return nil, err
	}
	setLimits(m)
	r.multi = m
	return m, nil
}

// frameReader reads framed messages from a stream, packed or not, into one buffer it reuses,
// checking the segment table before it allocates for the body.
type frameReader struct {
	src    *bufio.Reader
	packed bool
	unpack unpacker
	buf    []byte
	plain  int64 // bytes consumed from src when not packed (the unpacker counts its own)
}

func newFrameReader(r io.Reader, isPacked bool) *frameReader {
	src := bufio.NewReaderSize(r, ioBufferSize)
	return &frameReader{src: src, packed: isPacked, unpack: unpacker{src: src},
		buf: make([]byte, 0, ioBufferSize)}
}

// consumed is the number of bytes read from the stream so far, as they were written (packed
// when packed).
func (f *frameReader) consumed() int64 {
	if f.packed {
		return f.unpack.n
	}
	return f.plain
}

// next returns the next framed message, valid until the next call. The error is io.EOF only
// at a clean end of input between two messages.
func (f *frameReader) next() ([]byte, error) {
	buf := f.buf[:8]
	if err := f.fill(buf); err == io.EOF {
		return nil, io.EOF // nothing of a next message
	} else if err != nil {
		return nil, notEOF(err)
	}
	total, need, err := frameSize(buf)
	if err == nil && need > 0 {
		buf = f.buf[:need] // need <= maxHeaderBytes <= ioBufferSize <= cap
		if err = f.fill(buf[8:]); err != nil {
			return nil, notEOF(err)
		}
		total, _, err = frameSize(buf)
	}
	if err != nil {
		return nil, err
	}
	if total > cap(f.buf) {
		// Only now, with the size within the limits, is the body's buffer grown; it is kept
		// for the messages after.
		grown := make([]byte, total)
		copy(grown, buf)
		f.buf = grown[:0]
	}
	start := len(buf)
	buf = f.buf[:total]
	if err := f.fill(buf[start:]); err != nil {
		return nil, notEOF(err)
	}
	if f.packed && f.unpack.pending() {
		return nil, errPackedRun
	}
	return buf, nil
}

// fill reads exactly len(p) bytes of the message, unpacking them when packed; io.EOF only if
// the stream ended before the first of them.
func (f *frameReader) fill(p []byte) error {
	if f.packed {
		return f.unpack.read(p)
	}
	n, err := io.ReadFull(f.src, p)
	f.plain += int64(n)
	return err
}

// notEOF turns the end of input, which is an error inside a message, into errTruncated.
func notEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// unpacker undoes Cap'n Proto packing (https://capnproto.org/encoding.html#packing) one
// message at a time. go-capnp's packed.Reader unpacks a stream without message boundaries,
// so a zero run or a verbatim run that goes on past the end of a message would silently
// become the start of the next one; libcapnp refuses it, and so does this unpacker: it keeps
// the run it is in, and pending() tells the frame reader a run outlives its message.
// FuzzUnpacker checks it against packed.Unpack.
type unpacker struct {
	src     *bufio.Reader
	zeros   int   // zero words still owed by the last 0x00 tag
	literal int   // verbatim words still owed by the last 0xff tag
	n       int64 // packed bytes consumed
}

func (u *unpacker) pending() bool { return u.zeros > 0 || u.literal > 0 }

// read fills p, a whole number of words, with unpacked words. The error is io.EOF only if the
// input ended before the first byte of p's words.
func (u *unpacker) read(p []byte) error {
	first := true
	for len(p) > 0 {
		switch {
		case u.zeros > 0:
			k := min(u.zeros, len(p)/8)
			clear(p[:k*8])
			p, u.zeros = p[k*8:], u.zeros-k
		case u.literal > 0:
			k := min(u.literal, len(p)/8)
			n, err := io.ReadFull(u.src, p[:k*8])
			u.n += int64(n)
			if err != nil {
				return io.ErrUnexpectedEOF
			}
			p, u.literal = p[k*8:], u.literal-k
		default:
			if n := u.buffered(p); n > 0 {
				p = p[n:]
				break
			}
			tag, err := u.word(p[:8])
			if err != nil {
				if first && err == io.EOF {
					return io.EOF
				}
				return io.ErrUnexpectedEOF
			}
			p = p[8:]
			if tag == 0x00 || tag == 0xff {
				// The run's length byte belongs to the tag: it is read now, so a message
				// that ends on such a word is known to end cleanly (a run of 0) or not.
				n, err := u.src.ReadByte()
				if err != nil {
					return io.ErrUnexpectedEOF
				}
				u.n++
				if tag == 0x00 {
					u.zeros = int(n)
				} else {
					u.literal = int(n)
				}
			}
		}
		first = false
	}
	return nil
}

// buffered unpacks into p as many words as the bytes already buffered hold, in one pass over
// the buffer (no call per word), and returns the number of bytes of p it filled. It stops
// where a word might not be whole in the buffer (a tag needs up to 8 bytes and a run length
// after it), leaving that word and any unfinished run to the caller.
func (u *unpacker) buffered(p []byte) int {
	buf, _ := u.src.Peek(u.src.Buffered()) // within what is buffered: never blocks
	c, out := 0, 0
	for len(p)-out >= 8 && len(buf)-c >= 10 {
		tag := buf[c]
		c++
		w := p[out : out+8 : out+8]
		// Branch-free: each byte is the next input byte or zero, as its tag bit says.
		for j := range 8 {
			bit := tag >> j & 1
			w[j] = buf[c] & -bit
			c += int(bit)
		}
		out += 8
		if tag == 0x00 {
			z := int(buf[c])
			c++
			k := min(z, (len(p)-out)/8)
			clear(p[out : out+k*8])
			out += k * 8
			if u.zeros = z - k; u.zeros > 0 {
				break
			}
		} else if tag == 0xff {
			l := int(buf[c])
			c++
			k := min(l, (len(p)-out)/8, (len(buf)-c)/8)
			copy(p[out:out+k*8], buf[c:])
			c += k * 8
			out += k * 8
			if u.literal = l - k; u.literal > 0 {
				break
			}
		}
	}
	_, _ = u.src.Discard(c)
	u.n += int64(c)
	return out
}

// word reads one tag and the nonzero bytes it announces into w (8 bytes), a byte at a time
// (only what the input holds is asked for: more might come only after our answer), and
// returns the tag; io.EOF if the input ends before the tag.
func (u *unpacker) word(w []byte) (byte, error) {
	tag, err := u.src.ReadByte()
	if err != nil {
		return 0, err
	}
	u.n++
	for j := range 8 {
		w[j] = 0
		if tag&(1<<j) != 0 {
			if w[j], err = u.src.ReadByte(); err != nil {
				return 0, io.ErrUnexpectedEOF
			}
			u.n++
		}
	}
	return tag, nil
}

// frameWriter writes messages to a stream through a buffer flushed once per message, packed
// by the library's packed.Writer (the segment table too) when asked.
type frameWriter struct {
	out *bufio.Writer
	cw  countingWriter
	enc *capnp.Encoder
}

// countingWriter counts the bytes a message takes on the stream (packed size when packed).
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newFrameWriter(w io.Writer, isPacked bool) *frameWriter {
	f := &frameWriter{out: bufio.NewWriterSize(w, ioBufferSize)}
	f.cw.w = f.out
	f.enc = newEncoder(&f.cw, isPacked)
	return f
}

func newEncoder(w io.Writer, isPacked bool) *capnp.Encoder {
	if isPacked {
		return capnp.NewPackedEncoder(w)
	}
	return capnp.NewEncoder(w)
}

// messageWords is the size of m as a reader will sum it from the segment table: its segments'
// words. A loop over the segments (one for this program's single-segment arenas), nothing
// copied.
func messageWords(m *capnp.Message) (uint64, error) {
	var words uint64
	for i := range m.NumSegments() {
		seg, err := m.Segment(capnp.SegmentID(i))
		if err != nil {
			return 0, err
		}
		words += uint64(len(seg.Data()) / 8)
	}
	return words, nil
}

// withinCap refuses a message beyond the 8 Mi-word cap every reader enforces (SPEC §6): a
// response no client could read is not written at all.
func withinCap(m *capnp.Message) error {
	words, err := messageWords(m)
	if err != nil {
		return err
	}
	if words > maxWords {
		return fmt.Errorf("a message of %d words, beyond the %d-word cap every reader enforces: not written",
			words, maxWords)
	}
	return nil
}

// write sends one message and flushes it; a message beyond the cap is an error before
// anything of it is written.
func (f *frameWriter) write(m *capnp.Message) error {
	if err := withinCap(m); err != nil {
		return err
	}
	if err := f.enc.Encode(m); err != nil {
		return err
	}
	return f.out.Flush()
}

// written is the number of bytes written so far.
func (f *frameWriter) written() int64 { return f.cw.n }

// unpackFlat unpacks a whole packed buffer with the library's packed.Unpack into dst's
// storage (bytes mode, where the buffer is this program's own).
func unpackFlat(dst, src []byte) ([]byte, error) {
	return packed.Unpack(dst[:0], src)
}
