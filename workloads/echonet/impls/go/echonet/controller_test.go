package echonet

import (
	"errors"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"
)

// startPeer runs a goroutine answering every datagram that reaches a transport on addr with
// answer (which may send anything, or nothing). It returns the transport.
func startPeer(t *testing.T, addr string, answer func(tr *Transport, src netip.AddrPort, req *Frame)) *Transport {
	t.Helper()
	tr := openTest(t, addr, 0)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, RecvBufferLen)
		var req Frame
		for {
			n, src, _, err := tr.Receive(buf)
			if err != nil {
				return // closed by the cleanup
			}
			if req.Decode(buf[:n]) == nil {
				answer(tr, src, &req)
			}
		}
	}()
	t.Cleanup(func() { tr.Close(); wg.Wait() })
	return tr
}

// nodeAnswer answers like a real node.
func nodeAnswer(t *testing.T) func(*Transport, netip.AddrPort, *Frame) {
	r := NewResponder(newTestNode(t, "127.0.0.1"))
	return func(tr *Transport, src netip.AddrPort, req *Frame) {
		r.Handle(req, func(b []byte) { _ = tr.Send(b, src) })
	}
}

func newTestClient(t *testing.T, addr string, node *Transport, timeout time.Duration, retries int) *Client {
	return NewClient(openTest(t, addr, 0), node.LocalAddr().Port(), timeout, retries)
}

func getFrame(epcs ...byte) *Frame {
	f := &Frame{SEOJ: Controller, DEOJ: NodeProfile, ESV: Get}
	for _, e := range epcs {
		f.Props = append(f.Props, Property{EPC: e})
	}
	return f
}

func TestTIDStartsAtOneAndSkipsZero(t *testing.T) {
	var c Client
	if c.NextTID() != 1 || c.NextTID() != 2 {
		t.Fatal("TIDs do not start at 1")
	}
	c.tid = 0xFFFE
	if got := []uint16{c.NextTID(), c.NextTID(), c.NextTID()}; !slices.Equal(got, []uint16{0xFFFF, 1, 2}) {
		t.Fatalf("wrap: %04x", got)
	}
}

func TestRequestGetsItsReply(t *testing.T) {
	node := startPeer(t, "127.40.0.20", nodeAnswer(t))
	c := newTestClient(t, "127.40.0.21", node, time.Second, 0)
	reply, attempts, err := c.Request(node.LocalAddr().Addr(), getFrame(0x80, 0xD6))
	if err != nil || attempts != 1 {
		t.Fatalf("Request: %v after %d attempts", err, attempts)
	}
	if reply.TID != 1 || reply.ESV != GetRes || reply.SEOJ != NodeProfile || reply.DEOJ != Controller || len(reply.Props) != 2 {
		t.Fatalf("reply %+v", reply)
	}
	// The next request has the next TID, and a refusal is a reply.
	reply, _, err = c.Request(node.LocalAddr().Addr(), getFrame(0xB0))
	if err != nil || reply.TID != 2 || reply.ESV != GetSNA {
		t.Fatalf("second request: %+v, %v", reply, err)
	}
}

func TestRequestIgnoresWhatDoesNotMatch(t *testing.T) {
	// A stranger on another address sends a perfect reply first; it must not match.
	stranger := openTest(t, "127.40.0.22", 0)
	answer := nodeAnswer(t)
	node := startPeer(t, "127.40.0.20", func(tr *Transport, src netip.AddrPort, req *Frame) {
		good := Frame{TID: req.TID, SEOJ: NodeProfile, DEOJ: req.SEOJ, ESV: GetRes, Props: []Property{{EPC: 0x80, EDT: []byte{0x30}}}}
		send := func(tr *Transport, f Frame) {
			b, _ := f.Append(nil)
			_ = tr.Send(b, src)
		}
		send(stranger, good)
		wrongTID := good
		wrongTID.TID++
		send(tr, wrongTID)
		wrongESV := good
		wrongESV.ESV = SetRes
		send(tr, wrongESV)
		_ = tr.Send([]byte{0x10, 0x81, 0x00}, src)                                                      // malformed
		_ = tr.Send([]byte{0x10, 0x82, byte(req.TID >> 8), byte(req.TID), 0, 0, 0, 0, 0, 0, 0, 0}, src) // format 2
		answer(tr, src, req)
	})
	c := newTestClient(t, "127.40.0.21", node, time.Second, 0)
	reply, attempts, err := c.Request(node.LocalAddr().Addr(), getFrame(0x80))
	if err != nil || attempts != 1 || reply.ESV != GetRes {
		t.Fatalf("Request: %+v, %v", reply, err)
	}
	if c.Ignored != 5 {
		t.Errorf("ignored %d, want 5", c.Ignored)
	}
}

func TestRequestRetriesWithTheSameTID(t *testing.T) {
	var mu sync.Mutex
	var tids []uint16
	answer := nodeAnswer(t)
	node := startPeer(t, "127.40.0.20", func(tr *Transport, src netip.AddrPort, req *Frame) {
		mu.Lock()
		tids = append(tids, req.TID)
		n := len(tids)
		mu.Unlock()
		if n >= 3 { // the first two attempts are lost
			answer(tr, src, req)
		}
	})
	c := newTestClient(t, "127.40.0.21", node, 50*time.Millisecond, 3)
	_, attempts, err := c.Request(node.LocalAddr().Addr(), getFrame(0x80))
	if err != nil || attempts != 3 || c.Resent != 2 {
		t.Fatalf("attempts %d, resent %d, %v", attempts, c.Resent, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(tids, []uint16{1, 1, 1}) {
		t.Errorf("TIDs sent: %v", tids)
	}
}

func TestRequestFailsAfterItsAttempts(t *testing.T) {
	var mu sync.Mutex
	seen := 0
	node := startPeer(t, "127.40.0.20", func(*Transport, netip.AddrPort, *Frame) {
		mu.Lock()
		seen++
		mu.Unlock()
	})
	c := newTestClient(t, "127.40.0.21", node, 30*time.Millisecond, 2)
	start := time.Now()
	_, attempts, err := c.Request(node.LocalAddr().Addr(), getFrame(0x80))
	var nr *NoReplyError
	if !errors.As(err, &nr) || attempts != 3 || nr.Attempts != 3 {
		t.Fatalf("err %v after %d attempts", err, attempts)
	}
	if d := time.Since(start); d < 90*time.Millisecond || d > time.Second {
		t.Errorf("gave up after %v, want about 3 × 30 ms", d)
	}
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if seen != 3 {
		t.Errorf("node saw %d attempts", seen)
	}
}

func TestRequestOnceForSetI(t *testing.T) {
	node := startPeer(t, "127.40.0.20", nodeAnswer(t))
	c := newTestClient(t, "127.40.0.21", node, 50*time.Millisecond, 3)
	host := node.LocalAddr().Addr()
	set := func(v byte) *Frame {
		return &Frame{SEOJ: Controller, DEOJ: HomeAirConditioner, ESV: SetI, Props: []Property{{EPC: 0x80, EDT: []byte{v}}}}
	}
	if reply, err := c.RequestOnce(host, set(0x30)); reply != nil || err != nil {
		t.Fatalf("accepted SetI: %+v, %v", reply, err)
	}
	reply, err := c.RequestOnce(host, set(0x99))
	if err != nil || reply == nil || reply.ESV != SetISNA {
		t.Fatalf("refused SetI: %+v, %v", reply, err)
	}
	if c.Resent != 0 {
		t.Errorf("SetI resent %d times", c.Resent)
	}
}

func TestRequestAllocatesNothingOnceWarm(t *testing.T) {
	node := startPeer(t, "127.40.0.20", nodeAnswer(t))
	c := newTestClient(t, "127.40.0.21", node, time.Second, 0)
	host, req := node.LocalAddr().Addr(), getFrame(0x80, 0x82, 0x83)
	if _, _, err := c.Request(host, req); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		if _, _, err := c.Request(host, req); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per request", allocs)
	}
}

// discoveryAnswer is what a node at some address answers to the first discovery (TID 1).
func discoveryAnswer(t *testing.T, from *Transport, to netip.AddrPort, tid uint16) {
	f := Frame{TID: tid, SEOJ: NodeProfile, DEOJ: Controller, ESV: GetRes,
		Props: []Property{{EPC: EPCInstanceList, EDT: []byte{1, 0x01, 0x30, 0x01}}}}
	b, _ := f.Append(nil)
	if err := from.Send(b, to); err != nil {
		t.Fatal(err)
	}
}

// newDiscoveryClient multicasts to its own ephemeral port, where no node listens.
func newDiscoveryClient(t *testing.T, timeout time.Duration, retries int) *Client {
	tr := openTest(t, "127.40.0.21", 0)
	return NewClient(tr, tr.LocalAddr().Port(), timeout, retries)
}

func TestDiscoverCollectsDistinctNodesSorted(t *testing.T) {
	// The answers are queued before the multicast goes out (unicast-bound test sockets hear
	// no multicast): what Discover matches is the TID, the ESV and distinct sources.
	c := newDiscoveryClient(t, 200*time.Millisecond, 1)
	me := c.t.LocalAddr()
	n9, n3 := openTest(t, "127.40.0.29", 0), openTest(t, "127.40.0.23", 0)
	discoveryAnswer(t, n9, me, 1)
	discoveryAnswer(t, n3, me, 1)
	discoveryAnswer(t, n3, me, 1) // duplicate
	discoveryAnswer(t, n9, me, 7) // another TID
	d, err := c.Discover(2, 0)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if len(d.Nodes) != 2 || d.Nodes[0].Addr.String() != "127.40.0.23" || d.Nodes[1].Addr.String() != "127.40.0.29" {
		t.Fatalf("nodes %+v", d.Nodes)
	}
	if d.Nodes[0].EOJ != NodeProfile || !slices.Equal(d.Nodes[0].Instances, []EOJ{HomeAirConditioner}) || d.Attempts != 1 {
		t.Errorf("discovery %+v", d)
	}
	// It returned at the second node: the duplicate and the stray are still queued.
	d, err = c.Discover(0, 50*time.Millisecond) // TID 2: both leftovers ignored
	if err != nil || len(d.Nodes) != 0 || c.Ignored != 2 || d.Elapsed != 0 {
		t.Fatalf("second discovery %+v, ignored %d, %v", d, c.Ignored, err)
	}
}

func TestDiscoverExpectingTooManyFails(t *testing.T) {
	c := newDiscoveryClient(t, 30*time.Millisecond, 2)
	discoveryAnswer(t, openTest(t, "127.40.0.23", 0), c.t.LocalAddr(), 1)
	d, err := c.Discover(2, 0)
	if !errors.Is(err, ErrTooFewNodes) || len(d.Nodes) != 1 || d.Attempts != 3 || c.Resent != 2 {
		t.Fatalf("%+v, %v", d, err)
	}
}

func TestInstanceLists(t *testing.T) {
	got := ParseInstanceList(unhex(t, "02 01 30 01 0E F0 01"))
	if !slices.Equal(got, []EOJ{HomeAirConditioner, NodeProfile}) {
		t.Errorf("ParseInstanceList = %v", got)
	}
	// The count is not trusted: what is present, at most the count.
	if got := ParseInstanceList(unhex(t, "FF 01 30 01 0E F0")); !slices.Equal(got, []EOJ{HomeAirConditioner}) {
		t.Errorf("overstated count: %v", got)
	}
	if got := ParseInstanceList(unhex(t, "01 01 30 01 0E F0 01")); !slices.Equal(got, []EOJ{HomeAirConditioner}) {
		t.Errorf("understated count: %v", got)
	}
	if got := ParseInstanceList(nil); len(got) != 0 {
		t.Errorf("empty: %v", got)
	}
}
