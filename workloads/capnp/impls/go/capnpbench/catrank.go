package capnpbench

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"

	capnp "capnproto.org/go/capnp/v3"

	"msgbench/workloads/capnp/impls/go/schema/catrank"
)

const urlPrefix = "http://example.com/" // the C++ suite's prefix, trailing '/' kept (SPEC §3.3)

var snippetWords = [...]string{"foo ", "bar ", "baz ", "qux ", "quux ", "corge ", "grault ",
	"garply ", "waldo ", "fred ", "plugh ", "xyzzy ", "thud "}

// Pointer slots of SearchResult's texts. The generated setters take a string, which in Go
// means an allocation and a copy per text; capnp.Struct.SetTextFromBytes writes from a byte
// slice straight into the message instead. TestTextSlots checks these against the generated
// getters, so a schema change cannot silently write the wrong field.
const (
	urlSlot     uint16 = 0
	snippetSlot uint16 = 1
)

var (
	catWord = []byte(" cat ")
	dogWord = []byte(" dog ")
)

// errBadText is a text pointer that is not null and not a NUL-terminated byte list.
var errBadText = errors.New("a Text field that is not a NUL-terminated byte list")

// Catrank is the catrank case (SPEC §3.3): search results whose snippets mention cats and
// dogs, rescored and sorted by the server, the number of cat-only results checked by the
// client.
type Catrank struct {
	rng  *RNG
	good int    // results of the last request with a cat and no dog
	text []byte // url and snippet of the result being built, reused

	scored []scoredResult // the server's results being sorted, reused
}

// scoredResult is one result with its new score; url and snippet are views of the request's
// bytes, copied once, into the response.
type scoredResult struct {
	score        float64
	url, snippet []byte
}

// Request builds fastRand(1000) results and counts the good ones.
func (c *Catrank) Request(seg *capnp.Segment) error {
	list, err := catrank.NewRootSearchResultList(seg)
	if err != nil {
		return err
	}
	results, err := list.NewResults(int32(c.rng.Rand(1000)))
	if err != nil {
		return err
	}
	c.good = 0
	for i := range results.Len() {
		r := results.At(i)
		r.SetScore(float64(1000 - i))

		text := append(c.text[:0], urlPrefix...)
		for n := c.rng.Rand(100); n > 0; n-- {
			text = append(text, byte('a'+c.rng.Rand(26)))
		}
		if err := capnp.Struct(r).SetTextFromBytes(urlSlot, text); err != nil {
			return err
		}

		isCat := c.rng.Rand(8) == 0
		isDog := c.rng.Rand(8) == 0
		if isCat && !isDog {
			c.good++
		}
		text = append(text[:0], ' ')
		text = c.appendWords(text)
		if isCat {
			text = append(text, "cat "...)
		}
		if isDog {
			text = append(text, "dog "...)
		}
		text = c.appendWords(text)
		if err := capnp.Struct(r).SetTextFromBytes(snippetSlot, text); err != nil {
			return err
		}
		c.text = text
	}
	return nil
}

// appendWords appends fastRand(20) words, the count drawn before the words.
func (c *Catrank) appendWords(text []byte) []byte {
	for n := c.rng.Rand(20); n > 0; n-- {
		text = append(text, snippetWords[c.rng.Rand(uint32(len(snippetWords)))]...)
	}
	return text
}

// Serve rescores every result (×10000 with " cat ", then ÷10000 with " dog ") and answers
// them all, sorted by score, highest first.
func (c *Catrank) Serve(req *capnp.Message, seg *capnp.Segment) error {
	list, err := catrank.ReadRootSearchResultList(req)
	if err != nil {
		return err
	}
	results, err := list.Results()
	if err != nil {
		return err
	}
	scored := c.scored[:0]
	// The response's size, counted as it will be laid out in its one segment: the root
	// pointer, the root struct, the list's tag, each result's struct and its texts (a null
	// text stays null). A request of small results sharing texts asks for more response than
	// it costs to read; one whose response would pass the cap (SPEC §6) is refused here,
	// before anything is built, as the writer would refuse the built message.
	words := 3 + uint64(results.Len())*resultWords
	for i := range results.Len() {
		r := results.At(i)
		// The library reads a pointer that is not a NUL-terminated byte list as an empty
		// text; like libcapnp, this refuses it instead (a nil slice from a non-null pointer).
		url, err := r.UrlBytes()
		if err == nil && url == nil && r.HasUrl() {
			err = errBadText
		}
		if err != nil {
			return fmt.Errorf("result %d: url: %w", i, err)
		}
		snippet, err := r.SnippetBytes()
		if err == nil && snippet == nil && r.HasSnippet() {
			err = errBadText
		}
		if err != nil {
			return fmt.Errorf("result %d: snippet: %w", i, err)
		}
		words += textWords(url) + textWords(snippet)
		score := r.Score()
		if bytes.Contains(snippet, catWord) {
			score *= 10000
		}
		if bytes.Contains(snippet, dogWord) {
			score /= 10000
		}
		scored = append(scored, scoredResult{score, url, snippet})
	}
	c.scored = scored
	if words > maxWords {
		clear(scored)
		return fmt.Errorf("%d results: the response would be %d words, beyond the %d-word cap",
			len(scored), words, maxWords)
	}
	// Descending, NaN after every number: cmp.Compare orders NaN below everything, so this is
	// a strict weak order on any input (equal scores in no particular order, SPEC §3.3).
	slices.SortFunc(scored, func(a, b scoredResult) int { return cmp.Compare(b.score, a.score) })

	resp, err := catrank.NewRootSearchResultList(seg)
	if err != nil {
		return err
	}
	out, err := resp.NewResults(int32(len(scored)))
	if err != nil {
		return err
	}
	for i, s := range scored {
		r := out.At(i)
		r.SetScore(s.score)
		if err := capnp.Struct(r).SetTextFromBytes(urlSlot, s.url); err != nil {
			return err
		}
		if err := capnp.Struct(r).SetTextFromBytes(snippetSlot, s.snippet); err != nil {
			return err
		}
	}
	clear(scored) // drop the views of the request, which the caller may release
	return nil
}

// resultWords is one SearchResult in a message: a data word (the score) and two pointers.
const resultWords = 3

// textWords is a text's words in a message: its bytes and the NUL, in whole words; none for a
// null text (nil), which SetTextFromBytes writes as a null pointer.
func textWords(text []byte) uint64 {
	if text == nil {
		return 0
	}
	return uint64(len(text)+8) / 8
}

// Check counts the leading results scored above 1001 (the cats without dogs, ×10000) and
// compares the count with the last request's good results.
func (c *Catrank) Check(resp *capnp.Message) error {
	list, err := catrank.ReadRootSearchResultList(resp)
	if err != nil {
		return err
	}
	results, err := list.Results()
	if err != nil {
		return err
	}
	n := 0
	for n < results.Len() && results.At(n).Score() > 1001 {
		n++
	}
	if n != c.good {
		return fmt.Errorf("expected %d leading results scored above 1001, got %d", c.good, n)
	}
	return nil
}
