// Package nmhost is the Go nativemsg host, less its JSON library: framing, protocol and serve
// loop, shared by the Go hosts (workloads/nativemsg/impls/go and go-go-json), each a program
// of its own that passes its JSON library in as a Codec (their host.go) and runs Host.Main.
package nmhost

// Host: the serve loop shared by both browser modes. Persistent mode (connectNative) is many
// turns of the loop; connectionless mode (sendNativeMessage) is one turn and then EOF.

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"
)

// Exit statuses (SPEC.md §3).
const (
	exitOK     = 0 // stdin ended at a frame boundary
	exitBroken = 1 // EOF inside a frame, oversized length prefix, read or write error
)

// yieldEvery is how long the serve loop runs at most without passing through the Go
// scheduler. The loop blocks only in read(2) and write(2), never in the scheduler, so to the
// runtime it is one goroutine that never stops running: after 10 ms sysmon preempts it
// (taking its P if it is waiting in read(2)) and goes back to waking every 20 µs for a
// millisecond or more. At a message every few hundred µs it never backs off again, at a
// cost of about one extra wake-up and context switch per message. A yield well inside those
// 10 ms keeps sysmon asleep (main.go keeps a second P idle so that reads keep theirs). With
// no other goroutine runnable, runtime.Gosched returns at once, but it wakes a thread for the
// idle P to look for work (a futex wake-up), so it is not done on every message.
const yieldEvery = 5 * time.Millisecond

// Host is one Go host: its program name and its JSON library.
type Host struct {
	// Name is the program's name (nativemsg-go, ...), the prefix of its messages on stderr.
	Name string
	// Codec is its JSON library.
	Codec Codec
}

// Serve answers every frame on in with one frame on out until in ends, and returns the exit
// status. Diagnostics go to log, never to out: out carries frames and nothing else.
//
// Each reply is written completely before the next frame is read. That ordering is what lets
// a caller that waits for every reply never hang, and there is nothing to flush: the reply is
// one Write straight on the file descriptor, with no buffered writer in between.
//
// tune, when not nil, is called once, when a second frame arrives: the connection is then a
// persistent one, and Main tunes the runtime for it (see tuneForConnection).
func (h Host) Serve(in io.Reader, out io.Writer, log io.Writer, tune func()) int {
	frames := newFrameReader(in)
	var reply frameBuilder
	r := newResponder(&reply, h.Codec)
	lastYield := time.Now()
	for frame := 0; ; frame++ {
		if now := time.Now(); now.Sub(lastYield) >= yieldEvery {
			runtime.Gosched()
			lastYield = now
		}
		req, err := frames.readFrame()
		if err != nil {
			if err == io.EOF {
				return exitOK
			}
			fmt.Fprintf(log, "%s: %s\n", h.Name, describeReadError(err))
			return exitBroken
		}
		if frame == 1 && tune != nil {
			tune()
		}
		reply.reset()
		r.respond(req)
		if err := reply.writeTo(out); err != nil {
			fmt.Fprintf(log, "%s: cannot write reply: %v\n", h.Name, err)
			return exitBroken
		}
	}
}

// describeReadError words a failed read for the browser's log.
func describeReadError(err error) string {
	if errors.Is(err, errFrameTooLarge) || errors.Is(err, errTruncated) {
		return err.Error() // already says what was wrong with the stream
	}
	return fmt.Sprintf("cannot read stdin: %v", err)
}
