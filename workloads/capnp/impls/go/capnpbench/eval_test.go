package capnpbench

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	capnp "capnproto.org/go/capnp/v3"

	"msgbench/workloads/capnp/impls/go/schema/eval"
)

func TestApplyCorners(t *testing.T) {
	const minI, maxI = math.MinInt32, math.MaxInt32
	for _, tc := range []struct {
		op          eval.Operation
		left, right int32
		want        int32
	}{
		{eval.Operation_add, maxI, 1, minI}, // wraps
		{eval.Operation_subtract, minI, 1, maxI},
		{eval.Operation_multiply, 1 << 16, 1 << 16, 0},
		{eval.Operation_multiply, minI, -1, minI},
		{eval.Operation_divide, 7, 2, 3},
		{eval.Operation_divide, -7, 2, -3}, // toward zero
		{eval.Operation_divide, 7, -2, -3},
		{eval.Operation_divide, 7, 0, maxI},
		{eval.Operation_divide, minI, -1, maxI},
		{eval.Operation_divide, minI, 1, minI},
		{eval.Operation_modulus, -7, 2, -1}, // the dividend's sign
		{eval.Operation_modulus, 7, -2, 1},
		{eval.Operation_modulus, 7, 0, maxI},
		{eval.Operation_modulus, minI, -1, maxI},
		{eval.Operation_modulus, minI, 3, -2},
	} {
		got, err := apply(tc.op, tc.left, tc.right)
		if err != nil || got != tc.want {
			t.Errorf("%v(%d, %d) = %d (%v), want %d", tc.op, tc.left, tc.right, got, err, tc.want)
		}
	}
	if _, err := apply(5, 1, 1); err == nil {
		t.Error("operation 5 accepted")
	}
}

// expr is a hand-made expression: a side is an int32 or an *expr.
type expr struct {
	op          eval.Operation
	left, right any
}

func buildExpr(t *testing.T, seg *capnp.Segment, e *expr, into eval.Expression) {
	t.Helper()
	into.SetOp(e.op)
	switch l := e.left.(type) {
	case int32:
		into.Left().SetValue(l)
	case *expr:
		buildExpr(t, seg, l, must(into.Left().NewExpression()))
	}
	switch r := e.right.(type) {
	case int32:
		into.Right().SetValue(r)
	case *expr:
		buildExpr(t, seg, r, must(into.Right().NewExpression()))
	}
}

// serveExpr serves a hand-made expression through a serialised message, as a server reads it.
func serveExpr(t *testing.T, e *expr, tamper func(eval.Expression)) (int32, error) {
	t.Helper()
	msg, seg := capnp.NewSingleSegmentMessage(nil)
	root := must(eval.NewRootExpression(seg))
	buildExpr(t, seg, e, root)
	if tamper != nil {
		tamper(root)
	}
	req, err := newMessageReader().read(must(msg.Marshal()))
	if err != nil {
		t.Fatal(err)
	}
	respMsg, respSeg := capnp.NewSingleSegmentMessage(nil)
	if err := (&Eval{}).Serve(req, respSeg); err != nil {
		return 0, err
	}
	return must(eval.ReadRootEvaluationResult(respMsg)).Value(), nil
}

func TestEvalServe(t *testing.T) {
	e := &expr{eval.Operation_subtract, &expr{eval.Operation_divide, int32(math.MinInt32), int32(-1)},
		&expr{eval.Operation_modulus, int32(-7), int32(2)}}
	if v, err := serveExpr(t, e, nil); err != nil || v != math.MinInt32 {
		t.Errorf("got %d (%v), want MaxInt32 - (-1) wrapped = MinInt32", v, err)
	}
}

func TestEvalRefusesUnknownOpAndTags(t *testing.T) {
	e := &expr{eval.Operation_add, int32(1), &expr{eval.Operation_add, int32(2), int32(3)}}
	for name, tamper := range map[string]func(eval.Expression){
		"op 7":       func(x eval.Expression) { x.SetOp(7) },
		"left tag":   func(x eval.Expression) { capnp.Struct(x).SetUint16(2, 5) },
		"right tag":  func(x eval.Expression) { capnp.Struct(x).SetUint16(12, 2) },
		"nested op":  func(x eval.Expression) { must(x.Right().Expression()).SetOp(0xffff) },
		"nested tag": func(x eval.Expression) { capnp.Struct(must(x.Right().Expression())).SetUint16(2, 9) },
	} {
		if v, err := serveExpr(t, e, tamper); err == nil {
			t.Errorf("%s: served %d", name, v)
		}
	}
	// The tags are at the byte offsets the generated Which() methods read (2 and 12); an
	// untouched tree evaluates.
	if v, err := serveExpr(t, e, nil); err != nil || v != 6 {
		t.Errorf("untouched: %d (%v)", v, err)
	}
}

func TestEvalNestingLimit(t *testing.T) {
	deep := func(n int) *expr {
		e := &expr{eval.Operation_add, int32(1), int32(1)}
		for range n {
			e = &expr{eval.Operation_add, e, int32(1)}
		}
		return e
	}
	// The generator nests at most 9 deep; 60 is well within libcapnp's limit of 64.
	if v, err := serveExpr(t, deep(60), nil); err != nil || v != 62 {
		t.Errorf("60 deep: %d (%v)", v, err)
	}
	_, err := serveExpr(t, deep(10_000), nil)
	if err == nil || !strings.Contains(err.Error(), "depth limit") {
		t.Errorf("10000 deep: %v", err)
	}
	if errors.Is(err, errUnknownTag) {
		t.Error("wrong error")
	}
}

func TestEvalGolden(t *testing.T) {
	g := loadGolden(t).Eval
	c := &Eval{rng: NewRNG()}
	h := sha256.New()
	for i := range max(len(g.FirstValues), g.Requests) {
		exp := must(eval.ReadRootExpression(newRequest(t, c)))
		if i < len(g.FirstValues) && c.want != g.FirstValues[i] {
			t.Errorf("request %d: value %d, want %d", i, c.want, g.FirstValues[i])
		}
		// The server's evaluation of the message agrees with the value computed while building.
		if v, err := evaluate(exp); err != nil || v != c.want {
			t.Errorf("request %d: evaluated %d (%v), built %d", i, v, err, c.want)
		}
		if i < g.Requests {
			h.Write(cceExpression(nil, exp))
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != g.SHA256 {
		t.Errorf("CCE digest of the first %d requests: %s, want %s", g.Requests, got, g.SHA256)
	}
}

func cceExpression(b cce, e eval.Expression) cce {
	b = b.u16(uint16(e.Op()))
	if l := e.Left(); l.Which() == eval.Expression_left_Which_value {
		b = b.u16(0).u32(uint32(l.Value()))
	} else {
		b = cceExpression(b.u16(1), must(l.Expression()))
	}
	if r := e.Right(); r.Which() == eval.Expression_right_Which_value {
		b = b.u16(0).u32(uint32(r.Value()))
	} else {
		b = cceExpression(b.u16(1), must(r.Expression()))
	}
	return b
}
