"""BUG: coerces fill's `bytes` to a 32-bit unsigned int: "1000" and 100.5 are accepted, and
2^32 + 23 wraps to a valid 23."""

import reference_host as h

answer = h.answer


def sloppy_answer(request):
    if isinstance(request, dict) and request.get("op") == "fill":
        try:
            n = int(request.get("bytes")) & 0xFFFFFFFF
        except (TypeError, ValueError, OverflowError):
            return h.error("bad bytes")
        request = {**request, "bytes": n}
    return answer(request)


h.answer = sloppy_answer
h.main()
