package main

// Host: this program is the shared Go host (framing, protocol and serve loop: package nmhost,
// in nmhost/) with encoding/json as its JSON library.
//
// Requests are decoded with json.Unmarshal into `any`. Decoder.UseNumber would keep number
// literals verbatim, but a Decoder copies the body into its own growing buffer: about 20%
// slower on a 512 KiB echo, and up to twice a 64 MiB request in extra memory. Replies go
// through one json.Encoder for the connection, which writes straight into the frame behind
// its reserved header.

import (
	"encoding/json"

	"msgbench/workloads/nativemsg/impls/go/nmhost"
)

var host = nmhost.Host{
	Name: "nativemsg-go",
	Codec: nmhost.NewCodec(json.Unmarshal, json.NewEncoder,
		func(e *json.UnmarshalTypeError) string { return e.Value }),
}
