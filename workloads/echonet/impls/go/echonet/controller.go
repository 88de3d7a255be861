package echonet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"time"
)

// The controller side (SPEC §8): requests matched to replies by TID, source address and ESV,
// a timeout per attempt, a bounded number of resends, and multicast discovery.

// Client sends requests from one transport and waits for their replies. It reuses its
// buffers, so a request and its reply allocate nothing once they have grown. Not safe for
// concurrent use.
type Client struct {
	t       *Transport
	port    uint16        // the nodes' port
	timeout time.Duration // one attempt's wait
	retries int           // attempts after the first

	// Ignored counts datagrams that answered no request being waited for: late replies,
	// duplicates, other TIDs or sources, malformed datagrams.
	Ignored int
	// Resent counts requests sent again after a timeout.
	Resent int

	tid   uint16 // the last TID used
	out   []byte // the encoded request
	in    []byte // the receive buffer
	reply Frame  // the matched reply; its EDTs alias in
}

// NewClient returns a client sending from t to nodes on port, waiting timeout per attempt
// and resending at most retries times.
func NewClient(t *Transport, port uint16, timeout time.Duration, retries int) *Client {
	return &Client{
		t: t, port: port, timeout: timeout, retries: retries,
		out: make([]byte, 0, 512), in: make([]byte, RecvBufferLen),
	}
}

// NextTID returns the TID of a new request: 1 first, then one more per request, skipping 0
// when it wraps.
func (c *Client) NextTID() uint16 {
	c.tid++
	if c.tid == 0 {
		c.tid = 1
	}
	return c.tid
}

// NoReplyError is a request that got no matching reply in all its attempts.
type NoReplyError struct {
	Host     netip.Addr
	ESV      ESV
	TID      uint16
	Attempts int
}

func (e *NoReplyError) Error() string {
	return fmt.Sprintf("no reply from %v to ESV %02x (TID %04x) after %d attempt(s)", e.Host, byte(e.ESV), e.TID, e.Attempts)
}

// Request sends req (with a new TID, which it writes into req) to host and returns the
// matching reply and the attempts made. The reply is valid until the next call on c. After
// 1 + retries unanswered attempts it returns a *NoReplyError.
func (c *Client) Request(host netip.Addr, req *Frame) (*Frame, int, error) {
	return c.request(host, req, 1+c.retries)
}

// RequestOnce sends req once and waits one timeout: for SetI, whose success has no reply. A
// nil reply with a nil error means nothing came.
func (c *Client) RequestOnce(host netip.Addr, req *Frame) (*Frame, error) {
	reply, _, err := c.request(host, req, 1)
	var none *NoReplyError
	if errors.As(err, &none) {
		return nil, nil
	}
	return reply, err
}

func (c *Client) request(host netip.Addr, req *Frame, attempts int) (*Frame, int, error) {
	req.TID = c.NextTID()
	out, err := req.Append(c.out[:0])
	if err != nil {
		return nil, 0, err
	}
	c.out = out[:0]
	dst := netip.AddrPortFrom(host, c.port)
	for attempt := 1; attempt <= attempts; attempt++ {
		if attempt > 1 {
			c.Resent++
		}
		if err := c.t.Send(out, dst); err != nil {
			return nil, attempt, fmt.Errorf("send to %v: %w", dst, err)
		}
		matched, err := c.await(time.Now().Add(c.timeout), func(src netip.Addr, f *Frame) bool {
			return f.TID == req.TID && src == host && req.ESV.Answers(f.ESV)
		})
		if err != nil {
			return nil, attempt, err
		}
		if matched {
			return &c.reply, attempt, nil
		}
	}
	return nil, attempts, &NoReplyError{Host: host, ESV: req.ESV, TID: req.TID, Attempts: attempts}
}

// await reads datagrams until one decodes into c.reply and satisfies match, or the deadline
// passes (matched false, no error). Everything else read counts as ignored.
func (c *Client) await(deadline time.Time, match func(src netip.Addr, f *Frame) bool) (bool, error) {
	if err := c.t.SetReadDeadline(deadline); err != nil {
		return false, err
	}
	for {
		n, src, truncated, err := c.t.Receive(c.in)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return false, nil
		case errors.Is(err, net.ErrClosed):
			return false, err
		case err != nil:
			// A transient error (an ICMP error reported on the socket, EINTR): the deadline
			// still bounds the wait.
			continue
		}
		if truncated || c.reply.Decode(c.in[:n]) != nil || !match(src.Addr(), &c.reply) {
			c.Ignored++
			continue
		}
		return true, nil
	}
}

// DiscoveredNode is one node that answered discovery.
type DiscoveredNode struct {
	Addr      netip.Addr
	EOJ       EOJ   // the answering object (the node profile)
	Instances []EOJ // its self-node instance list
}

// Discovery is what a discovery found.
type Discovery struct {
	Nodes    []DiscoveredNode // sorted by address
	Elapsed  time.Duration    // from the first send to the answer of the last node needed
	Attempts int              // multicasts sent
}

// ErrTooFewNodes is a discovery with --expect N that heard fewer than N nodes.
var ErrTooFewNodes = errors.New("too few nodes answered discovery")

// Discover multicasts a Get of the self-node instance list (0xD6) to the node profile and
// collects the unicast answers, one per node address. With expect > 0 it returns as soon as
// expect nodes have answered, resending every timeout at most retries times (then it fails
// with ErrTooFewNodes and what it found); with expect = 0 it sends once, listens for wait and
// reports whoever answered.
func (c *Client) Discover(expect int, wait time.Duration) (Discovery, error) {
	req := Frame{
		SEOJ: Controller, DEOJ: NodeProfile, ESV: Get,
		Props: []Property{{EPC: EPCInstanceList}},
	}
	req.TID = c.NextTID()
	msg, err := req.Append(nil)
	if err != nil {
		return Discovery{}, err
	}
	var d Discovery
	seen := map[netip.Addr]bool{}
	var start, last time.Time
	match := func(src netip.Addr, f *Frame) bool {
		if f.TID != req.TID || !Get.Answers(f.ESV) || seen[src] {
			return false // a duplicate answer is ignored like any stray datagram
		}
		seen[src] = true
		last = time.Now()
		d.Nodes = append(d.Nodes, DiscoveredNode{Addr: src, EOJ: f.SEOJ, Instances: instancesIn(f)})
		return true
	}

	attempts, perAttempt := 1+c.retries, c.timeout
	if expect <= 0 {
		attempts, perAttempt = 1, wait
	}
	for d.Attempts < attempts && (expect <= 0 || len(d.Nodes) < expect) {
		if d.Attempts > 0 {
			c.Resent++
		}
		d.Attempts++
		if start.IsZero() {
			start = time.Now()
		}
		if err := c.t.Send(msg, netip.AddrPortFrom(GroupAddr, c.port)); err != nil {
			return d, fmt.Errorf("multicast discovery: %w", err)
		}
		deadline := time.Now().Add(perAttempt)
		for expect <= 0 || len(d.Nodes) < expect {
			matched, err := c.await(deadline, match)
			if err != nil {
				return d, err
			}
			if !matched {
				break
			}
		}
	}
	slices.SortFunc(d.Nodes, func(a, b DiscoveredNode) int { return a.Addr.Compare(b.Addr) })
	if !last.IsZero() {
		d.Elapsed = last.Sub(start)
	}
	if expect > 0 && len(d.Nodes) < expect {
		return d, fmt.Errorf("%w: %d of %d after %d attempt(s)", ErrTooFewNodes, len(d.Nodes), expect, d.Attempts)
	}
	return d, nil
}

// instancesIn returns the instance list carried by a discovery answer (empty when the node
// refused to read it).
func instancesIn(f *Frame) []EOJ {
	for _, p := range f.Props {
		if p.EPC == EPCInstanceList {
			return ParseInstanceList(p.EDT)
		}
	}
	return nil
}

// ParseInstanceList decodes an instance list EDT (0xD5/0xD6): a count, then that many EOJs.
// Like a property map's N, the count is not trusted: it yields the EOJs actually present, at
// most the count.
func ParseInstanceList(edt []byte) []EOJ {
	if len(edt) == 0 {
		return nil
	}
	n, body := int(edt[0]), edt[1:]
	out := make([]EOJ, 0, min(n, len(body)/3))
	for ; n > 0 && len(body) >= 3; n-- {
		out = append(out, readEOJ(body))
		body = body[3:]
	}
	return out
}
