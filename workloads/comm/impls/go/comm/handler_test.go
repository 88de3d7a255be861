package comm

import (
	"bytes"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestEchoesEveryTypeAsReplyInOrder(t *testing.T) {
	addr, _, _ := startServer(t, DefaultMaxBody)
	c := dial(t, addr)
	got := readAll(c)
	var in, want []byte
	for i, typ := range []byte{TypeDefault, TypeText, TypeReply, TypeFlush, TypeString,
		TypeBinary, 3, 99, 255} {
		body := bytes.Repeat([]byte{byte(i + 1)}, i*700) // some copied, some referenced
		in = append(in, frame(typ, body)...)
		want = append(want, frame(TypeReply, body)...)
	}
	in = append(in, frame(TypeEnd, nil)...)
	want = append(want, frame(TypeEnd, nil)...)
	if _, err := c.Write(in); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("got %d bytes, want %d (or contents differ)", len(b), len(want))
	}
}

func TestEndAndQuitReplyThenEndThenClose(t *testing.T) {
	for _, typ := range []byte{TypeEnd, TypeQuit} {
		addr, _, _ := startServer(t, DefaultMaxBody)
		c := dial(t, addr)
		got := readAll(c)
		in := append(frame(TypeText, []byte("one")), frame(TypeDefault, []byte("two"))...)
		in = append(in, frame(typ, nil)...)
		in = append(in, frame(TypeText, []byte("after the end"))...) // must be ignored
		if _, err := c.Write(in); err != nil {
			t.Fatal(err)
		}
		want := append(frame(TypeReply, []byte("one")), frame(TypeReply, []byte("two"))...)
		want = append(want, frame(TypeEnd, nil)...)
		if b := <-got; !bytes.Equal(b, want) {
			t.Fatalf("type %d: got % x, want % x", typ, b, want)
		}
	}
}

func TestEOFAfterCompleteFramesRepliesThenCloses(t *testing.T) {
	addr, _, _ := startServer(t, DefaultMaxBody)
	c := dial(t, addr)
	got := readAll(c)
	body := bytes.Repeat([]byte("ab"), 5000)
	in := append(frame(TypeDefault, body), frame(TypeDefault, nil)...)
	if _, err := c.Write(in); err != nil {
		t.Fatal(err)
	}
	_ = c.CloseWrite()
	want := append(frame(TypeReply, body), frame(TypeReply, nil)...)
	if b := <-got; !bytes.Equal(b, want) && !bytes.Equal(b, append(want, frame(TypeEnd, nil)...)) {
		t.Fatalf("got %d bytes, want %d", len(b), len(want))
	}
}

func TestEOFInsideAFrameClosesWithNothingMore(t *testing.T) {
	whole := frame(TypeDefault, []byte("complete"))
	partial := frame(TypeDefault, bytes.Repeat([]byte{1}, 100))
	for _, cut := range []int{1, HeaderLen - 1, HeaderLen, HeaderLen + 50} {
		addr, _, _ := startServer(t, DefaultMaxBody)
		c := dial(t, addr)
		got := readAll(c)
		if _, err := c.Write(append(append([]byte{}, whole...), partial[:cut]...)); err != nil {
			t.Fatal(err)
		}
		_ = c.CloseWrite()
		if b := <-got; !bytes.Equal(b, frame(TypeReply, []byte("complete"))) {
			t.Fatalf("cut at %d: got % x", cut, b)
		}
	}
}

func TestOversizedLengthClosesThatConnectionOnly(t *testing.T) {
	addr, _, logs := startServer(t, 1000)
	bystander := dial(t, addr)
	for _, n := range []uint64{1001, math.MaxUint64} {
		c := dial(t, addr)
		got := readAll(c)
		var hdr [HeaderLen]byte
		PutHeader(hdr[:], TypeDefault, n)
		in := append(frame(TypeText, bytes.Repeat([]byte{5}, 1000)), hdr[:]...)
		if _, err := c.Write(in); err != nil {
			t.Fatal(err)
		}
		// No body follows and the write side stays open: the server must close by itself.
		if b := <-got; !bytes.Equal(b, frame(TypeReply, bytes.Repeat([]byte{5}, 1000))) {
			t.Fatalf("length %d: got %d bytes", n, len(b))
		}
	}
	if lines := strings.Count(logs.String(), "exceeds"); lines != 2 {
		t.Fatalf("%d log lines about the cap, want 2: %q", lines, logs.String())
	}
	if _, err := bystander.Write(frame(TypeText, []byte("still here"))); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, HeaderLen+10)
	if _, err := readFull(bystander, buf); err != nil || !bytes.Equal(buf, frame(TypeReply, []byte("still here"))) {
		t.Fatalf("other connection affected: % x, %v", buf, err)
	}
}

func TestBodiesAroundTheReadBufferSizeAndBeyond(t *testing.T) {
	addr, _, _ := startServer(t, DefaultMaxBody)
	for _, n := range []int{ReadBufferSize - HeaderLen - 1, ReadBufferSize - HeaderLen,
		ReadBufferSize - HeaderLen + 1, 3*ReadBufferSize + 17, 16 << 20} {
		c := dial(t, addr)
		got := readAll(c)
		body := NewPattern(n).Body(1, 2)
		in := append(frame(TypeBinary, body), frame(TypeText, []byte("next"))...)
		in = append(in, frame(TypeEnd, nil)...)
		if _, err := c.Write(in); err != nil {
			t.Fatal(err)
		}
		want := append(frame(TypeReply, body), frame(TypeReply, []byte("next"))...)
		want = append(want, frame(TypeEnd, nil)...)
		if b := <-got; !bytes.Equal(b, want) {
			t.Fatalf("body of %d bytes: got %d bytes back, want %d", n, len(b), len(want))
		}
	}
}

func TestFramesArrivingByteByByte(t *testing.T) {
	addr, _, _ := startServer(t, DefaultMaxBody)
	c := dial(t, addr)
	got := readAll(c)
	in := append(frame(TypeText, []byte("slow")), frame(TypeDefault, nil)...)
	in = append(in, frame(TypeEnd, nil)...)
	for i := range in {
		if _, err := c.Write(in[i : i+1]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	want := append(frame(TypeReply, []byte("slow")), frame(TypeReply, nil)...)
	want = append(want, frame(TypeEnd, nil)...)
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("got % x", b)
	}
}

func TestManyConcurrentClientsAreServedAtOnce(t *testing.T) {
	addr, _, _ := startServer(t, DefaultMaxBody)
	const clients = 256
	conns := make([]<-chan []byte, clients)
	var wg sync.WaitGroup
	for i := range clients {
		c := dial(t, addr)
		conns[i] = readAll(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var in []byte
			for m := range 20 {
				in = append(in, frame(TypeDefault, NewPattern(4096).Body(i, m))...)
			}
			_, _ = c.Write(append(in, frame(TypeEnd, nil)...))
		}()
	}
	wg.Wait()
	for i, ch := range conns {
		var want []byte
		for m := range 20 {
			want = append(want, frame(TypeReply, NewPattern(4096).Body(i, m))...)
		}
		want = append(want, frame(TypeEnd, nil)...)
		if b := <-ch; !bytes.Equal(b, want) {
			t.Fatalf("client %d: got %d bytes, want %d", i, len(b), len(want))
		}
	}
}
