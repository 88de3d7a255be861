//! The ECHONET Lite frames the driver sends, and the two fields of a datagram it matches a reply
//! by (workloads/echonet/SPEC.md §3, §8). The driver is a controller: SEOJ 0x05FF01, TIDs from
//! 1 upward, 0 skipped when they wrap.

/// Format 1 header: EHD1, EHD2.
pub const EHD: [u8; 2] = [0x10, 0x81];
/// The node profile object, the one every request of the driver is addressed to.
pub const NODE_PROFILE: [u8; 3] = [0x0E, 0xF0, 0x01];
/// The controller object: the driver's SEOJ, so the DEOJ of every reply.
pub const CONTROLLER: [u8; 3] = [0x05, 0xFF, 0x01];
pub const ESV_GET: u8 = 0x62;
pub const ESV_GET_RES: u8 = 0x72;
pub const ESV_GET_SNA: u8 = 0x52;
/// EHD1, EHD2, TID, SEOJ, DEOJ, ESV, OPC: the shortest frame.
pub const HEADER_LEN: usize = 12;
/// Where the TID sits in a frame.
const TID_AT: usize = 2;
/// Where the ESV sits in a frame.
const ESV_AT: usize = 10;
/// A UDP datagram on IPv4 is at most this long: a receive buffer of this size reads any whole.
pub const MAX_DATAGRAM: usize = 65_536;
/// The IPv4 multicast group of ECHONET Lite (SPEC §2).
pub const MULTICAST_GROUP: std::net::Ipv4Addr = std::net::Ipv4Addr::new(224, 0, 23, 0);

/// The TIDs of one controller (SPEC §8): 1, 2, …, 0xFFFF, 1, … — 0 is never used.
pub struct Tids(u16);

impl Tids {
    pub fn new() -> Self {
        Tids(0)
    }

    pub fn next_tid(&mut self) -> u16 {
        self.0 = self.0.checked_add(1).unwrap_or(1);
        self.0
    }
}

/// A Get of `epcs` (each with PDC 0) from the controller to the node profile, with TID 0; the
/// TID is set with [`set_tid`] before each send, so a request is built once per trial.
pub fn get_request(epcs: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(HEADER_LEN + 2 * epcs.len());
    frame.extend_from_slice(&EHD);
    frame.extend_from_slice(&[0, 0]);
    frame.extend_from_slice(&CONTROLLER);
    frame.extend_from_slice(&NODE_PROFILE);
    frame.push(ESV_GET);
    // At most the 12 properties of the node profile: the count fits in OPC.
    frame.push(epcs.len() as u8);
    for &epc in epcs {
        frame.extend_from_slice(&[epc, 0]);
    }
    frame
}

/// Writes `tid` into a frame of at least [`HEADER_LEN`] bytes.
pub fn set_tid(frame: &mut [u8], tid: u16) {
    frame[TID_AT..TID_AT + 2].copy_from_slice(&tid.to_be_bytes());
}

/// The TID and ESV of a datagram long enough to be a frame; None for a shorter one (which
/// cannot be a reply, so it is ignored).
pub fn tid_and_esv(datagram: &[u8]) -> Option<(u16, u8)> {
    if datagram.len() < HEADER_LEN {
        return None;
    }
    let tid = u16::from_be_bytes([datagram[TID_AT], datagram[TID_AT + 1]]);
    Some((tid, datagram[ESV_AT]))
}

/// Whether `esv` answers a Get (SPEC §8: Get_Res or Get_SNA).
pub fn answers_get(esv: u8) -> bool {
    esv == ESV_GET_RES || esv == ESV_GET_SNA
}

/// Bytes as the SPEC writes them: upper-case hex pairs separated by spaces.
pub fn hex(bytes: &[u8]) -> String {
    let pairs: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
    pairs.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tids_start_at_1_and_skip_0_when_they_wrap() {
        let mut tids = Tids::new();
        assert_eq!((tids.next_tid(), tids.next_tid()), (1, 2));
        let mut tids = Tids(0xFFFE);
        assert_eq!(
            [tids.next_tid(), tids.next_tid(), tids.next_tid()],
            [0xFFFF, 1, 2]
        );
    }

    #[test]
    fn the_12_property_get_is_the_spec_s_36_bytes() {
        // SPEC §6 "The 36-byte Get", with the driver's SEOJ (controller) instead of the seed's.
        let mut frame = get_request(&[
            0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7,
        ]);
        set_tid(&mut frame, 2);
        assert_eq!(
            hex(&frame),
            "10 81 00 02 05 FF 01 0E F0 01 62 0C 80 00 82 00 83 00 8A 00 9D 00 9E 00 9F 00 D3 00 \
             D4 00 D5 00 D6 00 D7 00"
        );
        let mut one = get_request(&[0xD6]);
        set_tid(&mut one, 0x1234);
        assert_eq!(hex(&one), "10 81 12 34 05 FF 01 0E F0 01 62 01 D6 00");
    }

    #[test]
    fn replies_are_matched_by_tid_and_esv() {
        let reply = [
            0x10, 0x81, 0xAB, 0xCD, 0x0E, 0xF0, 0x01, 0x05, 0xFF, 0x01, 0x72, 0x01, 0x80, 0x01,
            0x30,
        ];
        assert_eq!(tid_and_esv(&reply), Some((0xABCD, 0x72)));
        assert_eq!(tid_and_esv(&reply[..11]), None);
        assert!(answers_get(0x72) && answers_get(0x52));
        assert!(!answers_get(0x62) && !answers_get(0x73));
    }
}
