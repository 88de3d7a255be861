"""eval: the expression's draws and value, the evaluator's int32 arithmetic, invalid ops and
union members (SPEC §3.4, §6)."""

from __future__ import annotations

import pytest
from capnp_py.eval import INT32_MAX, INT32_MIN, apply
from capnp_py.failures import InvalidMessage, Mismatch
from capnp_py.rng import Rng
from capnp_py.stream import read_root
from conftest import GOLDEN, make_case

ADD, SUB, MUL, DIV, MOD = range(5)


@pytest.fixture(scope="module")
def evalcase():
    return make_case("eval")


def test_first_values_are_the_golden_ones(evalcase):
    rng = Rng()
    values = []
    for _ in range(len(GOLDEN["eval"]["first_values"])):
        values.append(evalcase.build_request(evalcase.request_type.new_message(), rng))
    assert values == GOLDEN["eval"]["first_values"]


def test_server_agrees_with_the_client_and_the_root_has_two_expressions(evalcase):
    rng = Rng()
    for _ in range(200):
        expr = evalcase.request_type.new_message()
        value = evalcase.build_request(expr, rng)
        assert expr.left.which() == "expression" and expr.right.which() == "expression"
        response = evalcase.response_type.new_message()
        evalcase.serve(expr.as_reader(), response)
        evalcase.check(response.as_reader(), value)


@pytest.mark.parametrize(
    ("op", "a", "b", "want"),
    [
        (ADD, INT32_MAX, 1, INT32_MIN),
        (SUB, INT32_MIN, 1, INT32_MAX),
        (MUL, 65536, 65536, 0),
        (MUL, -3, 7, -21),
        (MUL, 123456789, 987654321, -67153019),
        (DIV, 7, 2, 3),
        (DIV, -7, 2, -3),
        (DIV, 7, -2, -3),
        (DIV, -7, -2, 3),
        (DIV, 5, 0, INT32_MAX),
        (DIV, INT32_MIN, -1, INT32_MAX),
        (DIV, INT32_MIN, 1, INT32_MIN),
        (MOD, 7, 3, 1),
        (MOD, -7, 3, -1),
        (MOD, 7, -3, 1),
        (MOD, -7, -3, -1),
        (MOD, 5, 0, INT32_MAX),
        (MOD, INT32_MIN, -1, INT32_MAX),
        (MOD, INT32_MIN, 3, -2),
    ],
)
def test_apply_is_c_int32_arithmetic(op, a, b, want):
    assert apply(op, a, b) == want


def message_bytes(evalcase, op: int, left_tag: int = 0) -> bytes:
    """A one-node expression (left 5, right 6) with its op and left tag rewritten: op is the
    data section's first u16, left's discriminant the second."""
    expr = evalcase.request_type.new_message()
    expr.op, expr.left.value, expr.right.value = "add", 5, 6
    data = bytearray(expr.to_bytes())
    data[16:18] = op.to_bytes(2, "little")
    data[18:20] = left_tag.to_bytes(2, "little")
    return bytes(data)


def serve_bytes(evalcase, data: bytes) -> int:
    response = evalcase.response_type.new_message()
    evalcase.serve(read_root(evalcase.request_type, data), response)
    return response.value


def test_the_rewritten_message_reads_as_intended(evalcase):
    assert serve_bytes(evalcase, message_bytes(evalcase, MUL)) == 30


def test_an_unknown_operation_is_an_invalid_message(evalcase):
    with pytest.raises(InvalidMessage, match="operation 7"):
        serve_bytes(evalcase, message_bytes(evalcase, 7))


def test_an_unknown_union_member_is_an_invalid_message(evalcase):
    with pytest.raises(InvalidMessage, match="neither value nor expression"):
        serve_bytes(evalcase, message_bytes(evalcase, ADD, left_tag=5))


def test_a_null_expression_pointer_reads_as_the_default_expression(evalcase):
    # left = expression with no pointer set: the default Expression, add 0 0 = 0.
    assert serve_bytes(evalcase, message_bytes(evalcase, ADD, left_tag=1)) == 6


def test_check_refuses_a_wrong_value(evalcase):
    response = evalcase.response_type.new_message()
    response.value = -1
    with pytest.raises(Mismatch, match="value -1, expected 0"):
        evalcase.check(response.as_reader(), 0)
