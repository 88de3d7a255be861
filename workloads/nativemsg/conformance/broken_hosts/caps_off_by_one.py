"""BUG: caps compared with >= instead of >: refuses exactly 1 MiB replies and 64 MiB requests."""

import reference_host as h

h.MAX_REPLY -= 1
h.MAX_REQUEST -= 1
h.main()
