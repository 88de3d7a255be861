"""Work around an atheris bug (seen in 2.3.0 on CPython 3.11) before instrumenting anything.
Every Python fuzz target imports this module first (`from msgbench.fuzz import atheris_fix`).

atheris grows an instruction by an EXTENDED_ARG when its argument passes 255 and then fixes
the jumps around it, but it only looks at an instruction that has a successor. A function
ending in a loop (`while True: ...` compiles to a JUMP_BACKWARD as its very last instruction)
whose instrumented body passes 255 code units keeps the old argument: the jump lands one code
unit late, in the middle of an instruction, and CPython crashes (SIGSEGV) on the loop's second
turn. The patch recomputes that last jump's argument from the target atheris recorded; it does
nothing where atheris got it right.
"""

from atheris import instrument_bytecode as _ib


def _fix_last_jump(self):
    _original(self)
    last = self._get_linear_instruction_listing()[-1]
    if last.reference is None or not last._is_relative:
        return
    scale = _ib.rel_reference_scale(last.mnemonic)
    # A bigger argument may need one more EXTENDED_ARG, which moves the jump's end again.
    for _ in range(4):
        end = last.offset + last.get_size()
        if end + _ib.jump_arg_bytes(last.arg) * scale == last.reference:
            return
        last.arg = _ib.add_bytes_to_jump_arg(0, (last.reference - end) * scale)
    last.check_state()


_original = _ib.Instrumentor._handle_size_changes
_ib.Instrumentor._handle_size_changes = _fix_last_jump
