package capnpbench

import (
	"errors"
	"fmt"
	"math"

	capnp "capnproto.org/go/capnp/v3"

	"msgbench/workloads/capnp/impls/go/schema/eval"
)

// Eval is the eval case (SPEC §3.4): a random arithmetic expression tree, evaluated by the
// server, the value checked by the client.
type Eval struct {
	rng  *RNG
	want int32 // the value of the last expression built
}

// maxGeneratedDepth is where makeExpression stops: fastRand(8) < 8 always picks a value.
const maxGeneratedDepth = 8

var errUnknownTag = errors.New("union discriminant outside its two members")

// Request builds makeExpression(0) and remembers its value.
func (c *Eval) Request(seg *capnp.Segment) error {
	root, err := eval.NewRootExpression(seg)
	if err != nil {
		return err
	}
	c.want, err = makeExpression(c.rng, root, 0)
	return err
}

// makeExpression fills exp with a random operation and two sides, the left one drawn (and
// built, if an expression) before the right one's coin, and returns its value.
func makeExpression(rng *RNG, exp eval.Expression, depth uint32) (int32, error) {
	op := eval.Operation(rng.Rand(5))
	exp.SetOp(op)
	var left, right int32
	if rng.Rand(8) < depth {
		left = int32(rng.Rand(128) + 1)
		exp.Left().SetValue(left)
	} else {
		sub, err := exp.Left().NewExpression()
		if err != nil {
			return 0, err
		}
		if left, err = makeExpression(rng, sub, depth+1); err != nil {
			return 0, err
		}
	}
	if rng.Rand(8) < depth {
		right = int32(rng.Rand(128) + 1)
		exp.Right().SetValue(right)
	} else {
		sub, err := exp.Right().NewExpression()
		if err != nil {
			return 0, err
		}
		if right, err = makeExpression(rng, sub, depth+1); err != nil {
			return 0, err
		}
	}
	return apply(op, left, right)
}

// apply computes one operation in int32 with two's-complement wrap-around (Go's int32
// arithmetic wraps), division truncating toward zero and the remainder taking the dividend's
// sign (Go's / and %, as C's). Division and remainder by zero, and MinInt32 by -1 (which
// Go would wrap, and C leaves undefined), are MaxInt32.
func apply(op eval.Operation, left, right int32) (int32, error) {
	switch op {
	case eval.Operation_add:
		return left + right, nil
	case eval.Operation_subtract:
		return left - right, nil
	case eval.Operation_multiply:
		return left * right, nil
	case eval.Operation_divide:
		if right == 0 || (left == math.MinInt32 && right == -1) {
			return math.MaxInt32, nil
		}
		return left / right, nil
	case eval.Operation_modulus:
		if right == 0 || (left == math.MinInt32 && right == -1) {
			return math.MaxInt32, nil
		}
		return left % right, nil
	}
	return 0, fmt.Errorf("unknown operation %d", uint16(op))
}

// evaluate computes an expression read from a message. Its recursion is bounded by the
// message's DepthLimit: a nested expression deeper than that is an error from the library
// when its pointer is read.
func evaluate(exp eval.Expression) (int32, error) {
	var left, right int32
	switch l := exp.Left(); l.Which() {
	case eval.Expression_left_Which_value:
		left = l.Value()
	case eval.Expression_left_Which_expression:
		sub, err := l.Expression()
		if err != nil {
			return 0, err
		}
		if left, err = evaluate(sub); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("left: %w (%d)", errUnknownTag, uint16(l.Which()))
	}
	switch r := exp.Right(); r.Which() {
	case eval.Expression_right_Which_value:
		right = r.Value()
	case eval.Expression_right_Which_expression:
		sub, err := r.Expression()
		if err != nil {
			return 0, err
		}
		if right, err = evaluate(sub); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("right: %w (%d)", errUnknownTag, uint16(r.Which()))
	}
	return apply(exp.Op(), left, right)
}

// Serve evaluates the request's expression into an EvaluationResult.
func (c *Eval) Serve(req *capnp.Message, seg *capnp.Segment) error {
	exp, err := eval.ReadRootExpression(req)
	if err != nil {
		return err
	}
	v, err := evaluate(exp)
	if err != nil {
		return err
	}
	resp, err := eval.NewRootEvaluationResult(seg)
	if err != nil {
		return err
	}
	resp.SetValue(v)
	return nil
}

// Check compares the response's value with the last expression's.
func (c *Eval) Check(resp *capnp.Message) error {
	r, err := eval.ReadRootEvaluationResult(resp)
	if err != nil {
		return err
	}
	if got := r.Value(); got != c.want {
		return fmt.Errorf("expected value %d, got %d", c.want, got)
	}
	return nil
}
