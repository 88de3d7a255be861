package main

// Host: the serve loop shared by both browser modes. Persistent mode (connectNative) is many
// turns of the loop; connectionless mode (sendNativeMessage) is one turn and then EOF.

import (
	"errors"
	"fmt"
	"io"
)

// Exit statuses (SPEC.md §3).
const (
	exitOK     = 0 // stdin ended at a frame boundary
	exitBroken = 1 // EOF inside a frame, oversized length prefix, read or write error
)

// serve answers every frame on in with one frame on out until in ends, and returns the exit
// status. Diagnostics go to log, never to out: out carries frames and nothing else.
//
// Each reply is written completely before the next frame is read. That ordering is what lets
// a caller that waits for every reply never hang, and there is nothing to flush: the reply is
// one Write straight on the file descriptor, with no buffered writer in between.
func serve(in io.Reader, out io.Writer, log io.Writer) int {
	frames := newFrameReader(in)
	var reply frameBuilder
	r := newResponder(&reply)
	for {
		req, err := frames.readFrame()
		if err != nil {
			if err == io.EOF {
				return exitOK
			}
			fmt.Fprintf(log, "nativemsg-go: %s\n", describeReadError(err))
			return exitBroken
		}
		reply.reset()
		r.respond(req)
		if err := reply.writeTo(out); err != nil {
			fmt.Fprintf(log, "nativemsg-go: cannot write reply: %v\n", err)
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
