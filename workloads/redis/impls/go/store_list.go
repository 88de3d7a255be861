package main

// store_list.go: the list type, a ring buffer of strings. Pushes and pops at both ends are
// O(1) amortised and an index is one mask away, which covers LPUSH/RPUSH/LPOP/RPOP, LINDEX,
// LSET and LRANGE (redis uses a quicklist for the same guarantees).

type list struct {
	ring []string // len is 0 or a power of two
	head int      // index in ring of element 0
	n    int
}

func (*list) typeName() string { return "list" }

func (l *list) len() int { return l.n }

func (l *list) slot(i int) int { return (l.head + i) & (len(l.ring) - 1) }

// at returns element i (0 <= i < n).
func (l *list) at(i int) string { return l.ring[l.slot(i)] }

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
