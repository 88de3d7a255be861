"""SPEC §5's two objects on uEcho's own classes: the LocalNode's NodeProfile and a Device for the
home air conditioner, their properties and request handlers.

uecho fills both objects from its standard database (every property of the class and its super
class, each readable when the standard calls it required or optional) and computes the maps
and instance lists itself. Its values are not SPEC §5's, and its API lets every one be set:

- Property.set_attribute(GET/SET/ANNO, ...) decides what uecho's responder reads and writes:
  here exactly SPEC §5's properties are readable, and the other database properties prohibited
  (a Get of one gets PDC 0 in a Get_SNA, as for an EPC the object does not have).
- Object.set_property_data(...) writes every value. The maps and the instance and class lists
  are written last, over what uecho computed, because its encoders differ from SPEC §4/§5:
  it lists map EPCs in set order, not ascending; its bitmap form writes 16 as N and masks away
  every EPC >= 0xC0 (`(0x01 << bit) & 0x0F`); its 0xD7 starts with the number of classes
  counting the node profile (02 01 30). uecho recomputes them only when an object or
  property is added, which never happens after start.
- Object.set_request_handler(...) is uecho's hook for Set rules: property_write_requested says
  whether a value is accepted; uecho applies it and builds the reply.
"""

from __future__ import annotations

from uecho import Device, ObjectRequestHandler, Property

NODE_PROFILE = 0x0EF001
AIRCON = 0x013001

# SPEC §5, node profile: EPC -> EDT. 0x83 gets the node's address at the end (identity()).
NODE_PROFILE_VALUES = {
    0x80: bytes.fromhex("30"),
    0x82: bytes.fromhex("010e0100"),
    0x83: bytes.fromhex("feffffff" + "00" * 9 + "00000000"),
    0x8A: bytes.fromhex("ffffff"),
    0x9D: bytes.fromhex("0280d5"),
    0x9E: bytes.fromhex("00"),
    0x9F: bytes.fromhex("0c808283 8a9d9e9f d3d4d5d6 d7"),
    0xD3: bytes.fromhex("000001"),
    0xD4: bytes.fromhex("0002"),
    0xD5: bytes.fromhex("01013001"),
    0xD6: bytes.fromhex("01013001"),
    0xD7: bytes.fromhex("010130"),
}
NODE_PROFILE_ANNOUNCED = (0x80, 0xD5)

# SPEC §5, home air conditioner: EPC -> initial EDT.
AIRCON_VALUES = {
    0x80: bytes.fromhex("31"),
    0x81: bytes.fromhex("00"),
    0x82: bytes.fromhex("00005201"),
    0x88: bytes.fromhex("42"),
    0x8A: bytes.fromhex("ffffff"),
    0x8F: bytes.fromhex("42"),
    0x93: bytes.fromhex("42"),
    0x97: bytes.fromhex("0c00"),
    0x98: bytes.fromhex("07e60101"),
    0x9D: bytes.fromhex("04808188b0"),
    0x9E: bytes.fromhex("058081a0b0b3"),
    0x9F: bytes.fromhex("120d09010a000000020300090800020203"),
    0xA0: bytes.fromhex("41"),
    0xB0: bytes.fromhex("41"),
    0xB1: bytes.fromhex("41"),
    0xB3: bytes.fromhex("14"),
    0xBA: bytes.fromhex("32"),
    0xBB: bytes.fromhex("14"),
}
AIRCON_ANNOUNCED = (0x80, 0x81, 0x88, 0xB0)
# What a Set accepts (PDC 1): EPC -> the accepted byte values.
AIRCON_SETTABLE = {
    0x80: frozenset((0x30, 0x31)),
    0x81: frozenset(range(0x100)),
    0xA0: frozenset((*range(0x31, 0x39), 0x41)),
    0xB0: frozenset(range(0x40, 0x46)),
    0xB3: frozenset(range(0x00, 0x33)),
}

# The few map and list properties uecho computes and this module writes last.
COMPUTED = (0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7)


class NodeProfileHandler(ObjectRequestHandler):
    """Nothing of the node profile is settable. (uecho's own handler, SuperObject's, reads
    prop.code without checking that the property exists: a SetGet asking for an EPC the object
    lacks would raise inside the receive loop.)"""

    def property_read_requested(self, prop: Property | None) -> bool:
        return prop is not None and prop.is_read_enabled()

    def property_write_requested(self, prop: Property | None, data: bytes) -> bool:
        return False


class AirConditioner(Device):
    """uecho's Device for class 0x0130, instance 1, with SPEC §5's Set rules."""

    def __init__(self) -> None:
        super().__init__(AIRCON)  # Device registers itself as its own request handler
        _restrict(self, AIRCON_VALUES, set(AIRCON_SETTABLE), AIRCON_ANNOUNCED)

    def property_read_requested(self, prop: Property | None) -> bool:
        return prop is not None and prop.is_read_enabled()

    def property_write_requested(self, prop: Property | None, data: bytes) -> bool:
        if prop is None or not prop.is_write_enabled() or len(data) != 1:
            return False
        return data[0] in AIRCON_SETTABLE.get(prop.code, ())


def _restrict(obj, values: dict[int, bytes], settable: set[int], announced) -> None:
    """Make exactly `values` readable, `settable` writable, `announced` announced; every other
    property of uecho's database prohibited. Adds a property the database lacks."""
    for code in values:
        if not obj.has_property(code):
            obj.add_property(Property(code))
    for prop in obj.properties:
        prop.set_attribute(
            Property.GET, Property.REQUIRED if prop.code in values else Property.PROHIBITED
        )
        prop.set_attribute(
            Property.SET, Property.REQUIRED if prop.code in settable else Property.PROHIBITED
        )
        prop.set_attribute(
            Property.ANNO, Property.REQUIRED if prop.code in announced else Property.PROHIBITED
        )
    for code, data in values.items():
        obj.set_property_data(code, data)


def build(node, addr: str) -> None:
    """Give `node` (a uecho LocalNode) SPEC §5's objects; `addr` is ADDR of 0x83."""
    profile = node.get_object(NODE_PROFILE)  # the NodeProfile uecho's LocalNode made itself
    aircon = AirConditioner()
    node.add_object(aircon)  # uecho recomputes the profile's maps and lists here
    profile.set_request_handler(NodeProfileHandler())
    _restrict(profile, NODE_PROFILE_VALUES, set(), NODE_PROFILE_ANNOUNCED)
    profile.set_property_data(0x83, identity(addr))
    # Last, over what uecho computed (see the module's docstring).
    for obj, values in ((profile, NODE_PROFILE_VALUES), (aircon, AIRCON_VALUES)):
        for code in COMPUTED:
            if code in values:
                obj.set_property_data(code, values[code])


def identity(addr: str) -> bytes:
    """0x83: FE FF FF FF, nine zeros, the node's IPv4 address."""
    return NODE_PROFILE_VALUES[0x83][:13] + bytes(int(x) for x in addr.split("."))
