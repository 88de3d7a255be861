/*
 * A bounded blocking queue of messages (the Connector's send and receive queues): one lock,
 * two condition variables, a ring. Bounded so that a poster far ahead of the network waits
 * instead of growing memory. Consumers take messages in batches, one lock per batch.
 */
#ifndef COMM_BOUNDED_QUEUE_H
#define COMM_BOUNDED_QUEUE_H

#include "message.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct msg_queue {
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    struct comm_message *ring;
    size_t cap, head, count;
    bool closed; /* no more pushes; pops drain what is left */
};

int mq_init(struct msg_queue *q, size_t cap);
/* Frees the ring and the bodies of messages still in it. */
void mq_destroy(struct msg_queue *q);

/* Pushes msgs[0..n), waiting while the queue is full. Returns how many went in: fewer than n
 * only if the queue was closed, and the caller still owns the rest. */
size_t mq_push(struct msg_queue *q, struct comm_message *msgs, size_t n);
/* Takes up to max messages, waiting while the queue is empty and open; 0 means closed and
 * empty. */
size_t mq_pop(struct msg_queue *q, struct comm_message *out, size_t max);
/* Ends the queue: pushes fail from now on, waiting pushers and poppers wake up. */
void mq_close(struct msg_queue *q);

#endif
