package main

// store_list.go: the list type, a ring buffer of strings. Pushes and pops at both ends are
// O(1) amortised and an index is one mask away, which covers LPUSH/RPUSH/LPOP/RPOP, LINDEX,
// LSET and LRANGE (redis uses a quicklist for the same guarantees).
//
// Each element is kept as the bulk string a reply sends ("$3\r\nxxx\r\n", made once by
// bulkElement when it is pushed), so a pop, LINDEX and every element of an LRANGE reply is
// one copy of bytes. At -P 16 the LRANGE tests are most of the suite's server time: encoding
// each element's header at every reply made LRANGE 0 599 cost 101 instructions per element,
// copying encoded elements 48 (callgrind). The price is the header's bytes (6 to 15) in each
// element.

import (
	"strconv"
	"strings"
)

type list struct {
	ring []string // bulk-encoded elements; len is 0 or a power of two
	head int      // index in ring of element 0
	n    int
}

func (*list) typeName() string { return "list" }

func (l *list) len() int { return l.n }

func (l *list) slot(i int) int { return (l.head + i) & (len(l.ring) - 1) }

// bulkElement encodes v as a list element: the bulk string "$<len>\r\n<v>\r\n", in one
// allocation of its exact size.
func bulkElement(v []byte) string {
	var tmp [20]byte
	digits := strconv.AppendInt(tmp[:0], int64(len(v)), 10)
	var b strings.Builder
	b.Grow(len(digits) + len(v) + 5)
	b.WriteByte('$')
	b.Write(digits)
	b.WriteString("\r\n")
	b.Write(v)
	b.WriteString("\r\n")
	return b.String()
}

// at returns element i (0 <= i < n), bulk-encoded.
func (l *list) at(i int) string { return l.ring[l.slot(i)] }

// runs returns elements [from, to) as at most two runs of the ring, in order, so that a range
// is walked without a mask per element.
func (l *list) runs(from, to int) (a, b []string) {
	if from >= to {
		return nil, nil
	}
	start, end := l.slot(from), l.slot(to-1)+1
	if start < end {
		return l.ring[start:end], nil
	}
	return l.ring[start:], l.ring[:end]
}

func (l *list) set(i int, s string) { l.ring[l.slot(i)] = s }

// resize moves the elements into a ring of the given size (a power of two >= n).
func (l *list) resize(size int) {
	ring := make([]string, size)
	for i := 0; i < l.n; i++ {
		ring[i] = l.at(i)
	}
	l.ring, l.head = ring, 0
}

func (l *list) pushBack(s string) {
	if l.n == len(l.ring) {
		l.resize(max(8, 2*len(l.ring)))
	}
	l.ring[l.slot(l.n)] = s
	l.n++
}

func (l *list) pushFront(s string) {
	if l.n == len(l.ring) {
		l.resize(max(8, 2*len(l.ring)))
	}
	l.head = (l.head - 1) & (len(l.ring) - 1)
	l.ring[l.head] = s
	l.n++
}

func (l *list) popFront() string {
	s := l.ring[l.head]
	l.ring[l.head] = "" // let the element's bytes go
	l.head = (l.head + 1) & (len(l.ring) - 1)
	l.n--
	l.maybeShrink()
	return s
}

func (l *list) popBack() string {
	i := l.slot(l.n - 1)
	s := l.ring[i]
	l.ring[i] = ""
	l.n--
	l.maybeShrink()
	return s
}

// maybeShrink halves a ring that is mostly empty, so a drained list gives memory back.
func (l *list) maybeShrink() {
	if len(l.ring) > 64 && l.n < len(l.ring)/4 {
		l.resize(len(l.ring) / 2)
	}
}

// trim keeps elements [start, stop] (0 <= start <= stop < n).
func (l *list) trim(start, stop int) {
	for l.n > stop+1 {
		l.popBack()
	}
	for i := 0; i < start; i++ {
		l.popFront()
	}
}
