package capnpbench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	capnp "capnproto.org/go/capnp/v3"
)

// Case is one benchmark case: the client's side (requests drawn from its generator, and the
// check of each response against what its request expects) and the server's.
type Case interface {
	// Request builds the next request into seg, the first segment of a fresh message.
	Request(seg *capnp.Segment) error
	// Serve reads a request and builds its response into seg.
	Serve(req *capnp.Message, seg *capnp.Segment) error
	// Check compares a response with what the last request built expects.
	Check(resp *capnp.Message) error
}

// Cases are the case names of the command line.
var Cases = []string{"carsales", "catrank", "eval"}

// NewCase returns the named case with a freshly seeded generator.
func NewCase(name string) (Case, error) {
	switch name {
	case "carsales":
		return &Carsales{rng: NewRNG()}, nil
	case "catrank":
		return &Catrank{rng: NewRNG()}, nil
	case "eval":
		return &Eval{rng: NewRNG()}, nil
	}
	return nil, fmt.Errorf("unknown case %q", name)
}

// Config is one run: the five words of the command line (SPEC §5).
type Config struct {
	Case       string
	Mode       string // object, bytes, pipe, client or server
	Reuse      bool
	Packed     bool
	Iterations int
}

// Warmup is the number of untimed iterations before the timed ones.
func (c Config) Warmup() int { return c.Iterations / 20 }

// Args are the command line's five words for this configuration in another mode.
func (c Config) Args(mode string) []string {
	reuse, compression := "no-reuse", "none"
	if c.Reuse {
		reuse = "reuse"
	}
	if c.Packed {
		compression = "packed"
	}
	return []string{c.Case, mode, reuse, compression, strconv.Itoa(c.Iterations)}
}

// Report is what a run measured (SPEC §5); main writes it as JSON.
type Report struct {
	SetupS, WarmupS, ElapsedS, CPUS float64
	RequestBytes, ResponseBytes     int64
	Checked                         int
	ServerCPUS                      float64 // pipe only
}

// builder hands out the message each request or response is built in (SPEC §4).
type builder struct {
	reuse bool
	msg   capnp.Message // reuse: the one message, reset each time
}

// next returns a message ready to build in and its first segment.
//
// With reuse, the one Message is reset over capnp.SingleSegment(nil), the library's own reuse
// pattern (its BenchmarkMarshal_ReuseMsg): Reset hands the previous arena and its buffer back
// to the library's pools, and SingleSegment(nil) takes the arena out again; as the message
// grows, its buffer comes from the library's buffer pool (power-of-two sizes), so once the
// pools hold a buffer of each size a message needs, nothing is allocated. A SingleSegment
// over one buffer of our own would be the closer analogue of a C++ scratch array, but in this
// version such an arena cannot grow (Allocate refuses: read-only), so a message larger than
// the buffer would fail; measured, it was no faster.
//
// Without reuse, each message is new, with the library's default arena
// (NewMessage(SingleSegment(nil))), and left to the garbage collector.
func (b *builder) next() (*capnp.Message, *capnp.Segment, error) {
	if b.reuse {
		seg, err := b.msg.Reset(capnp.SingleSegment(nil))
		return &b.msg, seg, err
	}
	return capnp.NewMessage(capnp.SingleSegment(nil))
}

// loop runs the warm-up and the timed iterations of step, timing them, and reads the byte
// counters at the start and the end of the timed iterations.
func loop(cfg Config, started time.Time, step func(i int) error, counted func() (int64, int64)) (Report, error) {
	var rep Report
	w, n := cfg.Warmup(), cfg.Iterations
	t0 := time.Now()
	rep.SetupS = t0.Sub(started).Seconds()
	for i := range w {
		if err := step(i); err != nil {
			return rep, fmt.Errorf("iteration %d (warm-up): %w", i+1, err)
		}
	}
	t1 := time.Now()
	rep.WarmupS = t1.Sub(t0).Seconds()
	req0, resp0 := counted()
	cpu0 := cpuSeconds()
	t1 = time.Now()
	for i := w; i < w+n; i++ {
		if err := step(i); err != nil {
			return rep, fmt.Errorf("iteration %d: %w", i+1, err)
		}
	}
	rep.ElapsedS = time.Since(t1).Seconds()
	rep.CPUS = cpuSeconds() - cpu0
	req1, resp1 := counted()
	rep.RequestBytes, rep.ResponseBytes = req1-req0, resp1-resp0
	rep.Checked = w + n
	return rep, nil
}

// cpuSeconds is this process's user + system CPU time, all threads (getrusage).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// RunObject is the object mode: the request's builder handed straight to the server code,
// the response's straight to the client's check; nothing is serialised.
func RunObject(cfg Config, started time.Time) (Report, error) {
	c, err := NewCase(cfg.Case)
	if err != nil {
		return Report{}, err
	}
	reqs, resps := builder{reuse: cfg.Reuse}, builder{reuse: cfg.Reuse}
	step := objectStep(c, &reqs, &resps)
	return loop(cfg, started, func(int) error { return step() }, func() (int64, int64) { return 0, 0 })
}

func objectStep(c Case, reqs, resps *builder) func() error {
	return func() error {
		req, seg, err := reqs.next()
		if err != nil {
			return err
		}
		if err := c.Request(seg); err != nil {
			return fmt.Errorf("building the request: %w", err)
		}
		resp, seg, err := resps.next()
		if err != nil {
			return err
		}
		if err := c.Serve(req, seg); err != nil {
			return fmt.Errorf("serving: %w", err)
		}
		return c.Check(resp)
	}
}

// RunBytes is the bytes mode: each message serialised into a buffer allocated once (packed
// by the library when asked) and read back in place.
func RunBytes(cfg Config, started time.Time) (Report, error) {
	c, err := NewCase(cfg.Case)
	if err != nil {
		return Report{}, err
	}
	reqs, resps := builder{reuse: cfg.Reuse}, builder{reuse: cfg.Reuse}
	b := newBytesLoop(c, &reqs, &resps, cfg.Packed)
	return loop(cfg, started, func(int) error { return b.step() },
		func() (int64, int64) { return b.req.n, b.resp.n })
}

// bytesLoop is the bytes mode's state: one buffer per direction, allocated once.
type bytesLoop struct {
	c           Case
	reqs, resps *builder
	req, resp   flat
}

// flat is one direction of the bytes mode: a message serialised into buf and read back.
type flat struct {
	buf      bytes.Buffer
	enc      *capnp.Encoder
	in       *messageReader
	packed   bool
	unpacked []byte // packed: the message unpacked, storage reused
	n        int64  // bytes serialised (packed size when packed)
}

func newBytesLoop(c Case, reqs, resps *builder, isPacked bool) *bytesLoop {
	b := &bytesLoop{c: c, reqs: reqs, resps: resps}
	for _, f := range []*flat{&b.req, &b.resp} {
		f.buf.Grow(ioBufferSize)
		f.enc = newEncoder(&f.buf, isPacked)
		f.in = newMessageReader()
		f.packed = isPacked
	}
	return b
}

// roundTrip serialises m and reads it back.
func (f *flat) roundTrip(m *capnp.Message) (*capnp.Message, error) {
	f.buf.Reset()
	if err := f.enc.Encode(m); err != nil {
		return nil, err
	}
	f.n += int64(f.buf.Len())
	frame := f.buf.Bytes()
	if f.packed {
		var err error
		if f.unpacked, err = unpackFlat(f.unpacked, frame); err != nil {
			return nil, err
		}
		frame = f.unpacked
	}
	return f.in.read(frame)
}

func (b *bytesLoop) step() error {
	m, seg, err := b.reqs.next()
	if err != nil {
		return err
	}
	if err := b.c.Request(seg); err != nil {
		return fmt.Errorf("building the request: %w", err)
	}
	req, err := b.req.roundTrip(m)
	if err != nil {
		return fmt.Errorf("the request: %w", err)
	}
	m, seg, err = b.resps.next()
	if err != nil {
		return err
	}
	if err := b.c.Serve(req, seg); err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	resp, err := b.resp.roundTrip(m)
	if err != nil {
		return fmt.Errorf("the response: %w", err)
	}
	return b.c.Check(resp)
}

// RunClient is the client mode: requests written to w, responses read from r, each checked.
func RunClient(cfg Config, started time.Time, r io.Reader, w io.Writer) (Report, error) {
	c, err := NewCase(cfg.Case)
	if err != nil {
		return Report{}, err
	}
	reqs := builder{reuse: cfg.Reuse}
	out, in := newFrameWriter(w, cfg.Packed), newFrameReader(r, cfg.Packed)
	respIn := newMessageReader()
	step := func(int) error {
		m, seg, err := reqs.next()
		if err != nil {
			return err
		}
		if err := c.Request(seg); err != nil {
			return fmt.Errorf("building the request: %w", err)
		}
		if err := out.write(m); err != nil {
			return fmt.Errorf("writing the request: %w", err)
		}
		frame, err := in.next()
		if err == io.EOF {
			return errors.New("reading the response: the server's output ended")
		}
		if err != nil {
			return fmt.Errorf("reading the response: %w", err)
		}
		resp, err := respIn.read(frame)
		if err != nil {
			return fmt.Errorf("reading the response: %w", err)
		}
		return c.Check(resp)
	}
	return loop(cfg, started, step, func() (int64, int64) { return out.written(), in.consumed() })
}

// RunServer is the server mode: requests read from r until its clean end, each answered on w
// and flushed before the next read. It returns the number of requests answered, also when it
// fails.
func RunServer(cfg Config, r io.Reader, w io.Writer) (int, error) {
	c, err := NewCase(cfg.Case)
	if err != nil {
		return 0, err
	}
	resps := builder{reuse: cfg.Reuse}
	in, out := newFrameReader(r, cfg.Packed), newFrameWriter(w, cfg.Packed)
	reqIn := newMessageReader()
	for served := 0; ; served++ {
		frame, err := in.next()
		if err == io.EOF {
			return served, nil
		}
		if err == nil {
			err = serveOne(c, frame, reqIn, &resps, out)
		}
		if err != nil {
			return served, fmt.Errorf("request %d: %w", served+1, err)
		}
	}
}

func serveOne(c Case, frame []byte, reqIn *messageReader, resps *builder, out *frameWriter) error {
	req, err := reqIn.read(frame)
	if err != nil {
		return err
	}
	m, seg, err := resps.next()
	if err != nil {
		return err
	}
	if err := c.Serve(req, seg); err != nil {
		return err
	}
	if err := out.write(m); err != nil {
		return fmt.Errorf("writing the response: %w", err)
	}
	return nil
}

// RunPipe is the self-contained pipe mode: this program started again as the server, joined
// by two pipes, and the client run against it. The server's CPU time comes from its rusage
// when it is waited for (wait4).
func RunPipe(cfg Config, started time.Time) (Report, error) {
	exe, err := os.Executable()
	if err != nil {
		return Report{}, fmt.Errorf("finding this program to start the server: %w", err)
	}
	cmd := exec.Command(exe, cfg.Args("server")...)
	cmd.Stderr = os.Stderr // its errors (and its {"served": N}) where ours go
	toServer, err := cmd.StdinPipe()
	if err != nil {
		return Report{}, err
	}
	fromServer, err := cmd.StdoutPipe()
	if err != nil {
		return Report{}, err
	}
	if err := cmd.Start(); err != nil {
		return Report{}, fmt.Errorf("starting the server: %w", err)
	}
	rep, err := RunClient(cfg, started, fromServer, toServer)
	if err != nil {
		// The server may be blocked writing an answer nobody will read: stop it. If it had
		// already ended on an error of its own (which it has written above ours), say so.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if ps := cmd.ProcessState; ps != nil && ps.Exited() && ps.ExitCode() != 0 {
			err = fmt.Errorf("%w (the server exited with status %d)", err, ps.ExitCode())
		}
		return rep, err
	}
	if err := toServer.Close(); err != nil {
		return rep, fmt.Errorf("closing the server's input: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return rep, fmt.Errorf("server: %w", err)
	}
	ps := cmd.ProcessState
	rep.ServerCPUS = (ps.UserTime() + ps.SystemTime()).Seconds()
	return rep, nil
}
