/*
 * nativemsg-c and nativemsg-c-yajl: a browser Native Messaging host. The browser passes its
 * origin (Chromium) or the manifest path and extension id (Firefox) as arguments; the protocol
 * needs none of them.
 */
#include "host.h"

#include <signal.h>
#include <unistd.h>

int main(void) {
    /*
     * A browser that goes away closes our stdout: report that as a write error and exit 1
     * rather than die of SIGPIPE.
     */
    signal(SIGPIPE, SIG_IGN);
    return host_serve(STDIN_FILENO, STDOUT_FILENO);
}
