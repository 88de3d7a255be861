//! What a node must answer, byte for byte (SPEC §5, §6): the node profile's 12 properties and
//! their values, the replies built from them, and the comparison that names the first byte
//! that differs.

use crate::frame::{self, CONTROLLER, EHD, ESV_GET_RES, HEADER_LEN, NODE_PROFILE};
use std::net::Ipv4Addr;

/// The node profile's implementation-required properties, in the order of the seed's loop
/// (SPEC §8 `bench`).
pub const NODE_PROFILE_EPCS: [u8; 12] = [
    0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7,
];
/// Self-node instance list S, the property discovery asks for.
pub const INSTANCE_LIST: u8 = 0xD6;

/// The EDT of node-profile property `epc` on a node whose address is `addr` (SPEC §5); None
/// for a property the node profile does not have.
pub fn node_profile_edt(epc: u8, addr: Ipv4Addr) -> Option<Vec<u8>> {
    let edt: &[u8] = match epc {
        0x80 => &[0x30],
        0x82 => &[0x01, 0x0E, 0x01, 0x00],
        0x83 => {
            // FE (unique identifier follows), FF FF FF (experimental manufacturer), nine zero
            // bytes, then the node's IPv4 address: unique per node, the same on every read.
            let mut id = vec![0xFE, 0xFF, 0xFF, 0xFF];
            id.extend_from_slice(&[0; 9]);
            id.extend_from_slice(&addr.octets());
            return Some(id);
        }
        0x8A => &[0xFF, 0xFF, 0xFF],
        0x9D => &[0x02, 0x80, 0xD5],
        0x9E => &[0x00],
        0x9F => &[
            0x0C, 0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7,
        ],
        0xD3 => &[0x00, 0x00, 0x01],
        0xD4 => &[0x00, 0x02],
        0xD5 | 0xD6 => &[0x01, 0x01, 0x30, 0x01],
        0xD7 => &[0x01, 0x01, 0x30],
        _ => return None,
    };
    Some(edt.to_vec())
}

/// The node profile's Get_Res to a Get of `epcs` from `requester`, with TID 0 (SPEC §6: same
/// TID, SEOJ = the node profile, DEOJ = the request's SEOJ, properties in request order).
/// None if an EPC is not the node profile's (the driver only asks for its 12).
pub fn get_reply(requester: [u8; 3], epcs: &[u8], addr: Ipv4Addr) -> Option<Vec<u8>> {
    let mut frame = Vec::with_capacity(HEADER_LEN + 20 * epcs.len());
    frame.extend_from_slice(&EHD);
    frame.extend_from_slice(&[0, 0]);
    frame.extend_from_slice(&NODE_PROFILE);
    frame.extend_from_slice(&requester);
    frame.push(ESV_GET_RES);
    frame.push(u8::try_from(epcs.len()).ok()?);
    for &epc in epcs {
        let edt = node_profile_edt(epc, addr)?;
        frame.push(epc);
        frame.push(u8::try_from(edt.len()).ok()?);
        frame.extend_from_slice(&edt);
    }
    Some(frame)
}

/// One request the driver sends again and again, and the one reply that is right for it: both
/// built once, only the TID changes.
#[derive(Clone)]
pub struct Exchange {
    /// "Get 0x83", "Get of the 12 properties": for messages.
    pub what: String,
    pub request: Vec<u8>,
    /// The right reply with TID 0.
    pub reply: Vec<u8>,
}

impl Exchange {
    /// A Get of `epcs` from the driver to the node profile of the node at `addr`.
    pub fn get(epcs: &[u8], addr: Ipv4Addr) -> Option<Exchange> {
        let what = match epcs {
            [one] => format!("Get 0x{one:02X}"),
            many => format!("Get of {} properties", many.len()),
        };
        Some(Exchange {
            what,
            request: frame::get_request(epcs),
            reply: get_reply(CONTROLLER, epcs, addr)?,
        })
    }

    /// The 12 one-property Gets of the faithful loop, in the seed's order.
    pub fn faithful(addr: Ipv4Addr) -> Vec<Exchange> {
        NODE_PROFILE_EPCS
            .iter()
            .filter_map(|&epc| Exchange::get(&[epc], addr))
            .collect()
    }

    /// Checks `got`, a reply that matched TID `tid`, against the right reply: Ok, or what
    /// differs first.
    pub fn check(&self, tid: u16, got: &[u8]) -> Result<(), String> {
        let want = &self.reply;
        let tid_bytes = tid.to_be_bytes();
        // The common case first: every byte right.
        if got.len() == want.len()
            && got[..2] == want[..2]
            && got[2..4] == tid_bytes
            && got[4..] == want[4..]
        {
            return Ok(());
        }
        let mut wanted = want.clone();
        frame::set_tid(&mut wanted, tid);
        Err(describe_difference(got, &wanted))
    }
}

/// "byte 14 is 0x31, expected 0x30 (got 94 bytes: …; expected 94 bytes: …)".
pub fn describe_difference(got: &[u8], want: &[u8]) -> String {
    let first = got
        .iter()
        .zip(want)
        .position(|(g, w)| g != w)
        .unwrap_or(got.len().min(want.len()));
    let what = match (got.get(first), want.get(first)) {
        (Some(g), Some(w)) => format!("byte {first} is 0x{g:02X}, expected 0x{w:02X}"),
        (None, Some(_)) => format!("it ends after {} bytes, expected {}", got.len(), want.len()),
        (Some(_), None) => format!("{} bytes, expected {}", got.len(), want.len()),
        (None, None) => "it is right".to_string(),
    };
    format!(
        "{what} (got {} bytes: {}; expected {} bytes: {})",
        got.len(),
        excerpt(got),
        want.len(),
        frame::hex(want)
    )
}

/// The bytes in hex, the first 128 of a long datagram.
fn excerpt(bytes: &[u8]) -> String {
    const SHOWN: usize = 128;
    match bytes.len() > SHOWN {
        true => format!("{} …", frame::hex(&bytes[..SHOWN])),
        false => frame::hex(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::hex;

    const LOCALHOST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);

    #[test]
    fn the_94_byte_reply_of_the_spec() {
        // SPEC §6: the reply of a node at 127.0.0.1 to the seed's Get (SEOJ 0x0EF001, TID 2).
        let mut reply = get_reply(NODE_PROFILE, &NODE_PROFILE_EPCS, LOCALHOST).unwrap();
        frame::set_tid(&mut reply, 2);
        assert_eq!(
            hex(&reply),
            "10 81 00 02 0E F0 01 0E F0 01 72 0C 80 01 30 82 04 01 0E 01 00 83 11 FE FF FF FF 00 \
             00 00 00 00 00 00 00 00 7F 00 00 01 8A 03 FF FF FF 9D 03 02 80 D5 9E 01 00 9F 0D 0C \
             80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7 D3 03 00 00 01 D4 02 00 02 D5 04 01 01 30 01 D6 \
             04 01 01 30 01 D7 03 01 01 30"
        );
        assert_eq!(reply.len(), 94);
    }

    #[test]
    fn identification_carries_the_node_s_address() {
        let edt = node_profile_edt(0x83, Ipv4Addr::new(10, 201, 0, 7)).unwrap();
        assert_eq!(
            hex(&edt),
            "FE FF FF FF 00 00 00 00 00 00 00 00 00 0A C9 00 07"
        );
        assert!(node_profile_edt(0x81, LOCALHOST).is_none());
        assert!(Exchange::get(&[0x80, 0x81], LOCALHOST).is_none());
    }

    #[test]
    fn the_faithful_loop_and_discovery_exchanges() {
        let loop12 = Exchange::faithful(LOCALHOST);
        assert_eq!(loop12.len(), 12);
        assert_eq!(loop12[0].what, "Get 0x80");
        assert_eq!(
            hex(&loop12[0].request),
            "10 81 00 00 05 FF 01 0E F0 01 62 01 80 00"
        );
        assert_eq!(
            hex(&loop12[0].reply),
            "10 81 00 00 0E F0 01 05 FF 01 72 01 80 01 30"
        );
        // Discovery's answer (SPEC §6): the instance list, whatever the address.
        let discovery = Exchange::get(&[INSTANCE_LIST], LOCALHOST).unwrap();
        assert_eq!(
            hex(&discovery.reply),
            "10 81 00 00 0E F0 01 05 FF 01 72 01 D6 04 01 01 30 01"
        );
        assert_eq!(
            Exchange::get(&NODE_PROFILE_EPCS, LOCALHOST).unwrap().what,
            "Get of 12 properties"
        );
    }

    #[test]
    fn a_check_names_the_first_wrong_byte() {
        let get = Exchange::get(&[0x80], LOCALHOST).unwrap();
        let mut good = get.reply.clone();
        frame::set_tid(&mut good, 0x0102);
        assert_eq!(get.check(0x0102, &good), Ok(()));

        let mut wrong = good.clone();
        wrong[14] = 0x31;
        let err = get.check(0x0102, &wrong).unwrap_err();
        assert!(
            err.starts_with("byte 14 is 0x31, expected 0x30 (got 15 bytes: 10 81 01 02"),
            "{err}"
        );
        assert!(err.ends_with("expected 15 bytes: 10 81 01 02 0E F0 01 05 FF 01 72 01 80 01 30)"));

        let err = get.check(0x0102, &good[..13]).unwrap_err();
        assert!(
            err.starts_with("it ends after 13 bytes, expected 15"),
            "{err}"
        );
        let mut long = good.clone();
        long.push(0);
        let err = get.check(0x0102, &long).unwrap_err();
        assert!(err.starts_with("16 bytes, expected 15"), "{err}");
        // A Get_SNA with the right TID is a reply, and a wrong one.
        let mut sna = good.clone();
        sna[10] = 0x52;
        let err = get.check(0x0102, &sna).unwrap_err();
        assert!(err.starts_with("byte 10 is 0x52, expected 0x72"), "{err}");
        assert!(describe_difference(&[0; 300], &[1]).contains(" …;"));
    }
}
