"""catrank (SPEC §3.3): search results with snippets; the server scores the cats up and the dogs
down and answers every result sorted by score, descending.

Fields go through `_set_by_field` / `_get_by_field` with the schema's field objects looked up
once (see carsales.py for why). The client builds url and snippet as `bytes`, which pycapnp
stores without encoding. The server reads each snippet as `str` (pycapnp decodes Text as UTF-8:
it has no bytes view of a Text) to look for " cat " and " dog ", and copies each result into the
response with one list-element set, which copies the struct's url and snippet inside libcapnp
without decoding the url or encoding either text again; the new score is then set over it.
"""

from __future__ import annotations

from math import isnan

from failures import InvalidMessage, Mismatch
from stream import MAX_WORDS

URL_PREFIX = b"http://example.com/"
WORDS = (b"foo ", b"bar ", b"baz ", b"qux ", b"quux ", b"corge ", b"grault ", b"garply ",
         b"waldo ", b"fred ", b"plugh ", b"xyzzy ", b"thud ")  # fmt: skip
# The score above which a result counts as a cat (×10000 puts every cat far above it).
GOOD_SCORE = 1001.0
# A result in the response takes at least 3 words (the score, two text pointers).
RESULT_WORDS = 3


class Catrank:
    """The case over its loaded schema (catrank.capnp)."""

    name = "catrank"
    # Every text of the request is copied into the response: its size follows the request's
    # content, so the server measures it before serialising it (modes.run_server).
    response_sized_by_request = True

    def __init__(self, schema) -> None:
        self.request_type = schema.SearchResultList
        self.response_type = schema.SearchResultList
        self._results = schema.SearchResultList.schema.fields["results"]
        fields = schema.SearchResult.schema.fields
        self._url = fields["url"]
        self._score = fields["score"]
        self._snippet = fields["snippet"]

    def build_request(self, request, rng) -> int:
        """Fill `request` with the next request's results (SPEC §3.3 draw order); return the
        number of good results (cat and not dog)."""
        f_url, f_score, f_snippet = self._url, self._score, self._snippet
        words = WORDS
        nxt = rng.next
        count = nxt() % 1000
        result_at = request._init_by_field(self._results, count)._get
        good = 0
        for i in range(count):
            put = result_at(i)._set_by_field
            put(f_score, float(1000 - i))
            # range() takes its length, the url's letter count, before the letters are drawn.
            put(f_url, URL_PREFIX + bytes([97 + nxt() % 26 for _ in range(nxt() % 100)]))
            is_cat = nxt() % 8 == 0
            is_dog = nxt() % 8 == 0
            parts = [b" "]
            parts += [words[nxt() % 13] for _ in range(nxt() % 20)]
            if is_cat:
                parts.append(b"cat ")
                if not is_dog:
                    good += 1
            if is_dog:
                parts.append(b"dog ")
            parts += [words[nxt() % 13] for _ in range(nxt() % 20)]
            put(f_snippet, b"".join(parts))
        return good

    def serve(self, request, response) -> None:
        """The server (SPEC §3.3): rescore, sort by score descending (NaN last, ties in request
        order), copy every result into `response`."""
        f_score, f_snippet = self._score, self._snippet
        results = request._get_by_field(self._results)
        count = len(results)
        # A list of empty structs costs its sender one word a result (libcapnp's charge against
        # the traversal limit) but its response at least three: refuse one whose response
        # alone would pass the message cap, before a Python object is made per result.
        if count * RESULT_WORDS > MAX_WORDS:
            raise InvalidMessage(
                f"catrank: {count} results: the response would pass the {MAX_WORDS}-word cap"
            )
        result_at = results._get
        keys = []  # -score per result: ascending keys are descending scores
        for i in range(count):
            get = result_at(i)._get_by_field
            score = get(f_score)
            snippet = get(f_snippet)
            if " cat " in snippet:
                score *= 10000.0
            if " dog " in snippet:
                score /= 10000.0
            keys.append(-score)  # negation is exact (and a NaN stays a NaN)
        # Indices sorted by key: stable, so equal scores keep the request's order. A NaN
        # compares false with everything, which would leave the whole order undefined, so NaNs
        # are kept out of the sort and put last, in request order. Ints and floats only, about
        # 70 bytes a result (tuples of key and index were twice that, and slower).
        if any(map(isnan, keys)):
            order = sorted((i for i in range(count) if not isnan(keys[i])), key=keys.__getitem__)
            order += [i for i in range(count) if isnan(keys[i])]
        else:
            order = sorted(range(count), key=keys.__getitem__)
        out = response._init_by_field(self._results, count)
        copy_into = out._set
        out_at = out._get
        for k, i in enumerate(order):
            copy_into(k, result_at(i))
            out_at(k)._set_by_field(f_score, -keys[i])

    def check(self, response, good: int) -> None:
        """The client (SPEC §3.3): the leading results above GOOD_SCORE are the good ones."""
        f_score = self._score
        results = response._get_by_field(self._results)
        result_at = results._get
        leading = 0
        for i in range(len(results)):
            if not result_at(i)._get_by_field(f_score) > GOOD_SCORE:
                break
            leading += 1
        if leading != good:
            raise Mismatch(f"{leading} leading results scored above 1001, expected {good}")
