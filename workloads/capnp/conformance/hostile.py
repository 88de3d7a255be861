"""Hostile messages (SPEC.md §6, §8): each a byte stream for a server's stdin that a correct
server refuses with exit status 1, built from a well-formed message by rewriting the words
that matter. Pointer words are read and written here from the encoding's definition:

    struct pointer: bits 0-1 = 0, bits 2-31 = signed offset in words from the end of the
                    pointer, bits 32-47 = data words, bits 48-63 = pointer words
    list pointer:   bits 0-1 = 1, bits 2-31 = offset, bits 32-34 = element size
                    (7 = inline composite), bits 35-63 = element count (words for composite)

Offsets are found from a message built by pycapnp (never assumed), so a layout change in the
schema compiler cannot silently make a case harmless: each builder checks what it rewrites.
"""

from __future__ import annotations

import array
import functools
import struct

import capnp
import codec as C
import reference as R


def single_segment(message: bytes) -> bytearray:
    """The one segment of a message pycapnp wrote (a fresh builder writes one for these)."""
    count = struct.unpack_from("<I", message)[0] + 1
    assert count == 1, f"expected one segment, got {count}"
    return bytearray(message[8:])


def frame(segment: bytes | bytearray) -> bytes:
    return struct.pack("<II", 0, len(segment) // 8) + bytes(segment)


def word(seg: bytearray, i: int) -> int:
    return struct.unpack_from("<Q", seg, 8 * i)[0]


def set_word(seg: bytearray, i: int, value: int) -> None:
    struct.pack_into("<Q", seg, 8 * i, value)


def struct_ptr(offset: int, data: int, ptrs: int) -> int:
    return ((offset & 0x3FFFFFFF) << 2) | (data << 32) | (ptrs << 48)


def pointer_target(seg: bytearray, at: int) -> int:
    """The word a struct or list pointer at word `at` points to."""
    w = word(seg, at)
    off = (w & 0xFFFFFFFF) >> 2
    if off & (1 << 29):
        off -= 1 << 30
    return at + 1 + off


def root_struct(seg: bytearray) -> tuple[int, int, int]:
    """(first word, data words, pointer words) of the root struct."""
    w = word(seg, 0)
    assert w & 3 == 0, "the root is not a struct pointer"
    return pointer_target(seg, 0), (w >> 32) & 0xFFFF, (w >> 48) & 0xFFFF


# ---- Cap'n Proto cases --------------------------------------------------------------------


def eval_message(e: R.Expr) -> bytes:
    return C.build_request("eval", e).to_bytes()


def deep_chain(depth: int) -> bytes:
    """An expression whose left side is an expression `depth` times (built iteratively)."""
    m = C.eval_capnp.Expression.new_message()
    b = m
    for _ in range(depth):
        b.op = "add"
        b.right.value = 1
        b = b.left.init("expression")
    b.op = "add"
    b.left.value = 1
    b.right.value = 1
    return m.to_bytes()


def pointer_loop() -> bytes:
    """The root expression's left.expression points back at the root itself."""
    seg = single_segment(eval_message(R.Expr(0, R.Expr(0, 1, 1), 2)))
    start, data, ptrs = root_struct(seg)
    slots = [start + data + i for i in range(ptrs)]
    used = [s for s in slots if word(seg, s) != 0]
    assert len(used) == 1, f"expected one non-null pointer in the root, got {len(used)}"
    at = used[0]
    set_word(seg, at, struct_ptr(start - (at + 1), data, ptrs))
    return frame(seg)


def _data_offsets(a: bytes, b: bytes) -> list[int]:
    """Byte offsets in the root's data section where two messages differ."""
    sa, sb = single_segment(a), single_segment(b)
    start, data, _ = root_struct(sa)
    lo, hi = 8 * start, 8 * (start + data)
    return [i - lo for i in range(lo, hi) if sa[i] != sb[i]]


def unknown_op() -> bytes:
    """An operation number outside 0-4 (the enum is a u16 in the data section)."""
    add = eval_message(R.Expr(0, 5, 6))
    modulus = eval_message(R.Expr(4, 5, 6))
    diff = _data_offsets(add, modulus)
    assert len(diff) == 1, f"op found at {diff}"
    seg = single_segment(add)
    start, _, _ = root_struct(seg)
    struct.pack_into("<H", seg, 8 * start + (diff[0] & ~1), 7)
    return frame(seg)


def unknown_union_tag() -> bytes:
    """left's discriminant set to a member that does not exist."""
    as_value = eval_message(R.Expr(0, 0, 0))
    as_expr = eval_message(R.Expr(0, R.Expr(0, 0, 0), 0))
    diff = [d for d in _data_offsets(as_value, as_expr)]
    assert diff and len(diff) <= 2, f"left's tag found at {diff}"
    seg = single_segment(as_value)
    start, _, _ = root_struct(seg)
    struct.pack_into("<H", seg, 8 * start + (diff[0] & ~1), 5)
    return frame(seg)


def amplified_text(results: int = 3000, text_bytes: int = 400_000) -> bytes:
    """catrank: every result's url points at the first result's one big text, so reading the
    list reads far more than the message holds (the traversal limit's case)."""
    request = [R.SearchResult("a" * text_bytes, 1.0, " x ")] + [
        R.SearchResult("", float(i), "") for i in range(1, results)
    ]
    # One first segment big enough for everything, so that the pointers stay near pointers.
    builder = capnp._MallocMessageBuilder(text_bytes // 8 + 8 * results + 64)
    root = builder.init_root(C.catrank_capnp.SearchResultList)
    C.fill_results(root.init("results", len(request)), request)
    seg = single_segment(root.to_bytes())
    start, _, _ = root_struct(seg)
    list_at = start  # SearchResultList: no data words, the list is its one pointer
    tag_at = pointer_target(seg, list_at)
    tag = word(seg, tag_at)
    count = (tag & 0xFFFFFFFF) >> 2
    data, ptrs = (tag >> 32) & 0xFFFF, (tag >> 48) & 0xFFFF
    assert count == results and ptrs >= 1
    url_of = [tag_at + 1 + i * (data + ptrs) + data for i in range(count)]  # url is pointer 0
    big = pointer_target(seg, url_of[0])
    big_word = word(seg, url_of[0])
    for at in url_of[1:]:
        w = (big_word & ~0xFFFFFFFF) | (((big - (at + 1)) & 0x3FFFFFFF) << 2) | 1
        set_word(seg, at, w)
    return frame(seg)


def list_ptr(offset: int, element_size: int, count: int) -> int:
    return ((offset & 0x3FFFFFFF) << 2) | 1 | (element_size << 32) | (count << 35)


@functools.cache
def amplified_response(results: int = 700_000, url: bytes = b"http://example.com/" + b"u" * 54):
    """catrank: a request every reader accepts whose response no reader would (SPEC §6: a
    server never writes a message beyond the cap). Each result is a struct of the url pointer
    alone (no data, no snippet): reading it is charged a word and the url's words, while its
    copy in the response is a whole SearchResult (a data word, two pointers) and the url. All
    urls point at one text, so the request stays small: a word a result.

    The url is short on purpose: the traversal limit charges its words again at every result
    that reads it, so a big shared text is the traversal limit's case (`amplified-text`); what
    amplifies here is the struct each result becomes. 700,000 results and a 10-word url: 7.7
    million words read (the cap is 8,388,608), a response of 9.1 million words at the least
    (3 + 13 a result; libraries that write the absent snippet as an empty text, or put texts in
    another segment than the list with a landing pad each, make more).
    """
    # The layout from pycapnp: which pointer of a result is the url, how big a result is.
    m = C.catrank_capnp.SearchResultList.new_message()
    m.init("results", 1)[0].url = url.decode()
    seg = single_segment(m.to_bytes())
    start, root_data, root_ptrs = root_struct(seg)
    assert root_ptrs == 1, "SearchResultList has one pointer, the results"
    tag_at = pointer_target(seg, start + root_data)
    tag = word(seg, tag_at)
    data, ptrs = (tag >> 32) & 0xFFFF, (tag >> 48) & 0xFFFF
    slots = [tag_at + 1 + data + i for i in range(ptrs)]
    used = [i for i, at in enumerate(slots) if word(seg, at) != 0]
    assert len(used) == 1, f"expected the url alone set, got pointers {used}"
    url_index = used[0]
    url_word = word(seg, slots[url_index])
    text_at = pointer_target(seg, slots[url_index])
    text_words = (((url_word >> 35) & 0x1FFFFFFF) + 7) // 8
    assert url_word & 3 == 1 and (url_word >> 32) & 7 == 2 and text_words == (len(url) + 8) // 8
    text = bytes(seg[8 * text_at : 8 * (text_at + text_words)])

    # The request: root pointer, root struct, list pointer, tag, the results, the text.
    element = url_index + 1  # pointer words of each result: the url the last
    root = [struct_ptr(0, root_data, 1)] + [0] * root_data
    list_at = len(root)
    first = list_at + 2  # the first result's first word
    text_at = first + results * element
    words = root + [list_ptr(0, 7, results * element), struct_ptr(results, 0, element)]
    elements = [0] * (results * element)
    for i in range(results):
        at = first + i * element + url_index
        elements[i * element + url_index] = list_ptr(text_at - at - 1, 2, len(url) + 1)
    seg = bytearray(array.array("Q", words + elements).tobytes() + text)

    read = results * (1 + text_words) + len(words)  # what reading every url charges
    answer = results * (data + ptrs + text_words)  # the response's results, at the least
    assert read <= C.CAP_WORDS < answer, (read, answer)
    return frame(seg)


def huge_list() -> bytes:
    """carsales: the cars list pointer claims 2^29 - 1 words of elements."""
    seg = single_segment(
        C.build_request("carsales", R.requests("carsales", 1)[0][0][:1]).to_bytes()
    )
    start, data, _ = root_struct(seg)
    at = start + data
    w = word(seg, at)
    assert w & 3 == 1 and (w >> 32) & 7 == 7, "cars is not an inline-composite list"
    set_word(seg, at, (w & 0xFFFFFFFF) | (7 << 32) | (((1 << 29) - 1) << 35))
    return frame(seg)


def out_of_bounds_root() -> bytes:
    seg = bytearray(16)
    set_word(seg, 0, struct_ptr(1000, 1, 0))
    return frame(seg)


def many_segments() -> bytes:
    return struct.pack("<I", 0xFFFFFFFE) + bytes(60)


def segments_512() -> bytes:
    """512 segments (the first holds a null root, the rest are empty): one more than libcapnp
    reads, so one more than SPEC §6 allows."""
    return struct.pack("<I", 511) + struct.pack("<I", 1) + bytes(4 * 511) + bytes(4) + bytes(8)


def beyond_cap() -> bytes:
    return struct.pack("<II", 0, 1 << 30) + bytes(64)


def beyond_cap_in_two() -> bytes:
    return struct.pack("<IIII", 1, 1 << 22, (1 << 22) + 1, 0) + bytes(64)


def truncated(case: str) -> bytes:
    data = C.build_request(case, R.requests(case, 1)[0][0]).to_bytes()
    return data[: len(data) // 2]


def packed_beyond_cap() -> bytes:
    return C.pack(struct.pack("<II", 0, 1 << 30) + bytes(8))


def packed_run_past_the_end() -> bytes:
    """A one-word message (a null root) whose packed form goes on with a run of 255 more zero
    words: the run does not end on the message's boundary."""
    return bytes([0x10, 0x01, 0x00, 0xFF])


CAPNP_CASES = {
    # name: (case, compression, bytes)
    "truncated-carsales": ("carsales", "none", lambda: truncated("carsales")),
    "truncated-catrank": ("catrank", "none", lambda: truncated("catrank")),
    "segment-count-4294967295": ("carsales", "none", many_segments),
    "segment-count-512": ("carsales", "none", segments_512),
    "segment-size-beyond-cap": ("carsales", "none", beyond_cap),
    "two-segments-beyond-cap": ("carsales", "none", beyond_cap_in_two),
    "root-out-of-bounds": ("carsales", "none", out_of_bounds_root),
    "pointer-loop": ("eval", "none", pointer_loop),
    "amplified-text": ("catrank", "none", amplified_text),
    "amplified-response": ("catrank", "none", amplified_response),
    "nested-10000": ("eval", "none", lambda: deep_chain(10_000)),
    "list-claims-2^29": ("carsales", "none", huge_list),
    "unknown-op": ("eval", "none", unknown_op),
    "unknown-union-tag": ("eval", "none", unknown_union_tag),
    "packed-beyond-cap": ("carsales", "packed", packed_beyond_cap),
    "packed-run-past-the-end": ("carsales", "packed", packed_run_past_the_end),
}


# ---- the floor's CCE cases -----------------------------------------------------------------


def cce_framed(body: bytes) -> bytes:
    return struct.pack("<I", len(body)) + body


def cce_chain(depth: int) -> bytes:
    return cce_framed(struct.pack("<HH", 0, 1) * depth + struct.pack("<HHiHi", 0, 0, 1, 0, 1)
                      + struct.pack("<Hi", 0, 1) * depth)  # fmt: skip


def cce_truncated() -> bytes:
    return cce_framed(R.cce_parking_lot(R.requests("carsales", 1)[0][0]))[:500]


def cce_eval(op: int, tag: int, extra: bytes = b"") -> bytes:
    return cce_framed(struct.pack("<HHiHi", op, tag, 1, 0, 1) + extra)


CCE_CASES = {
    "truncated": ("carsales", "none", cce_truncated),
    "length-beyond-cap": ("carsales", "none", lambda: struct.pack("<I", 0xFFFFFFF0) + bytes(64)),
    "count-beyond-bytes": ("carsales", "none", lambda: cce_framed(struct.pack("<I", 1 << 31))),
    "text-beyond-bytes": ("catrank", "none",
                          lambda: cce_framed(struct.pack("<II", 1, 1 << 30) + b"http")),
    "left-over-bytes": ("eval", "none", lambda: cce_eval(0, 0, b"x")),
    "nested-10000": ("eval", "none", lambda: cce_chain(10_000)),
    "unknown-op": ("eval", "none", lambda: cce_eval(7, 0)),
    "unknown-union-tag": ("eval", "none", lambda: cce_eval(0, 5)),
    "packed-beyond-cap": ("carsales", "packed",
                          lambda: C.pack(struct.pack("<I", 0xFFFFFFF0) + bytes(4))),
    "packed-run-past-the-end": ("carsales", "packed", lambda: bytes([0x01, 0x04, 0x00, 0xFF])),
}  # fmt: skip
