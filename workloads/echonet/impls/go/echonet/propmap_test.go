package echonet

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestEncodePropertyMapListForm(t *testing.T) {
	for _, tc := range []struct {
		epcs []byte
		want string
	}{
		{nil, "00"},
		{[]byte{0xD5, 0x80}, "02 80 D5"},                   // ascending whatever the input order
		{[]byte{0x80, 0x80, 0xD5}, "02 80 D5"},             // duplicates once
		{[]byte{0xB0, 0x80, 0x88, 0x81}, "04 80 81 88 B0"}, // SPEC §5: the air conditioner's 0x9D
		{[]byte{0x80, 0x81, 0xA0, 0xB0, 0xB3}, "05 80 81 A0 B0 B3"},
		{
			[]byte{0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7},
			"0C 80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7", // SPEC §5: the node profile's 0x9F
		},
		{
			[]byte{0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E},
			"0F 80 81 82 83 84 85 86 87 88 89 8A 8B 8C 8D 8E", // 15: the last list
		},
	} {
		got, err := EncodePropertyMap(tc.epcs)
		if err != nil || !bytes.Equal(got, unhex(t, tc.want)) {
			t.Errorf("EncodePropertyMap(% x) = % x (%v), want %s", tc.epcs, got, err, tc.want)
		}
	}
}

func TestEncodePropertyMapBitmapForm(t *testing.T) {
	// SPEC §5: the air conditioner's get map, 18 EPCs.
	aircon := []byte{0x80, 0x81, 0x82, 0x88, 0x8A, 0x8F, 0x93, 0x97, 0x98, 0x9D, 0x9E, 0x9F,
		0xA0, 0xB0, 0xB1, 0xB3, 0xBA, 0xBB}
	got, err := EncodePropertyMap(aircon)
	want := unhex(t, "12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("air conditioner 0x9F = % x (%v), want % x", got, err, want)
	}

	// SPEC §4's examples: 0x80 is byte 0 bit 0, 0xD6 byte 6 bit 5. Sixteen EPCs: the first
	// count written as a bitmap.
	sixteen := []byte{0x80, 0xD6, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E}
	got, _ = EncodePropertyMap(sixteen)
	if len(got) != 17 || got[0] != 16 {
		t.Fatalf("16 EPCs = % x, want the bitmap form", got)
	}
	if got[1]&1 == 0 || got[1+6]&(1<<5) == 0 {
		t.Errorf("0x80 or 0xD6 misplaced: % x", got)
	}

	// Every property code: N = 128 and a full bitmap.
	all := make([]byte, 0, 128)
	for epc := 0x80; epc <= 0xFF; epc++ {
		all = append(all, byte(epc))
	}
	got, _ = EncodePropertyMap(all)
	if got[0] != 128 || !bytes.Equal(got[1:], bytes.Repeat([]byte{0xFF}, 16)) {
		t.Errorf("all codes = % x", got)
	}
}

func TestEncodePropertyMapRefusesNonPropertyCodes(t *testing.T) {
	if _, err := EncodePropertyMap([]byte{0x7F, 0x80}); err == nil {
		t.Fatal("0x7f encoded")
	}
}

func TestDecodePropertyMapDoesNotTrustN(t *testing.T) {
	aircon := []byte{0x80, 0x81, 0x82, 0x88, 0x8A, 0x8F, 0x93, 0x97, 0x98, 0x9D, 0x9E, 0x9F,
		0xA0, 0xB0, 0xB1, 0xB3, 0xBA, 0xBB}
	bitmap := unhex(t, "12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03")
	for _, n := range []byte{0x12, 16, 0x10, 0x7F, 0xFF} { // right, and what broken peers write
		m := slices.Clone(bitmap)
		m[0] = n
		got, err := DecodePropertyMap(m)
		if err != nil || !bytes.Equal(got, aircon) {
			t.Errorf("N=%d: % x (%v), want % x", n, got, err, aircon)
		}
	}

	// A peer that masked away every EPC from 0xC0 but kept the bits: the bits win.
	m := unhex(t, "10 01 00 00 00 00 00 20 00 00 00 00 00 00 00 00 00") // 0x80, 0xD6
	if got, _ := DecodePropertyMap(m); !bytes.Equal(got, []byte{0x80, 0xD6}) {
		t.Errorf("masked N: % x", got)
	}

	// A truncated bitmap yields what its bytes hold.
	if got, _ := DecodePropertyMap(bitmap[:3]); !bytes.Equal(got, []byte{0x80, 0x81, 0xA0, 0xB0, 0xB1}) {
		t.Errorf("truncated bitmap: % x", got)
	}

	// The list form: as many EPCs as are present, at most N.
	if got, _ := DecodePropertyMap(unhex(t, "05 80 81")); !bytes.Equal(got, []byte{0x80, 0x81}) {
		t.Errorf("short list: % x", got)
	}
	if got, _ := DecodePropertyMap(unhex(t, "01 80 81")); !bytes.Equal(got, []byte{0x80}) {
		t.Errorf("long list: % x", got)
	}
	if got, err := DecodePropertyMap(unhex(t, "00")); err != nil || len(got) != 0 {
		t.Errorf("empty map: % x (%v)", got, err)
	}
	if _, err := DecodePropertyMap(nil); err == nil {
		t.Error("empty EDT decoded")
	}
}

func TestPropertyMapRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		set := make([]byte, 0, 128)
		for epc := 0x80; epc <= 0xFF; epc++ {
			if r.IntN(4) == 0 {
				set = append(set, byte(epc))
			}
		}
		m, err := EncodePropertyMap(set)
		if err != nil {
			t.Fatal(err)
		}
		if len(set) >= 16 && len(m) != 17 || len(set) < 16 && len(m) != 1+len(set) {
			t.Fatalf("%d EPCs encoded in %d bytes", len(set), len(m))
		}
		got, err := DecodePropertyMap(m)
		if err != nil || !bytes.Equal(got, set) {
			t.Fatalf("round trip of % x gave % x (%v)", set, got, err)
		}
	}
}

func FuzzDecodePropertyMap(f *testing.F) {
	f.Add([]byte{0x12, 0x0D, 0x09, 0x01, 0x0A, 0, 0, 0, 0x02, 0x03, 0, 0x09, 0x08, 0, 0x02, 0x02, 0x03})
	f.Add([]byte{0x02, 0x80, 0xD5})
	f.Add([]byte{0xFF})
	f.Fuzz(func(t *testing.T, m []byte) {
		got, err := DecodePropertyMap(m)
		if err != nil {
			return
		}
		if len(got) > 128 && m[0] >= 16 || len(got) > len(m) && m[0] < 16 {
			t.Fatalf("%d EPCs from % x", len(got), m)
		}
	})
}
