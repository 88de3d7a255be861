/* A message as the Connector posts and delivers it: a type and an owned body. */
#ifndef COMM_MESSAGE_H
#define COMM_MESSAGE_H

#include <stdint.h>
#include <stdlib.h>

struct comm_message {
    uint8_t type;
    uint64_t len;
    unsigned char *body; /* malloc'd, owned by whoever holds the message; NULL if len is 0 */
};

static inline void message_free(struct comm_message *m) {
    free(m->body);
    m->body = NULL;
}

#endif
