//! eval (SPEC §3.4): a random arithmetic expression tree, at most nine levels deep; the server
//! evaluates it in wrapping int32 arithmetic.

use crate::eval_capnp::{evaluation_result, expression, Operation};
use crate::modes::Case;
use crate::rng::FastRand;
use crate::Failure;

// The enum in ordinal order: a draw of fastRand(5) picks one by its ordinal.
const OPERATIONS: [Operation; 5] = [
    Operation::Add,
    Operation::Subtract,
    Operation::Multiply,
    Operation::Divide,
    Operation::Modulus,
];

/// The case (SPEC §3.4): `Expression` in, `EvaluationResult` out, the client expects a value.
pub struct Eval;

impl Case for Eval {
    type Request = expression::Owned;
    type Response = evaluation_result::Owned;
    type Expected = i32;

    fn build_request(rng: &mut FastRand, request: expression::Builder<'_>) -> i32 {
        make_expression(rng, 0, request)
    }

    fn serve(
        request: expression::Reader<'_>,
        mut response: evaluation_result::Builder<'_>,
    ) -> Result<(), Failure> {
        response.set_value(evaluate(request)?);
        Ok(())
    }

    fn check(response: evaluation_result::Reader<'_>, expected: i32) -> Result<(), Failure> {
        let value = response.get_value();
        if value == expected {
            Ok(())
        } else {
            Err(Failure(format!("expected value {expected}, got {value}")))
        }
    }
}

/// One operation in int32 (SPEC §3.4): add, subtract and multiply wrap; divide truncates
/// toward zero and modulus takes the dividend's sign (Rust's `/` and `%`, as C's); a zero
/// divisor and INT32_MIN over -1 give INT32_MAX.
pub fn apply(op: Operation, a: i32, b: i32) -> i32 {
    match op {
        Operation::Add => a.wrapping_add(b),
        Operation::Subtract => a.wrapping_sub(b),
        Operation::Multiply => a.wrapping_mul(b),
        Operation::Divide => a.checked_div(b).unwrap_or(i32::MAX),
        Operation::Modulus => a.checked_rem(b).unwrap_or(i32::MAX),
    }
}

/// Builds `makeExpression(depth)` into `exp` in the SPEC's draw order (the left side whole
/// before the right side's coin) and returns its value, computed on the way.
pub fn make_expression(rng: &mut FastRand, depth: u32, mut exp: expression::Builder<'_>) -> i32 {
    let op = OPERATIONS[rng.below(5) as usize];
    exp.set_op(op);
    // get_left/get_right, not init_*: the struct is fresh, its union already zero.
    let left = if rng.below(8) < depth {
        let value = rng.below(128) as i32 + 1;
        exp.reborrow().get_left().set_value(value);
        value
    } else {
        let sub = exp.reborrow().get_left().init_expression();
        make_expression(rng, depth + 1, sub)
    };
    let right = if rng.below(8) < depth {
        let value = rng.below(128) as i32 + 1;
        exp.reborrow().get_right().set_value(value);
        value
    } else {
        let sub = exp.reborrow().get_right().init_expression();
        make_expression(rng, depth + 1, sub)
    };
    apply(op, left, right)
}

/// The server's evaluation. An operation or a union tag outside the schema is an error, and
/// the recursion is bounded by the reader's nesting limit (64, stream::READER_OPTIONS): a
/// deeper message fails in the library before this stack grows further.
pub fn evaluate(exp: expression::Reader<'_>) -> capnp::Result<i32> {
    let op = exp.get_op()?;
    let left = match exp.get_left().which()? {
        expression::left::Value(value) => value,
        expression::left::Expression(sub) => evaluate(sub?)?,
    };
    let right = match exp.get_right().which()? {
        expression::right::Value(value) => value,
        expression::right::Expression(sub) => evaluate(sub?)?,
    };
    Ok(apply(op, left, right))
}

#[cfg(test)]
mod tests {
    use super::*;
    use capnp::message;

    #[test]
    fn eval_arithmetic_wraps_and_divides_like_c() {
        use Operation::*;
        assert_eq!(apply(Add, i32::MAX, 1), i32::MIN);
        assert_eq!(apply(Subtract, i32::MIN, 1), i32::MAX);
        assert_eq!(apply(Multiply, 65536, 65536), 0);
        assert_eq!(apply(Divide, -7, 2), -3);
        assert_eq!(apply(Modulus, -7, 2), -1);
        assert_eq!(apply(Modulus, 7, -2), 1);
        assert_eq!(apply(Divide, 5, 0), i32::MAX);
        assert_eq!(apply(Modulus, 5, 0), i32::MAX);
        assert_eq!(apply(Divide, i32::MIN, -1), i32::MAX);
        assert_eq!(apply(Modulus, i32::MIN, -1), i32::MAX);
    }

    #[test]
    fn eval_server_evaluates_nested_expressions() {
        // (7 - (i32::MIN / -1)) * 3, with the inner division giving INT32_MAX.
        let mut m = message::Builder::new_default();
        let mut root: expression::Builder<'_> = m.init_root();
        root.set_op(Operation::Multiply);
        root.reborrow().get_right().set_value(3);
        let mut sub = root.reborrow().get_left().init_expression();
        sub.set_op(Operation::Subtract);
        sub.reborrow().get_left().set_value(7);
        let mut inner = sub.reborrow().get_right().init_expression();
        inner.set_op(Operation::Divide);
        inner.reborrow().get_left().set_value(i32::MIN);
        inner.reborrow().get_right().set_value(-1);
        let expected = 7i32.wrapping_sub(i32::MAX).wrapping_mul(3);
        assert_eq!(evaluate(m.get_root_as_reader().unwrap()).unwrap(), expected);
    }
}
