//! The node's object model (SPEC §5): the node profile and one home air conditioner, their
//! properties with the exact values, and the rules a Set must pass.
//!
//! Each object is a small table of properties plus a 256-entry index from EPC to table slot,
//! so a Get or Set finds its property with one array read. The property maps (0x9E, 0x9F)
//! are computed from the table, so they cannot disagree with what the object answers; the
//! node profile's instance and class lists are computed from the node's devices.

use crate::frame::Eoj;
use crate::propmap;
use std::net::Ipv4Addr;

/// The values a Set accepts for a property: PDC 1 and a byte in one of these inclusive
/// ranges. An empty list makes the property read-only.
pub type SetRule = &'static [(u8, u8)];

/// Read-only.
pub const READ_ONLY: SetRule = &[];
/// Operating status: 0x30 on, 0x31 off.
const ON_OFF: SetRule = &[(0x30, 0x31)];
/// Installation location: any byte.
const ANY_BYTE: SetRule = &[(0x00, 0xFF)];
/// Air flow rate: levels 1-8 (0x31-0x38) or auto (0x41).
const AIR_FLOW: SetRule = &[(0x31, 0x38), (0x41, 0x41)];
/// Operation mode: auto, cool, heat, dry, fan, other (0x40-0x45).
const OPERATION_MODE: SetRule = &[(0x40, 0x45)];
/// Set temperature: 0-50 °C.
const TEMPERATURE: SetRule = &[(0x00, 0x32)];

/// One property: its current EDT and what a Set may write to it.
#[derive(Clone, Debug)]
struct Property {
    epc: u8,
    edt: Vec<u8>,
    set_rule: SetRule,
}

/// An ECHONET object of the node.
#[derive(Clone, Debug)]
pub struct Object {
    eoj: Eoj,
    props: Vec<Property>,
    /// `index[epc]` = slot in `props` + 1; 0 = no such property.
    index: [u8; 256],
}

impl Object {
    /// Builds an object from its properties (each EPC once, at most 253 of them) and its
    /// announcement map; the set map 0x9E and the get map 0x9F are derived and added. Every
    /// property is readable; those with a set rule are also settable.
    fn new(eoj: Eoj, table: Vec<(u8, Vec<u8>, SetRule)>, announced: &[u8]) -> Object {
        let mut props: Vec<Property> = table
            .into_iter()
            .map(|(epc, edt, set_rule)| Property { epc, edt, set_rule })
            .collect();
        let settable: Vec<u8> = props
            .iter()
            .filter(|p| !p.set_rule.is_empty())
            .map(|p| p.epc)
            .collect();
        let mut readable: Vec<u8> = props.iter().map(|p| p.epc).collect();
        readable.extend_from_slice(&[0x9D, 0x9E, 0x9F]);
        for (epc, edt) in [
            (0x9D, propmap::encoded(announced)),
            (0x9E, propmap::encoded(&settable)),
            (0x9F, propmap::encoded(&readable)),
        ] {
            props.push(Property {
                epc,
                edt,
                set_rule: READ_ONLY,
            });
        }
        let mut index = [0u8; 256];
        for (slot, p) in props.iter().enumerate() {
            index[usize::from(p.epc)] = u8::try_from(slot + 1).unwrap_or(0);
        }
        Object { eoj, props, index }
    }

    pub fn eoj(&self) -> Eoj {
        self.eoj
    }

    fn slot(&self, epc: u8) -> Option<usize> {
        match self.index[usize::from(epc)] {
            0 => None,
            n => Some(usize::from(n) - 1),
        }
    }

    /// The EDT of a readable property.
    pub fn get(&self, epc: u8) -> Option<&[u8]> {
        self.slot(epc).map(|s| self.props[s].edt.as_slice())
    }

    /// Applies a Set if the rules allow it (SPEC §5): the property is in the set map, PDC is
    /// 1 and the byte is in range. Returns whether it was accepted; a refusal changes nothing.
    pub fn set(&mut self, epc: u8, edt: &[u8]) -> bool {
        let Some(slot) = self.slot(epc) else {
            return false;
        };
        let prop = &mut self.props[slot];
        let &[value] = edt else {
            return false;
        };
        if !prop
            .set_rule
            .iter()
            .any(|&(lo, hi)| (lo..=hi).contains(&value))
        {
            return false;
        }
        // Settable properties all have one-byte values: overwrite in place, no allocation.
        prop.edt.clear();
        prop.edt.push(value);
        true
    }

    /// EPCs in table order (maps last).
    pub fn epcs(&self) -> impl Iterator<Item = u8> + '_ {
        self.props.iter().map(|p| p.epc)
    }
}

/// The node: the node profile first, then its devices.
#[derive(Clone, Debug)]
pub struct Node {
    objects: Vec<Object>,
}

impl Node {
    /// A node whose address (inside 0x83 of the node profile) is `addr`.
    pub fn new(addr: Ipv4Addr) -> Node {
        let devices = vec![air_conditioner()];
        let eojs: Vec<Eoj> = devices.iter().map(Object::eoj).collect();
        let mut objects = vec![node_profile(addr, &eojs)];
        objects.extend(devices);
        Node { objects }
    }

    pub fn objects(&self) -> &[Object] {
        &self.objects
    }

    pub fn objects_mut(&mut self) -> &mut [Object] {
        &mut self.objects
    }

    /// The node profile (always the first object).
    pub fn profile(&self) -> &Object {
        &self.objects[0]
    }
}

/// Instance list (0xD5, 0xD6): count, then each device's EOJ.
fn instance_list(devices: &[Eoj]) -> Vec<u8> {
    let mut edt = vec![u8::try_from(devices.len()).unwrap_or(u8::MAX)];
    for eoj in devices {
        edt.extend_from_slice(&eoj.to_bytes());
    }
    edt
}

/// The distinct device classes, in order of first appearance.
fn classes(devices: &[Eoj]) -> Vec<[u8; 2]> {
    let mut out: Vec<[u8; 2]> = Vec::new();
    for eoj in devices {
        let class = [eoj.class_group, eoj.class];
        if !out.contains(&class) {
            out.push(class);
        }
    }
    out
}

/// The node profile 0x0EF001 (SPEC §5): nothing settable.
fn node_profile(addr: Ipv4Addr, devices: &[Eoj]) -> Object {
    // Identification number: 0xFE, manufacturer code, then 13 bytes unique to the node:
    // nine zeros and the node's IPv4 address.
    let mut id = vec![0xFE, 0xFF, 0xFF, 0xFF];
    id.extend_from_slice(&[0; 9]);
    id.extend_from_slice(&addr.octets());

    let instances = u32::try_from(devices.len()).unwrap_or(u32::MAX);
    let classes = classes(devices);
    // Number of classes including the node profile's own.
    let class_count = u16::try_from(classes.len() + 1).unwrap_or(u16::MAX);
    let mut class_list = vec![u8::try_from(classes.len()).unwrap_or(u8::MAX)];
    for class in &classes {
        class_list.extend_from_slice(class);
    }

    let list = instance_list(devices);
    Object::new(
        Eoj::NODE_PROFILE,
        vec![
            (0x80, vec![0x30], READ_ONLY),
            // Version 1.14, message format 1.
            (0x82, vec![0x01, 0x0E, 0x01, 0x00], READ_ONLY),
            (0x83, id, READ_ONLY),
            // Experimental manufacturer code.
            (0x8A, vec![0xFF, 0xFF, 0xFF], READ_ONLY),
            (0xD3, instances.to_be_bytes()[1..].to_vec(), READ_ONLY),
            (0xD4, class_count.to_be_bytes().to_vec(), READ_ONLY),
            (0xD5, list.clone(), READ_ONLY),
            (0xD6, list, READ_ONLY),
            (0xD7, class_list, READ_ONLY),
        ],
        &[0x80, 0xD5],
    )
}

/// The home air conditioner 0x013001 (SPEC §5) in its initial state.
fn air_conditioner() -> Object {
    Object::new(
        Eoj::AIR_CONDITIONER,
        vec![
            (0x80, vec![0x31], ON_OFF),
            (0x81, vec![0x00], ANY_BYTE),
            // Standard version: Appendix R rev. 1.
            (0x82, vec![0x00, 0x00, 0x52, 0x01], READ_ONLY),
            (0x88, vec![0x42], READ_ONLY),
            (0x8A, vec![0xFF, 0xFF, 0xFF], READ_ONLY),
            (0x8F, vec![0x42], READ_ONLY),
            (0x93, vec![0x42], READ_ONLY),
            // 12:00 and 2022-01-01.
            (0x97, vec![0x0C, 0x00], READ_ONLY),
            (0x98, vec![0x07, 0xE6, 0x01, 0x01], READ_ONLY),
            (0xA0, vec![0x41], AIR_FLOW),
            (0xB0, vec![0x41], OPERATION_MODE),
            (0xB1, vec![0x41], READ_ONLY),
            (0xB3, vec![0x14], TEMPERATURE),
            (0xBA, vec![0x32], READ_ONLY),
            (0xBB, vec![0x14], READ_ONLY),
        ],
        &[0x80, 0x81, 0x88, 0xB0],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> Node {
        Node::new(Ipv4Addr::new(127, 0, 0, 1))
    }

    fn get(o: &Object, epc: u8) -> Vec<u8> {
        o.get(epc).unwrap_or_else(|| panic!("{epc:#x}")).to_vec()
    }

    #[test]
    fn node_profile_values_of_spec_section_5() {
        let n = node();
        let p = n.profile();
        assert_eq!(p.eoj(), Eoj::NODE_PROFILE);
        assert_eq!(get(p, 0x80), [0x30]);
        assert_eq!(get(p, 0x82), [0x01, 0x0E, 0x01, 0x00]);
        assert_eq!(
            get(p, 0x83),
            [0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 0, 0, 1]
        );
        assert_eq!(get(p, 0x8A), [0xFF, 0xFF, 0xFF]);
        assert_eq!(get(p, 0x9D), [0x02, 0x80, 0xD5]);
        assert_eq!(get(p, 0x9E), [0x00]);
        assert_eq!(
            get(p, 0x9F),
            [0x0C, 0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7]
        );
        assert_eq!(get(p, 0xD3), [0x00, 0x00, 0x01]);
        assert_eq!(get(p, 0xD4), [0x00, 0x02]);
        assert_eq!(get(p, 0xD5), [0x01, 0x01, 0x30, 0x01]);
        assert_eq!(get(p, 0xD6), [0x01, 0x01, 0x30, 0x01]);
        assert_eq!(get(p, 0xD7), [0x01, 0x01, 0x30]);
        assert_eq!(p.epcs().count(), 12);
        assert_eq!(p.get(0x81), None);
    }

    #[test]
    fn air_conditioner_values_of_spec_section_5() {
        let n = node();
        let ac = &n.objects()[1];
        assert_eq!(ac.eoj(), Eoj::AIR_CONDITIONER);
        let expected: [(u8, &[u8]); 18] = [
            (0x80, &[0x31]),
            (0x81, &[0x00]),
            (0x82, &[0x00, 0x00, 0x52, 0x01]),
            (0x88, &[0x42]),
            (0x8A, &[0xFF, 0xFF, 0xFF]),
            (0x8F, &[0x42]),
            (0x93, &[0x42]),
            (0x97, &[0x0C, 0x00]),
            (0x98, &[0x07, 0xE6, 0x01, 0x01]),
            (0x9D, &[0x04, 0x80, 0x81, 0x88, 0xB0]),
            (0x9E, &[0x05, 0x80, 0x81, 0xA0, 0xB0, 0xB3]),
            (
                0x9F,
                &[
                    0x12, 0x0D, 0x09, 0x01, 0x0A, 0x00, 0x00, 0x00, 0x02, 0x03, 0x00, 0x09, 0x08,
                    0x00, 0x02, 0x02, 0x03,
                ],
            ),
            (0xA0, &[0x41]),
            (0xB0, &[0x41]),
            (0xB1, &[0x41]),
            (0xB3, &[0x14]),
            (0xBA, &[0x32]),
            (0xBB, &[0x14]),
        ];
        for (epc, edt) in expected {
            assert_eq!(get(ac, epc), edt, "{epc:#x}");
        }
        assert_eq!(ac.epcs().count(), 18);
    }

    #[test]
    fn set_rules_of_spec_section_5() {
        let mut n = node();
        let ac = &mut n.objects_mut()[1];
        let accepts = |ac: &mut Object, epc: u8, v: u8| ac.set(epc, &[v]);
        for (epc, good, bad) in [
            (0x80u8, &[0x30u8, 0x31][..], &[0x2F, 0x32, 0x00][..]),
            (0x81, &[0x00, 0x7F, 0xFF], &[]),
            (0xA0, &[0x31, 0x35, 0x38, 0x41], &[0x30, 0x39, 0x40, 0x42]),
            (0xB0, &[0x40, 0x43, 0x45], &[0x3F, 0x46, 0x41 + 0x10]),
            (0xB3, &[0x00, 0x19, 0x32], &[0x33, 0xFF]),
        ] {
            for &v in good {
                assert!(accepts(ac, epc, v), "{epc:#x}={v:#x}");
                assert_eq!(get(ac, epc), [v]);
            }
            let before = get(ac, epc);
            for &v in bad {
                assert!(!accepts(ac, epc, v), "{epc:#x}={v:#x}");
                assert_eq!(get(ac, epc), before);
            }
        }
        // PDC other than 1, read-only and unknown properties.
        assert!(!ac.set(0x80, &[]));
        assert!(!ac.set(0x80, &[0x30, 0x30]));
        assert!(!ac.set(0x88, &[0x41]));
        assert!(!ac.set(0x9E, &[0x00]));
        assert!(!ac.set(0xC0, &[0x00]));
        // Nothing of the node profile is settable.
        let p = &mut n.objects_mut()[0];
        assert!(!p.set(0x80, &[0x30]));
        assert!(!p.set(0x83, &[0x00]));
    }
}
