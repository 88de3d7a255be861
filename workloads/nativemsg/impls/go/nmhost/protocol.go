package nmhost

// Protocol: turns one request body into one reply body (SPEC.md §2–3). Every request gets
// exactly one reply; anything wrong with a request becomes an {"error": ...} reply, never a
// crash, and no reply body ever exceeds maxReplyBody.
//
// JSON is the host's Codec: a library with encoding/json's API (encoding/json itself, or
// github.com/goccy/go-json, a drop-in for it), chosen by the program (its host.go), which says
// why it decodes and encodes as it does. Requests are decoded with Unmarshal into `any`, so
// numbers become float64: the lab compares numbers as IEEE doubles (docs/decisions.md), so
// that is equal as JSON. Both libraries' Unmarshal also reject trailing data after the value,
// NaN/Infinity, and nesting deeper than 10,000 levels (with an error, not a stack overflow).

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// Codec is the JSON library as the protocol uses it: Unmarshal into `any`, an Encoder, and the
// library's own type-error type. It is built once, at start-up (NewCodec); each request then
// costs one indirect call to decode and one interface call to encode, nothing per byte.
type Codec struct {
	unmarshal  func(data []byte, v any) error
	newEncoder func(w io.Writer) Encoder
	// typeErrorValue returns the Value of the library's *UnmarshalTypeError in err's chain.
	typeErrorValue func(err error) (value string, ok bool)
}

// Encoder is the part of a json.Encoder the protocol uses.
type Encoder interface {
	Encode(v any) error
	SetEscapeHTML(on bool)
}

// NewCodec makes a Codec of a library with encoding/json's API from its Unmarshal, its
// NewEncoder and the Value field of its UnmarshalTypeError, e.g. for encoding/json:
//
//	NewCodec(json.Unmarshal, json.NewEncoder, func(e *json.UnmarshalTypeError) string { return e.Value })
//
// Unmarshal is called as it is, not through a wrapper.
func NewCodec[E Encoder, T error](
	unmarshal func(data []byte, v any) error,
	newEncoder func(w io.Writer) E,
	typeErrorValue func(T) string,
) Codec {
	return Codec{
		unmarshal:  unmarshal,
		newEncoder: func(w io.Writer) Encoder { return newEncoder(w) },
		typeErrorValue: func(err error) (string, bool) {
			var e T
			if errors.As(err, &e) {
				return typeErrorValue(e), true
			}
			return "", false
		},
	}
}

// pongBody is the constant reply to ping, kept pre-serialised: the hot path of the pingpong
// scenarios costs no encoding at all.
var pongBody = []byte(`{"op":"pong"}`)

// Fill replies are built by hand rather than through the encoder: the string holds only 'x',
// which needs no escaping, so the body size is known exactly before writing a byte.
const (
	fillPrefix = `{"op":"fill","data":"`
	fillSuffix = `"}`
	// minFillBytes is the smallest fill reply: an empty data string.
	minFillBytes = len(fillPrefix) + len(fillSuffix)
)

// Error replies stay small whatever the request held: a message repeats at most maxQuoted
// bytes of it (an unknown op, a number literal) and is at most maxErrorMessage bytes long.
const (
	maxQuoted       = 64
	maxErrorMessage = 512
)

// echoReply fixes the member order of the echo reply ("op" then "data") and lets the encoder
// cache its layout, unlike a map, which would be allocated and key-sorted on every reply.
type echoReply struct {
	Op   string `json:"op"`
	Data any    `json:"data"`
}

type errorReply struct {
	Error string `json:"error"`
}

// responder answers requests into a frameBuilder. It keeps one Encoder for the life of the
// connection, writing into the frame behind the reserved header (encoding/json's straight in,
// go-json's through a buffer of its own that it copies in with one Write).
type responder struct {
	out   *frameBuilder
	codec Codec
	enc   Encoder
}

func newResponder(out *frameBuilder, codec Codec) *responder {
	enc := codec.newEncoder(out)
	// Keep '<', '>' and '&' as themselves: this is not HTML, and \u003c-style escapes only
	// make echo replies longer (still equal as JSON either way).
	enc.SetEscapeHTML(false)
	return &responder{out: out, codec: codec, enc: enc}
}

// respond appends the reply to req to the frame being built, which the caller has reset.
func (r *responder) respond(req []byte) {
	if err := r.answer(req); err != nil {
		r.out.truncate(0)
		r.writeError(err.Error())
	}
}

// answer writes the reply to req, or returns the reason for an error reply (leaving the
// body for respond to discard).
func (r *responder) answer(req []byte) error {
	// encoding/json (and go-json) would silently turn invalid UTF-8 into U+FFFD; the spec
	// wants an error.
	if !utf8.Valid(req) {
		return errors.New("request is not valid UTF-8")
	}
	var v any
	if err := r.codec.unmarshal(req, &v); err != nil {
		if literal, ok := r.codec.typeErrorValue(err); ok {
			// Decoding into `any`, the only type error is a number that overflows a double
			// (e.g. 1e400). Its message repeats the whole literal: keep it short.
			return fmt.Errorf("request holds %s, outside the range of a double", cutShort(literal))
		}
		return fmt.Errorf("request is not valid JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("request must be a JSON object, not %s", kindOf(v))
	}
	opValue, ok := obj["op"]
	if !ok {
		return errors.New(`request has no "op" member`)
	}
	op, ok := opValue.(string)
	if !ok {
		return fmt.Errorf(`"op" must be a string, not %s`, kindOf(opValue))
	}

	switch op {
	case "ping":
		r.out.Write(pongBody)
		return nil
	case "echo":
		data, ok := obj["data"]
		if !ok {
			return errors.New(`echo needs a "data" member`)
		}
		return r.echo(data)
	case "fill":
		return r.fill(obj)
	default:
		return fmt.Errorf("unknown op %s", quoteShort(op))
	}
}

// echoOverhead is the reply around the data: {"op":"echo","data":…}.
const echoOverhead = len(`{"op":"echo","data":}`)

// echo re-serialises data (already parsed, not the request's bytes) into the reply.
func (r *responder) echo(data any) error {
	// A value that cannot fit is refused before it is serialised: a 64 MiB request would
	// otherwise cost two more 64+ MiB buffers (the encoder's and the frame) just to be dropped.
	if echoOverhead+minEncodedSize(data, maxReplyBody) > maxReplyBody {
		return fmt.Errorf("echo reply would exceed the %d-byte reply limit", maxReplyBody)
	}
	if err := r.enc.Encode(echoReply{Op: "echo", Data: data}); err != nil {
		return fmt.Errorf("cannot serialise the echo reply: %v", err)
	}
	// Encode ends every value with '\n'; drop it so the body is exactly the JSON value.
	r.out.truncate(r.out.bodyLen() - 1)
	if n := r.out.bodyLen(); n > maxReplyBody {
		return fmt.Errorf("echo reply would be %d bytes, over the %d-byte reply limit", n, maxReplyBody)
	}
	return nil
}

// minEncodedSize returns a lower bound on the length of v as the encoder writes it, or
// some number above limit once the bound passes limit (so a huge value is not walked whole).
// Every term is a floor: a string is at least its bytes plus two quotes (escapes only add),
// a number at least one digit; brackets, colons and commas are counted exactly.
func minEncodedSize(v any, limit int) int {
	switch x := v.(type) {
	case nil:
		return len("null")
	case bool:
		if x {
			return len("true")
		}
		return len("false")
	case float64:
		return 1
	case string:
		return len(x) + 2
	case []any:
		n := 2 + max(len(x)-1, 0) // [ ] and the commas
		for _, e := range x {
			if n > limit {
				break
			}
			n += minEncodedSize(e, limit-n)
		}
		return n
	case map[string]any:
		n := 2 + max(len(x)-1, 0) // { } and the commas
		for k, e := range x {
			if n > limit {
				break
			}
			n += len(k) + 3 // "k":
			n += minEncodedSize(e, limit-n)
		}
		return n
	default:
		return 0 // not produced by Unmarshal into any; the exact check after encoding holds
	}
}

// fill writes {"op":"fill","data":"xx…"} whose whole body is exactly "bytes" bytes long.
func (r *responder) fill(obj map[string]any) error {
	value, ok := obj["bytes"]
	if !ok {
		return errors.New(`fill needs a "bytes" member`)
	}
	f, ok := value.(float64)
	if !ok {
		return fmt.Errorf(`"bytes" must be an integer, not %s`, kindOf(value))
	}
	// An integral double is an integer (the lab compares JSON numbers as doubles, so 100
	// and 100.0 are the same value). The range test also keeps the int conversion exact.
	if f != math.Trunc(f) {
		return fmt.Errorf(`"bytes" must be an integer, not %s`, formatNumber(f))
	}
	if f < float64(minFillBytes) || f > maxReplyBody {
		return fmt.Errorf(`"bytes" is %s; a fill reply can be %d to %d bytes`,
			formatNumber(f), minFillBytes, maxReplyBody)
	}
	n := int(f)
	b := r.out.grow(n)
	copy(b, fillPrefix)
	x := b[len(fillPrefix) : n-len(fillSuffix)]
	for i := range x {
		x[i] = 'x'
	}
	copy(b[n-len(fillSuffix):], fillSuffix)
	return nil
}

// writeError writes {"error": msg}. Messages quote at most maxQuoted bytes of request data;
// the cut to maxErrorMessage is a second guard that keeps every error reply far below
// maxReplyBody whatever a library error message might repeat.
func (r *responder) writeError(msg string) {
	if len(msg) > maxErrorMessage {
		msg = cutUTF8(msg, maxErrorMessage) + "…"
	}
	if err := r.enc.Encode(errorReply{Error: msg}); err != nil {
		// Unreachable for a plain string; still, never leave the client without a reply.
		r.out.truncate(0)
		r.out.Write([]byte(`{"error":"internal error"}`))
		return
	}
	r.out.truncate(r.out.bodyLen() - 1) // the encoder's trailing '\n'
}

// kindOf names the JSON type of a value decoded into `any`, for error messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// quoteShort quotes s for an error message, cut to maxQuoted bytes.
func quoteShort(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(cutUTF8(s, maxQuoted)) + "…"
}

// cutShort returns s cut to maxQuoted bytes, marked with "…" when cut.
func cutShort(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	return cutUTF8(s, maxQuoted) + "…"
}

// cutUTF8 returns the longest prefix of s of at most n bytes that ends on a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// formatNumber writes a decoded number for an error message: integers in full (1048577,
// not 1.048577e+06), anything else in the shortest form that round-trips.
func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
