"""BUG: parse errors are not handled (an unwrap): the first bad body ends in a traceback."""

import reference_host as h

h.respond = lambda body: h.reply_cap(h.serialise(h.answer(h.decode_body(body))))
h.main()
