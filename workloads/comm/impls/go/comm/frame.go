// Package comm is the Go implementation of the msgbench comm workload (CommCompare): the
// RustComm wire format, a server that echoes every message (Listener + handler) and the
// client-side Connector with send and receive goroutines. See workloads/comm/SPEC.md.
package comm

import (
	"encoding/binary"
	"fmt"
)

// HeaderLen is the size of a frame header: one type byte and a big-endian u64 body length.
const HeaderLen = 9

// Message types of the wire format. Any other type byte is a valid message too: the server
// echoes every type except END and QUIT as REPLY.
const (
	TypeDefault byte = 0
	TypeText    byte = 1
	TypeReply   byte = 2
	TypeEnd     byte = 4
	TypeQuit    byte = 8
	TypeFlush   byte = 16
	TypeString  byte = 64
	TypeBinary  byte = 128
)

// DefaultMaxBody is the server's default cap on an announced body length (64 MiB).
const DefaultMaxBody = 64 << 20

// PutHeader writes the header of a frame with the given type and body length into dst, which
// must hold at least HeaderLen bytes.
func PutHeader(dst []byte, typ byte, bodyLen uint64) {
	_ = dst[HeaderLen-1] // one bounds check instead of nine
	dst[0] = typ
	binary.BigEndian.PutUint64(dst[1:HeaderLen], bodyLen)
}

// ParseHeader reads a frame header from the first HeaderLen bytes of src.
func ParseHeader(src []byte) (typ byte, bodyLen uint64) {
	_ = src[HeaderLen-1]
	return src[0], binary.BigEndian.Uint64(src[1:HeaderLen])
}

// EndsSession reports whether a message of this type ends the client's session: the server
// answers END and QUIT alike, with one header-only END, and closes the connection.
func EndsSession(typ byte) bool { return typ == TypeEnd || typ == TypeQuit }

// TooLargeError is a body length above the receiver's cap. It is detected from the header
// alone, before anything is allocated or read for the body.
type TooLargeError struct {
	Length uint64 // the announced body length
	Max    uint64 // the cap it exceeds
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("body length %d exceeds the cap of %d bytes", e.Length, e.Max)
}

// CheckBodyLen returns a *TooLargeError when bodyLen is above maxBody.
func CheckBodyLen(bodyLen, maxBody uint64) error {
	if bodyLen > maxBody {
		return &TooLargeError{Length: bodyLen, Max: maxBody}
	}
	return nil
}
