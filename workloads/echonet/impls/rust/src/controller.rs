//! The controller's side of the protocol (SPEC §8): requests matched to replies by TID,
//! source address and ESV; per-attempt timeouts and bounded resends; multicast discovery.
//!
//! A controller owns one socket and one request at a time. Whatever arrives that does not
//! answer the request in flight (late or duplicate replies, other senders, other TIDs,
//! malformed datagrams) is counted in `ignored` and otherwise dropped.

use crate::frame::{self, esv, Eoj, FrameBuilder, Property, MAX_DATAGRAM};
use crate::transport::Endpoint;
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

/// One request: to whom, which object, which service, and its properties.
#[derive(Clone, Copy, Debug)]
pub struct Request<'r> {
    pub host: Ipv4Addr,
    pub deoj: Eoj,
    pub esv: u8,
    /// Properties with data (Set, and the set part of a SetGet).
    pub sets: &'r [Property<'r>],
    /// Properties asked for, sent with PDC 0 (Get, INF_REQ, INFC, the get part of a SetGet).
    pub epcs: &'r [u8],
}

/// A reply that matched its request.
#[derive(Clone, Copy, Debug)]
pub struct Answer<'a> {
    pub frame: frame::Frame<'a>,
    pub host: Ipv4Addr,
    /// Attempts made, the answered one included.
    pub attempts: u32,
    /// The controller's `ignored` count when the reply came.
    pub ignored: u64,
}

/// Why a command could not complete.
#[derive(Debug)]
pub enum Error {
    /// No matching reply after every attempt. `send_error` is the last failed send, if any.
    Unanswered {
        host: Ipv4Addr,
        attempts: u32,
        send_error: Option<io::Error>,
    },
    /// Discovery ended with fewer nodes than expected.
    TooFewNodes {
        found: usize,
        expected: usize,
        attempts: u32,
        send_error: Option<io::Error>,
    },
    /// The socket failed.
    Io(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cause = |e: &Option<io::Error>| match e {
            Some(e) => format!(" (last send failed: {e})"),
            None => String::new(),
        };
        match self {
            Error::Unanswered {
                host,
                attempts,
                send_error,
            } => write!(
                f,
                "no reply from {host} after {attempts} attempt(s){}",
                cause(send_error)
            ),
            Error::TooFewNodes {
                found,
                expected,
                attempts,
                send_error,
            } => write!(
                f,
                "{found} of {expected} node(s) answered after {attempts} attempt(s){}",
                cause(send_error)
            ),
            Error::Io(e) => write!(f, "socket error: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

/// A node found by discovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discovered {
    pub host: Ipv4Addr,
    /// The object that answered (its node profile).
    pub eoj: Eoj,
    /// Its instance list (0xD6).
    pub instances: Vec<Eoj>,
}

/// The outcome of a discovery.
#[derive(Clone, Debug, PartialEq)]
pub struct Discovery {
    /// Sorted by address.
    pub nodes: Vec<Discovered>,
    /// From the first send to the last node needed.
    pub elapsed: Duration,
    pub attempts: u32,
}

/// The controller: a socket, its TID sequence and the counters of SPEC §8.
pub struct Controller {
    endpoint: Endpoint,
    timeout: Duration,
    retries: u32,
    next_tid: u16,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    /// The receive timeout the socket has now, so it is set only when it changes.
    armed: Option<Duration>,
    /// Datagrams that answered nothing.
    pub ignored: u64,
    /// Resends after an attempt went unanswered.
    pub resends: u64,
}

impl Controller {
    /// A controller on `endpoint` whose attempts each wait `timeout`, with `retries` resends
    /// after the first attempt.
    pub fn new(endpoint: Endpoint, timeout: Duration, retries: u32) -> Controller {
        Controller {
            endpoint,
            timeout,
            retries,
            next_tid: 1,
            send_buf: Vec::with_capacity(MAX_DATAGRAM),
            recv_buf: vec![0; MAX_DATAGRAM],
            armed: None,
            ignored: 0,
            resends: 0,
        }
    }

    /// The TID the next request will carry.
    pub fn next_tid(&self) -> [u8; 2] {
        self.next_tid.to_be_bytes()
    }

    /// The next TID: 1, 2, … wrapping past 0xFFFF to 1 (0 is skipped).
    fn take_tid(&mut self) -> [u8; 2] {
        let tid = self.next_tid;
        self.next_tid = match tid.wrapping_add(1) {
            0 => 1,
            n => n,
        };
        tid.to_be_bytes()
    }

    /// Writes the request into the send buffer under a new TID; returns the TID.
    fn build(&mut self, request: &Request<'_>) -> [u8; 2] {
        let tid = self.take_tid();
        let mut b = FrameBuilder::new(
            &mut self.send_buf,
            tid,
            Eoj::CONTROLLER,
            request.deoj,
            request.esv,
        );
        for p in request.sets {
            b.push(p.epc, p.edt);
        }
        if esv::is_setget(request.esv) {
            b.start_get_part();
        }
        for &epc in request.epcs {
            b.push(epc, &[]);
        }
        tid
    }

    /// Sends `request` and waits for its reply, resending it (same TID) after each timeout,
    /// `1 + retries` attempts in all.
    pub fn request(&mut self, request: &Request<'_>) -> Result<Answer<'_>, Error> {
        let attempts = self.retries.saturating_add(1);
        self.exchange(request, attempts)
    }

    /// Sends `request` once and waits one timeout; `None` if nothing answered. For SetI,
    /// whose success has no reply.
    pub fn request_once(&mut self, request: &Request<'_>) -> Result<Option<Answer<'_>>, Error> {
        match self.exchange(request, 1) {
            Ok(answer) => Ok(Some(answer)),
            Err(Error::Unanswered {
                send_error: None, ..
            }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sends the request up to `attempts` times and returns the first matching reply.
    fn exchange(&mut self, request: &Request<'_>, attempts: u32) -> Result<Answer<'_>, Error> {
        let tid = self.build(request);
        let to = SocketAddr::from((request.host, self.endpoint.config().port));
        let mut send_error = None;
        for attempt in 1..=attempts {
            if attempt > 1 {
                self.resends += 1;
            }
            // A failed send is treated as a lost datagram: the attempt waits and the next one
            // resends (a transient ENOBUFS or a firewall's EPERM must not end the command).
            send_error = self.endpoint.send_to(&self.send_buf, to).err();
            let deadline = Instant::now() + self.timeout;
            let mut wait = self.timeout;
            loop {
                if let Some((len, from)) = self.receive(wait)? {
                    if self.reply_matches(len, from, request.host, tid, request.esv) {
                        // Decoded a second time: a frame borrowed from the buffer before the
                        // test could not be returned on one path and dropped on the other
                        // while `self` changes (a limit of today's borrow checker).
                        let frame = frame::decode(&self.recv_buf[..len])
                            .map_err(|_| io::Error::other("a matched reply no longer decodes"))?;
                        return Ok(Answer {
                            frame,
                            host: request.host,
                            attempts: attempt,
                            ignored: self.ignored,
                        });
                    }
                    self.ignored += 1;
                }
                wait = deadline.saturating_duration_since(Instant::now());
                if wait.is_zero() {
                    break;
                }
            }
        }
        Err(Error::Unanswered {
            host: request.host,
            attempts,
            send_error,
        })
    }

    /// True when the datagram in the receive buffer answers the request in flight: same TID,
    /// from the node asked, with a reply ESV of the request's service.
    fn reply_matches(
        &self,
        len: usize,
        from: SocketAddr,
        host: Ipv4Addr,
        tid: [u8; 2],
        esv: u8,
    ) -> bool {
        from.ip() == IpAddr::V4(host)
            && frame::decode(&self.recv_buf[..len])
                .is_ok_and(|f| f.tid == tid && esv::answers(esv, f.esv))
    }

    /// Receives one datagram within `wait`; `None` when the wait ran out or a receive error
    /// cut it short (callers then wait whatever time is left: an error reported for an
    /// earlier send, such as ECONNREFUSED, or EINTR must not end a command early).
    fn receive(&mut self, wait: Duration) -> Result<Option<(usize, SocketAddr)>, Error> {
        // Setting the timeout is a system call: done only when it changes, so a run of
        // requests answered within their first wait sets it once.
        if self.armed != Some(wait) {
            self.endpoint.set_read_timeout(Some(wait))?;
            self.armed = Some(wait);
        }
        Ok(self.endpoint.recv_from(&mut self.recv_buf).ok())
    }

    /// Multicasts a Get of 0xD6 to the node profile and collects the nodes that answer.
    ///
    /// With `expect`, returns once that many distinct nodes answered, resending the Get
    /// every timeout (`1 + retries` sends at most), and fails if fewer answered. Without it,
    /// sends once, waits `wait` and reports whoever answered.
    pub fn discover(&mut self, expect: Option<usize>, wait: Duration) -> Result<Discovery, Error> {
        let request = Request {
            host: frame::MULTICAST_GROUP,
            deoj: Eoj::NODE_PROFILE,
            esv: esv::GET,
            sets: &[],
            epcs: &[0xD6],
        };
        let tid = self.build(&request);
        let (rounds, round_wait) = match expect {
            Some(_) => (self.retries.saturating_add(1), self.timeout),
            None => (1, wait),
        };
        let mut nodes: BTreeMap<Ipv4Addr, Discovered> = BTreeMap::new();
        let mut send_error = None;
        let start = Instant::now();
        let mut last_needed = None;
        let mut attempts = 0;
        'rounds: for round in 1..=rounds {
            attempts = round;
            if round > 1 {
                self.resends += 1;
            }
            send_error = self.endpoint.send_multicast(&self.send_buf).err();
            let deadline = Instant::now() + round_wait;
            let mut left = round_wait;
            loop {
                if let Some((len, from)) = self.receive(left)? {
                    match self.discovered(len, from, tid) {
                        Some(node) if !nodes.contains_key(&node.host) => {
                            nodes.insert(node.host, node);
                            last_needed = Some(start.elapsed());
                            if expect.is_some_and(|n| nodes.len() >= n) {
                                break 'rounds;
                            }
                        }
                        // A second answer from a known node, or no answer at all.
                        _ => self.ignored += 1,
                    }
                }
                left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
            }
        }
        if let Some(expected) = expect {
            if nodes.len() < expected {
                return Err(Error::TooFewNodes {
                    found: nodes.len(),
                    expected,
                    attempts,
                    send_error,
                });
            }
        }
        Ok(Discovery {
            nodes: nodes.into_values().collect(),
            elapsed: last_needed.unwrap_or_else(|| start.elapsed()),
            attempts,
        })
    }

    /// The node a datagram in the receive buffer names, if it answers the discovery `tid`.
    fn discovered(&self, len: usize, from: SocketAddr, tid: [u8; 2]) -> Option<Discovered> {
        discovery_reply(&self.recv_buf[..len], from, tid)
    }
}

/// The node `datagram` (received from `from`) names, if it answers the discovery `tid`: a
/// Get reply from a node profile. Its instance list is read from 0xD6 as far as the bytes go
/// (the count byte is not trusted). Free of the socket, so the fuzz target can call it.
pub fn discovery_reply(datagram: &[u8], from: SocketAddr, tid: [u8; 2]) -> Option<Discovered> {
    let SocketAddr::V4(from) = from else {
        return None;
    };
    let f = frame::decode(datagram).ok()?;
    if f.tid != tid || !esv::answers(esv::GET, f.esv) {
        return None;
    }
    if !f.seoj.same_class(Eoj::NODE_PROFILE) {
        return None;
    }
    let list = f
        .props
        .iter()
        .find(|p| p.epc == 0xD6)
        .map_or(&[][..], |p| p.edt);
    let instances = match list.split_first() {
        Some((&n, eojs)) => eojs
            .chunks_exact(3)
            .take(usize::from(n))
            .map(|c| Eoj::new(c[0], c[1], c[2]))
            .collect(),
        None => Vec::new(),
    };
    Some(Discovered {
        host: *from.ip(),
        eoj: f.seoj,
        instances,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node profile's Get_Res of 0xD6 listing `instances` EOJs behind the count byte `n`.
    fn d6_reply(tid: [u8; 2], n: u8, eojs: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut b = FrameBuilder::new(
            &mut out,
            tid,
            Eoj::NODE_PROFILE,
            Eoj::CONTROLLER,
            esv::GET_RES,
        );
        b.push(0xD6, &[&[n][..], eojs].concat());
        out
    }

    #[test]
    fn discovery_reply_reads_the_instance_list_as_far_as_the_bytes_go() {
        let from = SocketAddr::from(([127, 0, 0, 5], 3610));
        let reply = d6_reply([0, 9], 1, &[0x01, 0x30, 0x01]);
        let node = discovery_reply(&reply, from, [0, 9]).unwrap();
        assert_eq!(node.host, Ipv4Addr::new(127, 0, 0, 5));
        assert_eq!(node.eoj, Eoj::NODE_PROFILE);
        assert_eq!(node.instances, [Eoj::AIR_CONDITIONER]);
        // The count byte is not trusted, nor is a trailing partial EOJ read.
        let lying = d6_reply([0, 9], 200, &[0x01, 0x30, 0x01, 0x02, 0x88]);
        let node = discovery_reply(&lying, from, [0, 9]).unwrap();
        assert_eq!(node.instances, [Eoj::AIR_CONDITIONER]);
        // Another TID, an IPv6 sender, or a datagram that does not decode: no node.
        assert!(discovery_reply(&reply, from, [0, 8]).is_none());
        assert!(discovery_reply(&reply, "[::1]:3610".parse().unwrap(), [0, 9]).is_none());
        assert!(discovery_reply(&reply[..reply.len() - 1], from, [0, 9]).is_none());
    }
}
