package echonet

import (
	"fmt"
	"net/netip"
)

// The object model (SPEC §5): every node carries the node profile 0x0EF001 and one home air
// conditioner 0x013001, with the mandatory properties of their classes and fixed values.

// Property codes shared by every object (the super class).
const (
	EPCOperatingStatus = 0x80
	EPCAnnounceMap     = 0x9D
	EPCSetMap          = 0x9E
	EPCGetMap          = 0x9F
)

// Node profile property codes used outside this file.
const (
	EPCIdentification   = 0x83
	EPCInstanceListNote = 0xD5 // instance list notification: the INF at start
	EPCInstanceList     = 0xD6 // self-node instance list S: what discovery reads
)

// Object is one ECHONET object: its EOJ and a table of its properties indexed by EPC. Values
// live in storage the object owns, so Get hands out slices without copying and Set writes
// into them in place: neither allocates.
type Object struct {
	EOJ    EOJ
	edt    [256][]byte            // nil: the object has no such property
	accept [256]func([]byte) bool // nil: not settable (not in the set map)
}

// propertyDef declares one property of a class: its initial EDT and, for the settable ones,
// which values a Set accepts.
type propertyDef struct {
	epc    byte
	edt    []byte
	accept func([]byte) bool
}

// oneByteIn accepts an EDT of exactly one byte (SPEC §5: "Set accepts (PDC 1)") for which ok
// holds.
func oneByteIn(ok func(v byte) bool) func([]byte) bool {
	return func(edt []byte) bool { return len(edt) == 1 && ok(edt[0]) }
}

// newObject builds an object from its class's properties and the EPCs it announces, and adds
// the three property maps, derived from the definitions so they cannot disagree with them.
func newObject(eoj EOJ, defs []propertyDef, announced []byte) *Object {
	o := &Object{EOJ: eoj}
	var settable, readable []byte
	for _, d := range defs {
		o.edt[d.epc] = append([]byte(nil), d.edt...) // the object's own copy
		readable = append(readable, d.epc)
		if d.accept != nil {
			o.accept[d.epc] = d.accept
			settable = append(settable, d.epc)
		}
	}
	readable = append(readable, EPCAnnounceMap, EPCSetMap, EPCGetMap)
	o.edt[EPCAnnounceMap] = mustMap(announced)
	o.edt[EPCSetMap] = mustMap(settable)
	o.edt[EPCGetMap] = mustMap(readable)
	return o
}

func mustMap(epcs []byte) []byte {
	m, err := EncodePropertyMap(epcs)
	if err != nil {
		panic(err) // the definitions below are constants of the program
	}
	return m
}

// Get returns the EDT of a readable property. The slice is the object's own storage: callers
// copy it out (into a reply) before the next Set.
func (o *Object) Get(epc byte) ([]byte, bool) {
	edt := o.edt[epc]
	return edt, edt != nil
}

// Set applies one property of a Set request and reports whether it was accepted. It is
// refused, changing nothing, for a property not in the set map or a value the property does
// not accept (a PDC other than 1 included). An accepted value persists for the node's life.
func (o *Object) Set(epc byte, edt []byte) bool {
	accept := o.accept[epc]
	if accept == nil || !accept(edt) {
		return false
	}
	// Every settable property here is one byte, checked by accept: the value fits in place.
	copy(o.edt[epc], edt)
	return true
}

// Node is what a node carries: the node profile first, then its devices.
type Node struct {
	Objects []*Object
}

// NewNode returns the workload's node: the node profile and one home air conditioner. addr
// goes into the identification number 0x83 (the node's own IPv4 address, SPEC §5).
func NewNode(addr netip.Addr) (*Node, error) {
	if !addr.Is4() {
		return nil, fmt.Errorf("node address %v is not IPv4", addr)
	}
	aircon := newAirConditioner()
	return &Node{Objects: []*Object{newNodeProfile(addr, []*Object{aircon}), aircon}}, nil
}

// AddressedBy reports whether a request to deoj is for this object: the class matches and
// the instance is the object's or 0x00 (every instance of the class).
func (o *Object) AddressedBy(deoj EOJ) bool {
	return o.EOJ.Class() == deoj.Class() && (deoj.Instance() == 0 || deoj.Instance() == o.EOJ.Instance())
}

// InstanceList is the EDT of 0xD5/0xD6 for these devices: their count, then their EOJs.
func InstanceList(devices []*Object) []byte {
	out := []byte{byte(len(devices))}
	for _, d := range devices {
		out = appendEOJ(out, d.EOJ)
	}
	return out
}

func newNodeProfile(addr netip.Addr, devices []*Object) *Object {
	a := addr.As4()
	// Identification number: 0xFE (manufacturer-defined), the experimental manufacturer code
	// FF FF FF, then 13 bytes of which the last 4 are the node's address, unique per host.
	id := append([]byte{0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0}, a[:]...)

	instances := InstanceList(devices)
	var classes []byte
	seen := map[uint16]bool{}
	for _, d := range devices {
		if c := d.EOJ.Class(); !seen[c] {
			seen[c] = true
			classes = append(classes, byte(c>>8), byte(c))
		}
	}
	classList := append([]byte{byte(len(seen))}, classes...)
	nInstances := len(devices)
	nClasses := len(seen) + 1 // the node profile's class counts in 0xD4

	return newObject(NodeProfile, []propertyDef{
		{epc: EPCOperatingStatus, edt: []byte{0x30}},                         // on
		{epc: 0x82, edt: []byte{0x01, 0x0E, 0x01, 0x00}},                     // version 1.14, format 1
		{epc: EPCIdentification, edt: id},                                    // identification number
		{epc: 0x8A, edt: []byte{0xFF, 0xFF, 0xFF}},                           // manufacturer: experimental
		{epc: 0xD3, edt: []byte{0, byte(nInstances >> 8), byte(nInstances)}}, // self-node instances
		{epc: 0xD4, edt: []byte{byte(nClasses >> 8), byte(nClasses)}},        // self-node classes
		{epc: EPCInstanceListNote, edt: instances},                           // instance list notification
		{epc: EPCInstanceList, edt: instances},                               // self-node instance list S
		{epc: 0xD7, edt: classList},                                          // self-node class list S
	}, []byte{EPCOperatingStatus, EPCInstanceListNote})
}

func newAirConditioner() *Object {
	anyByte := oneByteIn(func(byte) bool { return true })
	return newObject(HomeAirConditioner, []propertyDef{
		{epc: EPCOperatingStatus, edt: []byte{0x31}, // off
			accept: oneByteIn(func(v byte) bool { return v == 0x30 || v == 0x31 })},
		{epc: 0x81, edt: []byte{0x00}, accept: anyByte},  // installation location
		{epc: 0x82, edt: []byte{0x00, 0x00, 0x52, 0x01}}, // Appendix R rev. 1
		{epc: 0x88, edt: []byte{0x42}},                   // fault status: none
		{epc: 0x8A, edt: []byte{0xFF, 0xFF, 0xFF}},       // manufacturer code
		{epc: 0x8F, edt: []byte{0x42}},                   // power saving: normal
		{epc: 0x93, edt: []byte{0x42}},                   // remote control setting
		{epc: 0x97, edt: []byte{0x0C, 0x00}},             // current time 12:00
		{epc: 0x98, edt: []byte{0x07, 0xE6, 0x01, 0x01}}, // current date 2022-01-01
		{epc: 0xA0, edt: []byte{0x41}, // air flow rate: auto
			accept: oneByteIn(func(v byte) bool { return v >= 0x31 && v <= 0x38 || v == 0x41 })},
		{epc: 0xB0, edt: []byte{0x41}, // operation mode: auto
			accept: oneByteIn(func(v byte) bool { return v >= 0x40 && v <= 0x45 })},
		{epc: 0xB1, edt: []byte{0x41}}, // automatic temperature control
		{epc: 0xB3, edt: []byte{0x14}, // set temperature 20 °C
			accept: oneByteIn(func(v byte) bool { return v <= 0x32 })},
		{epc: 0xBA, edt: []byte{0x32}}, // room relative humidity 50 %
		{epc: 0xBB, edt: []byte{0x14}}, // room temperature 20 °C
	}, []byte{EPCOperatingStatus, 0x81, 0x88, 0xB0})
}
