//! One request in, the reply (or none) out (SPEC §6): Get, SetI, SetC, SetGet, INF_REQ,
//! INFC, addressing by instance 0x00, and the node's counters.
//!
//! The responder owns the node's objects and writes each reply into a buffer the caller
//! reuses, handing it to a callback to send: no allocation per datagram. Sending stays with
//! the caller (the transport), so this module is pure and tested without sockets.

use crate::frame::{self, esv, DecodeError, Eoj, Frame, FrameBuilder, Properties};
use crate::objects::{Node, Object};
use serde::Serialize;
use std::net::Ipv4Addr;

/// What became of one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A request to one of the node's objects, answered (a successful SetI sends nothing).
    Request,
    /// Well-formed but not for this node: another object, or not a request (replies, INF).
    Ignored,
    /// Broken (SPEC §3).
    Malformed,
    /// Format 2.
    Format2,
}

/// The node's counters, printed as JSON when it stops (SPEC §7). Field order is the SPEC's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub received: u64,
    pub requests: u64,
    pub replies: u64,
    pub ignored: u64,
    pub dropped_malformed: u64,
    pub dropped_format2: u64,
    pub send_errors: u64,
}

impl Counters {
    /// Counts one datagram read and what became of it.
    pub fn record(&mut self, outcome: Outcome) {
        self.received += 1;
        match outcome {
            Outcome::Request => self.requests += 1,
            Outcome::Ignored => self.ignored += 1,
            Outcome::Malformed => self.dropped_malformed += 1,
            Outcome::Format2 => self.dropped_format2 += 1,
        }
    }

    /// Counts one send and whether the kernel took it.
    pub fn record_send(&mut self, sent: bool) {
        if sent {
            self.replies += 1;
        } else {
            self.send_errors += 1;
        }
    }
}

/// The node's request handling.
pub struct Responder {
    node: Node,
}

impl Responder {
    /// A responder for a node whose address (in 0x83) is `addr`.
    pub fn new(addr: Ipv4Addr) -> Responder {
        Responder {
            node: Node::new(addr),
        }
    }

    /// Handles one datagram: each object it addresses writes its reply into `reply` and the
    /// reply is passed to `send` (once per answering object; nothing for a successful SetI).
    pub fn handle(
        &mut self,
        datagram: &[u8],
        reply: &mut Vec<u8>,
        mut send: impl FnMut(&[u8]),
    ) -> Outcome {
        let request = match frame::decode(datagram) {
            Ok(f) => f,
            Err(DecodeError::Malformed(_)) => return Outcome::Malformed,
            Err(DecodeError::Format2) => return Outcome::Format2,
        };
        if !is_request(request.esv) {
            return Outcome::Ignored;
        }
        let mut addressed = false;
        for object in self.node.objects_mut() {
            if !object.eoj().is_addressed_by(request.deoj) {
                continue;
            }
            addressed = true;
            if answer(object, &request, reply) {
                send(reply);
            }
        }
        if addressed {
            Outcome::Request
        } else {
            Outcome::Ignored
        }
    }

    /// The INF a node multicasts at start (SPEC §6): its instance list notification 0xD5.
    pub fn announcement(&self, tid: [u8; 2], out: &mut Vec<u8>) {
        let profile = self.node.profile();
        let mut b = FrameBuilder::new(out, tid, Eoj::NODE_PROFILE, Eoj::NODE_PROFILE, esv::INF);
        b.push(0xD5, profile.get(0xD5).unwrap_or_default());
    }
}

/// The services a node answers.
fn is_request(esv: u8) -> bool {
    matches!(
        esv,
        esv::SETI | esv::SETC | esv::GET | esv::INF_REQ | esv::SETGET | esv::INFC
    )
}

/// Writes `object`'s reply to `request` into `reply`; false when there is none to send.
/// The ESV is settled last: success or refusal is known only once every property was tried.
fn answer(object: &mut Object, request: &Frame<'_>, reply: &mut Vec<u8>) -> bool {
    let mut b = FrameBuilder::new(reply, request.tid, object.eoj(), request.seoj, request.esv);
    let (all_ok, ok_esv, sna_esv) = match request.esv {
        esv::GET => (
            read_part(object, request.props, &mut b),
            esv::GET_RES,
            esv::GET_SNA,
        ),
        esv::INF_REQ => (
            read_part(object, request.props, &mut b),
            esv::INF,
            esv::INF_SNA,
        ),
        esv::SETC => (
            write_part(object, request.props, &mut b),
            esv::SET_RES,
            esv::SETC_SNA,
        ),
        esv::SETI => {
            if write_part(object, request.props, &mut b) {
                return false; // a SetI that succeeds is not answered
            }
            (false, esv::SETI_SNA, esv::SETI_SNA)
        }
        esv::SETGET => {
            let set_ok = write_part(object, request.props, &mut b);
            b.start_get_part();
            let get_ok = read_part(object, request.get_props, &mut b);
            (set_ok && get_ok, esv::SETGET_RES, esv::SETGET_SNA)
        }
        esv::INFC => {
            // Acknowledged property by property; nothing can fail.
            for p in request.props {
                b.push(p.epc, &[]);
            }
            (true, esv::INFC_RES, esv::INFC_RES)
        }
        _ => return false,
    };
    b.set_esv(if all_ok { ok_esv } else { sna_esv });
    true
}

/// Get semantics: each EPC with its EDT, an unreadable one with PDC 0. The request's EDTs
/// are ignored. Returns whether every property was readable.
fn read_part(object: &Object, props: Properties<'_>, b: &mut FrameBuilder<'_>) -> bool {
    let mut ok = true;
    for p in props {
        match object.get(p.epc) {
            Some(edt) => b.push(p.epc, edt),
            None => {
                ok = false;
                b.push(p.epc, &[]);
            }
        }
    }
    ok
}

/// Set semantics, applied in order: an accepted EPC answers with PDC 0, a refused one with
/// the request's PDC and EDT. Returns whether every property was accepted.
fn write_part(object: &mut Object, props: Properties<'_>, b: &mut FrameBuilder<'_>) -> bool {
    let mut ok = true;
    for p in props {
        if object.set(p.epc, p.edt) {
            b.push(p.epc, &[]);
        } else {
            ok = false;
            b.push(p.epc, p.edt);
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect()
    }

    /// Runs one datagram through a responder; returns the outcome and the replies sent.
    fn run(r: &mut Responder, req: &[u8]) -> (Outcome, Vec<Vec<u8>>) {
        let mut reply = Vec::new();
        let mut sent = Vec::new();
        let outcome = r.handle(req, &mut reply, |b| sent.push(b.to_vec()));
        (outcome, sent)
    }

    fn localhost() -> Responder {
        Responder::new(Ipv4Addr::new(127, 0, 0, 1))
    }

    #[test]
    fn the_36_byte_get_of_spec_section_6() {
        let req = hex(
            "10 81 00 02 0E F0 01 0E F0 01 62 0C 80 00 82 00 83 00 8A 00 9D 00 9E 00 9F 00 D3 00 \
             D4 00 D5 00 D6 00 D7 00",
        );
        let expected = hex(
            "10 81 00 02 0E F0 01 0E F0 01 72 0C 80 01 30 82 04 01 0E 01 00 83 11 FE FF FF FF \
             00 00 00 00 00 00 00 00 00 7F 00 00 01 8A 03 FF FF FF 9D 03 02 80 D5 9E 01 00 9F \
             0D 0C 80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7 D3 03 00 00 01 D4 02 00 02 D5 04 01 01 \
             30 01 D6 04 01 01 30 01 D7 03 01 01 30",
        );
        assert_eq!(req.len(), 36);
        assert_eq!(expected.len(), 94);
        let (outcome, sent) = run(&mut localhost(), &req);
        assert_eq!(outcome, Outcome::Request);
        assert_eq!(sent, [expected]);
    }

    #[test]
    fn the_start_inf_of_spec_section_6() {
        let mut out = Vec::new();
        localhost().announcement([0x12, 0x34], &mut out);
        assert_eq!(
            out,
            hex("10 81 12 34 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01")
        );
    }

    #[test]
    fn get_sna_keeps_order_opc_and_duplicates() {
        // To the air conditioner: 0x80, unknown 0xC0 (with a stray EDT), 0x80 again.
        let req = hex("10 81 AB CD 05 FF 01 01 30 01 62 03 80 00 C0 01 55 80 00");
        let (_, sent) = run(&mut localhost(), &req);
        assert_eq!(
            sent,
            [hex(
                "10 81 AB CD 01 30 01 05 FF 01 52 03 80 01 31 C0 00 80 01 31"
            )]
        );
    }

    #[test]
    fn set_i_succeeds_silently_and_persists() {
        let mut r = localhost();
        let (outcome, sent) = run(&mut r, &hex("10 81 00 01 05 FF 01 01 30 01 60 01 80 01 30"));
        assert_eq!((outcome, sent.len()), (Outcome::Request, 0));
        let (_, sent) = run(&mut r, &hex("10 81 00 02 05 FF 01 01 30 01 62 01 80 00"));
        assert_eq!(sent, [hex("10 81 00 02 01 30 01 05 FF 01 72 01 80 01 30")]);
    }

    #[test]
    fn set_i_sna_and_partial_application() {
        let mut r = localhost();
        // 0xB3 = 0x19 accepted, 0xB3 = 0x33 refused (out of range), 0x88 refused (read-only).
        let req = hex("10 81 00 07 05 FF 01 01 30 01 60 03 B3 01 19 B3 01 33 88 01 41");
        let (_, sent) = run(&mut r, &req);
        assert_eq!(
            sent,
            [hex(
                "10 81 00 07 01 30 01 05 FF 01 50 03 B3 00 B3 01 33 88 01 41"
            )]
        );
        let (_, sent) = run(&mut r, &hex("10 81 00 08 05 FF 01 01 30 01 62 01 B3 00"));
        assert_eq!(sent, [hex("10 81 00 08 01 30 01 05 FF 01 72 01 B3 01 19")]);
    }

    #[test]
    fn set_c_res_and_sna() {
        let mut r = localhost();
        let ok = hex("10 81 00 03 05 FF 01 01 30 01 61 02 80 01 30 B3 01 19");
        let (_, sent) = run(&mut r, &ok);
        assert_eq!(
            sent,
            [hex("10 81 00 03 01 30 01 05 FF 01 71 02 80 00 B3 00")]
        );
        // PDC 2 is refused with its data echoed.
        let bad = hex("10 81 00 04 05 FF 01 01 30 01 61 01 80 02 30 30");
        let (_, sent) = run(&mut r, &bad);
        assert_eq!(
            sent,
            [hex("10 81 00 04 01 30 01 05 FF 01 51 01 80 02 30 30")]
        );
        // The node profile refuses everything.
        let np = hex("10 81 00 05 05 FF 01 0E F0 01 61 01 80 01 30");
        let (_, sent) = run(&mut r, &np);
        assert_eq!(sent, [hex("10 81 00 05 0E F0 01 05 FF 01 51 01 80 01 30")]);
    }

    #[test]
    fn set_get_res_and_sna() {
        let mut r = localhost();
        // Set 0x80 = 0x30, then read 0x80 and 0xB0: the get part sees the new value.
        let req = hex("10 81 00 09 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00 B0 00");
        let (_, sent) = run(&mut r, &req);
        assert_eq!(
            sent,
            [hex(
                "10 81 00 09 01 30 01 05 FF 01 7E 01 80 00 02 80 01 30 B0 01 41"
            )]
        );
        // A refused set and an unreadable get.
        let req = hex("10 81 00 0A 05 FF 01 01 30 01 6E 01 B0 01 50 01 C1 00");
        let (_, sent) = run(&mut r, &req);
        assert_eq!(
            sent,
            [hex("10 81 00 0A 01 30 01 05 FF 01 5E 01 B0 01 50 01 C1 00")]
        );
        // Only a get part.
        let req = hex("10 81 00 0B 05 FF 01 01 30 01 6E 00 01 B3 00");
        let (_, sent) = run(&mut r, &req);
        assert_eq!(
            sent,
            [hex("10 81 00 0B 01 30 01 05 FF 01 7E 00 01 B3 01 14")]
        );
    }

    #[test]
    fn inf_req_and_infc() {
        let mut r = localhost();
        let req = hex("10 81 00 0C 05 FF 01 0E F0 01 63 01 D5 00");
        let (_, sent) = run(&mut r, &req);
        assert_eq!(
            sent,
            [hex("10 81 00 0C 0E F0 01 05 FF 01 73 01 D5 04 01 01 30 01")]
        );
        let req = hex("10 81 00 0D 05 FF 01 0E F0 01 63 01 81 00");
        let (_, sent) = run(&mut r, &req);
        assert_eq!(sent, [hex("10 81 00 0D 0E F0 01 05 FF 01 53 01 81 00")]);
        let req = hex("10 81 00 0E 05 FF 01 0E F0 01 74 02 80 01 30 D5 00");
        let (_, sent) = run(&mut r, &req);
        assert_eq!(
            sent,
            [hex("10 81 00 0E 0E F0 01 05 FF 01 7A 02 80 00 D5 00")]
        );
    }

    #[test]
    fn instance_zero_answers_with_the_objects_own_eoj() {
        let mut r = localhost();
        let req = hex("10 81 00 0F 05 FF 01 0E F0 00 62 01 D6 00");
        let (_, sent) = run(&mut r, &req);
        assert_eq!(
            sent,
            [hex("10 81 00 0F 0E F0 01 05 FF 01 72 01 D6 04 01 01 30 01")]
        );
        let req = hex("10 81 00 10 05 FF 01 01 30 00 62 01 80 00");
        let (_, sent) = run(&mut r, &req);
        assert_eq!(sent, [hex("10 81 00 10 01 30 01 05 FF 01 72 01 80 01 31")]);
    }

    #[test]
    fn what_is_ignored_and_dropped() {
        let mut r = localhost();
        let cases = [
            // Another instance, another class.
            (
                "10 81 00 01 05 FF 01 01 30 02 62 01 80 00",
                Outcome::Ignored,
            ),
            (
                "10 81 00 01 05 FF 01 02 88 01 62 01 80 00",
                Outcome::Ignored,
            ),
            // Replies and INF are not requests.
            (
                "10 81 00 01 0E F0 01 0E F0 01 72 01 80 01 30",
                Outcome::Ignored,
            ),
            (
                "10 81 00 01 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01",
                Outcome::Ignored,
            ),
            (
                "10 81 00 01 0E F0 01 0E F0 01 5E 00 01 80 00",
                Outcome::Ignored,
            ),
            (
                "10 81 00 01 05 FF 01 0E F0 01 00 01 80 00",
                Outcome::Ignored,
            ),
            // Malformed and format 2.
            (
                "10 81 00 01 05 FF 01 0E F0 01 62 02 80 00",
                Outcome::Malformed,
            ),
            ("10 81 00 01 05 FF 01 0E F0 01 62", Outcome::Malformed),
            (
                "10 82 00 01 05 FF 01 0E F0 01 62 01 80 00",
                Outcome::Format2,
            ),
        ];
        for (req, expected) in cases {
            let (outcome, sent) = run(&mut r, &hex(req));
            assert_eq!((outcome, sent.len()), (expected, 0), "{req}");
        }
    }

    #[test]
    fn counters_add_up() {
        let mut c = Counters::default();
        c.record(Outcome::Request);
        c.record_send(true);
        c.record(Outcome::Ignored);
        c.record(Outcome::Malformed);
        c.record(Outcome::Format2);
        c.record_send(false);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"received":4,"requests":1,"replies":1,"ignored":1,"dropped_malformed":1,"dropped_format2":1,"send_errors":1}"#
        );
    }

    /// A small deterministic generator: the tests need no random-number crate.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn random_requests_never_panic_and_replies_are_well_formed() {
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        let mut r = localhost();
        let services = [0x60, 0x61, 0x62, 0x63, 0x6E, 0x74, 0x72, 0x00];
        let objects = [[0x0E, 0xF0, 0x01], [0x0E, 0xF0, 0x00], [0x01, 0x30, 0x01]];
        let mut req = Vec::new();
        let mut reply = Vec::new();
        for round in 0..100_000u64 {
            req.clear();
            let deoj = objects[(rng.next() % 3) as usize];
            let service = services[(rng.next() % services.len() as u64) as usize];
            req.extend_from_slice(&[0x10, 0x81, 0, 1, 0x05, 0xFF, 0x01]);
            req.extend_from_slice(&deoj);
            req.push(service);
            // Random tail: usually shaped like properties, sometimes pure noise.
            let tail = (rng.next() % 24) as usize;
            for _ in 0..tail {
                let b = rng.next() as u8;
                req.push(if round % 3 == 0 {
                    b
                } else {
                    b % 4 + 0x80 * (b & 1)
                });
            }
            let outcome = r.handle(&req, &mut reply, |out| {
                let f = frame::decode(out).expect("a reply decodes");
                assert_eq!(f.tid, [0, 1]);
                assert_eq!(f.deoj, Eoj::CONTROLLER);
                assert!(esv::answers(service, f.esv), "{service:#x} -> {:#x}", f.esv);
            });
            assert_eq!(outcome == Outcome::Malformed, frame::decode(&req).is_err());
        }
    }
}
