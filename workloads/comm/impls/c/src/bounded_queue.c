#include "bounded_queue.h"

int mq_init(struct msg_queue *q, size_t cap) {
    q->ring = malloc(cap * sizeof *q->ring);
    if (!q->ring)
        return -1;
    q->cap = cap;
    q->head = q->count = 0;
    q->closed = false;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    pthread_cond_init(&q->not_full, NULL);
    return 0;
}

void mq_destroy(struct msg_queue *q) {
    for (size_t i = 0; i < q->count; i++)
        message_free(&q->ring[(q->head + i) % q->cap]);
    free(q->ring);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->not_empty);
    pthread_cond_destroy(&q->not_full);
}

size_t mq_push(struct msg_queue *q, struct comm_message *msgs, size_t n) {
    size_t done = 0;
    pthread_mutex_lock(&q->lock);
    while (done < n) {
        while (q->count == q->cap && !q->closed)
            pthread_cond_wait(&q->not_full, &q->lock);
        if (q->closed)
            break;
        bool was_empty = q->count == 0;
        while (done < n && q->count < q->cap) {
            q->ring[(q->head + q->count) % q->cap] = msgs[done++];
            q->count++;
        }
        /* Only a consumer that found the queue empty can be waiting. */
        if (was_empty)
            pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&q->lock);
    return done;
}

size_t mq_pop(struct msg_queue *q, struct comm_message *out, size_t max) {
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->lock);
    bool was_full = q->count == q->cap;
    size_t n = q->count < max ? q->count : max;
    for (size_t i = 0; i < n; i++) {
        out[i] = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
    }
    q->count -= n;
    /* Only producers that found the queue full can be waiting; several may (post is
     * thread-safe), and each waits for its own room. */
    if (was_full && n > 0)
        pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->lock);
    return n;
}

void mq_close(struct msg_queue *q) {
    pthread_mutex_lock(&q->lock);
    q->closed = true;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->lock);
}
