//! Fuzz target `datagram` of echonet-rust: the input is one UDP datagram. It goes through the
//! node's own path (`Responder::handle`: `frame::decode`, addressing, Get/Set/SetGet/INF_REQ/
//! INFC answers written with `FrameBuilder`) and the controller's reading of a received
//! datagram (`frame::decode` again, and `controller::discovery_reply`, which reads a
//! discovery answer's instance list).
//!
//! Checked per input (SPEC §3, §6):
//! - the outcome agrees with the decoder (malformed, format 2, or a frame);
//! - every reply decodes, carries the request's TID, comes from an object the request's DEOJ
//!   addresses (each at most once), goes to the request's SEOJ, has an ESV that answers the
//!   request's, and lists the request's EPCs in order (both parts of a SetGet);
//! - a request that is not for the node gets no reply;
//! - the datagram is handled a second time by the same node (a Set may have changed it) under
//!   the same rules.

#![no_main]

// The allocator guard every Rust fuzz target of the lab shares (fuzz/rust/guard.rs).
#[path = "../../../../../../fuzz/rust/guard.rs"]
mod guard;

use echonet_rust::controller::discovery_reply;
use echonet_rust::frame::{self, esv, DecodeError, Frame};
use echonet_rust::responder::{Outcome, Responder};
use std::net::{Ipv4Addr, SocketAddr};

#[global_allocator]
static ALLOC: guard::Guard = guard::Guard;

const NODE: Ipv4Addr = Ipv4Addr::LOCALHOST;

fn epcs(props: frame::Properties<'_>) -> Vec<u8> {
    props.iter().map(|p| p.epc).collect()
}

fn check_replies(datagram: &[u8], outcome: Outcome, replies: &[Vec<u8>]) {
    let request = match frame::decode(datagram) {
        Err(DecodeError::Malformed(_)) => {
            assert_eq!(outcome, Outcome::Malformed);
            assert!(replies.is_empty());
            return;
        }
        Err(DecodeError::Format2) => {
            assert_eq!(outcome, Outcome::Format2);
            assert!(replies.is_empty());
            return;
        }
        Ok(f) => f,
    };
    assert!(matches!(outcome, Outcome::Request | Outcome::Ignored));
    if outcome == Outcome::Ignored {
        assert!(replies.is_empty(), "a reply to an ignored datagram");
    }
    let mut senders = Vec::new();
    for reply in replies {
        let r: Frame<'_> = match frame::decode(reply) {
            Ok(r) => r,
            Err(e) => panic!("a reply that does not decode ({e:?}): {reply:02x?}"),
        };
        assert_eq!(r.tid, request.tid, "reply TID");
        assert!(r.seoj.is_addressed_by(request.deoj), "reply SEOJ");
        assert!(!senders.contains(&r.seoj), "one object answered twice");
        senders.push(r.seoj);
        assert_eq!(r.deoj, request.seoj, "reply DEOJ");
        assert!(esv::answers(request.esv, r.esv), "reply ESV {:#x}", r.esv);
        assert_eq!(epcs(r.props), epcs(request.props), "reply EPCs");
        assert_eq!(epcs(r.get_props), epcs(request.get_props), "reply get EPCs");
        // The controller's reading of the reply (a discovery answer if it is one).
        if let Some(node) = discovery_reply(reply, SocketAddr::from((NODE, 3610)), r.tid) {
            assert_eq!(node.host, NODE);
            assert_eq!(node.eoj, r.seoj);
        }
    }
}

fn check(datagram: &[u8]) {
    let mut responder = Responder::new(NODE);
    let mut reply = Vec::new();
    for _ in 0..2 {
        let mut replies = Vec::new();
        let outcome = responder.handle(datagram, &mut reply, |r| replies.push(r.to_vec()));
        check_replies(datagram, outcome, &replies);
    }
    // The controller's reading of the datagram as a received answer, with its own TID (so
    // that the match succeeds when the rest allows it) and with another one.
    if let Some(tid) = datagram.get(2..4) {
        let tid = [tid[0], tid[1]];
        let from = SocketAddr::from((Ipv4Addr::new(192, 0, 2, 7), 3610));
        if let Some(node) = discovery_reply(datagram, from, tid) {
            assert!(frame::decode(datagram).is_ok());
            assert!(node.instances.len() <= datagram.len() / 3);
        }
        let other = [tid[0] ^ 0xFF, tid[1]];
        assert!(discovery_reply(datagram, from, other).is_none());
    }
    assert!(discovery_reply(datagram, "[::1]:3610".parse().unwrap(), [0, 0]).is_none());
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| guard::check_no_leak(data, check));
