package echonet

import (
	"bytes"
	"fmt"
	"net/netip"
	"testing"
)

// respond decodes req (hex), hands it to r and returns whether it was handled and copies of
// the replies sent.
func respond(t *testing.T, r *Responder, req string) (bool, [][]byte) {
	t.Helper()
	var f Frame
	if err := f.Decode(unhex(t, req)); err != nil {
		t.Fatalf("test request does not decode: %v", err)
	}
	var replies [][]byte
	handled := r.Handle(&f, func(b []byte) { replies = append(replies, bytes.Clone(b)) })
	return handled, replies
}

// expectReply checks that req is handled with exactly one reply of the given bytes ("" for no
// reply at all).
func expectReply(t *testing.T, r *Responder, req, want string) {
	t.Helper()
	handled, replies := respond(t, r, req)
	if !handled {
		t.Fatalf("request %s ignored", req)
	}
	if want == "" {
		if len(replies) != 0 {
			t.Fatalf("request %s answered % x, want no reply", req, replies)
		}
		return
	}
	if len(replies) != 1 || !bytes.Equal(replies[0], unhex(t, want)) {
		t.Fatalf("request %s\n replies % x\n want    [%s]", req, replies, want)
	}
}

func newTestResponder(t *testing.T) *Responder {
	return NewResponder(newTestNode(t, "127.0.0.1"))
}

func TestSpecGetAndItsReply(t *testing.T) {
	expectReply(t, newTestResponder(t), specGet36, specReply94)
}

func TestGetPartlyUnreadableIsGetSNA(t *testing.T) {
	// Readable EPCs with their EDT, unreadable with PDC 0, same OPC, request order.
	expectReply(t, newTestResponder(t),
		"10 81 00 05 05 FF 01 01 30 01 62 03 80 00 FF 00 82 00",
		"10 81 00 05 01 30 01 05 FF 01 52 03 80 01 31 FF 00 82 04 00 00 52 01")
}

func TestGetIgnoresRequestEDTsAndAnswersDuplicates(t *testing.T) {
	expectReply(t, newTestResponder(t),
		"10 81 AB CD 05 FF 01 01 30 01 62 02 B3 01 77 B3 00",
		"10 81 AB CD 01 30 01 05 FF 01 72 02 B3 01 14 B3 01 14")
}

func TestSetISuccessHasNoReplyAndPersists(t *testing.T) {
	r := newTestResponder(t)
	expectReply(t, r, "10 81 00 06 05 FF 01 01 30 01 60 02 80 01 30 B3 01 19", "")
	expectReply(t, r,
		"10 81 00 07 05 FF 01 01 30 01 62 02 80 00 B3 00",
		"10 81 00 07 01 30 01 05 FF 01 72 02 80 01 30 B3 01 19")
}

func TestSetIRefusalKeepsAcceptedProperties(t *testing.T) {
	r := newTestResponder(t)
	// B0=42 accepted; B3=33 out of range; 88 not settable: SetI_SNA with the accepted one at
	// PDC 0 and the refused ones echoed.
	expectReply(t, r,
		"10 81 00 07 05 FF 01 01 30 01 60 03 B0 01 42 B3 01 33 88 01 41",
		"10 81 00 07 01 30 01 05 FF 01 50 03 B0 00 B3 01 33 88 01 41")
	expectReply(t, r,
		"10 81 00 08 05 FF 01 01 30 01 62 03 B0 00 B3 00 88 00",
		"10 81 00 08 01 30 01 05 FF 01 72 03 B0 01 42 B3 01 14 88 01 42")
}

func TestSetC(t *testing.T) {
	r := newTestResponder(t)
	expectReply(t, r,
		"10 81 00 08 05 FF 01 01 30 01 61 01 81 01 08",
		"10 81 00 08 01 30 01 05 FF 01 71 01 81 00")
	// PDC 2 for a one-byte property: refused with the request's PDC and EDT.
	expectReply(t, r,
		"10 81 00 09 05 FF 01 01 30 01 61 01 80 02 30 30",
		"10 81 00 09 01 30 01 05 FF 01 51 01 80 02 30 30")
	// PDC 0 is refused too.
	expectReply(t, r,
		"10 81 00 0A 05 FF 01 01 30 01 61 01 B3 00",
		"10 81 00 0A 01 30 01 05 FF 01 51 01 B3 00")
	// The node profile has nothing settable.
	expectReply(t, r,
		"10 81 00 0B 05 FF 01 0E F0 01 61 01 80 01 30",
		"10 81 00 0B 0E F0 01 05 FF 01 51 01 80 01 30")
}

func TestSetGet(t *testing.T) {
	r := newTestResponder(t)
	// The get part reads what the set part wrote.
	expectReply(t, r,
		"10 81 00 0A 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00 B3 00",
		"10 81 00 0A 01 30 01 05 FF 01 7E 01 80 00 02 80 01 30 B3 01 14")
	// An unreadable EPC in the get part: SetGet_SNA, the set part still applied.
	expectReply(t, r,
		"10 81 00 0B 05 FF 01 01 30 01 6E 01 80 01 31 01 F0 00",
		"10 81 00 0B 01 30 01 05 FF 01 5E 01 80 00 01 F0 00")
	// A refused set: SetGet_SNA with the EDT echoed, the get part answered.
	expectReply(t, r,
		"10 81 00 0C 05 FF 01 01 30 01 6E 01 B3 01 FF 01 80 00",
		"10 81 00 0C 01 30 01 05 FF 01 5E 01 B3 01 FF 01 80 01 31")
	// Empty parts stay empty.
	expectReply(t, r,
		"10 81 00 0D 05 FF 01 01 30 01 6E 00 01 B3 00",
		"10 81 00 0D 01 30 01 05 FF 01 7E 00 01 B3 01 14")
}

func TestInfReqIsAnsweredByInf(t *testing.T) {
	r := newTestResponder(t)
	expectReply(t, r,
		"10 81 00 0B 05 FF 01 0E F0 01 63 01 D5 00",
		"10 81 00 0B 0E F0 01 05 FF 01 73 01 D5 04 01 01 30 01")
	expectReply(t, r,
		"10 81 00 0C 05 FF 01 0E F0 01 63 02 D5 00 B0 00",
		"10 81 00 0C 0E F0 01 05 FF 01 53 02 D5 04 01 01 30 01 B0 00")
}

func TestInfCIsAcknowledged(t *testing.T) {
	expectReply(t, newTestResponder(t),
		"10 81 00 0C 01 30 01 0E F0 01 74 01 D5 04 01 01 30 01",
		"10 81 00 0C 0E F0 01 01 30 01 7A 01 D5 00")
}

func TestInstanceZeroAnswersAsTheObject(t *testing.T) {
	r := newTestResponder(t)
	expectReply(t, r,
		"10 81 00 0D 05 FF 01 01 30 00 62 01 B3 00",
		"10 81 00 0D 01 30 01 05 FF 01 72 01 B3 01 14")
	expectReply(t, r,
		"10 81 00 0E 05 FF 01 0E F0 00 62 01 D6 00",
		"10 81 00 0E 0E F0 01 05 FF 01 72 01 D6 04 01 01 30 01")
}

func TestIgnored(t *testing.T) {
	r := newTestResponder(t)
	for _, req := range []string{
		"10 81 00 01 05 FF 01 01 30 02 62 01 80 00", // another instance
		"10 81 00 01 05 FF 01 02 90 01 62 01 80 00", // a class the node does not have
		"10 81 00 01 05 FF 01 05 FF 01 62 01 80 00", // the controller's EOJ
	} {
		if handled, replies := respond(t, r, req); handled || len(replies) != 0 {
			t.Errorf("%s: handled %v, replies % x", req, handled, replies)
		}
	}
	// Replies, refusals, INF and unknown services, even to an object the node has.
	for esv := range 256 {
		if IsRequest(ESV(esv)) {
			continue
		}
		req := fmt.Sprintf("10 81 00 01 05 FF 01 0E F0 01 %02X 01 80 00", esv)
		if ESV(esv).HasSetGetLayout() {
			req = fmt.Sprintf("10 81 00 01 05 FF 01 0E F0 01 %02X 01 80 00 00", esv)
		}
		if handled, replies := respond(t, r, req); handled || len(replies) != 0 {
			t.Errorf("ESV %02x: handled %v, replies % x", esv, handled, replies)
		}
	}
}

func TestHandleAllocatesNothingOnceWarm(t *testing.T) {
	r := newTestResponder(t)
	var get, setGet Frame
	if err := get.Decode(unhex(t, specGet36)); err != nil {
		t.Fatal(err)
	}
	if err := setGet.Decode(unhex(t, "10 81 00 0A 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00 B3 00")); err != nil {
		t.Fatal(err)
	}
	sent := 0
	send := func([]byte) { sent++ }
	r.Handle(&get, send)
	r.Handle(&setGet, send)
	if allocs := testing.AllocsPerRun(100, func() {
		r.Handle(&get, send)
		r.Handle(&setGet, send)
	}); allocs != 0 {
		t.Fatalf("%v allocations per request", allocs)
	}
}

// FuzzRespond: whatever decodes, the responder answers without panicking, and every reply is
// a well-formed frame with the request's TID and property counts.
func FuzzRespond(f *testing.F) {
	for _, seed := range []string{
		specGet36,
		"10 81 00 0A 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00 B3 00",
		"10 81 00 07 05 FF 01 01 30 01 60 03 B0 01 42 B3 01 33 88 01 41",
		"10 81 00 0C 01 30 01 0E F0 01 74 01 D5 04 01 01 30 01",
		"10 81 00 0D 05 FF 01 01 30 00 63 01 B3 00",
	} {
		f.Add(unhex(f, seed))
	}
	node, err := NewNode(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		f.Fatal(err)
	}
	r := NewResponder(node)
	f.Fuzz(func(t *testing.T, b []byte) {
		var req, reply Frame
		if req.Decode(b) != nil {
			return
		}
		r.Handle(&req, func(out []byte) {
			if err := reply.Decode(out); err != nil {
				t.Fatalf("reply % x does not decode: %v", out, err)
			}
			if reply.TID != req.TID || reply.DEOJ != req.SEOJ || len(reply.Props) != len(req.Props) || len(reply.GetProps) != len(req.GetProps) {
				t.Fatalf("reply % x does not answer % x", out, b)
			}
			if !req.ESV.Answers(reply.ESV) {
				t.Fatalf("reply ESV %02x to %02x", byte(reply.ESV), byte(req.ESV))
			}
		})
	})
}
