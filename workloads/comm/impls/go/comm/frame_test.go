package comm

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestHeaderLayoutIsTypeThenBigEndianLength(t *testing.T) {
	var b [HeaderLen]byte
	PutHeader(b[:], TypeText, 0x0102030405060708)
	want := []byte{1, 1, 2, 3, 4, 5, 6, 7, 8}
	if !bytes.Equal(b[:], want) {
		t.Fatalf("header = % x, want % x", b, want)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		typ byte
		n   uint64
	}{
		{TypeDefault, 0}, {TypeReply, 4096}, {TypeEnd, 0}, {TypeBinary, 1 << 40},
		{255, math.MaxUint64},
	} {
		var b [HeaderLen]byte
		PutHeader(b[:], tc.typ, tc.n)
		typ, n := ParseHeader(b[:])
		if typ != tc.typ || n != tc.n {
			t.Errorf("round trip of (%d, %d) gave (%d, %d)", tc.typ, tc.n, typ, n)
		}
	}
}

func TestEndsSessionOnlyForEndAndQuit(t *testing.T) {
	for typ := range 256 {
		want := typ == int(TypeEnd) || typ == int(TypeQuit)
		if got := EndsSession(byte(typ)); got != want {
			t.Errorf("EndsSession(%d) = %v", typ, got)
		}
	}
}

func TestCheckBodyLen(t *testing.T) {
	if err := CheckBodyLen(100, 100); err != nil {
		t.Errorf("length equal to the cap refused: %v", err)
	}
	err := CheckBodyLen(math.MaxUint64, DefaultMaxBody)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Length != math.MaxUint64 || tl.Max != DefaultMaxBody {
		t.Fatalf("CheckBodyLen(max u64) = %v", err)
	}
}
