"""BUG: compares op as a C string, so "ping\\u0000..." is taken for "ping"."""

import reference_host as h

answer = h.answer


def c_string_answer(request):
    if isinstance(request, dict) and isinstance(request.get("op"), str):
        request = {**request, "op": request["op"].split("\0")[0]}
    return answer(request)


h.answer = c_string_answer
h.main()
