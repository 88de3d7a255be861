package echonet

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// unhex turns the SPEC's spaced hex ("10 81 00 02 ...") into bytes.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex in test: %v", err)
	}
	return b
}

// The 12-property Get of the node profile, SPEC §6 ("The 36-byte Get and its reply").
const specGet36 = `10 81 00 02 0E F0 01 0E F0 01 62 0C 80 00 82 00 83 00 8A 00 9D 00 9E 00 9F 00
D3 00 D4 00 D5 00 D6 00 D7 00`

// Its reply from a node whose address is 127.0.0.1 (94 bytes).
const specReply94 = `10 81 00 02 0E F0 01 0E F0 01 72 0C 80 01 30 82 04 01 0E 01 00 83 11 FE FF FF FF 00 00 00 00 00
00 00 00 00 7F 00 00 01 8A 03 FF FF FF 9D 03 02 80 D5 9E 01 00 9F 0D 0C 80 82 83 8A 9D 9E 9F D3
D4 D5 D6 D7 D3 03 00 00 01 D4 02 00 02 D5 04 01 01 30 01 D6 04 01 01 30 01 D7 03 01 01 30`

func TestDecodeSpecGet(t *testing.T) {
	b := unhex(t, specGet36)
	if len(b) != 36 {
		t.Fatalf("SPEC Get is %d bytes, want 36", len(b))
	}
	var f Frame
	if err := f.Decode(b); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if f.TID != 0x0002 || f.SEOJ != NodeProfile || f.DEOJ != NodeProfile || f.ESV != Get {
		t.Errorf("header = TID %04x SEOJ %v DEOJ %v ESV %02x", f.TID, f.SEOJ, f.DEOJ, byte(f.ESV))
	}
	want := []byte{0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7}
	if len(f.Props) != len(want) || len(f.GetProps) != 0 {
		t.Fatalf("%d properties (+%d get), want %d", len(f.Props), len(f.GetProps), len(want))
	}
	for i, p := range f.Props {
		if p.EPC != want[i] || len(p.EDT) != 0 {
			t.Errorf("property %d = %02x/%x, want %02x with PDC 0", i, p.EPC, p.EDT, want[i])
		}
	}
}

func TestDecodeSpecReplyAndReencode(t *testing.T) {
	b := unhex(t, specReply94)
	if len(b) != 94 {
		t.Fatalf("SPEC reply is %d bytes, want 94", len(b))
	}
	var f Frame
	if err := f.Decode(b); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if f.ESV != GetRes || len(f.Props) != 12 {
		t.Fatalf("ESV %02x with %d properties", byte(f.ESV), len(f.Props))
	}
	if got := f.Props[2]; got.EPC != 0x83 || !bytes.Equal(got.EDT, unhex(t, "FE FF FF FF 00 00 00 00 00 00 00 00 00 7F 00 00 01")) {
		t.Errorf("0x83 = %x", got.EDT)
	}
	out, err := f.Append(nil)
	if err != nil || !bytes.Equal(out, b) {
		t.Fatalf("re-encoded = % x (%v)\nwant       % x", out, err, b)
	}
}

func TestDecodeSetGet(t *testing.T) {
	// SetGet to the air conditioner: set 0x80=0x30, get 0x80 and 0xB3.
	b := unhex(t, "10 81 12 34 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00 B3 00")
	var f Frame
	if err := f.Decode(b); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if f.TID != 0x1234 || f.ESV != SetGet || f.SEOJ != Controller || f.DEOJ != HomeAirConditioner {
		t.Fatalf("header = %+v", f)
	}
	if len(f.Props) != 1 || f.Props[0].EPC != 0x80 || !bytes.Equal(f.Props[0].EDT, []byte{0x30}) {
		t.Errorf("set part = %+v", f.Props)
	}
	if len(f.GetProps) != 2 || f.GetProps[0].EPC != 0x80 || f.GetProps[1].EPC != 0xB3 {
		t.Errorf("get part = %+v", f.GetProps)
	}
	out, err := f.Append(nil)
	if err != nil || !bytes.Equal(out, b) {
		t.Fatalf("re-encoded = % x (%v)", out, err)
	}

	// One part may be empty: OPCSet 0 with a get part is well-formed.
	if err := f.Decode(unhex(t, "10 81 00 01 05 FF 01 01 30 01 6E 00 01 80 00")); err != nil {
		t.Errorf("SetGet with OPCSet 0: %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name, hex string
		want      error
	}{
		{"empty", "", ErrTooShort},
		{"11 bytes", "10 81 00 01 05 FF 01 0E F0 01 62", ErrTooShort},
		{"bad EHD1", "11 81 00 01 05 FF 01 0E F0 01 62 01 80 00", ErrBadEHD1},
		{"bad EHD2", "10 83 00 01 05 FF 01 0E F0 01 62 01 80 00", ErrBadEHD2},
		{"OPC 0", "10 81 00 01 05 FF 01 0E F0 01 62 00", ErrNoProperties},
		{"OPC 0 with trailing bytes", "10 81 00 01 05 FF 01 0E F0 01 62 00 80 00", ErrNoProperties},
		{"OPC beyond the datagram", "10 81 00 01 05 FF 01 0E F0 01 62 02 80 00", ErrMissingProperty},
		{"half a triple", "10 81 00 01 05 FF 01 0E F0 01 62 02 80 00 82", ErrMissingProperty},
		{"PDC past the end", "10 81 00 01 05 FF 01 0E F0 01 60 01 80 02 30", ErrPDCOverrun},
		{"PDC 255 in a short datagram", "10 81 00 01 05 FF 01 0E F0 01 60 01 80 FF", ErrPDCOverrun},
		{"trailing byte", "10 81 00 01 05 FF 01 0E F0 01 62 01 80 00 00", ErrTrailingBytes},
		{"SetGet 13 bytes", "10 81 00 01 05 FF 01 01 30 01 6E 00 00", ErrTooShort},
		{"SetGet both OPCs 0", "10 81 00 01 05 FF 01 01 30 01 6E 00 00 00", ErrNoProperties},
		{"SetGet without OPCGet", "10 81 00 01 05 FF 01 01 30 01 6E 01 80 01 30", ErrMissingProperty},
		{"SetGet get part short", "10 81 00 01 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00", ErrMissingProperty},
		{"SetGet trailing", "10 81 00 01 05 FF 01 01 30 01 6E 00 01 80 00 AA", ErrTrailingBytes},
		{"SetGet_Res layout too", "10 81 00 01 0E F0 01 05 FF 01 7E 01 80 00", ErrMissingProperty},
		{"format 2", "10 82 00 01 00 00 00 00 00 00 00 00", ErrFormat2},
		{"format 2, any body", "10 82 00 01 DE AD BE EF 00 01 02 03 04 05 06", ErrFormat2},
		{"format 2 shorter than a header", "10 82 00 01", ErrTooShort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f Frame
			err := f.Decode(unhex(t, tc.hex))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode = %v, want %v", err, tc.want)
			}
			var de *DecodeError
			if !errors.As(err, &de) || de.Format2 != (tc.want == ErrFormat2) {
				t.Errorf("DecodeError.Format2 wrong for %v", err)
			}
		})
	}
}

func TestDecodeLargestProperties(t *testing.T) {
	// OPC 255, each PDC 255: every length at its maximum, still decoded exactly.
	b := []byte{EHD1, EHD2Format1, 0, 1, 0x05, 0xFF, 0x01, 0x01, 0x30, 0x01, byte(SetI), 255}
	for i := range 255 {
		b = append(b, byte(i), 255)
		b = append(b, bytes.Repeat([]byte{byte(i)}, 255)...)
	}
	var f Frame
	if err := f.Decode(b); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(f.Props) != 255 || len(f.Props[254].EDT) != 255 || f.Props[254].EDT[0] != 254 {
		t.Fatalf("decoded %d properties", len(f.Props))
	}
	if err := f.Decode(b[:len(b)-1]); !errors.Is(err, ErrPDCOverrun) {
		t.Fatalf("one byte short: %v", err)
	}
}

func TestDecodeAllocatesNothingOnceWarm(t *testing.T) {
	good, bad := unhex(t, specGet36), unhex(t, "10 81 00 01 05 FF 01 0E F0 01 62 02 80 00")
	var f Frame
	_ = f.Decode(good)
	allocs := testing.AllocsPerRun(100, func() {
		_ = f.Decode(good)
		_ = f.Decode(bad)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per decode", allocs)
	}
}

func TestAppendRefusesWhatTheFormatCannotCarry(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Frame
	}{
		{"no property", Frame{ESV: Get}},
		{"256 properties", Frame{ESV: Get, Props: make([]Property, 256)}},
		{"EDT of 256 bytes", Frame{ESV: SetC, Props: []Property{{EPC: 0x80, EDT: make([]byte, 256)}}}},
		{"get part on a Get", Frame{ESV: Get, Props: []Property{{EPC: 0x80}}, GetProps: []Property{{EPC: 0x80}}}},
	} {
		if _, err := tc.f.Append(nil); err == nil {
			t.Errorf("%s: encoded", tc.name)
		}
	}
}

func TestESVAnswers(t *testing.T) {
	pairs := map[ESV][]ESV{
		Get: {GetRes, GetSNA}, SetC: {SetRes, SetCSNA}, SetI: {SetISNA},
		InfReq: {Inf, InfSNA}, SetGet: {SetGetRes, SetGetSNA}, InfC: {InfCRes},
	}
	for req, replies := range pairs {
		for r := range 256 {
			want := bytes.IndexByte(esvBytes(replies), byte(r)) >= 0
			if got := req.Answers(ESV(r)); got != want {
				t.Errorf("%02x.Answers(%02x) = %v", byte(req), r, got)
			}
		}
	}
}

func esvBytes(es []ESV) []byte {
	b := make([]byte, len(es))
	for i, e := range es {
		b[i] = byte(e)
	}
	return b
}

func TestEOJParts(t *testing.T) {
	if NodeProfile.Class() != 0x0EF0 || NodeProfile.Instance() != 0x01 || NodeProfile.String() != "0ef001" {
		t.Errorf("NodeProfile parts: %04x %02x %s", NodeProfile.Class(), NodeProfile.Instance(), NodeProfile)
	}
}

// FuzzDecode: no input makes Decode panic or read out of bounds; every input it accepts is
// exactly what its result encodes back to (the format has one encoding per frame); every
// refusal is one of the package's errors.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		specGet36, specReply94,
		"10 81 12 34 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00 B3 00",
		"10 81 00 00 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01",
		"10 81 00 01 05 FF 01 01 30 01 60 02 80 01 30 B3 01 19",
		"10 81 00 01 05 FF 01 0E F0 01 62 02 80 00",
		"10 81 00 01 05 FF 01 0E F0 01 60 01 80 FF",
		"10 82 00 01 00 00 00 00 00 00 00 00",
		"10 81 00 01 05 FF 01 01 30 01 6E 00 00 00",
		"",
	} {
		f.Add(unhex(f, seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr Frame
		err := fr.Decode(b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error of another kind: %v", err)
			}
			return
		}
		out, err := fr.Append(nil)
		if err != nil {
			t.Fatalf("decoded frame does not encode: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("round trip:\n in  % x\n out % x", b, out)
		}
	})
}
