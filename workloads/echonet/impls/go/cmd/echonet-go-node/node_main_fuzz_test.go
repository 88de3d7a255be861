package main

// FuzzDatagram: the `datagram` fuzz target of the echonet workload (workloads/echonet/fuzz).
// One input is one UDP datagram. handleDatagram — the node's receive loop minus the socket:
// Frame.Decode, then Responder.Handle for what decodes, and the counters — runs on it in
// memory, against a fresh node (the workload's node profile and air conditioner) per input,
// with the replies collected instead of sent. Checked per input:
//   - the datagram is counted exactly once: as a request, ignored, malformed or format 2, as
//     the decoder's verdict says; a refusal is one of the package's DecodeErrors; what
//     decodes encodes back to exactly the datagram (format 1 has one encoding per frame);
//   - only a request addressed to one of the node's objects is answered, at most once per
//     object, and every reply decodes, answers it (TID, DEOJ = the request's SEOJ, an object
//     of the node as SEOJ, a reply ESV for the request's, the request's property counts),
//     and, handed back to a node, is ignored without an answer (no reply storms);
//   - the same datagram a second time, on the state the first left (a Set persists), is
//     answered under the same rules;
//   - the controller's side of a received datagram: the same Frame.Decode it runs in
//     Client.await, then the instance lists of 0xD5/0xD6 it reads on discovery
//     (ParseInstanceList) yield at most the count they declare, from the bytes present.
//
// Run: go test ./workloads/echonet/impls/go/cmd/echonet-go-node -run '^$' -fuzz '^FuzzDatagram$' -fuzztime 60s

import (
	"bytes"
	"errors"
	"msgbench/fuzz/go/fuzzseed"
	"net/netip"
	"path/filepath"
	"testing"

	"msgbench/workloads/echonet/impls/go/echonet"
)

// datagramMaxLen is the target's max_len in workloads/echonet/workload.toml: longer inputs are
// skipped, as libFuzzer's -max_len would keep them out of the other languages' campaigns.
const datagramMaxLen = 1500

// handleOnce runs one datagram through handleDatagram and returns the counters it moved and
// copies of the replies it sent.
func handleOnce(datagram []byte, r *echonet.Responder) (counters, [][]byte) {
	var c counters
	var req echonet.Frame
	var replies [][]byte
	handleDatagram(datagram, &req, r, &c, func(reply []byte) {
		replies = append(replies, bytes.Clone(reply)) // valid only during the call
		c.Replies++
	})
	return c, replies
}

// checkAnswered checks one pass of datagram through the node against the rules above.
func checkAnswered(t *testing.T, datagram []byte, node *echonet.Node, r *echonet.Responder) {
	c, replies := handleOnce(datagram, r)
	if c.Requests+c.Ignored+c.DroppedMalformed+c.DroppedFormat2 != 1 || c.Replies != uint64(len(replies)) {
		t.Fatalf("counters %+v for one datagram", c)
	}
	var req echonet.Frame
	err := req.Decode(datagram)
	var de *echonet.DecodeError
	switch {
	case err != nil && !errors.As(err, &de):
		t.Fatalf("decode error of another kind: %v", err)
	case err != nil && (c.DroppedFormat2 == 1) != de.Format2, err != nil && len(replies) != 0:
		t.Fatalf("refused (%v) but counted %+v with %d replies", err, c, len(replies))
	case err != nil:
		return
	}
	if enc, err := req.Append(nil); err != nil || !bytes.Equal(enc, datagram) {
		t.Fatalf("decoded datagram encodes to % x (%v)", enc, err)
	}
	addressed := 0
	for _, o := range node.Objects {
		if o.AddressedBy(req.DEOJ) {
			addressed++
		}
	}
	if isRequest := echonet.IsRequest(req.ESV) && addressed > 0; (c.Requests == 1) != isRequest ||
		(c.Ignored == 1) == isRequest || len(replies) > addressed {
		t.Fatalf("ESV %02x to %v (%d objects addressed): counted %+v with %d replies",
			byte(req.ESV), req.DEOJ, addressed, c, len(replies))
	}
	seen := map[echonet.EOJ]bool{}
	for _, out := range replies {
		var reply echonet.Frame
		if err := reply.Decode(out); err != nil {
			t.Fatalf("reply % x does not decode: %v", out, err)
		}
		if reply.TID != req.TID || reply.DEOJ != req.SEOJ || !req.ESV.Answers(reply.ESV) ||
			len(reply.Props) != len(req.Props) || len(reply.GetProps) != len(req.GetProps) {
			t.Fatalf("reply % x does not answer % x", out, datagram)
		}
		if seen[reply.SEOJ] || !addressedObject(node, reply.SEOJ, req.DEOJ) {
			t.Fatalf("reply % x from %v to a request for %v", out, reply.SEOJ, req.DEOJ)
		}
		seen[reply.SEOJ] = true
		if back, again := handleOnce(out, r); back.Ignored != 1 || len(again) != 0 {
			t.Fatalf("the node answered its own reply % x: %+v", out, back)
		}
	}
}

// addressedObject reports whether eoj is an object of node that a request to deoj addresses.
func addressedObject(node *echonet.Node, eoj, deoj echonet.EOJ) bool {
	for _, o := range node.Objects {
		if o.EOJ == eoj && o.AddressedBy(deoj) {
			return true
		}
	}
	return false
}

func FuzzDatagram(f *testing.F) {
	fuzzseed.AddCorpus(f, filepath.Join("..", "..", "..", "..", "fuzz", "corpus", "datagram"))
	f.Fuzz(func(t *testing.T, datagram []byte) {
		defer fuzzseed.WatchHang(datagram).Stop()
		if len(datagram) > datagramMaxLen {
			return
		}
		node, err := echonet.NewNode(netip.MustParseAddr("192.0.2.1"))
		if err != nil {
			t.Fatal(err)
		}
		r := echonet.NewResponder(node)
		checkAnswered(t, datagram, node, r)
		checkAnswered(t, datagram, node, r) // on the state the first pass left

		// The controller's side: the decoder of a received frame (a Frame reused across
		// datagrams, as Client.reply is) and the instance lists discovery reads.
		var received echonet.Frame
		_ = received.Decode([]byte{0x10, 0x81, 0, 1, 0x0E, 0xF0, 1, 0x05, 0xFF, 1, 0x72, 1, 0xD6, 0})
		if received.Decode(datagram) != nil {
			return
		}
		for _, p := range append(received.Props, received.GetProps...) {
			if p.EPC != echonet.EPCInstanceList && p.EPC != echonet.EPCInstanceListNote {
				continue
			}
			list := echonet.ParseInstanceList(p.EDT)
			if len(p.EDT) > 0 && (len(list) > int(p.EDT[0]) || len(list) > (len(p.EDT)-1)/3) {
				t.Fatalf("instance list % x gave %d EOJs", p.EDT, len(list))
			}
		}
	})
}
