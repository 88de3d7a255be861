package comm

import "testing"

func TestPatternFollowsTheContractFormula(t *testing.T) {
	const size = 600
	p := NewPattern(size)
	for _, c := range []int{0, 1, 15, 255, 1000} {
		for _, m := range []int{0, 1, 250, 251, 999, 123456} {
			body := p.Body(c, m)
			if len(body) != size {
				t.Fatalf("len = %d", len(body))
			}
			for i, got := range body {
				if want := byte((c*7 + m*13 + i) % 251); got != want {
					t.Fatalf("client %d message %d byte %d = %d, want %d", c, m, i, got, want)
				}
			}
		}
	}
}

func TestPatternBodiesCannotGrowIntoTheTable(t *testing.T) {
	b := NewPattern(8).Body(3, 4)
	if cap(b) != 8 {
		t.Fatalf("cap = %d: an append would overwrite the shared table", cap(b))
	}
}

func TestPatternEmptyBody(t *testing.T) {
	if b := NewPattern(0).Body(5, 7); len(b) != 0 {
		t.Fatalf("len = %d", len(b))
	}
}
