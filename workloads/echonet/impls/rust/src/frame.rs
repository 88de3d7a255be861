//! The ECHONET Lite wire format, format 1 (SPEC §3): decoding with bounds checks, encoding,
//! and the ESV and EOJ constants.
//!
//! Decoding borrows the datagram: a [`Frame`] holds slices of it and allocates nothing, so
//! the node can decode every datagram from one receive buffer. Every length the datagram
//! announces (OPC, PDC) is checked against the bytes actually received before anything is
//! read past it; a decoded frame is therefore known to be whole and its property iterators
//! cannot run off its end.

use std::net::Ipv4Addr;

/// The ECHONET Lite UDP port on every host.
pub const PORT: u16 = 3610;
/// The ECHONET Lite IPv4 multicast group.
pub const MULTICAST_GROUP: Ipv4Addr = Ipv4Addr::new(224, 0, 23, 0);
/// Size of a receive buffer: any IPv4 UDP payload (at most 65,507 bytes) fits whole.
pub const MAX_DATAGRAM: usize = 65_536;

/// EHD1: ECHONET Lite.
pub const EHD1: u8 = 0x10;
/// EHD2 of format 1 (the specified message format).
pub const EHD2_FORMAT1: u8 = 0x81;
/// EHD2 of format 2 (free-form after the TID): recognised, not supported.
pub const EHD2_FORMAT2: u8 = 0x82;

/// Bytes before the first property: EHD1, EHD2, TID, SEOJ, DEOJ, ESV, OPC.
pub const HEADER_LEN: usize = 12;
/// A SetGet frame also carries OPCGet (SPEC §3 asks for 14 bytes at least).
pub const SETGET_MIN_LEN: usize = 14;

/// ESV codes (SPEC §3).
pub mod esv {
    pub const SETI: u8 = 0x60;
    pub const SETC: u8 = 0x61;
    pub const GET: u8 = 0x62;
    pub const INF_REQ: u8 = 0x63;
    pub const SETGET: u8 = 0x6E;
    pub const SET_RES: u8 = 0x71;
    pub const GET_RES: u8 = 0x72;
    pub const INF: u8 = 0x73;
    pub const INFC: u8 = 0x74;
    pub const INFC_RES: u8 = 0x7A;
    pub const SETGET_RES: u8 = 0x7E;
    pub const SETI_SNA: u8 = 0x50;
    pub const SETC_SNA: u8 = 0x51;
    pub const GET_SNA: u8 = 0x52;
    pub const INF_SNA: u8 = 0x53;
    pub const SETGET_SNA: u8 = 0x5E;

    /// True for the ESVs whose frames carry two property lists (OPCSet, OPCGet).
    pub fn is_setget(esv: u8) -> bool {
        matches!(esv, SETGET | SETGET_RES | SETGET_SNA)
    }

    /// True when `reply` answers a request of service `request`: the success and the refusal
    /// of each request (a SetI succeeds silently, so only its refusal can answer it).
    pub fn answers(request: u8, reply: u8) -> bool {
        matches!(
            (request, reply),
            (SETI, SETI_SNA)
                | (SETC, SET_RES | SETC_SNA)
                | (GET, GET_RES | GET_SNA)
                | (INF_REQ, INF | INF_SNA)
                | (SETGET, SETGET_RES | SETGET_SNA)
                | (INFC, INFC_RES)
        )
    }
}

/// An ECHONET object: class group, class, instance (instance 0 = every instance of the class).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Eoj {
    pub class_group: u8,
    pub class: u8,
    pub instance: u8,
}

impl Eoj {
    /// Node profile 0x0EF001.
    pub const NODE_PROFILE: Eoj = Eoj::new(0x0E, 0xF0, 0x01);
    /// Home air conditioner 0x013001.
    pub const AIR_CONDITIONER: Eoj = Eoj::new(0x01, 0x30, 0x01);
    /// Controller 0x05FF01.
    pub const CONTROLLER: Eoj = Eoj::new(0x05, 0xFF, 0x01);

    pub const fn new(class_group: u8, class: u8, instance: u8) -> Eoj {
        Eoj {
            class_group,
            class,
            instance,
        }
    }

    pub const fn from_bytes(b: [u8; 3]) -> Eoj {
        Eoj::new(b[0], b[1], b[2])
    }

    pub const fn to_bytes(self) -> [u8; 3] {
        [self.class_group, self.class, self.instance]
    }

    /// True when both name the same class (instances aside).
    pub fn same_class(self, other: Eoj) -> bool {
        self.class_group == other.class_group && self.class == other.class
    }

    /// True when a request addressed to `deoj` is for this object: same class, and the
    /// object's own instance or 0x00 (every instance).
    pub fn is_addressed_by(self, deoj: Eoj) -> bool {
        self.same_class(deoj) && (deoj.instance == self.instance || deoj.instance == 0)
    }
}

/// One property of a frame: its code and its data (PDC = `edt.len()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Property<'a> {
    pub epc: u8,
    pub edt: &'a [u8],
}

/// A list of properties already checked to be whole: `count` triples filling `bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Properties<'a> {
    bytes: &'a [u8],
    count: u8,
}

impl<'a> Properties<'a> {
    /// The number of properties (OPC).
    pub fn len(&self) -> usize {
        usize::from(self.count)
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn iter(&self) -> PropertyIter<'a> {
        PropertyIter { rest: self.bytes }
    }
}

impl<'a> IntoIterator for Properties<'a> {
    type Item = Property<'a>;
    type IntoIter = PropertyIter<'a>;
    fn into_iter(self) -> PropertyIter<'a> {
        self.iter()
    }
}

/// Walks checked property triples. It still slices with `get`, so even a list that had not
/// been checked could only end early, never panic.
#[derive(Clone, Debug)]
pub struct PropertyIter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for PropertyIter<'a> {
    type Item = Property<'a>;
    fn next(&mut self) -> Option<Property<'a>> {
        let (&epc, after_epc) = self.rest.split_first()?;
        let (&pdc, after_pdc) = after_epc.split_first()?;
        let pdc = usize::from(pdc);
        let edt = after_pdc.get(..pdc)?;
        self.rest = after_pdc.get(pdc..)?;
        Some(Property { epc, edt })
    }
}

/// A decoded format-1 frame, borrowing its datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Transaction id: two opaque bytes, copied verbatim into a reply.
    pub tid: [u8; 2],
    pub seoj: Eoj,
    pub deoj: Eoj,
    pub esv: u8,
    /// The properties; for SetGet frames, the set part.
    pub props: Properties<'a>,
    /// The get part of a SetGet frame; empty for every other ESV.
    pub get_props: Properties<'a>,
}

/// Why a datagram was not decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Broken (SPEC §3): dropped and counted in `dropped_malformed`. The text says what broke.
    Malformed(&'static str),
    /// Well-formed format 2, which these format-1 stacks do not support.
    Format2,
}

/// Decodes one datagram (SPEC §3).
///
/// The length check comes first: a datagram shorter than a format-1 header is malformed
/// whatever its EHD2 says, so format 2 is recognised only in a datagram that could otherwise
/// have been a frame.
pub fn decode(datagram: &[u8]) -> Result<Frame<'_>, DecodeError> {
    let Some((header, body)) = datagram.split_first_chunk::<HEADER_LEN>() else {
        return Err(DecodeError::Malformed("shorter than 12 bytes"));
    };
    if header[0] != EHD1 {
        return Err(DecodeError::Malformed("EHD1 is not 0x10"));
    }
    match header[1] {
        EHD2_FORMAT1 => {}
        EHD2_FORMAT2 => return Err(DecodeError::Format2),
        _ => return Err(DecodeError::Malformed("EHD2 is neither 0x81 nor 0x82")),
    }
    let tid = [header[2], header[3]];
    let seoj = Eoj::from_bytes([header[4], header[5], header[6]]);
    let deoj = Eoj::from_bytes([header[7], header[8], header[9]]);
    let esv = header[10];
    let opc = header[11];

    let (props, get_props, rest) = if esv::is_setget(esv) {
        if datagram.len() < SETGET_MIN_LEN {
            return Err(DecodeError::Malformed("SetGet shorter than 14 bytes"));
        }
        let (set, rest) = take_properties(body, opc)?;
        let Some((&opc_get, rest)) = rest.split_first() else {
            return Err(DecodeError::Malformed("SetGet without OPCGet"));
        };
        if opc == 0 && opc_get == 0 {
            return Err(DecodeError::Malformed("OPCSet + OPCGet = 0"));
        }
        let (get, rest) = take_properties(rest, opc_get)?;
        (set, get, rest)
    } else {
        if opc == 0 {
            return Err(DecodeError::Malformed("OPC = 0"));
        }
        let (props, rest) = take_properties(body, opc)?;
        (props, Properties::default(), rest)
    };
    if !rest.is_empty() {
        return Err(DecodeError::Malformed(
            "bytes left over after the last property",
        ));
    }
    Ok(Frame {
        tid,
        seoj,
        deoj,
        esv,
        props,
        get_props,
    })
}

/// Checks that `bytes` starts with `count` whole properties; returns them and what follows.
fn take_properties(bytes: &[u8], count: u8) -> Result<(Properties<'_>, &[u8]), DecodeError> {
    let mut rest = bytes;
    for _ in 0..count {
        let Some(&[_epc, pdc]) = rest.first_chunk::<2>() else {
            return Err(DecodeError::Malformed(
                "OPC larger than the properties held",
            ));
        };
        let Some(after) = rest.get(2 + usize::from(pdc)..) else {
            return Err(DecodeError::Malformed(
                "PDC runs past the end of the datagram",
            ));
        };
        rest = after;
    }
    let used = bytes.len() - rest.len();
    Ok((
        Properties {
            bytes: &bytes[..used],
            count,
        },
        rest,
    ))
}

/// Writes one frame into a caller's buffer (cleared first, so one buffer serves every reply).
///
/// OPC is a placeholder counted up by each [`push`](FrameBuilder::push); the ESV may be
/// changed after the properties are written, since a responder learns whether every property
/// succeeded only at the end.
pub struct FrameBuilder<'b> {
    buf: &'b mut Vec<u8>,
    opc_at: usize,
}

/// Offset of the ESV byte.
const ESV_AT: usize = 10;

impl<'b> FrameBuilder<'b> {
    pub fn new(buf: &'b mut Vec<u8>, tid: [u8; 2], seoj: Eoj, deoj: Eoj, esv: u8) -> Self {
        buf.clear();
        buf.extend_from_slice(&[EHD1, EHD2_FORMAT1]);
        buf.extend_from_slice(&tid);
        buf.extend_from_slice(&seoj.to_bytes());
        buf.extend_from_slice(&deoj.to_bytes());
        buf.extend_from_slice(&[esv, 0]);
        FrameBuilder {
            buf,
            opc_at: HEADER_LEN - 1,
        }
    }

    /// Appends a property and counts it. EDT beyond 255 bytes cannot be expressed in a PDC:
    /// it is cut there (no caller has such data; this keeps the frame consistent regardless).
    /// More than 255 properties likewise stop being counted (nor are they written).
    pub fn push(&mut self, epc: u8, edt: &[u8]) {
        let count = self.buf[self.opc_at];
        if count == u8::MAX {
            return;
        }
        self.buf[self.opc_at] = count + 1;
        let pdc = u8::try_from(edt.len()).unwrap_or(u8::MAX);
        self.buf.extend_from_slice(&[epc, pdc]);
        self.buf.extend_from_slice(&edt[..usize::from(pdc)]);
    }

    /// Ends the set part of a SetGet frame: writes OPCGet, which later pushes count.
    pub fn start_get_part(&mut self) {
        self.opc_at = self.buf.len();
        self.buf.push(0);
    }

    pub fn set_esv(&mut self, esv: u8) {
        self.buf[ESV_AT] = esv;
    }

    /// The frame so far.
    pub fn bytes(&self) -> &[u8] {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC §6: the 12-property Get of the node profile.
    const GET_12: [u8; 36] = [
        0x10, 0x81, 0x00, 0x02, 0x0E, 0xF0, 0x01, 0x0E, 0xF0, 0x01, 0x62, 0x0C, 0x80, 0x00, 0x82,
        0x00, 0x83, 0x00, 0x8A, 0x00, 0x9D, 0x00, 0x9E, 0x00, 0x9F, 0x00, 0xD3, 0x00, 0xD4, 0x00,
        0xD5, 0x00, 0xD6, 0x00, 0xD7, 0x00,
    ];

    #[test]
    fn decodes_the_spec_get() {
        let f = decode(&GET_12).unwrap();
        assert_eq!(f.tid, [0x00, 0x02]);
        assert_eq!(f.seoj, Eoj::NODE_PROFILE);
        assert_eq!(f.deoj, Eoj::NODE_PROFILE);
        assert_eq!(f.esv, esv::GET);
        assert_eq!(f.props.len(), 12);
        assert!(f.get_props.is_empty());
        let epcs: Vec<u8> = f.props.iter().map(|p| p.epc).collect();
        assert_eq!(
            epcs,
            [0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7]
        );
        assert!(f.props.iter().all(|p| p.edt.is_empty()));
    }

    #[test]
    fn builder_reproduces_the_spec_get() {
        let mut buf = Vec::new();
        let mut b = FrameBuilder::new(
            &mut buf,
            [0, 2],
            Eoj::NODE_PROFILE,
            Eoj::NODE_PROFILE,
            esv::GET,
        );
        for p in decode(&GET_12).unwrap().props {
            b.push(p.epc, &[]);
        }
        assert_eq!(b.bytes(), &GET_12[..]);
    }

    #[test]
    fn builder_writes_setget_with_two_counts_and_patched_esv() {
        let mut buf = Vec::new();
        let mut b = FrameBuilder::new(
            &mut buf,
            [0xAB, 0xCD],
            Eoj::CONTROLLER,
            Eoj::AIR_CONDITIONER,
            esv::SETGET,
        );
        b.push(0x80, &[0x30]);
        b.push(0xB3, &[0x19]);
        b.start_get_part();
        b.push(0x80, &[]);
        b.set_esv(esv::SETGET_SNA);
        let expected = [
            0x10, 0x81, 0xAB, 0xCD, 0x05, 0xFF, 0x01, 0x01, 0x30, 0x01, 0x5E, 0x02, 0x80, 0x01,
            0x30, 0xB3, 0x01, 0x19, 0x01, 0x80, 0x00,
        ];
        assert_eq!(buf, expected);
        let f = decode(&buf).unwrap();
        assert_eq!((f.props.len(), f.get_props.len()), (2, 1));
        assert_eq!(
            f.props.iter().nth(1),
            Some(Property {
                epc: 0xB3,
                edt: &[0x19]
            })
        );
    }

    #[test]
    fn builder_cuts_what_a_pdc_cannot_hold() {
        let mut buf = Vec::new();
        let mut b = FrameBuilder::new(&mut buf, [0, 1], Eoj::CONTROLLER, Eoj::CONTROLLER, 0x62);
        b.push(0x80, &[7u8; 300]);
        let f = decode(&buf).unwrap();
        assert_eq!(f.props.iter().next().unwrap().edt.len(), 255);
    }

    fn malformed(bytes: &[u8]) -> bool {
        matches!(decode(bytes), Err(DecodeError::Malformed(_)))
    }

    #[test]
    fn malformed_datagrams_of_spec_section_3() {
        let ok = GET_12;
        assert!(decode(&ok).is_ok());
        assert!(malformed(&[]));
        assert!(malformed(&ok[..11]));
        let mut bad = ok;
        bad[0] = 0x11;
        assert!(malformed(&bad), "EHD1");
        bad = ok;
        bad[1] = 0x83;
        assert!(malformed(&bad), "EHD2");
        bad = ok;
        bad[11] = 0;
        assert!(malformed(&bad), "OPC 0 with bytes following");
        assert!(malformed(&ok[..12]), "OPC 12 with no properties");
        bad = ok;
        bad[11] = 13;
        assert!(malformed(&bad), "OPC larger than the properties");
        bad = ok;
        bad[35] = 1;
        assert!(malformed(&bad), "PDC past the end");
        let mut long = ok.to_vec();
        long.push(0);
        assert!(malformed(&long), "a byte left over");
        // A lone EPC without its PDC.
        assert!(malformed(&ok[..35]));
        let mut zero_opc = ok[..12].to_vec();
        zero_opc[11] = 0;
        assert!(malformed(&zero_opc), "OPC 0 alone");
    }

    #[test]
    fn setget_rules() {
        let head = [0x10, 0x81, 0, 1, 0x05, 0xFF, 0x01, 0x01, 0x30, 0x01, 0x6E];
        let frame = |rest: &[u8]| [&head[..], rest].concat();
        // OPCSet 0, OPCGet 1.
        let only_get = frame(&[0, 1, 0x80, 0]);
        let f = decode(&only_get).unwrap();
        assert_eq!((f.props.len(), f.get_props.len()), (0, 1));
        // Both counts zero (and only 13 bytes).
        assert!(malformed(&frame(&[0, 0])));
        // Both zero, padded to 14 bytes: left-over bytes / zero counts.
        assert!(malformed(&frame(&[0, 0, 0])));
        // No OPCGet at all.
        assert!(malformed(&frame(&[1, 0x80, 1, 0x30])));
        // OPCGet promises more than is there.
        assert!(malformed(&frame(&[1, 0x80, 1, 0x30, 2, 0x80, 0])));
        // Shorter than 14 bytes.
        assert!(malformed(&frame(&[1])));
    }

    #[test]
    fn format2_is_told_apart() {
        let mut f2 = GET_12;
        f2[1] = EHD2_FORMAT2;
        assert_eq!(decode(&f2), Err(DecodeError::Format2));
        // Free-form body: anything after the TID.
        let f2 = [0x10, 0x82, 0, 1, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9];
        assert_eq!(decode(&f2), Err(DecodeError::Format2));
        // Too short to be any frame: malformed first.
        assert!(malformed(&[0x10, 0x82, 0, 1]));
    }

    #[test]
    fn addressing_and_reply_matching() {
        let ac = Eoj::AIR_CONDITIONER;
        assert!(ac.is_addressed_by(Eoj::new(0x01, 0x30, 0x01)));
        assert!(ac.is_addressed_by(Eoj::new(0x01, 0x30, 0x00)));
        assert!(!ac.is_addressed_by(Eoj::new(0x01, 0x30, 0x02)));
        assert!(!ac.is_addressed_by(Eoj::new(0x01, 0x31, 0x01)));
        assert!(esv::answers(esv::GET, esv::GET_RES));
        assert!(esv::answers(esv::GET, esv::GET_SNA));
        assert!(!esv::answers(esv::GET, esv::SET_RES));
        assert!(esv::answers(esv::SETI, esv::SETI_SNA));
        assert!(!esv::answers(esv::SETI, esv::SET_RES));
        assert!(esv::answers(esv::INFC, esv::INFC_RES));
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
    fn random_bytes_never_panic_and_decoded_frames_are_whole() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let mut buf = Vec::new();
        for round in 0..200_000 {
            let len = (rng.next() % 48) as usize;
            buf.clear();
            buf.extend((0..len).map(|_| rng.next() as u8));
            // Most rounds get a valid header prefix, so the property walk is exercised.
            if round % 4 != 0 && len >= 2 {
                buf[0] = EHD1;
                buf[1] = if round % 16 == 1 { 0x82 } else { 0x81 };
                if len > 11 {
                    buf[11] = (rng.next() % 5) as u8;
                }
            }
            if let Ok(f) = decode(&buf) {
                // Re-encoding the decoded frame gives the datagram back, byte for byte.
                let mut out = Vec::new();
                let mut b = FrameBuilder::new(&mut out, f.tid, f.seoj, f.deoj, f.esv);
                for p in f.props {
                    b.push(p.epc, p.edt);
                }
                if esv::is_setget(f.esv) {
                    b.start_get_part();
                    for p in f.get_props {
                        b.push(p.epc, p.edt);
                    }
                }
                assert_eq!(out, buf);
            }
        }
    }
}
