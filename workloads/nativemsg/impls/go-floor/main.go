// The start-up settings of every Go host (the go host's main.go says what each one saves).
// They are kept here too, so that this floor starts as the lab's Go hosts start.

//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
//go:debug decoratemappings=0

// Command nativemsg-go-floor is the floor of a Go binary for the nativemsg workload: the C
// floor (impls/baseline/main.c) written as the cheapest Go program that does the same. It
// frames like a real host (4-byte length, 64 MiB request cap checked before anything is read
// or allocated, the same EOF rules and exit statuses) and parses no JSON: a body that starts
// with {"op":"echo" is sent back byte for byte (1 MiB reply cap), every other body gets a
// fixed {"op":"pong"}. Its replies on stdout are the C floor's, byte for byte.
//
// It imports package syscall only: os, fmt, encoding/binary or os/signal would add package
// initialisation to every spawn, and the point of this program is the runtime's own start-up
// cost. Nor does it touch SIGPIPE: the runtime's handler ignores SIGPIPE unless package os
// raises it after a failed write to fd 1 or 2, so a raw write(2) to a closed stdout fails with
// EPIPE and the floor exits 1, as the C floor does with SIGPIPE ignored.
package main

import "syscall"

const (
	header     = 4
	maxRequest = 64 << 20
	maxReply   = 1 << 20
	// chunkSize is one pipe's worth (64 KiB): a single read(2) drains a full pipe.
	chunkSize = 64 << 10
	prefix    = "nativemsg-go-floor: "
)

// The fixed reply frames: the length in native (little-endian) byte order, then the body.
// Package-level []byte of a constant string are laid out by the linker: no start-up work.
var (
	pong       = []byte("\x0d\x00\x00\x00" + pongBody)
	tooBig     = []byte("\x39\x00\x00\x00" + tooBigBody)
	echoPrefix = []byte(`{"op":"echo"`)
)

const (
	pongBody   = `{"op":"pong"}`
	tooBigBody = `{"error":"echo reply would exceed the 1 MiB reply limit"}`
)

// chunk is the first buffer, in the binary's BSS: no allocation at start-up; larger frames get
// a buffer of their own, dropped again once the stream has caught up.
var chunk [chunkSize]byte

// ioFunc is syscall.Read or syscall.Write in the program, memory in the fuzz test.
type ioFunc func(fd int, p []byte) (int, error)

// fail writes one line on stderr, in a single write(2), and returns the exit status of a
// broken stream. Best effort: if stderr is gone there is nobody left to tell.
func fail(write ioFunc, message string) int {
	var line [128]byte
	n := copy(line[:], prefix)
	n += copy(line[n:], message)
	line[n] = '\n'
	_, _ = write(2, line[:n+1])
	return 1
}

func writeAll(write ioFunc, p []byte) bool {
	for len(p) > 0 {
		n, err := write(1, p)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			return false
		}
		p = p[n:]
	}
	return true
}

// serve answers the frames read from fd 0 on fd 1 until EOF; first is the initial buffer. It
// returns the exit status: 0 at EOF on a frame boundary, 1 for a broken stream.
func serve(read, write ioFunc, first []byte) int {
	buf := first
	start, end := 0, 0
	for {
		if start == end {
			start, end = 0, 0
			buf = first // do not keep a 64 MiB buffer for the rest of the session
		}
		have := end - start
		need := header
		if have >= header {
			b := buf[start : start+header]
			n := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
			if n > maxRequest {
				return fail(write, "length prefix above the 64 MiB request limit")
			}
			need = header + int(n)
			if have >= need {
				frame := buf[start : start+need]
				start += need
				reply := pong
				if n >= uint32(len(echoPrefix)) && string(frame[header:header+len(echoPrefix)]) == string(echoPrefix) {
					// The request frame, header included, is the reply frame.
					reply = frame
					if n > maxReply {
						reply = tooBig
					}
				}
				if !writeAll(write, reply) {
					return fail(write, "write error on stdout")
				}
				continue
			}
		}
		// Room for need bytes from start: move the pending bytes down, or grow the buffer.
		if len(buf)-start < need {
			if len(buf) < need {
				bigger := make([]byte, need)
				copy(bigger, buf[start:end])
				buf = bigger
			} else {
				copy(buf, buf[start:end])
			}
			start, end = 0, have
		}
		got, err := read(0, buf[end:])
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			return fail(write, "read error on stdin")
		}
		if got == 0 {
			if have == 0 {
				return 0
			}
			if have < header {
				return fail(write, "end of input inside a length prefix")
			}
			return fail(write, "end of input inside a message body")
		}
		end += got
	}
}

func main() {
	// Arguments are ignored, as in every host: the answers depend on neither.
	syscall.Exit(serve(syscall.Read, syscall.Write, chunk[:]))
}
