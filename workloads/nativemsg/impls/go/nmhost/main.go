package nmhost

// Main: the host as a process. What only a program can set, the //go:debug start-up settings,
// stays in each program's own main.go (package main).

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// Main runs h as the process: it answers stdin on stdout, with diagnostics on stderr, and
// exits with Serve's status. It does not return.
func (h Host) Main() {
	// Arguments are ignored: Chromium passes the caller's origin, Firefox the manifest path
	// and extension id, and the answers do not depend on either.

	// Without this, Go kills the process with SIGPIPE when a write to stdout finds the
	// browser gone; ignored, the write fails with EPIPE and the host exits 1 with a
	// message, as the spec asks. Ignore installs no handler goroutine.
	signal.Ignore(syscall.SIGPIPE)

	os.Exit(h.Serve(os.Stdin, os.Stdout, os.Stderr, tuneForConnection))
}

// tuneForConnection sets the runtime up for a long-lived connection; Serve calls it when a
// second frame arrives, so a host started for one message (sendNativeMessage) does not pay
// for it (it costs ~0.1 M instructions, a stop-the-world and a new P's allocations).
//
// It gives the runtime exactly two Ps, whatever the CPU affinity: one for the serve loop,
// one left idle. The loop waits for the browser in blocking read(2) calls (stdin is a
// blocking pipe, not on the network poller). With a single P (GOMAXPROCS=1: a host pinned to
// one CPU, as the benchmark pins it, or a one-CPU container) the runtime's monitor thread,
// sysmon, takes the P from a read that has waited longer than a tick (20 µs and up), hands it
// to a newly woken spinning thread, and is itself woken again when the read returns, which
// puts it back to 20 µs ticks: once messages wait that long, every one costs extra thread
// wake-ups and the goroutine hops between threads (measured: 5-7 context switches per
// 64 KiB echo, against 3 for the C floor). While another P is idle the runtime leaves a
// blocked read its P for 10 ms. More Ps buy nothing for one goroutine; the idle one runs
// only garbage-collector work. Serve does the other half (see yieldEvery).
func tuneForConnection() {
	runtime.GOMAXPROCS(2)
}
