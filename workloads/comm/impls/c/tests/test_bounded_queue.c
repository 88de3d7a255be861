/*
 * Unit tests of the Connector's bounded queue: order and batches, the bound (a pusher waits
 * for room), and close (drains what is queued, wakes every waiter, refuses further pushes).
 * Messages carry no body here; their type byte tells them apart.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c17 */
#include "bounded_queue.h"
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static struct comm_message msg(uint8_t tag) {
    return (struct comm_message){.type = tag, .len = 0, .body = NULL};
}

static void sleep_ms(long ms) {
    struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void test_order_and_batches(void) {
    struct msg_queue q;
    CHECK(mq_init(&q, 8) == 0);
    struct comm_message in[5], out[8];
    for (uint8_t i = 0; i < 5; i++)
        in[i] = msg(i);
    CHECK(mq_push(&q, in, 5) == 5);
    CHECK(mq_pop(&q, out, 3) == 3); /* no more than asked for */
    CHECK(out[0].type == 0 && out[1].type == 1 && out[2].type == 2);
    /* The ring wraps: three more go in behind the two left. */
    for (uint8_t i = 0; i < 3; i++)
        in[i] = msg((uint8_t)(5 + i));
    CHECK(mq_push(&q, in, 3) == 3);
    CHECK(mq_pop(&q, out, 8) == 5); /* everything queued, in order */
    for (uint8_t i = 0; i < 5; i++)
        CHECK(out[i].type == 3 + i);
    mq_destroy(&q);
}

static void test_close_drains_then_ends(void) {
    struct msg_queue q;
    CHECK(mq_init(&q, 4) == 0);
    struct comm_message in[2] = {msg(7), msg(8)}, out[4];
    CHECK(mq_push(&q, in, 2) == 2);
    mq_close(&q);
    struct comm_message late = msg(9);
    CHECK(mq_push(&q, &late, 1) == 0); /* refused: the caller still owns it */
    CHECK(mq_pop(&q, out, 4) == 2 && out[0].type == 7 && out[1].type == 8);
    CHECK(mq_pop(&q, out, 4) == 0); /* closed and empty: does not wait */
    mq_destroy(&q);
}

struct pusher {
    struct msg_queue *q;
    struct comm_message msgs[3];
    size_t n, pushed;
    atomic_bool done;
};

static void *push_thread(void *arg) {
    struct pusher *p = arg;
    p->pushed = mq_push(p->q, p->msgs, p->n);
    atomic_store(&p->done, true);
    return NULL;
}

static void test_a_pusher_waits_for_room(void) {
    struct msg_queue q;
    CHECK(mq_init(&q, 2) == 0);
    struct pusher p = {.q = &q, .msgs = {msg(1), msg(2), msg(3)}, .n = 3};
    atomic_init(&p.done, false);
    pthread_t t;
    pthread_create(&t, NULL, push_thread, &p);
    sleep_ms(50);
    CHECK(!atomic_load(&p.done)); /* two fit; the third waits */
    struct comm_message out[2];
    CHECK(mq_pop(&q, out, 1) == 1 && out[0].type == 1);
    pthread_join(t, NULL);
    CHECK(p.pushed == 3);
    CHECK(mq_pop(&q, out, 2) == 2 && out[0].type == 2 && out[1].type == 3);
    mq_destroy(&q);
}

static void test_close_wakes_a_waiting_pusher(void) {
    struct msg_queue q;
    CHECK(mq_init(&q, 1) == 0);
    struct comm_message first = msg(1);
    CHECK(mq_push(&q, &first, 1) == 1); /* full: the pusher below waits (or finds it closed) */
    struct pusher p = {.q = &q, .msgs = {msg(2)}, .n = 1};
    atomic_init(&p.done, false);
    pthread_t t;
    pthread_create(&t, NULL, push_thread, &p);
    sleep_ms(20);
    mq_close(&q); /* a lost wake-up would hang here: ctest's timeout fails the test */
    pthread_join(t, NULL);
    CHECK(p.pushed == 0);
    mq_destroy(&q);
}

struct popper {
    struct msg_queue *q;
    size_t popped;
};

static void *pop_thread(void *arg) {
    struct popper *p = arg;
    struct comm_message out[4];
    p->popped = mq_pop(p->q, out, 4);
    return NULL;
}

static void test_close_wakes_a_waiting_popper(void) {
    struct msg_queue q;
    CHECK(mq_init(&q, 4) == 0);
    struct popper p = {.q = &q, .popped = 99};
    pthread_t t;
    pthread_create(&t, NULL, pop_thread, &p);
    sleep_ms(20);
    mq_close(&q); /* as above: the popper must wake */
    pthread_join(t, NULL);
    CHECK(p.popped == 0);
    mq_destroy(&q);
}

int main(void) {
    RUN(test_order_and_batches);
    RUN(test_close_drains_then_ends);
    RUN(test_a_pusher_waits_for_room);
    RUN(test_close_wakes_a_waiting_pusher);
    RUN(test_close_wakes_a_waiting_popper);
    return check_failures ? 1 : 0;
}
