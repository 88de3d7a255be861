"""BUG: no 1 MiB reply cap: sends echo replies and fills of any size (Chromium drops the port)."""

import reference_host as h

h.MAX_REPLY = 1 << 40
h.main()
