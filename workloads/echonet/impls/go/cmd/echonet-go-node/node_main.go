// Command echonet-go-node is the Go node of the msgbench echonet workload: an ECHONET Lite
// node carrying the node profile and one home air conditioner, answering on UDP port 3610
// (workloads/echonet/SPEC.md §5-§7).
//
// Usage: echonet-go-node [--bind IPV4] [--ifaddr IPV4] [--port N]
//
// One goroutine reads the socket and answers each request before reading the next; the Go
// runtime parks it on the netpoller (epoll) while the socket is empty. SIGTERM or SIGINT
// closes the socket, which ends the loop, and the counters are printed as one line of JSON.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"msgbench/workloads/echonet/impls/go/echonet"
)

const name = "echonet-go-node"

const usage = `usage: echonet-go-node [--bind IPV4] [--ifaddr IPV4] [--port N]

An ECHONET Lite node (node profile 0x0EF001 and home air conditioner 0x013001) on UDP.

  --bind IPV4     address to bind (default 0.0.0.0: unicast and multicast, joining
                  224.0.23.0 on the interface of --ifaddr; a unicast address: unicast only)
  --ifaddr IPV4   interface address for multicast and the node's address in EPC 0x83
                  (default: the --bind address)
  --port N        UDP port (default 3610)
  --help          this text

Prints READY once bound and announced; on SIGTERM or SIGINT prints its counters as one line
of JSON and exits 0. Exit 2: bad command line; exit 1: the socket cannot be bound.
`

type config struct {
	bind, ifaddr netip.Addr
	port         uint16
}

// errHelp asks for the usage text on stdout and exit 0.
var errHelp = errors.New("help requested")

func parseArgs(args []string) (config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // one line on stderr, written by main
	bind := fs.String("bind", "0.0.0.0", "")
	ifaddr := fs.String("ifaddr", "", "")
	port := fs.Int("port", echonet.DefaultPort, "")
	help := fs.Bool("help", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, errHelp
		}
		return config{}, err
	}
	if *help {
		return config{}, errHelp
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var cfg config
	var err error
	if cfg.bind, err = parseIPv4("--bind", *bind); err != nil {
		return config{}, err
	}
	cfg.ifaddr = cfg.bind
	if *ifaddr != "" {
		if cfg.ifaddr, err = parseIPv4("--ifaddr", *ifaddr); err != nil {
			return config{}, err
		}
	}
	if *port < 1 || *port > 65535 {
		return config{}, fmt.Errorf("--port %d is outside 1-65535", *port)
	}
	cfg.port = uint16(*port)
	return cfg, nil
}

// parseIPv4 accepts a dotted-quad IPv4 address that a socket can be bound to: unicast or
// 0.0.0.0 (a multicast group is no host's address).
func parseIPv4(option, s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return netip.Addr{}, fmt.Errorf("%s %q is not an IPv4 address", option, s)
	}
	if a.IsMulticast() {
		return netip.Addr{}, fmt.Errorf("%s %v is a multicast address", option, a)
	}
	return a, nil
}

// counters are the node's JSON line at exit (SPEC §7). received = requests + ignored +
// dropped_malformed + dropped_format2.
type counters struct {
	Received         uint64 `json:"received"`
	Requests         uint64 `json:"requests"`
	Replies          uint64 `json:"replies"`
	Ignored          uint64 `json:"ignored"`
	DroppedMalformed uint64 `json:"dropped_malformed"`
	DroppedFormat2   uint64 `json:"dropped_format2"`
	SendErrors       uint64 `json:"send_errors"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (try --help)\n", name, err)
		return 2
	}

	// Catch the signals before the socket exists: one arriving during start-up is kept in
	// the channel and ends the loop as soon as it starts, instead of killing the process
	// without its counters.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stop)

	node, err := echonet.NewNode(cfg.ifaddr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	t, err := echonet.Open(echonet.TransportConfig{Bind: cfg.bind, IfAddr: cfg.ifaddr, Port: cfg.port})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	go func() {
		<-stop
		t.Close() // unblocks the receive loop with net.ErrClosed
	}()

	var c counters
	if err := t.JoinGroup(); err != nil {
		// Unicast requests are still answered; discovery will not reach this node.
		fmt.Fprintf(stderr, "%s: warning: %v\n", name, err)
	}
	if err := t.Announce(node); err != nil {
		c.SendErrors++
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
	}
	fmt.Fprintln(stdout, "READY") // os.Stdout is unbuffered: written at once

	serve(t, echonet.NewResponder(node), &c, stderr)

	line, _ := json.Marshal(&c)
	fmt.Fprintf(stdout, "%s\n", line)
	return 0
}

// serve is the receive loop: read a datagram, answer it, read the next, until the transport
// is closed. Reading until the socket is empty and answering each request as it goes means
// one client's flood delays the others by at most its queued datagrams, never stops them.
// Nothing in the loop allocates: one receive buffer, one decoded frame and the responder's
// reply buffer are reused for every datagram.
func serve(t *echonet.Transport, r *echonet.Responder, c *counters, stderr io.Writer) {
	buf := make([]byte, echonet.RecvBufferLen)
	var req echonet.Frame
	var src netip.AddrPort
	send := func(reply []byte) {
		if err := t.Send(reply, src); err != nil {
			if c.SendErrors == 0 { // the first says why; the count says how often
				fmt.Fprintf(stderr, "%s: reply to %v: %v\n", name, src, err)
			}
			c.SendErrors++
			return
		}
		c.Replies++
	}
	for {
		n, from, truncated, err := t.Receive(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // ECONNREFUSED from an earlier send, EINTR: never end the loop
		}
		c.Received++
		if truncated {
			c.DroppedMalformed++
			continue
		}
		src = from
		handleDatagram(buf[:n], &req, r, c, send)
	}
}

// handleDatagram decodes one received datagram into req and answers it through send, counting
// it as a request, ignored, malformed or format 2. It is the loop's work on a datagram without
// the socket, so that the fuzz target (node_fuzz_test.go) runs exactly this code in memory.
func handleDatagram(datagram []byte, req *echonet.Frame, r *echonet.Responder, c *counters, send func(reply []byte)) {
	switch err := req.Decode(datagram); {
	case err == nil:
		if r.Handle(req, send) {
			c.Requests++
		} else {
			c.Ignored++
		}
	case errors.Is(err, echonet.ErrFormat2):
		c.DroppedFormat2++
	default:
		c.DroppedMalformed++
	}
}
