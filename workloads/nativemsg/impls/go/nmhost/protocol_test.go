package nmhost

// The protocol is tested with each Go host's JSON library (codecs); the replies are checked
// with encoding/json.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"
)

// codecs are the JSON libraries of the Go hosts, built as each host's host.go builds its own.
var codecs = []struct {
	name  string
	codec Codec
}{
	{"encoding-json", NewCodec(json.Unmarshal, json.NewEncoder,
		func(e *json.UnmarshalTypeError) string { return e.Value })},
	{"go-json", NewCodec(gojson.Unmarshal, gojson.NewEncoder,
		func(e *gojson.UnmarshalTypeError) string { return e.Value })},
}

// forEachCodec runs test once per codec, as a subtest named after the library.
func forEachCodec(t *testing.T, test func(t *testing.T, c Codec)) {
	t.Helper()
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) { test(t, c.codec) })
	}
}

// reply runs one request through a fresh responder and returns the reply body.
func reply(t *testing.T, c Codec, req string) []byte {
	t.Helper()
	var fb frameBuilder
	fb.reset()
	newResponder(&fb, c).respond([]byte(req))
	body := append([]byte{}, fb.body()...)
	if len(body) > maxReplyBody {
		t.Fatalf("reply of %d bytes exceeds the 1 MiB cap", len(body))
	}
	return body
}

// decode parses a reply, failing the test if it is not a JSON object.
func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		t.Fatalf("reply is not a JSON object: %q (%v)", truncateForLog(body), err)
	}
	return m
}

func truncateForLog(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// assertError checks that body is an error reply: an object whose "error" is a non-empty string.
func assertError(t *testing.T, req string, body []byte) {
	t.Helper()
	m := decode(t, body)
	msg, ok := m["error"].(string)
	if !ok || msg == "" {
		t.Fatalf("request %q: want an error reply, got %q", truncateForLog([]byte(req)), truncateForLog(body))
	}
}

func TestPing(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		for _, req := range []string{`{"op":"ping"}`, ` { "op" : "ping" , "extra": [1,{"a":null}] } `} {
			if got := reply(t, c, req); string(got) != `{"op":"pong"}` {
				t.Fatalf("%s → %s", req, got)
			}
		}
	})
}

func TestEchoIsEqualAsJSON(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		values := []string{
			`null`, `true`, `false`, `0`, `-0`, `42`, `-7`, `3.25`, `1e300`, `2.5E-3`, `1.0`,
			`""`, `"plain"`, `"quote \" backslash \\ slash \/ newline \n tab \t"`,
			`"nul \u0000 inside"`, `"control \u0001\u001f"`, `"é€😀 and \u00e9\u20ac\ud83d\ude00"`,
			`"<script>&amp;</script>"`, `"line sep \u2028 para sep \u2029"`,
			`[]`, `{}`, `[1,"two",[3,[4,{}]],{"k":null}]`,
			`{"seq":1,"text":"hello","nested":{"a":[true,false,null],"":"empty key"}}`,
		}
		for _, v := range values {
			req := `{"op":"echo","data":` + v + `}`
			m := decode(t, reply(t, c, req))
			if len(m) != 2 || m["op"] != "echo" {
				t.Fatalf("echo %s: reply must have exactly op=echo and data, got %v", v, m)
			}
			var want any
			if err := json.Unmarshal([]byte(v), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m["data"], want) {
				t.Fatalf("echo %s: data came back as %#v, want %#v", v, m["data"], want)
			}
		}
	})
}

// go-json scans and escapes strings 32 bytes at a time with AVX2 when the CPU has it, 8 at a
// time otherwise, and byte by byte at the tail: every special byte (quote, backslash, control
// character, escape, multi-byte UTF-8, U+2028) is put at every offset of strings around those
// block sizes, so each path and each block boundary sees it.
func TestEchoStringsAtEveryOffset(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		specials := []string{`\"`, `\\`, `\n`, `\u0001`, `\u0000`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud800`,
			"é", "€", "😀", "\u2028", "\u2029", "<&>", "\x7f"}
		for _, sp := range specials {
			for n := 0; n <= 100; n++ {
				for _, at := range []int{0, n / 2, n} {
					lit := strings.Repeat("a", at) + sp + strings.Repeat("b", n-at)
					req := `{"op":"echo","data":["` + lit + `",{"` + lit + `":"` + lit + `"}]}`
					var want any
					if err := json.Unmarshal([]byte(`["`+lit+`",{"`+lit+`":"`+lit+`"}]`), &want); err != nil {
						t.Fatal(err)
					}
					m := decode(t, reply(t, c, req))
					if !reflect.DeepEqual(m["data"], want) {
						t.Fatalf("echo of %q: data came back as %#v, want %#v", lit, m["data"], want)
					}
				}
			}
		}
	})
}

func TestEchoIsReserialisedNotCopied(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		// Whitespace and escapes that a byte copy would keep; a re-serialised reply has neither.
		req := `{ "data" : [ 1 , "\u0041" ] , "op" : "echo" }`
		got := string(reply(t, c, req))
		if got != `{"op":"echo","data":[1,"A"]}` {
			t.Fatalf("echo reply %s is not the re-serialised value", got)
		}
	})
}

func TestEchoKeepsNulCharacter(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		m := decode(t, reply(t, c, `{"op":"echo","data":"a\u0000b"}`))
		if m["data"] != "a\x00b" {
			t.Fatalf("data = %q, want NUL kept", m["data"])
		}
	})
}

func TestFillExactSizes(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		for _, n := range []int{minFillBytes, 24, 1000, 65536, maxReplyBody} {
			body := reply(t, c, fmt.Sprintf(`{"op":"fill","bytes":%d}`, n))
			if len(body) != n {
				t.Fatalf("fill %d: body is %d bytes", n, len(body))
			}
			m := decode(t, body)
			data, _ := m["data"].(string)
			if len(m) != 2 || m["op"] != "fill" || data != strings.Repeat("x", len(data)) {
				t.Fatalf("fill %d: wrong reply %q", n, truncateForLog(body))
			}
		}
	})
}

func TestFillInvalid(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		for _, v := range []string{
			"1048577", "22", "0", "-1", "100.5", `"1000"`, "true", "null", "[100]", "{}",
			"4294967319",           // 2^32+23: would be 23 if truncated to 32 bits
			"18446744073709551639", // 2^64+23
			"1e400", "-1e400", "1e300",
		} {
			req := `{"op":"fill","bytes":` + v + `}`
			assertError(t, req, reply(t, c, req))
		}
		assertError(t, `{"op":"fill"}`, reply(t, c, `{"op":"fill"}`))
	})
}

func TestBadRequestsGetErrorReplies(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		cases := map[string]string{
			"invalid UTF-8":             "{\"op\":\"echo\",\"data\":\"\xff\"}",
			"UTF-8 surrogate":           "{\"op\":\"echo\",\"data\":\"\xed\xa0\x80\"}",
			"overlong UTF-8":            "{\"op\":\"echo\",\"data\":\"\xc0\xaf\"}",
			"truncated UTF-8":           "{\"op\":\"echo\",\"data\":\"\xe2\x82\"}",
			"empty body":                ``,
			"not JSON":                  `hello`,
			"NaN":                       `{"op":"echo","data":NaN}`,
			"Infinity":                  `{"op":"echo","data":Infinity}`,
			"-Infinity":                 `{"op":"echo","data":-Infinity}`,
			"trailing garbage":          `{"op":"ping"} x`,
			"two values":                `{"op":"ping"}{"op":"ping"}`,
			"trailing comma":            `{"op":"ping",}`,
			"single quotes":             `{'op':'ping'}`,
			"unterminated":              `{"op":"ping"`,
			"array":                     `[{"op":"ping"}]`,
			"string":                    `"ping"`,
			"number":                    `1`,
			"null":                      `null`,
			"no op":                     `{"data":1}`,
			"number op":                 `{"op":1}`,
			"null op":                   `{"op":null}`,
			"unknown op":                `{"op":"frob"}`,
			"op differs in case":        `{"op":"PING"}`,
			"echo without data":         `{"op":"echo"}`,
			"number beyond a double":    `{"op":"echo","data":1e400}`,
			"raw control char":          "{\"op\":\"echo\",\"data\":\"a\x01b\"}",
			"deep nesting (1e6 arrays)": `{"op":"echo","data":` + strings.Repeat("[", 1_000_000) + `}`,
		}
		for name, req := range cases {
			t.Run(name, func(t *testing.T) {
				assertError(t, req, reply(t, c, req))
			})
		}
	})
}

// A number beyond a double is the library's type error, found through the codec: its reply
// says so, with the literal cut short.
func TestNumberBeyondADoubleIsNamed(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		for req, want := range map[string]string{
			`{"op":"echo","data":[1,-1e400]}`: "request holds number -1e400, outside the range of a double",
			`{"op":"echo","data":1` + strings.Repeat("0", 400) + `}`: "request holds number 1" +
				strings.Repeat("0", 56) + "…, outside the range of a double",
		} {
			if got := decode(t, reply(t, c, req))["error"]; got != want {
				t.Fatalf("%.40s: error %q, want %q", req, got, want)
			}
		}
	})
}

func TestOneResponderKeepsServingAfterErrors(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		var fb frameBuilder
		r := newResponder(&fb, c)
		for i, req := range []string{`{"op":"frob"}`, "\xff", `{"op":"echo","data":[1]}`, `nope`, `{"op":"ping"}`} {
			fb.reset()
			r.respond([]byte(req))
			got := string(fb.body())
			switch i {
			case 2:
				if got != `{"op":"echo","data":[1]}` {
					t.Fatalf("echo after errors: %s", got)
				}
			case 4:
				if got != `{"op":"pong"}` {
					t.Fatalf("ping after errors: %s", got)
				}
			default:
				assertError(t, req, []byte(got))
			}
		}
	})
}

func TestReplyCap(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		// Exactly 1 MiB of reply is allowed: {"op":"echo","data":"…"} with the string padded.
		pad := maxReplyBody - len(`{"op":"echo","data":""}`)
		req := `{"op":"echo","data":"` + strings.Repeat("a", pad) + `"}`
		if got := reply(t, c, req); len(got) != maxReplyBody {
			t.Fatalf("1 MiB echo: reply is %d bytes, want %d", len(got), maxReplyBody)
		}

		// One byte more must become an error reply, never an over-cap frame.
		req = `{"op":"echo","data":"` + strings.Repeat("a", pad+1) + `"}`
		assertError(t, "1 MiB + 1 echo", reply(t, c, req))

		// Again one byte over, where only the exact check after encoding can see it: the size
		// estimate counts the decoded quote as one byte, the encoder writes it as two (\").
		req = `{"op":"echo","data":"` + strings.Repeat("a", pad-1) + `\""}`
		assertError(t, "1 MiB + 1 echo with an escape", reply(t, c, req))

		// The cap applies to the serialised reply, not to the request: encoding/json (and go-json
		// as it) writes a raw U+2028 (3 bytes) as the 6-byte escape \u2028, so a 600 KB request
		// needs a 1.2 MB reply.
		req = `{"op":"echo","data":"` + strings.Repeat("\u2028", 200_000) + `"}`
		if len(req) > maxReplyBody {
			t.Fatal("test request must be under the cap")
		}
		assertError(t, "U+2028 expanding past the cap", reply(t, c, req))

		// A 2 MiB string and an array far over the cap.
		assertError(t, "2 MiB echo", reply(t, c, `{"op":"echo","data":"`+strings.Repeat("z", 2<<20)+`"}`))
		assertError(t, "big array", reply(t, c, `{"op":"echo","data":[`+strings.Repeat("1,", 1<<20)+`1]}`))
	})
}

func TestErrorRepliesStaySmall(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		long := strings.Repeat("é", 1<<20) // a 2 MiB op name
		for _, req := range []string{
			`{"op":"` + long + `"}`,
			`{"op":"echo","data":1` + strings.Repeat("0", 2<<20) + `}`, // 2 MB number literal
		} {
			body := reply(t, c, req)
			assertError(t, "long input", body)
			if len(body) > 1024 {
				t.Fatalf("error reply repeats the input: %d bytes", len(body))
			}
		}
	})
}

func TestWriteErrorCutsLongMessages(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		var fb frameBuilder
		fb.reset()
		newResponder(&fb, c).writeError(strings.Repeat("€", 1<<20))
		body := fb.body()
		assertError(t, "long message", body)
		if len(body) > maxErrorMessage+64 {
			t.Fatalf("error reply of %d bytes: the message was not cut", len(body))
		}
	})
}

func TestMinEncodedSizeIsALowerBound(t *testing.T) {
	forEachCodec(t, func(t *testing.T, c Codec) {
		for _, v := range []string{
			`null`, `true`, `false`, `0`, `-12.5e-7`, `""`, `"a\"b\\c\nd\u0000é😀<>&"`,
			`[]`, `{}`, `[1,[2,[3]],{"k":"v","":[]}]`, `{"a":{"b":{"c":[null,true,false]}}}`,
		} {
			// The bound is on the host's own encoder: decode and encode with the codec.
			var x any
			if err := c.unmarshal([]byte(v), &x); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			enc := c.newEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(x); err != nil {
				t.Fatal(err)
			}
			exact := buf.Len() - 1 // without the encoder's '\n'
			if got := minEncodedSize(x, maxReplyBody); got > exact {
				t.Fatalf("%s: bound %d exceeds the real size %d", v, got, exact)
			}
		}
	})
}
