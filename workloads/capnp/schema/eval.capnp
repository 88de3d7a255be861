# eval: nested structures (SPEC.md §3).
@0xd85368b3eefe4882;

enum Operation {
  add @0;
  subtract @1;
  multiply @2;
  divide @3;
  modulus @4;
}

struct Expression {
  op @0 :Operation;

  left :union {
    value @1 :Int32;
    expression @2 :Expression;
  }

  right :union {
    value @3 :Int32;
    expression @4 :Expression;
  }
}

struct EvaluationResult {
  value @0 :Int32;
}
