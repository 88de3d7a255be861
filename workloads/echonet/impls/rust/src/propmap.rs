//! Property maps (SPEC §4): the EDT of 0x9D, 0x9E and 0x9F.
//!
//! First byte N = number of properties. Below 16 the EPCs follow as a list; from 16 a 16-byte
//! bitmap follows, byte i holding the EPCs whose low nibble is i, bit j standing for the high
//! nibble 8 + j. Encoding is exact; decoding trusts the bytes present, never N, because peers
//! in the wild write a wrong N (16 for any bitmap) or mask away EPCs of 0xC0 and above.

/// Bitmap form from this many properties on.
pub const BITMAP_FROM: usize = 16;
/// Size of the bitmap after N.
pub const BITMAP_LEN: usize = 16;

/// Writes the map of `epcs` (property codes 0x80–0xFF, any order, no duplicates) to `out`.
///
/// EPCs below 0x80 have no place in a bitmap; a map of them is a caller's error, so they are
/// left out of the bitmap form (the list form writes what it is given, sorted).
pub fn encode(epcs: &[u8], out: &mut Vec<u8>) {
    let n = u8::try_from(epcs.len()).unwrap_or(u8::MAX);
    out.push(n);
    if epcs.len() < BITMAP_FROM {
        let start = out.len();
        out.extend_from_slice(epcs);
        out[start..].sort_unstable();
    } else {
        let mut bitmap = [0u8; BITMAP_LEN];
        for &epc in epcs.iter().filter(|&&e| e >= 0x80) {
            bitmap[usize::from(epc & 0x0F)] |= 1 << ((epc >> 4) - 8);
        }
        out.extend_from_slice(&bitmap);
    }
}

/// The map of `epcs` as a new vector.
pub fn encoded(epcs: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + BITMAP_LEN);
    encode(epcs, &mut out);
    out
}

/// The EPCs a map holds, ascending for the bitmap form, as listed for the list form.
///
/// N decides only the form (list below 16); the EPCs come from the bytes present: a list
/// shorter than N gives the EPCs it has, a bitmap with a wrong N gives the bits it has, a
/// bitmap cut short gives the bits of the bytes present. An empty EDT is an empty map.
pub fn decode(edt: &[u8]) -> Vec<u8> {
    let Some((&n, rest)) = edt.split_first() else {
        return Vec::new();
    };
    let n = usize::from(n);
    if n < BITMAP_FROM {
        return rest.iter().take(n).copied().collect();
    }
    let mut epcs = Vec::with_capacity(n);
    for high in 8u8..16 {
        for (low, &byte) in (0u8..).zip(rest.iter().take(BITMAP_LEN)) {
            if byte & (1 << (high - 8)) != 0 {
                epcs.push((high << 4) | low);
            }
        }
    }
    epcs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_form_is_sorted_and_counted() {
        assert_eq!(encoded(&[]), [0x00]);
        assert_eq!(encoded(&[0xD5, 0x80]), [0x02, 0x80, 0xD5]);
        assert_eq!(
            encoded(&[0xB3, 0xA0, 0xB0, 0x81, 0x80]),
            [0x05, 0x80, 0x81, 0xA0, 0xB0, 0xB3]
        );
    }

    #[test]
    fn spec_bit_positions() {
        // 0x80 -> byte 0 bit 0, 0xD6 -> byte 6 bit 5.
        let mut epcs: Vec<u8> = (0xE0..0xF0).collect();
        epcs[0] = 0x80;
        epcs[1] = 0xD6;
        let map = encoded(&epcs);
        assert_eq!(map.len(), 17);
        assert_eq!(map[0], 16);
        assert_eq!(map[1] & 0x01, 0x01);
        assert_eq!(map[1 + 6] & 0x20, 0x20);
    }

    #[test]
    fn air_conditioner_get_map_of_spec_section_5() {
        let epcs = [
            0x80, 0x81, 0x82, 0x88, 0x8A, 0x8F, 0x93, 0x97, 0x98, 0x9D, 0x9E, 0x9F, 0xA0, 0xB0,
            0xB1, 0xB3, 0xBA, 0xBB,
        ];
        let map = encoded(&epcs);
        assert_eq!(
            map,
            [
                0x12, 0x0D, 0x09, 0x01, 0x0A, 0x00, 0x00, 0x00, 0x02, 0x03, 0x00, 0x09, 0x08, 0x00,
                0x02, 0x02, 0x03
            ]
        );
        assert_eq!(decode(&map), epcs);
    }

    #[test]
    fn every_epc_set_round_trips() {
        // All 128 codes, then each single one in bitmap form (with 15 companions).
        let all: Vec<u8> = (0x80..=0xFF).collect();
        assert_eq!(decode(&encoded(&all)), all);
        assert_eq!(encoded(&all)[0], 128);
        for epc in 0x80..=0xFFu8 {
            let mut set: Vec<u8> = (0x80..=0xFF).filter(|&e| e != epc).take(15).collect();
            set.push(epc);
            set.sort_unstable();
            assert_eq!(decode(&encoded(&set)), set, "{epc:#x}");
        }
    }

    #[test]
    fn decoder_does_not_trust_n() {
        let mut map = encoded(&[
            0x80, 0x81, 0x82, 0x88, 0x8A, 0x8F, 0x93, 0x97, 0x98, 0x9D, 0x9E, 0x9F, 0xA0, 0xB0,
            0xB1, 0xB3, 0xD0, 0xFF,
        ]);
        // A peer that writes 16 whatever the count.
        map[0] = 16;
        let got = decode(&map);
        assert_eq!(got.len(), 18);
        assert!(got.contains(&0xD0) && got.contains(&0xFF));
        // A peer that writes 255.
        map[0] = 255;
        assert_eq!(decode(&map).len(), 18);
        // A bitmap cut short: the bytes present count.
        assert_eq!(decode(&map[..2]), [0x80, 0xA0, 0xB0, 0xD0]);
        // A list shorter than its N.
        assert_eq!(decode(&[5, 0x80, 0x81]), [0x80, 0x81]);
        // A list longer than its N: N bounds the list.
        assert_eq!(decode(&[1, 0x80, 0x81]), [0x80]);
        assert_eq!(decode(&[]), Vec::<u8>::new());
    }
}
