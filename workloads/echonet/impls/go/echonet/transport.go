package echonet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// The UDP socket (SPEC §2): one socket per program, port 3610, multicast group 224.0.23.0.

// DefaultPort is ECHONET Lite's UDP port on every host.
const DefaultPort = 3610

// GroupAddr is ECHONET Lite's IPv4 multicast group.
var GroupAddr = netip.AddrFrom4([4]byte{224, 0, 23, 0})

// startTID is the TID of the INF a node sends at start (SPEC §6): never 0, which some peers
// rewrite. An INF never answers a Get, so controllers cannot take it for a reply.
const startTID = 1

// TransportConfig says where a socket is bound and which interface carries its multicasts.
type TransportConfig struct {
	Bind   netip.Addr // 0.0.0.0 receives unicast and multicast; a unicast address, unicast only
	IfAddr netip.Addr // IP_MULTICAST_IF and the group's interface; 0.0.0.0 lets the kernel route
	Port   uint16
}

// Transport is one UDP socket, configured for ECHONET Lite's multicast.
type Transport struct {
	conn  *net.UDPConn
	cfg   TransportConfig
	group netip.AddrPort
}

// Open binds the socket. Multicasts leave by cfg.IfAddr with TTL 1 and loop back to this host
// (a program bound to a loopback address multicasts on lo only, never onto a real network).
// Only a wildcard bind sets SO_REUSEADDR: it lets the node share port 3610 with other stacks
// bound to specific addresses of the host, as ECHONET peers do, while two programs bound to
// the same unicast address still collide with EADDRINUSE, as SPEC §7 wants reported.
func Open(cfg TransportConfig) (*Transport, error) {
	if !cfg.Bind.Is4() || !cfg.IfAddr.Is4() {
		return nil, fmt.Errorf("addresses must be IPv4 (bind %v, ifaddr %v)", cfg.Bind, cfg.IfAddr)
	}
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var sockErr error
		err := rc.Control(func(fd uintptr) { sockErr = configureSocket(int(fd), cfg) })
		return errors.Join(err, sockErr)
	}}
	addr := netip.AddrPortFrom(cfg.Bind, cfg.Port)
	pc, err := lc.ListenPacket(context.Background(), "udp4", addr.String())
	if err != nil {
		return nil, err
	}
	return &Transport{
		conn:  pc.(*net.UDPConn),
		cfg:   cfg,
		group: netip.AddrPortFrom(GroupAddr, cfg.Port),
	}, nil
}

func configureSocket(fd int, cfg TransportConfig) error {
	set := func(name string, level, opt, value int) error {
		if err := syscall.SetsockoptInt(fd, level, opt, value); err != nil {
			return os.NewSyscallError("setsockopt "+name, err)
		}
		return nil
	}
	if cfg.Bind.IsUnspecified() {
		if err := set("SO_REUSEADDR", syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
			return err
		}
	}
	if err := syscall.SetsockoptInet4Addr(fd, syscall.IPPROTO_IP, syscall.IP_MULTICAST_IF, cfg.IfAddr.As4()); err != nil {
		return os.NewSyscallError("setsockopt IP_MULTICAST_IF", err)
	}
	// TTL 1 keeps multicasts on the link (the kernel's default too, stated rather than
	// assumed); loop on, so stacks on one host hear each other (they ignore their own).
	if err := set("IP_MULTICAST_TTL", syscall.IPPROTO_IP, syscall.IP_MULTICAST_TTL, 1); err != nil {
		return err
	}
	return set("IP_MULTICAST_LOOP", syscall.IPPROTO_IP, syscall.IP_MULTICAST_LOOP, 1)
}

// JoinGroup makes a wildcard-bound socket receive 224.0.23.0 on the interface of IfAddr. A
// socket bound to a unicast address receives no multicast, so there it does nothing.
func (t *Transport) JoinGroup() error {
	if !t.cfg.Bind.IsUnspecified() {
		return nil
	}
	rc, err := t.conn.SyscallConn()
	if err != nil {
		return err
	}
	mreq := syscall.IPMreq{Multiaddr: GroupAddr.As4(), Interface: t.cfg.IfAddr.As4()}
	var sockErr error
	if err := rc.Control(func(fd uintptr) {
		sockErr = syscall.SetsockoptIPMreq(int(fd), syscall.IPPROTO_IP, syscall.IP_ADD_MEMBERSHIP, &mreq)
	}); err != nil {
		return err
	}
	if sockErr != nil {
		return fmt.Errorf("join %v on %v: %w", GroupAddr, t.cfg.IfAddr, os.NewSyscallError("setsockopt IP_ADD_MEMBERSHIP", sockErr))
	}
	return nil
}

// Receive reads one datagram into buf (RecvBufferLen bytes hold any IPv4 datagram whole).
// truncated reports a datagram larger than buf, cut by the kernel: the caller drops it.
func (t *Transport) Receive(buf []byte) (n int, src netip.AddrPort, truncated bool, err error) {
	n, _, flags, src, err := t.conn.ReadMsgUDPAddrPort(buf, nil)
	return n, netip.AddrPortFrom(src.Addr().Unmap(), src.Port()), flags&syscall.MSG_TRUNC != 0, err
}

// Send sends one datagram to dst.
func (t *Transport) Send(b []byte, dst netip.AddrPort) error {
	_, err := t.conn.WriteToUDPAddrPort(b, dst)
	return err
}

// Multicast sends one datagram to 224.0.23.0 at the transport's port.
func (t *Transport) Multicast(b []byte) error { return t.Send(b, t.group) }

// SetReadDeadline bounds the next Receive calls (the zero time waits forever).
func (t *Transport) SetReadDeadline(d time.Time) error { return t.conn.SetReadDeadline(d) }

// LocalAddr is the address and port the socket is bound to.
func (t *Transport) LocalAddr() netip.AddrPort { return t.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

// Close closes the socket; a Receive blocked on it returns net.ErrClosed.
func (t *Transport) Close() error { return t.conn.Close() }

// StartINF is the announcement a node multicasts at start (SPEC §6): INF from the node
// profile to the node profile, EPC 0xD5 with the node's instance list.
func StartINF(node *Node) []byte {
	profile := node.Objects[0]
	list, _ := profile.Get(EPCInstanceListNote)
	f := Frame{
		TID: startTID, SEOJ: NodeProfile, DEOJ: NodeProfile, ESV: Inf,
		Props: []Property{{EPC: EPCInstanceListNote, EDT: list}},
	}
	b, err := f.Append(nil)
	if err != nil {
		panic(err) // one property with a short EDT: always encodable
	}
	return b
}

// Announce multicasts the start INF.
func (t *Transport) Announce(node *Node) error {
	if err := t.Multicast(StartINF(node)); err != nil {
		return fmt.Errorf("start INF to %v: %w", t.group, err)
	}
	return nil
}
