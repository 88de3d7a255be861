package capnpbench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	capnp "capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/packed"

	"msgbench/workloads/capnp/impls/go/schema/carsales"
	"msgbench/workloads/capnp/impls/go/schema/catrank"
	"msgbench/workloads/capnp/impls/go/schema/eval"
)

func le32(words ...uint32) []byte {
	var b []byte
	for _, w := range words {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

func le64(words ...uint64) []byte {
	var b []byte
	for _, w := range words {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

// frame1 frames one segment.
func frame1(seg []byte) []byte { return append(le32(0, uint32(len(seg)/8)), seg...) }

func structPtr(offset int32, data, ptrs uint16) uint64 {
	return uint64(uint32(offset)<<2) | uint64(data)<<32 | uint64(ptrs)<<48
}

// serve runs a server over input and returns what it answered and its error.
func serve(t *testing.T, caseName string, isPacked bool, input []byte) (int, error) {
	t.Helper()
	cfg := Config{Case: caseName, Mode: "server", Packed: isPacked, Iterations: 1}
	return RunServer(cfg, bytes.NewReader(input), io.Discard)
}

func firstRequest(t *testing.T, caseName string) []byte {
	c, _ := NewCase(caseName)
	return must(newRequest(t, c).Marshal())
}

func TestServerCleanEnd(t *testing.T) {
	if n, err := serve(t, "carsales", false, nil); n != 0 || err != nil {
		t.Errorf("empty input: served %d, %v", n, err)
	}
	two := append(firstRequest(t, "carsales"), firstRequest(t, "carsales")...)
	if n, err := serve(t, "carsales", false, two); n != 2 || err != nil {
		t.Errorf("two requests: served %d, %v", n, err)
	}
}

// Segment-table limits at their edges: 511 segments pass, 512 do not; 8 Mi words pass (as a
// size), one more does not.
func TestFrameSizeLimits(t *testing.T) {
	table := func(sizes ...uint32) []byte {
		hdr := le32(append([]uint32{uint32(len(sizes) - 1)}, sizes...)...)
		if len(hdr)%8 != 0 {
			hdr = append(hdr, 0, 0, 0, 0)
		}
		return hdr
	}
	sizes := make([]uint32, 511)
	sizes[0] = 1
	if total, need, err := frameSize(table(sizes...)); err != nil || need != 0 || total != maxHeaderBytes+8 {
		t.Errorf("511 segments: %d, %d, %v", total, need, err)
	}
	if _, _, err := frameSize(table(make([]uint32, 512)...)); err == nil {
		t.Error("512 segments accepted")
	}
	if _, _, err := frameSize(table(maxWords)); err != nil {
		t.Errorf("8 Mi words: %v", err)
	}
	if _, _, err := frameSize(table(maxWords-1, 2)); err == nil {
		t.Error("8 Mi + 1 words in two segments accepted")
	}
	if _, need, _ := frameSize(le32(3, 1)); need != 24 {
		t.Errorf("4 segments need a table of 24 bytes, asked %d", need)
	}

	// 511 one-word-or-empty segments through a server: the root is null, an empty lot.
	msg := append(table(sizes...), make([]byte, 8)...)
	if n, err := serve(t, "carsales", false, msg); n != 1 || err != nil {
		t.Errorf("511 segments served %d, %v", n, err)
	}
}

func TestServerRefusesHostileInput(t *testing.T) {
	evalMsg := func(build func(seg *capnp.Segment)) []byte {
		msg, seg := capnp.NewSingleSegmentMessage(nil)
		build(seg)
		return must(msg.Marshal())
	}
	// The root expression's left side points back at the root.
	loop := evalMsg(func(seg *capnp.Segment) {
		root := must(eval.NewRootExpression(seg))
		root.Right().SetValue(1)
		_ = root.Left().SetExpression(root)
	})
	loopSeg := loop[8:]
	// Root pointer at word 0, root struct at word 1 (2 data words, 2 pointers); left's
	// pointer is word 3. Point it at word 1: offset 1 - (3 + 1) = -3.
	binary.LittleEndian.PutUint64(loopSeg[24:], structPtr(-3, 2, 2))

	// catrank: 3000 urls pointing at one 400 KB text: 1.2 GB of reading from 400 KB.
	amplified := func() []byte {
		msg, seg, _ := capnp.NewMessage(capnp.SingleSegment(make([]byte, 0, 1<<20)))
		list := must(must(catrank.NewRootSearchResultList(seg)).NewResults(3000))
		big := must(capnp.NewText(seg, strings.Repeat("a", 400_000)))
		for i := range list.Len() {
			_ = capnp.Struct(list.At(i)).SetPtr(urlSlot, big.ToPtr())
		}
		if msg.NumSegments() != 1 {
			t.Fatal("not one segment")
		}
		return must(msg.Marshal())
	}()

	hugeList := firstRequest(t, "carsales")
	// ParkingLot's cars pointer (word 1 of the segment, after the root pointer): an
	// inline-composite list claiming 2^29 - 1 words.
	w := binary.LittleEndian.Uint64(hugeList[8+8:])
	binary.LittleEndian.PutUint64(hugeList[8+8:], w&0xffffffff|7<<32|((1<<29)-1)<<35)

	truncated := firstRequest(t, "carsales")
	truncated = truncated[:len(truncated)/2]

	cases := []struct {
		name, caseName string
		packed         bool
		input          []byte
		want           string
	}{
		{"truncated", "carsales", false, truncated, "end of input inside a message"},
		{"truncated in the table", "carsales", false, le32(3, 1, 1), "end of input inside a message"},
		{"partial first word", "carsales", false, []byte{0, 0, 0}, "end of input inside a message"},
		{"2^32 segments", "carsales", false, append(le32(0xffffffff), make([]byte, 60)...), "segments"},
		{"2^32-1 segments", "carsales", false, append(le32(0xfffffffe), make([]byte, 60)...), "segments"},
		{"513 segments", "carsales", false, append(le32(512), make([]byte, 4096)...), "segments"},
		{"a segment beyond the cap", "carsales", false, append(le32(0, 1<<30), make([]byte, 64)...), "words"},
		{"two segments beyond the cap", "carsales", false,
			append(le32(1, 1<<22, (1<<22)+1, 0), make([]byte, 64)...), "words"},
		{"root out of bounds", "carsales", false, frame1(le64(structPtr(1000, 1, 0), 0)), "invalid address"},
		{"empty message", "carsales", false, le32(0, 0), "root"},
		{"pointer loop", "eval", false, loop, "limit"},
		{"amplified text", "catrank", false, amplified, "traversal limit"},
		{"list claims 2^29 words", "carsales", false, hugeList, "list pointer"},
		{"packed beyond the cap", "carsales", true, packed.Pack(nil, append(le32(0, 1<<30), make([]byte, 8)...)), "words"},
		{"packed run past the end", "carsales", true, []byte{0x10, 0x01, 0x00, 0xff}, "packed run"},
		{"packed literal run past the end", "carsales", true,
			append([]byte{0x10, 0x01, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 1}, make([]byte, 8)...), "packed run"},
		{"packed, truncated in a run's length", "carsales", true, []byte{0x10, 0x01, 0x00}, "end of input"},
		{"packed, truncated in a word", "carsales", true, []byte{0x10}, "end of input"},
		{"packed, truncated in a literal run", "carsales", true,
			[]byte{0x10, 0x02, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1, 2}, "end of input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := serve(t, tc.caseName, tc.packed, tc.input)
			if err == nil || n != 0 {
				t.Fatalf("served %d, error %v", n, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
		})
	}
}

// A packed run may cross a segment boundary inside a message (libcapnp's reader allows it too);
// only the message's end is a boundary.
func TestPackedRunAcrossSegmentsInsideAMessage(t *testing.T) {
	// Two segments: segment 0 has the root pointer (a null) and a zero word, segment 1 two zero
	// words; the packer sees 4 zero words in a row.
	plain := append(le32(1, 2, 2, 0), make([]byte, 32)...)
	if n, err := serve(t, "carsales", true, packed.Pack(nil, plain)); n != 1 || err != nil {
		t.Errorf("served %d, %v", n, err)
	}
}

// The frame reader reads what the library's encoder writes, packed or not, message after
// message, and counts the bytes as written.
func TestFrameRoundTrip(t *testing.T) {
	for _, isPacked := range []bool{false, true} {
		var buf bytes.Buffer
		w := newFrameWriter(&buf, isPacked)
		c := &Catrank{rng: NewRNG()}
		var msgs [][]byte
		for range 5 {
			m := newRequest(t, c)
			if err := w.write(m); err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, must(m.Marshal()))
		}
		if w.written() != int64(buf.Len()) {
			t.Errorf("packed %v: counted %d, wrote %d", isPacked, w.written(), buf.Len())
		}
		r := newFrameReader(bytes.NewReader(buf.Bytes()), isPacked)
		for i, want := range msgs {
			got, err := r.next()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("packed %v, message %d: %v", isPacked, i, err)
			}
		}
		if _, err := r.next(); err != io.EOF {
			t.Errorf("packed %v: at the end %v", isPacked, err)
		}
		if r.consumed() != int64(buf.Len()) {
			t.Errorf("packed %v: consumed %d of %d", isPacked, r.consumed(), buf.Len())
		}
	}
}

// A multi-segment message (as other libraries write when a message outgrows the first
// segment) is read as well as a single-segment one.
func TestMessageReaderMultiSegment(t *testing.T) {
	// Segment 0: a far pointer to segment 1's word 0, where a landing pad points at a
	// TotalValue of one data word right after it.
	far := uint64(2) | 0<<3 | uint64(1)<<32
	multi := append(le32(1, 1, 2, 0), le64(far, structPtr(0, 1, 0), 42)...)
	r := newMessageReader()
	m, err := r.read(multi)
	if err != nil {
		t.Fatal(err)
	}
	if v := must(carsales.ReadRootTotalValue(m)); v.Amount() != 42 {
		t.Errorf("amount %d", v.Amount())
	}
	if m.TraverseLimit != traversalLimit || m.DepthLimit != nestingLimit {
		t.Error("limits not set on a multi-segment message")
	}
	if _, err := r.read(multi[:len(multi)-8]); err == nil {
		t.Error("a short frame accepted")
	}
}

// FuzzUnpacker checks the strict unpacker against the library's packed.Unpack: on any input it
// unpacks completely, it produces the same words, and it never accepts what Unpack refuses;
// and anything packed by packed.Pack unpacks to the original.
func FuzzUnpacker(f *testing.F) {
	f.Add([]byte{0x10, 0x01, 0x00, 0x00})
	f.Add([]byte{0xff, 1, 2, 3, 4, 5, 6, 7, 8, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 9, 9, 9, 9})
	f.Add([]byte{0x00, 0x05})
	f.Add(packed.Pack(nil, firstRequestBytes()))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Arbitrary bytes as packed input.
		lib, libErr := packed.Unpack(nil, data)
		mine, mineErr := unpackAll(data)
		if mineErr == nil && (libErr != nil || !bytes.Equal(lib, mine)) {
			t.Fatalf("unpacked %x to %x, the library to %x (%v)", data, mine, lib, libErr)
		}
		// The same in one read of every word (the many-words-per-pass path), through a
		// buffer of some other size.
		if mineErr == nil && len(mine) > 0 {
			u := unpacker{src: bufio.NewReaderSize(bytes.NewReader(data), 16+len(data)%61)}
			all := make([]byte, len(mine))
			if err := u.read(all); err != nil || u.pending() || !bytes.Equal(all, mine) {
				t.Fatalf("%x in one read: %x (%v, pending %v), word by word %x", data, all, err, u.pending(), mine)
			}
		}
		// Arbitrary words, packed by the library.
		words := append([]byte(nil), data...)
		words = append(words, make([]byte, (8-len(words)%8)%8)...)
		back, err := unpackAll(packed.Pack(nil, words))
		if err != nil || !bytes.Equal(back, words) {
			t.Fatalf("%x packed and unpacked to %x (%v)", words, back, err)
		}
	})
}

func firstRequestBytes() []byte {
	c := &Carsales{rng: NewRNG()}
	msg, seg := capnp.NewSingleSegmentMessage(nil)
	_ = c.Request(seg)
	return must(msg.Marshal())
}

// unpackAll unpacks words one at a time through a small buffer (so both of the unpacker's
// paths run), as one message that must end where a run ends.
func unpackAll(data []byte) ([]byte, error) {
	u := unpacker{src: bufio.NewReaderSize(bytes.NewReader(data), 16)}
	var out []byte
	for {
		var word [8]byte
		err := u.read(word[:])
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, word[:]...)
	}
	if u.pending() {
		return nil, errPackedRun
	}
	return out, nil
}

// FuzzServer feeds arbitrary input to every case's server, packed and not: whatever it is,
// the server answers or returns an error, and never panics.
func FuzzServer(f *testing.F) {
	f.Add(byte(0), []byte(nil))
	f.Add(byte(1), []byte{0x10, 0x01, 0x00, 0xff})
	for i, name := range Cases {
		c, _ := NewCase(name)
		msg, seg := capnp.NewSingleSegmentMessage(nil)
		_ = c.Request(seg)
		data := must(msg.Marshal())
		f.Add(byte(2*i), data)
		f.Add(byte(2*i+1), packed.Pack(nil, data))
	}
	f.Fuzz(func(t *testing.T, which byte, input []byte) {
		cfg := Config{Case: Cases[int(which/2)%len(Cases)], Mode: "server", Packed: which%2 == 1, Iterations: 1}
		// Sizes beyond what the input holds only cost an allocation each (TestFrameSizeLimits
		// and the hostile cases cover them); keep the fuzzer on content.
		head := input
		if cfg.Packed {
			head, _ = packed.Unpack(nil, input)
		}
		if len(head) >= 8 {
			if total, need, err := frameSize(head); err == nil && (total > 1<<20 || need > len(head)) {
				t.Skip()
			}
		}
		_, _ = RunServer(cfg, bytes.NewReader(input), io.Discard)
	})
}

// wordsMessage is a message of exactly words words in one segment: the root pointer and a
// list of words - 1 eight-byte elements.
func wordsMessage(t *testing.T, words int) *capnp.Message {
	t.Helper()
	msg, seg, err := capnp.NewMessage(capnp.SingleSegment(make([]byte, 0, 8*words)))
	if err != nil {
		t.Fatal(err)
	}
	list := must(capnp.NewUInt64List(seg, int32(words-1)))
	if err := msg.SetRoot(list.ToPtr()); err != nil {
		t.Fatal(err)
	}
	if got := must(messageWords(msg)); got != uint64(words) || msg.NumSegments() != 1 {
		t.Fatalf("built %d words in %d segments, want %d in one", got, msg.NumSegments(), words)
	}
	return msg
}

// A message beyond the cap every reader enforces is refused by the writer with nothing
// written; one at the cap exactly is written, and read back.
func TestWriterRefusesAMessageBeyondTheCap(t *testing.T) {
	over := wordsMessage(t, maxWords+1)
	for _, isPacked := range []bool{false, true} {
		var buf bytes.Buffer
		w := newFrameWriter(&buf, isPacked)
		err := w.write(over)
		if err == nil || !strings.Contains(err.Error(), "beyond the 8388608-word cap") {
			t.Errorf("packed %v: %v", isPacked, err)
		}
		if buf.Len() != 0 || w.written() != 0 {
			t.Errorf("packed %v: %d bytes written", isPacked, buf.Len())
		}
	}
	over.Release()
	var buf bytes.Buffer
	w := newFrameWriter(&buf, false)
	if err := w.write(wordsMessage(t, maxWords)); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 8+8*maxWords {
		t.Errorf("%d bytes written", buf.Len())
	}
	if _, err := newFrameReader(bytes.NewReader(buf.Bytes()), false).next(); err != nil {
		t.Errorf("read back: %v", err)
	}
}

// sharedURLRequest is a catrank request of n results, each a struct of one pointer (the url,
// no score, no snippet), all pointing at one text: n words to read plus the url's words per
// result, while each result's copy in the response is a whole SearchResult and the url.
func sharedURLRequest(n int, url string) []byte {
	textWords := (len(url) + 8) / 8
	seg := le64(structPtr(0, 0, 1), uint64(1)|7<<32|uint64(n)<<35, structPtr(int32(n), 0, 1))
	for i := range n {
		offset := n - i - 1 // from the word after this pointer to the text, after the list
		seg = append(seg, le64(uint64(uint32(offset)<<2)|1|2<<32|uint64(len(url)+1)<<35)...)
	}
	text := make([]byte, 8*textWords)
	copy(text, url)
	return frame1(append(seg, text...))
}

// The catrank server counts its response's words exactly as they are laid out: a request
// whose response comes to the cap exactly is answered (and the message is that size), one
// more result is refused before anything is built or written.
func TestCatrankResponseAtAndBeyondTheCap(t *testing.T) {
	// 3 words (root pointer, root struct, list tag) + n × (3-word struct + 2-word url).
	const url = "http://a.b/cd" // 13 bytes and the NUL: 2 words
	const n = (maxWords - 3) / 5
	if 3+n*5 != maxWords {
		t.Fatalf("n = %d does not reach the cap exactly", n)
	}
	c := &Catrank{}
	r := newMessageReader()
	for _, results := range []int{n, n + 1} {
		frame := sharedURLRequest(results, url)
		req, err := r.read(frame)
		if err != nil {
			t.Fatal(err)
		}
		resp, seg := capnp.NewSingleSegmentMessage(nil)
		err = c.Serve(req, seg)
		if results == n {
			if err != nil {
				t.Fatalf("%d results: %v", results, err)
			}
			if words := must(messageWords(resp)); words != maxWords {
				t.Errorf("%d results: response of %d words, counted %d", results, words, maxWords)
			}
		} else if err == nil || !strings.Contains(err.Error(), "beyond the 8388608-word cap") {
			t.Errorf("%d results: %v", results, err)
		}
		resp.Release()
	}
	// Through the server: exit with the error, nothing written.
	var out bytes.Buffer
	cfg := Config{Case: "catrank", Mode: "server", Iterations: 1}
	served, err := RunServer(cfg, bytes.NewReader(sharedURLRequest(n+1, url)), &out)
	if served != 0 || err == nil || out.Len() != 0 {
		t.Errorf("served %d, %d bytes written, %v", served, out.Len(), err)
	}
}
