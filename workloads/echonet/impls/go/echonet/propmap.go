package echonet

import (
	"fmt"
	"slices"
)

// Property maps (SPEC §4): the EDT of 0x9D, 0x9E and 0x9F. The first byte N counts the
// properties; below 16 the EPCs follow as a list, from 16 on as a 16-byte bitmap in which
// byte i bit j stands for EPC ((8+j) << 4) | i.

// bitmapFormFrom is the smallest N written as a bitmap.
const bitmapFormFrom = 16

// EncodePropertyMap returns the exact map of the given EPCs: duplicates removed, the list form
// in ascending order below 16 EPCs, the bitmap form from 16. Property codes are 0x80–0xFF; a
// smaller one cannot be written in the bitmap form and is refused in either form, so an
// object's maps never depend on how many properties it has.
func EncodePropertyMap(epcs []byte) ([]byte, error) {
	set := slices.Clone(epcs)
	slices.Sort(set)
	set = slices.Compact(set)
	if len(set) > 0 && set[0] < 0x80 {
		return nil, fmt.Errorf("EPC %#02x is not a property code (0x80-0xff)", set[0])
	}
	if len(set) < bitmapFormFrom {
		return append([]byte{byte(len(set))}, set...), nil
	}
	out := make([]byte, 1+16)
	out[0] = byte(len(set)) // at most 128 codes exist, so N always fits
	for _, epc := range set {
		out[1+epc&0x0F] |= 1 << (epc>>4 - 8)
	}
	return out, nil
}

// DecodePropertyMap returns the EPCs a map holds, in the order written (ascending for a
// bitmap). Known peers write a wrong N for the bitmap form (16 for any count, or a count that
// left out every EPC from 0xC0), so N only chooses the form: a bitmap yields the bits it has
// set, a list the EPCs actually present up to N. A bitmap shorter than 16 bytes yields the
// bits of the bytes present. Only an empty EDT is an error.
func DecodePropertyMap(edt []byte) ([]byte, error) {
	if len(edt) == 0 {
		return nil, fmt.Errorf("empty property map")
	}
	n, body := int(edt[0]), edt[1:]
	if n < bitmapFormFrom {
		return slices.Clone(body[:min(n, len(body))]), nil
	}
	body = body[:min(16, len(body))]
	var out []byte
	for high := range 8 {
		for low, bits := range body {
			if bits&(1<<high) != 0 {
				out = append(out, byte((8+high)<<4|low))
			}
		}
	}
	return out, nil
}
