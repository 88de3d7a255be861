//! The UDP socket of a node or controller (SPEC §2): bind, multicast interface and group
//! membership, the start INF, send and receive.
//!
//! One socket per program carries unicast and multicast both ways, so nothing inside a
//! program competes for port 3610. socket2 builds it, because std's `UdpSocket` cannot set
//! `IP_MULTICAST_IF` (which interface a multicast leaves by) nor `SO_REUSEADDR`, which must
//! be set between creating a socket and binding it; it then becomes a plain
//! `std::net::UdpSocket`.
//!
//! `SO_REUSEADDR` is set for a wildcard bind only. There it lets a node share port 3610 with
//! the other ECHONET stacks of its host (they set it too; Linux lets two UDP sockets share a
//! port only when both do) — the sharing the seed found std unable to do. On a unicast
//! address it would let a second program bind the very same address and port, and SPEC §7
//! wants that second program to fail with "address in use".

use crate::frame::MULTICAST_GROUP;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::time::Duration;

/// Where a program's socket lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Address to bind; 0.0.0.0 receives unicast and multicast.
    pub bind: Ipv4Addr,
    /// Interface address for `IP_MULTICAST_IF` and the group join.
    pub ifaddr: Ipv4Addr,
    pub port: u16,
}

/// A bound UDP socket set up for ECHONET Lite.
#[derive(Debug)]
pub struct Endpoint {
    socket: UdpSocket,
    config: Config,
}

impl Endpoint {
    /// Creates the socket, points its multicasts at `ifaddr` with TTL 1 and loop on (a
    /// program bound to a loopback address thus multicasts on `lo` only), and binds it.
    pub fn bind(config: Config) -> io::Result<Endpoint> {
        let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
        if config.bind.is_unspecified() {
            socket.set_reuse_address(true)?;
        }
        socket.set_multicast_if_v4(&config.ifaddr)?;
        socket.set_multicast_ttl_v4(1)?;
        socket.set_multicast_loop_v4(true)?;
        socket.bind(&SocketAddrV4::new(config.bind, config.port).into())?;
        Ok(Endpoint {
            socket: socket.into(),
            config,
        })
    }

    /// Joins 224.0.23.0 on the interface of `ifaddr`. Only a socket bound to 0.0.0.0
    /// receives multicast, so only such a node asks for it.
    pub fn join_group(&self) -> io::Result<()> {
        self.socket
            .join_multicast_v4(&MULTICAST_GROUP, &self.config.ifaddr)
    }

    pub fn config(&self) -> Config {
        self.config
    }

    /// Reads one datagram whole (give it a buffer of `frame::MAX_DATAGRAM` bytes: no IPv4
    /// datagram is larger, so none is ever truncated).
    pub fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.socket.recv_from(buf)
    }

    pub fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<()> {
        self.socket.send_to(datagram, to).map(drop)
    }

    /// Sends to 224.0.23.0 on the program's port.
    pub fn send_multicast(&self, datagram: &[u8]) -> io::Result<()> {
        let group = SocketAddrV4::new(MULTICAST_GROUP, self.config.port);
        self.send_to(datagram, group.into())
    }

    /// Bounds each receive (`None`: wait forever). A receive that times out fails with
    /// `WouldBlock`/`TimedOut`; with a timeout set, a signal also interrupts it (`EINTR`
    /// even under `SA_RESTART`, signal(7)), which is how the node's loop wakes to stop.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.socket.set_read_timeout(timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The lab's loopback block for these tests: 127.0.30.0/24 (ports other than 3610, so the
    // tests never meet a program someone is running by hand).

    #[test]
    fn second_bind_of_the_same_address_fails() {
        let config = Config {
            bind: Ipv4Addr::new(127, 0, 30, 90),
            ifaddr: Ipv4Addr::new(127, 0, 30, 90),
            port: 36190,
        };
        let first = Endpoint::bind(config).unwrap();
        let second = Endpoint::bind(config).unwrap_err();
        assert_eq!(second.kind(), io::ErrorKind::AddrInUse);
        drop(first);
    }

    #[test]
    fn a_wildcard_bind_shares_its_port_with_other_stacks() {
        let _wildcard = Endpoint::bind(Config {
            bind: Ipv4Addr::UNSPECIFIED,
            ifaddr: Ipv4Addr::new(127, 0, 30, 93),
            port: 36193,
        })
        .unwrap();
        // Another stack on a unicast address of the host, setting SO_REUSEADDR as they do.
        let other = Socket::new(Domain::IPV4, Type::DGRAM, None).unwrap();
        other.set_reuse_address(true).unwrap();
        other
            .bind(&SocketAddrV4::new(Ipv4Addr::new(127, 0, 30, 94), 36193).into())
            .unwrap();
    }

    #[test]
    fn unicast_round_trip_and_timeout() {
        let a = Endpoint::bind(Config {
            bind: Ipv4Addr::new(127, 0, 30, 91),
            ifaddr: Ipv4Addr::new(127, 0, 30, 91),
            port: 36191,
        })
        .unwrap();
        let b = Endpoint::bind(Config {
            bind: Ipv4Addr::new(127, 0, 30, 92),
            ifaddr: Ipv4Addr::new(127, 0, 30, 92),
            port: 36191,
        })
        .unwrap();
        a.send_to(b"hello", "127.0.30.92:36191".parse().unwrap())
            .unwrap();
        let mut buf = [0u8; 64];
        b.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let (n, from) = b.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"hello");
        assert_eq!(from, "127.0.30.91:36191".parse().unwrap());
        b.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
        let e = b.recv_from(&mut buf).unwrap_err();
        assert!(matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ));
    }
}
