package comm

// patternPeriod is the period of the client program's body pattern: a prime, so that a
// reply that belongs to another message or another client differs from the expected body.
const patternPeriod = 251

// Pattern produces the bodies of the client program: byte i of message m of client c is
// (c*7 + m*13 + i) mod 251. Every body is a window of one shared table, so posting and
// checking a message allocates nothing.
type Pattern struct {
	table []byte
	size  int
}

// NewPattern returns the pattern for bodies of size bytes.
func NewPattern(size int) *Pattern {
	t := make([]byte, patternPeriod+size)
	for j := range t {
		t[j] = byte(j % patternPeriod)
	}
	return &Pattern{table: t, size: size}
}

// Body returns the body of message msg of client client (read-only: it is shared).
func (p *Pattern) Body(client, msg int) []byte {
	off := (client%patternPeriod*7 + msg%patternPeriod*13) % patternPeriod
	return p.table[off : off+p.size : off+p.size]
}
