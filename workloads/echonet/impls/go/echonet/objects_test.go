package echonet

import (
	"bytes"
	"net/netip"
	"slices"
	"testing"
)

func newTestNode(t *testing.T, addr string) *Node {
	t.Helper()
	n, err := NewNode(netip.MustParseAddr(addr))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkValues compares every property of o with the SPEC §5 table, and checks o has no other.
func checkValues(t *testing.T, o *Object, table map[byte]string) {
	t.Helper()
	for epc, want := range table {
		got, ok := o.Get(epc)
		if !ok || !bytes.Equal(got, unhex(t, want)) {
			t.Errorf("%v EPC %02x = % x (readable %v), want %s", o.EOJ, epc, got, ok, want)
		}
	}
	for epc := range 256 {
		if _, ok := o.Get(byte(epc)); ok && table[byte(epc)] == "" {
			t.Errorf("%v has EPC %02x, not in SPEC §5", o.EOJ, epc)
		}
	}
}

func TestNodeProfileValues(t *testing.T) {
	n := newTestNode(t, "192.168.1.20")
	if len(n.Objects) != 2 || n.Objects[0].EOJ != NodeProfile || n.Objects[1].EOJ != HomeAirConditioner {
		t.Fatalf("objects: %v", n.Objects)
	}
	checkValues(t, n.Objects[0], map[byte]string{
		0x80: "30",
		0x82: "01 0E 01 00",
		0x83: "FE FF FF FF 00 00 00 00 00 00 00 00 00 C0 A8 01 14",
		0x8A: "FF FF FF",
		0x9D: "02 80 D5",
		0x9E: "00",
		0x9F: "0C 80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7",
		0xD3: "00 00 01",
		0xD4: "00 02",
		0xD5: "01 01 30 01",
		0xD6: "01 01 30 01",
		0xD7: "01 01 30",
	})
}

var airconTable = map[byte]string{
	0x80: "31",
	0x81: "00",
	0x82: "00 00 52 01",
	0x88: "42",
	0x8A: "FF FF FF",
	0x8F: "42",
	0x93: "42",
	0x97: "0C 00",
	0x98: "07 E6 01 01",
	0x9D: "04 80 81 88 B0",
	0x9E: "05 80 81 A0 B0 B3",
	0x9F: "12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03",
	0xA0: "41",
	0xB0: "41",
	0xB1: "41",
	0xB3: "14",
	0xBA: "32",
	0xBB: "14",
}

func TestAirConditionerValues(t *testing.T) {
	checkValues(t, newTestNode(t, "127.0.0.1").Objects[1], airconTable)
}

func TestSetRules(t *testing.T) {
	accepted := map[byte]func(v int) bool{
		0x80: func(v int) bool { return v == 0x30 || v == 0x31 },
		0x81: func(int) bool { return true },
		0xA0: func(v int) bool { return v >= 0x31 && v <= 0x38 || v == 0x41 },
		0xB0: func(v int) bool { return v >= 0x40 && v <= 0x45 },
		0xB3: func(v int) bool { return v <= 0x32 },
	}
	ac := newTestNode(t, "127.0.0.1").Objects[1]
	for epc := range 256 {
		for v := range 256 {
			before, _ := ac.Get(byte(epc))
			before = slices.Clone(before)
			ok := ac.Set(byte(epc), []byte{byte(v)})
			want := accepted[byte(epc)] != nil && accepted[byte(epc)](v)
			if ok != want {
				t.Fatalf("Set(%02x, %02x) = %v, want %v", epc, v, ok, want)
			}
			after, _ := ac.Get(byte(epc))
			switch {
			case ok && !bytes.Equal(after, []byte{byte(v)}):
				t.Fatalf("Set(%02x, %02x) accepted but reads % x", epc, v, after)
			case !ok && !bytes.Equal(after, before):
				t.Fatalf("refused Set(%02x, %02x) changed % x to % x", epc, v, before, after)
			}
		}
	}
}

func TestSetRefusesPDCOtherThanOne(t *testing.T) {
	ac := newTestNode(t, "127.0.0.1").Objects[1]
	for _, edt := range [][]byte{nil, {0x30, 0x30}, {0x30, 0x31, 0x32}} {
		if ac.Set(0x80, edt) {
			t.Errorf("Set(0x80, % x) accepted", edt)
		}
	}
	if v, _ := ac.Get(0x80); !bytes.Equal(v, []byte{0x31}) {
		t.Errorf("0x80 changed to % x", v)
	}
}

func TestNodeProfileHasNothingSettable(t *testing.T) {
	np := newTestNode(t, "127.0.0.1").Objects[0]
	for epc := range 256 {
		if np.Set(byte(epc), []byte{0x30}) {
			t.Errorf("node profile accepted a Set of %02x", epc)
		}
	}
}

func TestSetPersistsAndNodesAreIndependent(t *testing.T) {
	a, b := newTestNode(t, "127.0.0.1"), newTestNode(t, "127.0.0.2")
	if !a.Objects[1].Set(0xB3, []byte{0x19}) {
		t.Fatal("Set refused")
	}
	if v, _ := a.Objects[1].Get(0xB3); !bytes.Equal(v, []byte{0x19}) {
		t.Errorf("a reads % x", v)
	}
	if v, _ := b.Objects[1].Get(0xB3); !bytes.Equal(v, []byte{0x14}) {
		t.Errorf("b changed too: % x", v)
	}
}

func TestAddressedBy(t *testing.T) {
	np := newTestNode(t, "127.0.0.1").Objects[0]
	for deoj, want := range map[EOJ]bool{
		0x0EF001: true, 0x0EF000: true, 0x0EF002: false, 0x013001: false, 0x0EF101: false,
	} {
		if got := np.AddressedBy(deoj); got != want {
			t.Errorf("AddressedBy(%v) = %v", deoj, got)
		}
	}
}

func TestNewNodeRefusesIPv6(t *testing.T) {
	if _, err := NewNode(netip.MustParseAddr("::1")); err == nil {
		t.Fatal("IPv6 address accepted")
	}
}
