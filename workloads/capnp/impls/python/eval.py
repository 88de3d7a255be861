"""eval (SPEC §3.4): a random arithmetic expression tree; the server evaluates it in int32.

Fields go through `_set_by_field` / `_get_by_field` with the schema's field objects looked up
once (see carsales.py for why). `left` and `right` are groups with a schema each, so each has
its own `value` and `expression` field objects. A union's member is told by `_which_str()`,
the cheapest of pycapnp's ways (285 ns against 940 ns for `which()` on this machine); it raises
on a discriminant outside the union, which the server reports as an invalid message.

The builder and the evaluator are closures over the field objects: recursion is the natural
shape for a tree, and a closure reads its cells faster than a method reads attributes. Depth
is bounded by the reader's nesting limit (64, SPEC §6), far below Python's recursion limit.
"""

from __future__ import annotations

from failures import InvalidMessage, Mismatch

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
MASK32 = 0xFFFFFFFF
SIGN32 = 1 << 31


def apply(op: int, a: int, b: int) -> int:
    """One operation in int32 as C does it: add, subtract and multiply wrap around; divide
    truncates toward zero and modulus takes the dividend's sign; a zero divisor and
    INT32_MIN by -1 give INT32_MAX (SPEC §3.4). `op` is 0-4."""
    if op == 0:
        r = a + b
    elif op == 1:
        r = a - b
    elif op == 2:
        r = a * b
    elif b == 0 or (b == -1 and a == INT32_MIN):
        return INT32_MAX
    elif op == 3:
        # Python's // floors; C's / truncates: divide the magnitudes and put the sign back.
        q = abs(a) // abs(b)
        return -q if (a < 0) != (b < 0) else q
    else:
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    return ((r + SIGN32) & MASK32) - SIGN32


class Eval:
    """The case over its loaded schema (eval.capnp)."""

    name = "eval"

    def __init__(self, schema) -> None:
        self.request_type = schema.Expression
        self.response_type = schema.EvaluationResult
        fields = schema.Expression.schema.fields
        f_op, f_left, f_right = fields["op"], fields["left"], fields["right"]
        left_value = f_left.schema.fields["value"]
        left_expression = f_left.schema.fields["expression"]
        right_value = f_right.schema.fields["value"]
        right_expression = f_right.schema.fields["expression"]
        self._value = schema.EvaluationResult.schema.fields["value"]

        def make(expr, nxt, depth: int) -> int:
            """makeExpression(depth) into `expr`; returns its value. The left side is drawn,
            and built if it is an expression, before the right side's coin."""
            op = nxt() % 5
            expr._set_by_field(f_op, op)
            side = expr._get_by_field(f_left)
            if nxt() % 8 < depth:
                a = nxt() % 128 + 1
                side._set_by_field(left_value, a)
            else:
                a = make(side._init_by_field(left_expression), nxt, depth + 1)
            side = expr._get_by_field(f_right)
            if nxt() % 8 < depth:
                b = nxt() % 128 + 1
                side._set_by_field(right_value, b)
            else:
                b = make(side._init_by_field(right_expression), nxt, depth + 1)
            return apply(op, a, b)

        def evaluate(expr) -> int:
            get = expr._get_by_field
            op = get(f_op).raw
            if op > 4:
                raise InvalidMessage(f"eval: operation {op} is not one of the 5 operations")
            left = get(f_left)
            right = get(f_right)
            try:
                left_is_value = left._which_str() == "value"
                right_is_value = right._which_str() == "value"
            except Exception:  # pycapnp's KjException, with a misleading text
                raise InvalidMessage(
                    "eval: a union discriminant is neither value nor expression"
                ) from None
            if left_is_value:
                a = left._get_by_field(left_value)
            else:
                a = evaluate(left._get_by_field(left_expression))
            if right_is_value:
                b = right._get_by_field(right_value)
            else:
                b = evaluate(right._get_by_field(right_expression))
            return apply(op, a, b)

        self._make = make
        self._evaluate = evaluate

    def build_request(self, expr, rng) -> int:
        """Fill `expr` with the next request's expression; return its value."""
        return self._make(expr, rng.next, 0)

    def serve(self, expr, response) -> None:
        response._set_by_field(self._value, self._evaluate(expr))

    def check(self, response, expected: int) -> None:
        value = response._get_by_field(self._value)
        if value != expected:
            raise Mismatch(f"value {value}, expected {expected}")
