package capnpbench

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	capnp "capnproto.org/go/capnp/v3"
)

// The checked-in generated code is what schema/generate.sh produces from the shared schemas
// with the pinned library: regenerate with `go generate ./workloads/capnp/impls/go/...`.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds capnpc-go and runs the schema compiler")
	}
	if _, err := exec.LookPath("capnp"); err != nil {
		t.Skip("the capnp schema compiler is not installed")
	}
	out := t.TempDir()
	cmd := exec.Command("sh", "../schema/generate.sh", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, msg)
	}
	for _, name := range []string{"carsales", "catrank", "eval"} {
		file := filepath.Join(name, name+".capnp.go")
		want, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "schema", file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("schema/%s differs from what generate.sh produces: run go generate", file)
		}
	}
	// Nothing else is generated.
	files, _ := filepath.Glob(filepath.Join(out, "*", "*"))
	if len(files) != 3 {
		t.Errorf("generate.sh wrote %v", files)
	}
}

// ---- helpers of the other tests ----

// golden is workloads/capnp/conformance/golden.json: the lab's vectors (SPEC §3.5).
type golden struct {
	FirstOutputs []string `json:"first_outputs"`
	Carsales     struct {
		goldenDigest
		FirstCounts  []int    `json:"first_counts"`
		FirstAmounts []uint64 `json:"first_amounts"`
	} `json:"carsales"`
	Catrank struct {
		goldenDigest
		FirstCounts []int `json:"first_counts"`
		FirstGood   []int `json:"first_good"`
	} `json:"catrank"`
	Eval struct {
		goldenDigest
		FirstValues []int32 `json:"first_values"`
	} `json:"eval"`
}

type goldenDigest struct {
	Requests int    `json:"digest_requests"`
	SHA256   string `json:"sha256"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	data, err := os.ReadFile("../../../conformance/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// newRequest builds c's next request into a fresh message.
func newRequest(t testing.TB, c Case) *capnp.Message {
	t.Helper()
	msg, seg, err := capnp.NewMessage(capnp.SingleSegment(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Request(seg); err != nil {
		t.Fatal(err)
	}
	return msg
}

// must unwraps a getter's result in these tests; an error is a failed test (a panic).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// cce appends the canonical content encoding (SPEC §3.5) of decoded values, for the digests
// of golden.json.
type cce []byte

func (b cce) u8(v uint8) cce    { return append(b, v) }
func (b cce) u16(v uint16) cce  { return binary.LittleEndian.AppendUint16(b, v) }
func (b cce) u32(v uint32) cce  { return binary.LittleEndian.AppendUint32(b, v) }
func (b cce) f32(v float32) cce { return b.u32(math.Float32bits(v)) }
func (b cce) f64(v float64) cce { return binary.LittleEndian.AppendUint64(b, math.Float64bits(v)) }
func (b cce) text(s string) cce { return append(b.u32(uint32(len(s))), s...) }
func (b cce) bool(v bool) cce {
	if v {
		return b.u8(1)
	}
	return b.u8(0)
}
