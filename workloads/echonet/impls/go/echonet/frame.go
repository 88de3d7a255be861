// Package echonet is the Go implementation of the msgbench echonet workload: an ECHONET Lite
// node (node profile + home air conditioner) and controller over UDP, as fixed by
// workloads/echonet/SPEC.md. This file is the wire format (SPEC §3).
package echonet

import (
	"encoding/binary"
	"fmt"
)

// Header bytes of every frame.
const (
	EHD1        = 0x10
	EHD2Format1 = 0x81 // fixed layout: EOJs, ESV, OPC, properties
	EHD2Format2 = 0x82 // free-form after TID; not supported by these nodes

	// HeaderLen is the size of a format-1 frame up to and including OPC.
	HeaderLen = 12
	// SetGetHeaderLen is the least a SetGet frame can be: the header plus OPCGet.
	SetGetHeaderLen = 14
	// MaxDatagram is the largest UDP payload IPv4 can carry; receive buffers are larger, so a
	// datagram is always read whole.
	MaxDatagram = 65507
	// RecvBufferLen is the size of every receive buffer (SPEC §2).
	RecvBufferLen = 65536
)

// ESV is the service code of a frame.
type ESV byte

// Services (SPEC §3): requests, replies and refusals.
const (
	SetI   ESV = 0x60
	SetC   ESV = 0x61
	Get    ESV = 0x62
	InfReq ESV = 0x63
	SetGet ESV = 0x6E

	SetRes    ESV = 0x71
	GetRes    ESV = 0x72
	Inf       ESV = 0x73
	InfC      ESV = 0x74
	InfCRes   ESV = 0x7A
	SetGetRes ESV = 0x7E

	SetISNA   ESV = 0x50
	SetCSNA   ESV = 0x51
	GetSNA    ESV = 0x52
	InfSNA    ESV = 0x53
	SetGetSNA ESV = 0x5E
)

// HasSetGetLayout reports whether frames of this service carry two property lists (OPCSet
// and its properties, then OPCGet and its properties) instead of one.
func (e ESV) HasSetGetLayout() bool {
	return e == SetGet || e == SetGetRes || e == SetGetSNA
}

// Answers reports whether a frame with service reply may answer a request with service e
// (SPEC §8: Get is answered by Get_Res or Get_SNA, and so on). SetI's success has no reply,
// so only SetI_SNA answers it.
func (e ESV) Answers(reply ESV) bool {
	switch e {
	case SetI:
		return reply == SetISNA
	case SetC:
		return reply == SetRes || reply == SetCSNA
	case Get:
		return reply == GetRes || reply == GetSNA
	case InfReq:
		return reply == Inf || reply == InfSNA
	case SetGet:
		return reply == SetGetRes || reply == SetGetSNA
	case InfC:
		return reply == InfCRes
	}
	return false
}

// EOJ is an ECHONET object: class group, class and instance, held as 0xGGCCII.
type EOJ uint32

// Objects used by this workload.
const (
	NodeProfile        EOJ = 0x0EF001
	HomeAirConditioner EOJ = 0x013001
	Controller         EOJ = 0x05FF01
)

// Class is the class group and class (the EOJ without its instance).
func (o EOJ) Class() uint16 { return uint16(o >> 8) }

// Instance is the instance code; 0x00 in a DEOJ addresses every instance of the class.
func (o EOJ) Instance() byte { return byte(o) }

// String is the six lower-case hex digits the controller prints ("0ef001").
func (o EOJ) String() string { return fmt.Sprintf("%06x", uint32(o)) }

func readEOJ(b []byte) EOJ {
	_ = b[2]
	return EOJ(b[0])<<16 | EOJ(b[1])<<8 | EOJ(b[2])
}

func appendEOJ(dst []byte, o EOJ) []byte {
	return append(dst, byte(o>>16), byte(o>>8), byte(o))
}

// Property is one (EPC, PDC, EDT) triple; PDC is len(EDT).
type Property struct {
	EPC byte
	EDT []byte
}

// Frame is a decoded format-1 frame. For the SetGet services Props is the set part and
// GetProps the get part; for every other service GetProps is empty.
type Frame struct {
	TID      uint16 // opaque: copied verbatim from request to reply
	SEOJ     EOJ
	DEOJ     EOJ
	ESV      ESV
	Props    []Property
	GetProps []Property
}

// DecodeError says why a datagram was dropped. Every cause is a package-level value, so
// decoding a hostile datagram allocates nothing.
type DecodeError struct {
	Reason  string
	Format2 bool // well-formed format 2: dropped as unsupported, not malformed
}

func (e *DecodeError) Error() string { return e.Reason }

// Why a datagram is not decoded (SPEC §3). Test with errors.Is against these or check
// DecodeError.Format2.
var (
	ErrFormat2         = &DecodeError{Reason: "format 2 (EHD2 0x82) is not supported", Format2: true}
	ErrTooShort        = &DecodeError{Reason: "malformed: shorter than the format-1 header"}
	ErrBadEHD1         = &DecodeError{Reason: "malformed: EHD1 is not 0x10"}
	ErrBadEHD2         = &DecodeError{Reason: "malformed: EHD2 is neither 0x81 nor 0x82"}
	ErrNoProperties    = &DecodeError{Reason: "malformed: OPC is 0"}
	ErrMissingProperty = &DecodeError{Reason: "malformed: OPC counts more properties than the datagram holds"}
	ErrPDCOverrun      = &DecodeError{Reason: "malformed: a PDC runs past the end of the datagram"}
	ErrTrailingBytes   = &DecodeError{Reason: "malformed: bytes left over after the last property"}
)

// Decode parses the datagram b into f, reusing f's property slices (so a Frame kept across
// datagrams decodes without allocating). The EDTs alias b: they are valid only as long as b
// is. On error f holds nothing meaningful.
//
// Every length is checked against the bytes actually received before it is used: OPC and
// PDC only ever bound loops over b, never size anything.
func (f *Frame) Decode(b []byte) error {
	f.Props, f.GetProps = f.Props[:0], f.GetProps[:0]
	// SPEC §3 lists "shorter than 12 bytes" among the malformed cases without exception, so a
	// short datagram is malformed even when its EHD2 says format 2.
	if len(b) < HeaderLen {
		return ErrTooShort
	}
	if b[0] != EHD1 {
		return ErrBadEHD1
	}
	switch b[1] {
	case EHD2Format1:
	case EHD2Format2:
		return ErrFormat2
	default:
		return ErrBadEHD2
	}
	f.TID = binary.BigEndian.Uint16(b[2:4])
	f.SEOJ = readEOJ(b[4:7])
	f.DEOJ = readEOJ(b[7:10])
	f.ESV = ESV(b[10])

	var err error
	rest := b[11:]
	if !f.ESV.HasSetGetLayout() {
		if rest[0] == 0 {
			return ErrNoProperties
		}
		f.Props, rest, err = decodeProperties(f.Props, rest)
	} else {
		if len(b) < SetGetHeaderLen {
			return ErrTooShort
		}
		if f.Props, rest, err = decodeProperties(f.Props, rest); err != nil {
			return err
		}
		if len(rest) == 0 {
			return ErrMissingProperty // no room left for OPCGet
		}
		f.GetProps, rest, err = decodeProperties(f.GetProps, rest)
		if err == nil && len(f.Props)+len(f.GetProps) == 0 {
			return ErrNoProperties
		}
	}
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return ErrTrailingBytes
	}
	return nil
}

// decodeProperties reads an OPC byte and that many triples from the front of b (which holds at
// least the OPC byte), appending them to props, and returns what follows them.
func decodeProperties(props []Property, b []byte) ([]Property, []byte, error) {
	opc := int(b[0])
	b = b[1:]
	for range opc {
		if len(b) < 2 {
			return props, b, ErrMissingProperty
		}
		epc, pdc := b[0], int(b[1])
		if len(b)-2 < pdc {
			return props, b, ErrPDCOverrun
		}
		props = append(props, Property{EPC: epc, EDT: b[2 : 2+pdc : 2+pdc]})
		b = b[2+pdc:]
	}
	return props, b, nil
}

// Append encodes f as a format-1 frame at the end of dst. It refuses what the format cannot
// carry: no property at all, more than 255 in one list, an EDT longer than 255 bytes, or a
// get part on a service that has none.
func (f *Frame) Append(dst []byte) ([]byte, error) {
	setGet := f.ESV.HasSetGetLayout()
	switch {
	case len(f.Props)+len(f.GetProps) == 0:
		return dst, fmt.Errorf("frame with ESV %#02x has no property", byte(f.ESV))
	case !setGet && len(f.GetProps) != 0:
		return dst, fmt.Errorf("ESV %#02x has no get part", byte(f.ESV))
	}
	dst = append(dst, EHD1, EHD2Format1, byte(f.TID>>8), byte(f.TID))
	dst = appendEOJ(dst, f.SEOJ)
	dst = appendEOJ(dst, f.DEOJ)
	dst = append(dst, byte(f.ESV))
	var err error
	if dst, err = appendProperties(dst, f.Props); err != nil {
		return dst, err
	}
	if setGet {
		return appendProperties(dst, f.GetProps)
	}
	return dst, nil
}

func appendProperties(dst []byte, props []Property) ([]byte, error) {
	if len(props) > 255 {
		return dst, fmt.Errorf("%d properties in one list (at most 255)", len(props))
	}
	dst = append(dst, byte(len(props)))
	for _, p := range props {
		if len(p.EDT) > 255 {
			return dst, fmt.Errorf("EPC %#02x: EDT of %d bytes (at most 255)", p.EPC, len(p.EDT))
		}
		dst = append(dst, p.EPC, byte(len(p.EDT)))
		dst = append(dst, p.EDT...)
	}
	return dst, nil
}
