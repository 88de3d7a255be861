package main

// protocol.go: RESP2 framing. The request parser cuts requests out of a connection's read
// buffer (multibulk `*N\r\n$len\r\n...` and inline `PING\r\n` forms) and the append* helpers
// encode replies into a connection's output buffer. Every accept/reject decision copies
// redis 7.0.15's networking.c, because the differential suite compares reply bytes, including
// the error text sent just before a connection is closed for a protocol error.

import (
	"math"
	"strconv"
	"sync"
)

const (
	// inlineMax is PROTO_INLINE_MAX_SIZE: an inline request line, or a `*`/`$` header
	// line, longer than this without its terminator is a protocol error.
	inlineMax = 64 << 10
	// bulkMax is proto-max-bulk-len: the largest bulk string a client may send.
	bulkMax = 512 << 20
	// multibulkMax is INT_MAX, the largest argument count redis accepts.
	multibulkMax = math.MaxInt32

	// readChunk is the read buffer's starting size and the least free space offered to
	// each read(2): a -P 16 batch of small requests fits in one read, and a request
	// larger than this grows the buffer only as its bytes arrive.
	readChunk = 16 << 10
	// keepReadBuffer is the largest read buffer kept once it has been drained: a buffer
	// grown for one huge request is dropped instead of being pinned by the connection.
	// A client whose reads keep filling the buffer (batches of 1 KiB values) gets one up
	// to this size.
	keepReadBuffer = 64 << 10
	// argsAhead bounds how many argument slots are reserved before the arguments arrive,
	// so `*2147483647\r\n` costs nothing until its arguments are actually sent.
	argsAhead = 1024
)

// parseStatus is what requestReader.next found at the head of the buffer.
type parseStatus int

const (
	// needMore: the buffer holds no complete request; read more bytes.
	needMore parseStatus = iota
	// gotRequest: args holds a complete request (possibly zero arguments: `*0`, `*-1` or
	// an empty inline line, which redis skips without a reply).
	gotRequest
	// protocolError: protoErr holds the error reply; the connection must be closed
	// after the replies gathered so far (and this one) are written.
	protocolError
)

// span is one argument's position in the read buffer (offsets survive compaction; slices
// would not).
type span struct{ start, end int }

// requestReader owns a connection's read buffer and parses requests out of it. Arguments
// returned by next alias the buffer (or, for inline requests with escapes, a scratch
// buffer) and stay valid until the next call to readSpace.
//
// A multibulk request is parsed incrementally, as redis does: the count and each bulk
// header are consumed once, so a request arriving a byte at a time is not re-parsed from
// its start on every read.
type requestReader struct {
	buf []byte // buf[:len(buf)] holds received bytes; unparsed ones start at pos
	pos int

	// reqStart is where the request being parsed begins; bytes before it are consumed.
	reqStart int
	// scanned is how far the current header or inline line has been searched for its
	// terminator, so a long line arriving in small reads is searched once, not once per
	// read. It may lag behind pos (searches start at the larger of the two).
	scanned int

	// State of a multibulk request in progress (pending > 0).
	pending int    // arguments still to come
	bulkLen int    // length of the next argument, -1 while its `$` header is unread
	spans   []span // arguments parsed so far

	// offered is the size of the last read space; greedy records that a read filled it.
	offered int
	greedy  bool

	args    [][]byte // the request handed out by next
	scratch []byte   // unescaped bytes of inline arguments

	protoErr string // the error reply (without "-" and CRLF) when next returns protocolError
}

func newRequestReader() *requestReader {
	return &requestReader{buf: make([]byte, 0, readChunk), bulkLen: -1}
}

// readerPool keeps the readers of closed connections: every redis-benchmark test opens 50
// new connections, and a recycled reader spares allocating and zeroing its 16 KiB buffer.
var readerPool = sync.Pool{New: func() any { return newRequestReader() }}

func getRequestReader() *requestReader { return readerPool.Get().(*requestReader) }

// putRequestReader recycles r, unless it holds a buffer grown beyond the usual size.
func putRequestReader(r *requestReader) {
	if cap(r.buf) > keepReadBuffer {
		return
	}
	*r = requestReader{buf: r.buf[:0], bulkLen: -1, spans: r.spans[:0], args: r.args[:0], scratch: r.scratch[:0]}
	clear(r.args[:cap(r.args)]) // drop references into old buffers
	readerPool.Put(r)
}

// readSpace returns the free tail of the buffer for the next read(2), first compacting
// consumed bytes away and growing the buffer when the request in progress needs more room
// than is free. Growth doubles what is there, so a request's memory follows its bytes.
func (r *requestReader) readSpace() []byte {
	if r.reqStart == len(r.buf) && r.pending == 0 {
		// Everything consumed: start over, dropping a buffer a huge request grew.
		if cap(r.buf) > keepReadBuffer {
			r.buf = make([]byte, 0, readChunk)
		}
		r.buf, r.pos, r.reqStart, r.scanned = r.buf[:0], 0, 0, 0
	}
	if r.greedy && cap(r.buf) < keepReadBuffer {
		// The last read filled all the space offered: this client sends batches larger
		// than the buffer, so offer more (up to keepReadBuffer) and save it a read per batch.
		grown := make([]byte, len(r.buf), min(2*cap(r.buf), keepReadBuffer))
		copy(grown, r.buf)
		r.buf = grown
	}
	r.greedy = false
	if cap(r.buf)-len(r.buf) >= readChunk/2 {
		r.offered = cap(r.buf) - len(r.buf)
		return r.buf[len(r.buf):cap(r.buf)]
	}
	// Move the unconsumed tail to the front.
	if shift := r.reqStart; shift > 0 {
		n := copy(r.buf, r.buf[shift:])
		r.buf = r.buf[:n]
		r.pos -= shift
		r.scanned -= shift
		r.reqStart = 0
		for i := range r.spans {
			r.spans[i].start -= shift
			r.spans[i].end -= shift
		}
	}
	if cap(r.buf)-len(r.buf) < readChunk/2 {
		grown := make([]byte, len(r.buf), max(2*cap(r.buf), len(r.buf)+readChunk))
		copy(grown, r.buf)
		r.buf = grown
	}
	r.offered = cap(r.buf) - len(r.buf)
	return r.buf[len(r.buf):cap(r.buf)]
}

// filled records that n bytes were read into the slice readSpace returned.
func (r *requestReader) filled(n int) {
	r.buf = r.buf[:len(r.buf)+n]
	r.greedy = n == r.offered
}

// next parses the request at the head of the buffer.
func (r *requestReader) next() parseStatus {
	if r.pending == 0 {
		if r.pos == len(r.buf) {
			return needMore
		}
		r.reqStart = r.pos
		if r.buf[r.pos] != '*' {
			return r.inline()
		}
		return r.multibulkCount()
	}
	return r.bulks()
}

// lineEnd finds the terminator c of the line starting at r.pos, as redis's strchr on its
// NUL-terminated query buffer: a NUL byte before the terminator hides it. Returns -1 when
// there is no usable terminator yet.
func (r *requestReader) lineEnd(c byte) int {
	from := max(r.scanned, r.pos)
	for i := from; i < len(r.buf); i++ {
		switch r.buf[i] {
		case c:
			return i
		case 0:
			r.scanned = i // keep resuming here: nothing past a NUL is ever seen
			return -1
		}
	}
	r.scanned = len(r.buf)
	return -1
}

// header reads a `*` or `$` header line: the number after its first byte. A line needs its
// '\r' plus one more byte (redis skips two bytes without checking the second is '\n').
//
// On gotRequest, next is where the following line starts; the caller consumes the line by
// moving r.pos there once it has accepted the header.
func (r *requestReader) header(tooBig string) (n int64, ok bool, next int, status parseStatus) {
	cr := r.lineEnd('\r')
	if cr < 0 {
		if len(r.buf)-r.pos > inlineMax {
			return 0, false, 0, r.fail("Protocol error: too big " + tooBig + " count string")
		}
		return 0, false, 0, needMore
	}
	if cr+1 >= len(r.buf) {
		return 0, false, 0, needMore
	}
	if cr > r.pos { // a line that is just "\r": no number (and, for a bulk, no '$' either)
		n, ok = parseInt(r.buf[r.pos+1 : cr])
	}
	return n, ok, cr + 2, gotRequest
}

// quickHeader parses a header line of the usual shape in one pass: the prefix byte, a
// canonical decimal of 1 to 10 digits, '\r' and one more byte. ok is false for anything
// else, which the general path (header) then judges byte for byte as redis does.
func (r *requestReader) quickHeader() (n int64, next int, ok bool) {
	b := r.buf
	p := r.pos + 1
	// Most headers are `*1`..`*9` or `$1`..`$99`: decide those without a loop.
	if p+3 < len(b) {
		c0, c1 := b[p], b[p+1]
		if c0 >= '1' && c0 <= '9' {
			if c1 == '\r' {
				return int64(c0 - '0'), p + 3, true
			}
			if c1 >= '0' && c1 <= '9' && b[p+2] == '\r' {
				return int64(c0-'0')*10 + int64(c1-'0'), p + 4, true
			}
		}
	}
	i := p
	for end := min(len(b), p+11); i < end && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	digits := i - p
	if digits == 0 || digits > 10 || i+1 >= len(b) || b[i] != '\r' || b[p] == '0' && digits > 1 {
		return 0, 0, false
	}
	return n, i + 2, true
}

func (r *requestReader) multibulkCount() parseStatus {
	n, next, ok := r.quickHeader()
	if !ok {
		var st parseStatus
		if n, ok, next, st = r.header("mbulk"); st != gotRequest {
			return st
		}
	}
	if !ok || n > multibulkMax {
		return r.fail("Protocol error: invalid multibulk length")
	}
	r.pos = next
	if n <= 0 { // `*0`, `*-1` (and any negative count): nothing to run
		r.args = r.args[:0]
		r.reqStart = r.pos
		return gotRequest
	}
	r.pending = int(n)
	r.bulkLen = -1
	r.spans = r.spans[:0]
	if cap(r.spans) < min(r.pending, argsAhead) {
		r.spans = make([]span, 0, min(r.pending, argsAhead))
	}
	return r.bulks()
}

func (r *requestReader) bulks() parseStatus {
	// This loop runs for every argument received: its state lives in locals, written back
	// to r whenever it returns.
	buf, pos, pending, bulkLen, spans := r.buf, r.pos, r.pending, r.bulkLen, r.spans
	status := gotRequest
	for pending > 0 {
		if bulkLen < 0 {
			// `$1`..`$99` decided here; anything else by quickHeader or the general path.
			if pos+5 < len(buf) && buf[pos] == '$' && buf[pos+1] >= '1' && buf[pos+1] <= '9' {
				if buf[pos+2] == '\r' {
					bulkLen, pos = int(buf[pos+1]-'0'), pos+4
				} else if buf[pos+2] >= '0' && buf[pos+2] <= '9' && buf[pos+3] == '\r' {
					bulkLen, pos = int(buf[pos+1]-'0')*10+int(buf[pos+2]-'0'), pos+5
				}
			}
			if bulkLen < 0 {
				r.pos = pos
				if status = r.bulkHeader(); status != gotRequest {
					break
				}
				pos, bulkLen = r.pos, r.bulkLen
			}
		}
		// The argument and the two bytes after it (redis does not check they are CRLF).
		if len(buf)-pos < bulkLen+2 {
			status = needMore
			break
		}
		spans = append(spans, span{pos, pos + bulkLen})
		pos += bulkLen + 2
		bulkLen = -1
		pending--
	}
	if status == protocolError {
		return status
	}
	r.pos, r.pending, r.bulkLen, r.spans = pos, pending, bulkLen, spans
	if status == needMore {
		return status
	}
	args := r.args[:0]
	for _, sp := range spans {
		args = append(args, buf[sp.start:sp.end:sp.end])
	}
	r.args = args
	r.reqStart = pos
	return gotRequest
}

// bulkHeader reads the `$len` line at r.pos into r.bulkLen (moving r.pos past it).
func (r *requestReader) bulkHeader() parseStatus {
	if r.pos == len(r.buf) {
		return needMore
	}
	n, next, ok := int64(0), 0, false
	if r.buf[r.pos] == '$' {
		n, next, ok = r.quickHeader()
	}
	if !ok {
		var st parseStatus
		if n, ok, next, st = r.header("bulk"); st != gotRequest {
			return st
		}
		if c := r.buf[r.pos]; c != '$' {
			return r.fail("Protocol error: expected '$', got '" + string([]byte{c}) + "'")
		}
	}
	if !ok || n < 0 || n > bulkMax {
		return r.fail("Protocol error: invalid bulk length")
	}
	r.pos, r.bulkLen = next, int(n)
	return gotRequest
}

func (r *requestReader) inline() parseStatus {
	nl := r.lineEnd('\n')
	if nl < 0 {
		if len(r.buf)-r.pos > inlineMax {
			return r.fail("Protocol error: too big inline request")
		}
		return needMore
	}
	line := r.buf[r.pos:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if !r.splitArgs(line) {
		return r.fail("Protocol error: unbalanced quotes in request")
	}
	r.pos = nl + 1
	r.scanned = r.pos
	r.reqStart = r.pos
	return gotRequest
}

func (r *requestReader) fail(msg string) parseStatus {
	r.protoErr = msg
	return protocolError
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexValue(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// splitArgs splits an inline request line into r.args the way redis's sdssplitargs does:
// blanks separate arguments; "double quotes" understand \xHH, \n, \r, \t, \b, \a and
// \<any>; 'single quotes' understand only \'; a closing quote must be followed by a blank
// or the end of the line; a quote may also open in the middle of an argument. It returns
// false for unbalanced quotes. Arguments without quotes alias the line itself.
func (r *requestReader) splitArgs(line []byte) bool {
	r.args = r.args[:0]
	r.scratch = r.scratch[:0]
	type piece struct {
		start, end int
		copied     bool // in scratch rather than in line
	}
	var pieces [8]piece
	list := pieces[:0]
	i, n := 0, len(line)
	for {
		for i < n && isSpace(line[i]) {
			i++
		}
		if i == n {
			break
		}
		// Fast path: an argument with no quote in it is a plain slice of the line.
		start := i
		for i < n && line[i] != ' ' && line[i] != '\n' && line[i] != '\r' && line[i] != '\t' &&
			line[i] != '"' && line[i] != '\'' {
			i++
		}
		if i == n || line[i] != '"' && line[i] != '\'' {
			list = append(list, piece{start, i, false})
			continue
		}
		// Slow path: unescape into scratch, starting with what was already read.
		from := len(r.scratch)
		r.scratch = append(r.scratch, line[start:i]...)
		inDouble, inSingle := false, false
		for done := false; !done; {
			var c byte
			if i < n {
				c = line[i]
			}
			switch {
			case inDouble:
				switch {
				case c == '\\' && i+3 < n && line[i+1] == 'x' && isHexDigit(line[i+2]) && isHexDigit(line[i+3]):
					r.scratch = append(r.scratch, hexValue(line[i+2])<<4|hexValue(line[i+3]))
					i += 3
				case c == '\\' && i+1 < n:
					i++
					switch e := line[i]; e {
					case 'n':
						r.scratch = append(r.scratch, '\n')
					case 'r':
						r.scratch = append(r.scratch, '\r')
					case 't':
						r.scratch = append(r.scratch, '\t')
					case 'b':
						r.scratch = append(r.scratch, '\b')
					case 'a':
						r.scratch = append(r.scratch, '\a')
					default:
						r.scratch = append(r.scratch, e)
					}
				case c == '"':
					if i+1 < n && !isSpace(line[i+1]) {
						return false
					}
					done = true
				case i == n:
					return false
				default:
					r.scratch = append(r.scratch, c)
				}
			case inSingle:
				switch {
				case c == '\\' && i+1 < n && line[i+1] == '\'':
					i++
					r.scratch = append(r.scratch, '\'')
				case c == '\'':
					if i+1 < n && !isSpace(line[i+1]) {
						return false
					}
					done = true
				case i == n:
					return false
				default:
					r.scratch = append(r.scratch, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t':
					done = true
				case '"':
					inDouble = true
				case '\'':
					inSingle = true
				default:
					if i == n {
						done = true
					} else {
						r.scratch = append(r.scratch, c)
					}
				}
			}
			if i < n {
				i++
			}
		}
		list = append(list, piece{from, len(r.scratch), true})
	}
	// Slices are taken only now: scratch may have moved while it grew.
	for _, p := range list {
		if p.copied {
			r.args = append(r.args, r.scratch[p.start:p.end:p.end])
		} else {
			r.args = append(r.args, line[p.start:p.end:p.end])
		}
	}
	return true
}

// parseInt is redis's string2ll: an optional '-', no '+', no leading zeros, no spaces,
// at most 20 characters, within int64. It reads arguments ([]byte) and stored values
// (string) alike.
func parseInt[T string | []byte](b T) (int64, bool) {
	n := len(b)
	if n == 0 || n >= 21 {
		return 0, false
	}
	if n == 1 && b[0] == '0' {
		return 0, true
	}
	i := 0
	neg := b[0] == '-'
	if neg {
		i = 1
		if n == 1 {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < n; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		if v > math.MaxUint64-uint64(c-'0') {
			return 0, false
		}
		v += uint64(c - '0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// --- Replies ---------------------------------------------------------------------------

const crlf = "\r\n"

func appendSimple(b []byte, s string) []byte {
	b = append(b, '+')
	b = append(b, s...)
	return append(b, crlf...)
}

// appendError appends an error reply; msg starts with its code ("ERR ...", "WRONGTYPE ...").
// Like redis, CR and LF inside the message become spaces so the reply stays one line.
func appendError(b []byte, msg string) []byte {
	b = append(b, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, crlf...)
}

func appendInt(b []byte, n int64) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, n, 10)
	return append(b, crlf...)
}

func appendLen(b []byte, prefix byte, n int) []byte {
	if uint(n) < 10 {
		return append(b, prefix, byte('0'+n), '\r', '\n')
	}
	b = append(b, prefix)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, crlf...)
}

func appendArrayLen(b []byte, n int) []byte { return appendLen(b, '*', n) }

func appendBulk(b []byte, s []byte) []byte {
	b = appendLen(b, '$', len(s))
	b = append(b, s...)
	return append(b, crlf...)
}

func appendBulkString(b []byte, s string) []byte {
	b = appendLen(b, '$', len(s))
	b = append(b, s...)
	return append(b, crlf...)
}

// appendStrings appends the strings of ss (the bulk-encoded elements of an LRANGE reply).
func appendStrings(b []byte, ss []string) []byte {
	for _, s := range ss {
		b = append(b, s...)
	}
	return b
}

func appendBulkInt(b []byte, n int64) []byte {
	var tmp [20]byte
	return appendBulk(b, strconv.AppendInt(tmp[:0], n, 10))
}

func appendNull(b []byte) []byte { return append(b, "$-1\r\n"...) }

func appendNullArray(b []byte) []byte { return append(b, "*-1\r\n"...) }

// appendDouble is redis 7.0's addReplyDouble in RESP2: a bulk string of "%.17g", with
// infinities spelled "inf" and "-inf".
func appendDouble(b []byte, d float64) []byte {
	var tmp [32]byte
	return appendBulk(b, formatDouble(tmp[:0], d))
}
