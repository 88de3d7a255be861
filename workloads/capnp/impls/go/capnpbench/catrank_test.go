package capnpbench

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"testing"

	capnp "capnproto.org/go/capnp/v3"

	"msgbench/workloads/capnp/impls/go/schema/catrank"
)

func TestCatrankGolden(t *testing.T) {
	g := loadGolden(t).Catrank
	c := &Catrank{rng: NewRNG()}
	h := sha256.New()
	for i := range max(len(g.FirstCounts), g.Requests) {
		msg := newRequest(t, c)
		results := must(must(catrank.ReadRootSearchResultList(msg)).Results())
		if i < len(g.FirstCounts) {
			if results.Len() != g.FirstCounts[i] || c.good != g.FirstGood[i] {
				t.Errorf("request %d: %d results, %d good, want %d and %d", i, results.Len(),
					c.good, g.FirstCounts[i], g.FirstGood[i])
			}
		}
		if i < g.Requests {
			h.Write(cceResults(results))
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != g.SHA256 {
		t.Errorf("CCE digest of the first %d requests: %s, want %s", g.Requests, got, g.SHA256)
	}
}

// The pointer slots SetTextFromBytes writes are the ones the generated getters read.
func TestTextSlots(t *testing.T) {
	_, seg := capnp.NewSingleSegmentMessage(nil)
	r := must(catrank.NewSearchResult(seg))
	if err := capnp.Struct(r).SetTextFromBytes(urlSlot, []byte("u")); err != nil {
		t.Fatal(err)
	}
	if err := capnp.Struct(r).SetTextFromBytes(snippetSlot, []byte("s")); err != nil {
		t.Fatal(err)
	}
	if must(r.Url()) != "u" || must(r.Snippet()) != "s" {
		t.Errorf("url %q, snippet %q", must(r.Url()), must(r.Snippet()))
	}
}

type result struct {
	url     string
	score   float64
	snippet string
}

// serveResults serves hand-made results through a serialised request.
func serveResults(t *testing.T, in []result) ([]result, error) {
	t.Helper()
	msg, seg := capnp.NewSingleSegmentMessage(nil)
	list := must(must(catrank.NewRootSearchResultList(seg)).NewResults(int32(len(in))))
	for i, r := range in {
		e := list.At(i)
		e.SetScore(r.score)
		_ = e.SetUrl(r.url)
		_ = e.SetSnippet(r.snippet)
	}
	req, err := newMessageReader().read(must(msg.Marshal()))
	if err != nil {
		t.Fatal(err)
	}
	respMsg, respSeg := capnp.NewSingleSegmentMessage(nil)
	if err := (&Catrank{}).Serve(req, respSeg); err != nil {
		return nil, err
	}
	out := must(must(catrank.ReadRootSearchResultList(respMsg)).Results())
	var got []result
	for i := range out.Len() {
		e := out.At(i)
		got = append(got, result{must(e.Url()), e.Score(), must(e.Snippet())})
	}
	return got, nil
}

func TestCatrankServe(t *testing.T) {
	got, err := serveResults(t, []result{
		{"a", 1, " plain "},
		{"b", math.NaN(), " cat "},
		{"c", 2, " a cat and a dog "}, // ×10000 then ÷10000
		{"d", 3, " cat "},
		{"e", 4, " dog "},
		{"f", 5, "cat dog"}, // without the spaces around: neither word
		{"g", math.Inf(-1), ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []result{{"d", 30000, " cat "}, {"f", 5, "cat dog"}, {"c", 2, " a cat and a dog "},
		{"a", 1, " plain "}, {"e", 4.0 / 10000, " dog "}, {"g", math.Inf(-1), ""}}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("result %d: %v, want %v", i, got[i], w)
		}
	}
	if last := got[len(got)-1]; last.url != "b" || !math.IsNaN(last.score) {
		t.Errorf("NaN is not last: %v", got)
	}
}

func TestCatrankRefusesTextThatIsNotText(t *testing.T) {
	msg, seg := capnp.NewSingleSegmentMessage(nil)
	list := must(must(catrank.NewRootSearchResultList(seg)).NewResults(1))
	// A struct where the url's text should be.
	if err := capnp.Struct(list.At(0)).SetPtr(urlSlot, must(catrank.NewSearchResult(seg)).ToPtr()); err != nil {
		t.Fatal(err)
	}
	req := must(newMessageReader().read(must(msg.Marshal())))
	_, respSeg := capnp.NewSingleSegmentMessage(nil)
	if err := (&Catrank{}).Serve(req, respSeg); err == nil {
		t.Error("a struct pointer read as a url")
	}
}

func TestCatrankCheck(t *testing.T) {
	c := &Catrank{good: 2}
	check := func(scores ...float64) error {
		msg, seg := capnp.NewSingleSegmentMessage(nil)
		list := must(must(catrank.NewRootSearchResultList(seg)).NewResults(int32(len(scores))))
		for i, s := range scores {
			list.At(i).SetScore(s)
		}
		return c.Check(msg)
	}
	if err := check(20000, 1002, 1001, 30000); err != nil {
		t.Error(err)
	}
	if check(20000, 1001, 30000) == nil || check(20000, 1002, 1003) == nil {
		t.Error("a wrong count passed")
	}
}

func cceResults(results catrank.SearchResult_List) []byte {
	b := cce(nil).u32(uint32(results.Len()))
	for i := range results.Len() {
		r := results.At(i)
		b = b.text(must(r.Url())).f64(r.Score()).text(must(r.Snippet()))
	}
	return b
}
