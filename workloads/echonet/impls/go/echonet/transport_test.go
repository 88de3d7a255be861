package echonet

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// Unit tests bind to 127.40.0.10-29 on ephemeral ports, so they never meet a real node on
// port 3610 nor each other.

func openTest(t *testing.T, addr string, port uint16) *Transport {
	t.Helper()
	a := netip.MustParseAddr(addr)
	tr, err := Open(TransportConfig{Bind: a, IfAddr: a, Port: port})
	if err != nil {
		t.Fatalf("Open %s:%d: %v", addr, port, err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestStartINFBytes(t *testing.T) {
	// SPEC §6: 10 81 TT TT 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01, TID 0x0001.
	got := StartINF(newTestNode(t, "127.0.0.1"))
	want := unhex(t, "10 81 00 01 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01")
	if !bytes.Equal(got, want) {
		t.Fatalf("start INF = % x, want % x", got, want)
	}
}

func TestSendAndReceive(t *testing.T) {
	a, b := openTest(t, "127.40.0.10", 0), openTest(t, "127.40.0.11", 0)
	msg := unhex(t, specGet36)
	if err := a.Send(msg, b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, RecvBufferLen)
	if err := b.SetReadDeadline(time.Now().Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, src, truncated, err := b.Receive(buf)
	if err != nil || truncated || !bytes.Equal(buf[:n], msg) || src != a.LocalAddr() {
		t.Fatalf("received % x from %v (truncated %v, %v)", buf[:n], src, truncated, err)
	}
	if !src.Addr().Is4() {
		t.Errorf("source %v is not a plain IPv4 address", src)
	}
}

func TestLargestDatagramIsReadWhole(t *testing.T) {
	a, b := openTest(t, "127.40.0.10", 0), openTest(t, "127.40.0.11", 0)
	msg := bytes.Repeat([]byte{0xA5}, MaxDatagram)
	if err := a.Send(msg, b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, RecvBufferLen)
	_ = b.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, _, truncated, err := b.Receive(buf)
	if err != nil || truncated || n != MaxDatagram {
		t.Fatalf("read %d bytes, truncated %v, %v", n, truncated, err)
	}

	// A buffer too small for the datagram: the kernel cuts it and Receive says so.
	if err := a.Send(msg[:100], b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	n, _, truncated, err = b.Receive(buf[:50])
	if err != nil || !truncated || n != 50 {
		t.Fatalf("short buffer: %d bytes, truncated %v, %v", n, truncated, err)
	}
}

func TestSendReceiveAllocatesNothing(t *testing.T) {
	a, b := openTest(t, "127.40.0.10", 0), openTest(t, "127.40.0.11", 0)
	msg, dst := unhex(t, specGet36), b.LocalAddr()
	buf := make([]byte, RecvBufferLen)
	allocs := testing.AllocsPerRun(50, func() {
		if err := a.Send(msg, dst); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := b.Receive(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per datagram", allocs)
	}
}

func TestAddressInUse(t *testing.T) {
	first := openTest(t, "127.40.0.12", 0)
	port := first.LocalAddr().Port()
	a := netip.MustParseAddr("127.40.0.12")
	_, err := Open(TransportConfig{Bind: a, IfAddr: a, Port: port})
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("second bind: %v, want EADDRINUSE", err)
	}
}

func TestOpenRefusesIPv6(t *testing.T) {
	if _, err := Open(TransportConfig{Bind: netip.IPv6Loopback(), IfAddr: netip.IPv6Loopback()}); err == nil {
		t.Fatal("IPv6 accepted")
	}
}

func TestCloseUnblocksReceive(t *testing.T) {
	a := netip.MustParseAddr("127.40.0.13")
	tr, err := Open(TransportConfig{Bind: a, IfAddr: a})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, _, err := tr.Receive(make([]byte, RecvBufferLen))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	tr.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Receive after Close: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Receive still blocked after Close")
	}
}

func TestJoinGroupOnlyForWildcardBind(t *testing.T) {
	// A unicast-bound socket receives no multicast: joining is a no-op, not an error.
	if err := openTest(t, "127.40.0.14", 0).JoinGroup(); err != nil {
		t.Fatal(err)
	}
}
