package main

// Host: this program is the go host's shared code (framing, protocol and serve loop: package
// nmhost, in ../go/nmhost/) with github.com/goccy/go-json as its JSON library.
//
// go-json is a pure-Go drop-in for encoding/json (same API, same errors, same results for a
// decode into `any`) that is about 14× faster on a 512 KiB echo: it decodes with code
// specialised per type instead of a reflective state machine, and scans strings eight bytes
// at a time. Its Unmarshal copies the body into its own NUL-terminated buffer, and rejects
// raw control characters and bad escapes as encoding/json does. Its Encoder serialises into
// a buffer of its own (pooled by the library) and copies it into the frame with one Write.
// The encoder keeps its default UTF-8 normalisation (U+2028/U+2029 written as escapes, as
// encoding/json does): the decoded strings are valid UTF-8 already, and switching it off
// (DisableNormalizeUTF8) gained nothing measurable on the 512 KiB echo.

import (
	json "github.com/goccy/go-json"

	"msgbench/workloads/nativemsg/impls/go/nmhost"
)

var host = nmhost.Host{
	Name: "nativemsg-go-go-json",
	Codec: nmhost.NewCodec(json.Unmarshal, json.NewEncoder,
		func(e *json.UnmarshalTypeError) string { return e.Value }),
}
