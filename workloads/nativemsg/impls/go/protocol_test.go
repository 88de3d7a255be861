package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// reply runs one request through a fresh responder and returns the reply body.
func reply(t *testing.T, req string) []byte {
	t.Helper()
	var fb frameBuilder
	fb.reset()
	newResponder(&fb).respond([]byte(req))
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
	for _, req := range []string{`{"op":"ping"}`, ` { "op" : "ping" , "extra": [1,{"a":null}] } `} {
		if got := reply(t, req); string(got) != `{"op":"pong"}` {
			t.Fatalf("%s → %s", req, got)
		}
	}
}

func TestEchoIsEqualAsJSON(t *testing.T) {
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
		m := decode(t, reply(t, req))
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
}

func TestEchoIsReserialisedNotCopied(t *testing.T) {
	// Whitespace and escapes that a byte copy would keep; a re-serialised reply has neither.
	req := `{ "data" : [ 1 , "\u0041" ] , "op" : "echo" }`
	got := string(reply(t, req))
	if got != `{"op":"echo","data":[1,"A"]}` {
		t.Fatalf("echo reply %s is not the re-serialised value", got)
	}
}

func TestEchoKeepsNulCharacter(t *testing.T) {
	m := decode(t, reply(t, `{"op":"echo","data":"a\u0000b"}`))
	if m["data"] != "a\x00b" {
		t.Fatalf("data = %q, want NUL kept", m["data"])
	}
}

func TestFillExactSizes(t *testing.T) {
	for _, n := range []int{minFillBytes, 24, 1000, 65536, maxReplyBody} {
		body := reply(t, fmt.Sprintf(`{"op":"fill","bytes":%d}`, n))
		if len(body) != n {
			t.Fatalf("fill %d: body is %d bytes", n, len(body))
		}
		m := decode(t, body)
		data, _ := m["data"].(string)
		if len(m) != 2 || m["op"] != "fill" || data != strings.Repeat("x", len(data)) {
			t.Fatalf("fill %d: wrong reply %q", n, truncateForLog(body))
		}
	}
}

func TestFillInvalid(t *testing.T) {
	for _, v := range []string{
		"1048577", "22", "0", "-1", "100.5", `"1000"`, "true", "null", "[100]", "{}",
		"4294967319",           // 2^32+23: would be 23 if truncated to 32 bits
		"18446744073709551639", // 2^64+23
		"1e400", "-1e400", "1e300",
	} {
		req := `{"op":"fill","bytes":` + v + `}`
		assertError(t, req, reply(t, req))
	}
	assertError(t, `{"op":"fill"}`, reply(t, `{"op":"fill"}`))
}

func TestBadRequestsGetErrorReplies(t *testing.T) {
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
			assertError(t, req, reply(t, req))
		})
	}
}

func TestOneResponderKeepsServingAfterErrors(t *testing.T) {
	var fb frameBuilder
	r := newResponder(&fb)
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
}

func TestReplyCap(t *testing.T) {
	// Exactly 1 MiB of reply is allowed: {"op":"echo","data":"…"} with the string padded.
	pad := maxReplyBody - len(`{"op":"echo","data":""}`)
	req := `{"op":"echo","data":"` + strings.Repeat("a", pad) + `"}`
	if got := reply(t, req); len(got) != maxReplyBody {
		t.Fatalf("1 MiB echo: reply is %d bytes, want %d", len(got), maxReplyBody)
	}

	// One byte more must become an error reply, never an over-cap frame.
	req = `{"op":"echo","data":"` + strings.Repeat("a", pad+1) + `"}`
	assertError(t, "1 MiB + 1 echo", reply(t, req))

	// Again one byte over, where only the exact check after encoding can see it: the size
	// estimate counts the decoded quote as one byte, the encoder writes it as two (\").
	req = `{"op":"echo","data":"` + strings.Repeat("a", pad-1) + `\""}`
	assertError(t, "1 MiB + 1 echo with an escape", reply(t, req))

	// The cap applies to the serialised reply, not to the request: encoding/json writes a
	// raw U+2028 (3 bytes) as the 6-byte escape \u2028, so a 600 KB request needs a 1.2 MB reply.
	req = `{"op":"echo","data":"` + strings.Repeat("\u2028", 200_000) + `"}`
	if len(req) > maxReplyBody {
		t.Fatal("test request must be under the cap")
	}
	assertError(t, "U+2028 expanding past the cap", reply(t, req))

	// A 2 MiB string and an array far over the cap.
	assertError(t, "2 MiB echo", reply(t, `{"op":"echo","data":"`+strings.Repeat("z", 2<<20)+`"}`))
	assertError(t, "big array", reply(t, `{"op":"echo","data":[`+strings.Repeat("1,", 1<<20)+`1]}`))
}

func TestErrorRepliesStaySmall(t *testing.T) {
	long := strings.Repeat("é", 1<<20) // a 2 MiB op name
	for _, req := range []string{
		`{"op":"` + long + `"}`,
		`{"op":"echo","data":1` + strings.Repeat("0", 2<<20) + `}`, // 2 MB number literal
	} {
		body := reply(t, req)
		assertError(t, "long input", body)
		if len(body) > 1024 {
			t.Fatalf("error reply repeats the input: %d bytes", len(body))
		}
	}
}

func TestWriteErrorCutsLongMessages(t *testing.T) {
	var fb frameBuilder
	fb.reset()
	newResponder(&fb).writeError(strings.Repeat("€", 1<<20))
	body := fb.body()
	assertError(t, "long message", body)
	if len(body) > maxErrorMessage+64 {
		t.Fatalf("error reply of %d bytes: the message was not cut", len(body))
	}
}

func TestMinEncodedSizeIsALowerBound(t *testing.T) {
	for _, v := range []string{
		`null`, `true`, `false`, `0`, `-12.5e-7`, `""`, `"a\"b\\c\nd\u0000é😀<>&"`,
		`[]`, `{}`, `[1,[2,[3]],{"k":"v","":[]}]`, `{"a":{"b":{"c":[null,true,false]}}}`,
	} {
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err != nil {
			t.Fatal(err)
		}
		exact := buf.Len() - 1 // without the encoder's '\n'
		if got := minEncodedSize(x, maxReplyBody); got > exact {
			t.Fatalf("%s: bound %d exceeds the real size %d", v, got, exact)
		}
	}
}
