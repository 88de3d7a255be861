"""bounded_queue: FIFO order, the bound, close()."""

import threading
import time

import pytest
from comm_py.bounded_queue import BoundedQueue, Closed, Empty


def test_fifo_and_get_many():
    q = BoundedQueue(10)
    for i in range(5):
        q.put(i)
    assert q.get() == 0
    assert q.get_many(3) == [1, 2, 3]
    assert q.get_many(10) == [4]
    assert q.get_many(10) == []
    with pytest.raises(Empty):
        q.get(timeout=0.01)


def test_put_many_keeps_order_and_waits_once_while_full():
    q = BoundedQueue(2)
    q.put_many([])
    q.put_many([1, 2, 3])  # room when it started: the bound is soft
    assert q.qsize() == 3
    done = threading.Event()

    def producer():
        q.put_many([4, 5])
        done.set()

    t = threading.Thread(target=producer)
    t.start()
    assert not done.wait(0.1), "put_many() into a full queue must wait"
    assert q.get_many(5) == [1, 2, 3]
    assert done.wait(5)
    t.join()
    assert q.get_many(5) == [4, 5]
    q.close()
    with pytest.raises(Closed):
        q.put_many([6])


def test_put_blocks_while_full_and_resumes_when_taken():
    q = BoundedQueue(2)
    q.put(1)
    q.put(2)
    done = threading.Event()

    def producer():
        q.put(3)
        done.set()

    t = threading.Thread(target=producer)
    t.start()
    assert not done.wait(0.1), "put() into a full queue must wait"
    assert q.get() == 1
    assert done.wait(5)
    t.join()
    assert q.get_many(5) == [2, 3]


def test_get_many_wakes_every_waiting_producer():
    q = BoundedQueue(1)
    q.put(0)
    threads = [threading.Thread(target=q.put, args=(i,)) for i in (1, 2)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    got = q.get_many(1)
    deadline = time.monotonic() + 5
    while len(got) < 3 and time.monotonic() < deadline:
        got += q.get_many(5)
    for t in threads:
        t.join(5)
    assert sorted(got) == [0, 1, 2]


def test_close_wakes_a_blocked_producer_with_closed():
    q = BoundedQueue(1)
    q.put(1)
    errors = []

    def producer():
        try:
            q.put(2)
        except Closed:
            errors.append("closed")

    t = threading.Thread(target=producer)
    t.start()
    time.sleep(0.05)
    q.close()
    t.join(5)
    assert errors == ["closed"]
    with pytest.raises(Closed):
        q.put(3)
    q.put_unbounded(4)  # markers still go in
    assert q.get_many(5) == [1, 4]


def test_bad_limit():
    with pytest.raises(ValueError):
        BoundedQueue(0)
