package comm

import (
	"bytes"
	"testing"
)

// frame builds the wire bytes of one frame.
func frame(typ byte, body []byte) []byte {
	b := make([]byte, HeaderLen, HeaderLen+len(body))
	PutHeader(b, typ, uint64(len(body)))
	return append(b, body...)
}

// countingWriter records every Write call.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

func TestFrameBatchWritesFramesInOrder(t *testing.T) {
	var w countingWriter
	b := NewFrameBatch(&w)
	var want []byte
	bodies := [][]byte{nil, []byte("small"), bytes.Repeat([]byte{7}, copyLimit), []byte("x"),
		bytes.Repeat([]byte{9}, 3*copyLimit)}
	for i, body := range bodies {
		if err := b.Add(byte(i), body); err != nil {
			t.Fatal(err)
		}
		want = append(want, frame(byte(i), body)...)
	}
	if b.Pending() != len(want) {
		t.Fatalf("Pending() = %d, want %d", b.Pending(), len(want))
	}
	if w.Len() != 0 {
		t.Fatal("Add wrote before Flush")
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.Bytes(), want) {
		t.Fatal("flushed bytes differ from the frames added")
	}
	if b.Pending() != 0 {
		t.Fatal("Pending() not reset by Flush")
	}
}

func TestFrameBatchSmallFramesAreOneWrite(t *testing.T) {
	var w countingWriter
	b := NewFrameBatch(&w)
	for range 100 {
		if err := b.Add(TypeReply, []byte("hello")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 || w.Len() != 100*(HeaderLen+5) {
		t.Fatalf("%d writes of %d bytes, want 1 of %d", w.writes, w.Len(), 100*(HeaderLen+5))
	}
}

func TestFrameBatchFlushesWhenStagingIsFull(t *testing.T) {
	var w countingWriter
	b := NewFrameBatch(&w)
	body := bytes.Repeat([]byte{1}, copyLimit-1)
	var want []byte
	n := 3 * stageSize / (HeaderLen + len(body))
	for range n {
		if err := b.Add(TypeReply, body); err != nil {
			t.Fatal(err)
		}
		want = append(want, frame(TypeReply, body)...)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.writes < 3 || !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("%d writes, bytes equal: %v", w.writes, bytes.Equal(w.Bytes(), want))
	}
}

func TestFrameBatchEmptyFlushWritesNothing(t *testing.T) {
	var w countingWriter
	if err := NewFrameBatch(&w).Flush(); err != nil || w.writes != 0 {
		t.Fatalf("empty Flush: %d writes, err %v", w.writes, err)
	}
}
