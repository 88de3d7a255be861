//! The driver's UDP socket as a controller (SPEC §2, §8): bound to its own address and port,
//! multicasting (discovery) on that address's interface with TTL 1, and receiving with a
//! bounded wait. Blocking, with SO_RCVTIMEO: the reply normally comes first, so one recvfrom
//! per reply and no poll; the timeout is set again only when a wait is not the usual one.

use driver_kit::error::{Failure, Result};
use hdrhistogram::Histogram;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant};

use crate::frame::MAX_DATAGRAM;

pub struct ControllerSocket {
    socket: UdpSocket,
    /// The SO_RCVTIMEO in effect (None: never set, blocks for ever).
    wait: Option<Duration>,
    buf: Vec<u8>,
}

/// One datagram received.
pub struct Received<'a> {
    pub datagram: &'a [u8],
    pub from: SocketAddr,
    /// Stamped right after recvfrom returned, before anything looks at the datagram.
    pub at: Instant,
}

impl ControllerSocket {
    /// A socket bound to `addr:port`. With `multicast`, it sends multicast out of `addr`'s
    /// interface (IP_MULTICAST_IF), TTL 1 (never beyond the link), loop on (SPEC §2).
    pub fn bind(addr: Ipv4Addr, port: u16, multicast: bool) -> Result<Self> {
        let at = SocketAddrV4::new(addr, port);
        let fail = |what: &str, e: io::Error| {
            Failure::new(format!("the driver's socket on {at}: {what}: {e}"))
        };
        let socket = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))
            .map_err(|e| fail("socket", e))?;
        if multicast {
            socket
                .set_multicast_if_v4(&addr)
                .map_err(|e| fail("IP_MULTICAST_IF", e))?;
            socket
                .set_multicast_ttl_v4(1)
                .map_err(|e| fail("IP_MULTICAST_TTL", e))?;
            socket
                .set_multicast_loop_v4(true)
                .map_err(|e| fail("IP_MULTICAST_LOOP", e))?;
        }
        socket.bind(&at.into()).map_err(|e| {
            let hint = match e.kind() {
                io::ErrorKind::AddrInUse => " (another program holds it)",
                io::ErrorKind::AddrNotAvailable => " (no interface has this address here)",
                _ => "",
            };
            Failure::new(format!(
                "cannot bind the driver's socket to {at}: {e}{hint}"
            ))
        })?;
        Ok(ControllerSocket {
            socket: socket.into(),
            wait: None,
            buf: vec![0; MAX_DATAGRAM],
        })
    }

    /// Sends one datagram. A failure is the caller's to judge: to a controller it is a lost
    /// datagram (a firewall's drop on output, a full buffer), which the next attempt resends.
    pub fn send_to(&self, datagram: &[u8], to: SocketAddrV4) -> io::Result<()> {
        loop {
            match self.socket.send_to(datagram, to) {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits at most `wait` for one datagram; None when the time is up (or `wait` is zero).
    pub fn recv(&mut self, wait: Duration) -> Result<Option<Received<'_>>> {
        if wait.is_zero() {
            return Ok(None);
        }
        if self.wait != Some(wait) {
            self.socket
                .set_read_timeout(Some(wait))
                .map_err(|e| Failure::new(format!("setting SO_RCVTIMEO: {e}")))?;
            self.wait = Some(wait);
        }
        loop {
            match self.socket.recv_from(&mut self.buf) {
                Ok((n, from)) => {
                    let at = Instant::now();
                    return Ok(Some(Received {
                        datagram: &self.buf[..n],
                        from,
                        at,
                    }));
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None)
                }
                // A signal, or an ICMP error of an earlier send: neither ends the wait (SPEC
                // §7 asks the same of nodes); an interrupted wait restarts in full, a bounded
                // overshoot.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) => return Err(Failure::new(format!("receiving: {e}"))),
            }
        }
    }
}

/// How long the driver waits for a reply, and how often it asks again.
#[derive(Clone, Copy, Debug)]
pub struct Patience {
    /// One attempt's wait.
    pub timeout: Duration,
    /// Resends of the same datagram after the first attempt.
    pub retries: u32,
    /// The end of the trial (--timeout-s).
    pub deadline: Instant,
}

impl Patience {
    /// The wait of an attempt that starts now: the timeout, or what is left of the trial;
    /// None once the trial's time is up.
    pub fn attempt(&self) -> Option<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        (!left.is_zero()).then(|| self.timeout.min(left))
    }

    /// "6 attempts of 200 ms".
    pub fn describe(&self) -> String {
        format!(
            "{} attempts of {} ms",
            u64::from(self.retries) + 1,
            self.timeout.as_millis()
        )
    }
}

/// "" or "; the last send failed: …", for the end of a message about a request that went
/// unanswered.
pub fn send_failure(error: Option<&io::Error>) -> String {
    error.map_or(String::new(), |e| format!("; the last send failed: {e}"))
}

/// What the driver ignored and resent over a phase of the trial.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Requests sent again after an attempt went unanswered.
    pub retries: u64,
    /// Datagrams that matched no outstanding request: late replies to an answered one,
    /// duplicates, other TIDs or sources, datagrams too short to be a frame.
    pub ignored: u64,
}

/// What a load the driver ran measured, whatever its mode (faithful and batched, load,
/// discovery).
pub struct Outcome {
    /// First measured send to the last measured reply (discovery: to the last node's answer of
    /// the last measured round).
    pub elapsed: Duration,
    /// Round trips of the measured requests (discovery: time of each measured round), ns.
    pub latency: Histogram<u64>,
    /// Measured requests (discovery: rounds).
    pub requests: u64,
    /// Retries and ignored datagrams of the measured part.
    pub measured: Tally,
    /// Requests answered, warm-up included (discovery: rounds done; each node answered once
    /// per round).
    pub answered: u64,
    /// Datagrams sent to the node, warm-up and retries included (discovery: multicast
    /// datagrams, each reaches every node).
    pub sent: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_bounded_and_datagrams_stamped() {
        let mut socket = ControllerSocket::bind(Ipv4Addr::LOCALHOST, 0, false).unwrap();
        let SocketAddr::V4(me) = socket.socket.local_addr().unwrap() else {
            unreachable!()
        };
        let started = Instant::now();
        assert!(socket.recv(Duration::from_millis(30)).unwrap().is_none());
        assert!(started.elapsed() >= Duration::from_millis(25));
        assert!(socket.recv(Duration::ZERO).unwrap().is_none());
        socket.send_to(b"hello", me).unwrap();
        let got = socket.recv(Duration::from_secs(10)).unwrap().unwrap();
        assert_eq!(got.datagram, b"hello");
        assert_eq!(got.from, SocketAddr::V4(me));
        assert!(got.at >= started);
    }

    #[test]
    fn bind_failures_say_why() {
        let first = ControllerSocket::bind(Ipv4Addr::LOCALHOST, 0, true).unwrap();
        let SocketAddr::V4(taken) = first.socket.local_addr().unwrap() else {
            unreachable!()
        };
        let err = ControllerSocket::bind(Ipv4Addr::LOCALHOST, taken.port(), false)
            .err()
            .unwrap();
        assert!(err.message().contains("another program holds it"), "{err}");
        // TEST-NET-1: no interface here has it.
        let err = ControllerSocket::bind(Ipv4Addr::new(192, 0, 2, 1), 0, false)
            .err()
            .unwrap();
        assert!(err.message().contains("no interface has"), "{err}");
    }

    #[test]
    fn patience_is_bounded_by_the_trial() {
        let now = Instant::now();
        let patience = Patience {
            timeout: Duration::from_millis(200),
            retries: 5,
            deadline: now + Duration::from_secs(60),
        };
        assert_eq!(patience.attempt(), Some(Duration::from_millis(200)));
        assert_eq!(patience.describe(), "6 attempts of 200 ms");
        let over = Patience {
            deadline: now,
            ..patience
        };
        assert_eq!(over.attempt(), None);
    }
}
