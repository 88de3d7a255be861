// Command echonet-go-controller is the Go controller of the msgbench echonet workload: it
// sends ECHONET Lite requests from UDP port 3610 of its own address and prints the replies as
// JSON (workloads/echonet/SPEC.md §8).
//
// Usage: echonet-go-controller [--bind IPV4] [--ifaddr IPV4] [--port N] [--timeout-ms MS]
// [--retries N] COMMAND ARGS...
//
// Exit 0 with the command's JSON on stdout; exit 1 with {"error": ...} on stdout when a
// request went unanswered or a reply was wrong; exit 2 with a message on stderr for a bad
// command line.
package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"msgbench/workloads/echonet/impls/go/echonet"
)

const name = "echonet-go-controller"

const usage = `usage: echonet-go-controller [OPTIONS] COMMAND ARGS...

An ECHONET Lite controller on UDP: requests go from port --port of --bind to port --port of
the node, replies are printed as one JSON object.

Options:
  --bind IPV4        address to send from and listen on (default 0.0.0.0)
  --ifaddr IPV4      interface for multicast (default: the --bind address)
  --port N           the controller's and the nodes' UDP port (default 3610)
  --timeout-ms MS    how long one attempt waits for its reply (default 500)
  --retries N        attempts after the first, same datagram and TID (default 3)
  --help             this text

Commands (EOJ: six hex digits; EPCS: 80,82; SETS: 80=30,b3=19):
  get HOST EOJ EPCS               one Get
  setc HOST EOJ SETS              one SetC
  seti HOST EOJ SETS              one SetI, sent once; waits one timeout for a SetI_SNA
  setget HOST EOJ SETS EPCS       one SetGet
  inf-req HOST EOJ EPCS           one INF_REQ
  discover [--expect N] [--wait-ms MS]
                                  multicast Get of 0xD6 to 0x0EF001, list who answered
  bench HOST --mode faithful|batched --iterations N [--warmup N]
                                  the seed's loop: 12 one-property Gets per iteration
                                  (faithful) or one 12-property Get (batched)
`

// The node profile properties the seed's benchmark reads, in its order (SPEC §8).
var benchEPCs = []byte{0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7}

// usageError is a bad command line: exit 2 with the message on stderr.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

var errHelp = errors.New("help requested")

// options are the global options; they may also be written after the command.
type options struct {
	bind, ifaddr string
	port         int
	timeoutMS    int
	retries      int
}

func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.bind, "bind", o.bind, "")
	fs.StringVar(&o.ifaddr, "ifaddr", o.ifaddr, "")
	fs.IntVar(&o.port, "port", o.port, "")
	fs.IntVar(&o.timeoutMS, "timeout-ms", o.timeoutMS, "")
	fs.IntVar(&o.retries, "retries", o.retries, "")
}

// settings are the checked global options.
type settings struct {
	bind, ifaddr netip.Addr
	port         uint16
	timeout      time.Duration
	retries      int
}

func (o *options) check() (settings, error) {
	var s settings
	var err error
	if s.bind, err = parseIPv4("--bind", o.bind); err != nil {
		return s, err
	}
	s.ifaddr = s.bind
	if o.ifaddr != "" {
		if s.ifaddr, err = parseIPv4("--ifaddr", o.ifaddr); err != nil {
			return s, err
		}
	}
	switch {
	case o.port < 1 || o.port > 65535:
		return s, usageErrorf("--port %d is outside 1-65535", o.port)
	case o.timeoutMS < 1:
		return s, usageErrorf("--timeout-ms must be at least 1")
	case o.retries < 0:
		return s, usageErrorf("--retries must be at least 0")
	}
	s.port, s.timeout, s.retries = uint16(o.port), time.Duration(o.timeoutMS)*time.Millisecond, o.retries
	return s, nil
}

// command is a parsed command line: the global settings and what to do with a client.
type command struct {
	settings
	run func(c *echonet.Client) (any, error)
}

func newFlagSet(opts *options) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // main writes one line on stderr
	opts.register(fs)
	fs.Bool("help", false, "")
	return fs
}

// parseFlags parses fs over args, flags and positional arguments in any order, and returns
// the positional ones.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, &usageError{msg: err.Error()}
		}
		if h := fs.Lookup("help"); h != nil && h.Value.String() == "true" {
			return nil, errHelp
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

func parseArgs(args []string) (command, error) {
	opts := options{bind: "0.0.0.0", port: echonet.DefaultPort, timeoutMS: 500, retries: 3}
	global := newFlagSet(&opts)
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return command{}, errHelp
		}
		return command{}, &usageError{msg: err.Error()}
	}
	if global.Lookup("help").Value.String() == "true" {
		return command{}, errHelp
	}
	if global.NArg() == 0 {
		return command{}, usageErrorf("no command given")
	}
	verb := global.Arg(0)
	fs := newFlagSet(&opts)
	var run func([]string) (func(*echonet.Client) (any, error), error)
	switch verb {
	case "get", "inf-req":
		esv := echonet.Get
		if verb == "inf-req" {
			esv = echonet.InfReq
		}
		run = func(a []string) (func(*echonet.Client) (any, error), error) { return parseRead(esv, a) }
	case "setc", "seti":
		esv := echonet.SetC
		if verb == "seti" {
			esv = echonet.SetI
		}
		run = func(a []string) (func(*echonet.Client) (any, error), error) { return parseWrite(esv, a) }
	case "setget":
		run = parseSetGet
	case "discover":
		expect := fs.Int("expect", 0, "")
		waitMS := fs.Int("wait-ms", 1000, "")
		run = func(a []string) (func(*echonet.Client) (any, error), error) {
			return parseDiscover(fs, *expect, *waitMS, a)
		}
	case "bench":
		mode := fs.String("mode", "", "")
		iterations := fs.Int("iterations", 0, "")
		warmup := fs.Int("warmup", 0, "")
		run = func(a []string) (func(*echonet.Client) (any, error), error) {
			return parseBench(*mode, *iterations, *warmup, a)
		}
	default:
		return command{}, usageErrorf("unknown command %q", verb)
	}
	positional, err := parseFlags(fs, global.Args()[1:])
	if err != nil {
		return command{}, err
	}
	cmd := command{}
	if cmd.settings, err = opts.check(); err != nil {
		return command{}, err
	}
	if cmd.run, err = run(positional); err != nil {
		return command{}, err
	}
	return cmd, nil
}

func wantArgs(verb string, args []string, names ...string) error {
	if len(args) != len(names) {
		return usageErrorf("%s needs %s (got %d argument(s))", verb, strings.Join(names, " "), len(args))
	}
	return nil
}

// parseRead: get / inf-req HOST EOJ EPCS.
func parseRead(esv echonet.ESV, args []string) (func(*echonet.Client) (any, error), error) {
	if err := wantArgs(verbOf(esv), args, "HOST", "EOJ", "EPCS"); err != nil {
		return nil, err
	}
	host, deoj, err := parseTarget(args[0], args[1])
	if err != nil {
		return nil, err
	}
	props, err := parseEPCs(args[2], false)
	if err != nil {
		return nil, err
	}
	req := echonet.Frame{SEOJ: echonet.Controller, DEOJ: deoj, ESV: esv, Props: props}
	return func(c *echonet.Client) (any, error) { return exchange(c, host, &req) }, nil
}

// parseWrite: setc / seti HOST EOJ SETS.
func parseWrite(esv echonet.ESV, args []string) (func(*echonet.Client) (any, error), error) {
	if err := wantArgs(verbOf(esv), args, "HOST", "EOJ", "SETS"); err != nil {
		return nil, err
	}
	host, deoj, err := parseTarget(args[0], args[1])
	if err != nil {
		return nil, err
	}
	props, err := parseSets(args[2], false)
	if err != nil {
		return nil, err
	}
	req := echonet.Frame{SEOJ: echonet.Controller, DEOJ: deoj, ESV: esv, Props: props}
	if esv == echonet.SetI {
		return func(c *echonet.Client) (any, error) { return setI(c, host, &req) }, nil
	}
	return func(c *echonet.Client) (any, error) { return exchange(c, host, &req) }, nil
}

// parseSetGet: setget HOST EOJ SETS EPCS. Either list may be empty (""), not both.
func parseSetGet(args []string) (func(*echonet.Client) (any, error), error) {
	if err := wantArgs("setget", args, "HOST", "EOJ", "SETS", "EPCS"); err != nil {
		return nil, err
	}
	host, deoj, err := parseTarget(args[0], args[1])
	if err != nil {
		return nil, err
	}
	sets, err := parseSets(args[2], true)
	if err != nil {
		return nil, err
	}
	gets, err := parseEPCs(args[3], true)
	if err != nil {
		return nil, err
	}
	if len(sets)+len(gets) == 0 {
		return nil, usageErrorf("setget needs at least one property")
	}
	req := echonet.Frame{SEOJ: echonet.Controller, DEOJ: deoj, ESV: echonet.SetGet, Props: sets, GetProps: gets}
	return func(c *echonet.Client) (any, error) { return exchange(c, host, &req) }, nil
}

func parseDiscover(fs *flag.FlagSet, expect, waitMS int, args []string) (func(*echonet.Client) (any, error), error) {
	if len(args) != 0 {
		return nil, usageErrorf("discover takes no argument (got %q)", args[0])
	}
	expectGiven := false
	fs.Visit(func(f *flag.Flag) { expectGiven = expectGiven || f.Name == "expect" })
	if expectGiven && expect < 1 {
		return nil, usageErrorf("--expect must be at least 1")
	}
	if waitMS < 0 {
		return nil, usageErrorf("--wait-ms must be at least 0")
	}
	wait := time.Duration(waitMS) * time.Millisecond
	return func(c *echonet.Client) (any, error) { return discover(c, expect, wait) }, nil
}

func parseBench(mode string, iterations, warmup int, args []string) (func(*echonet.Client) (any, error), error) {
	if err := wantArgs("bench", args, "HOST"); err != nil {
		return nil, err
	}
	host, err := parseHost(args[0])
	if err != nil {
		return nil, err
	}
	switch {
	case mode != "faithful" && mode != "batched":
		return nil, usageErrorf("bench needs --mode faithful or --mode batched (got %q)", mode)
	case iterations < 1:
		return nil, usageErrorf("bench needs --iterations N (at least 1)")
	case warmup < 0:
		return nil, usageErrorf("--warmup must be at least 0")
	}
	return func(c *echonet.Client) (any, error) { return bench(c, host, mode, iterations, warmup) }, nil
}

func verbOf(esv echonet.ESV) string {
	switch esv {
	case echonet.InfReq:
		return "inf-req"
	case echonet.SetI:
		return "seti"
	case echonet.SetC:
		return "setc"
	}
	return "get"
}

// parseIPv4 accepts a dotted-quad IPv4 address that a socket can be bound to (unicast or
// 0.0.0.0).
func parseIPv4(option, s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return netip.Addr{}, usageErrorf("%s %q is not an IPv4 address", option, s)
	}
	if a.IsMulticast() {
		return netip.Addr{}, usageErrorf("%s %v is a multicast address", option, a)
	}
	return a, nil
}

// parseHost accepts a node's address: a unicast IPv4 address (a reply's source is a node's
// own address, so a request to a group could never be matched; discover is for that).
func parseHost(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() || a.IsUnspecified() || a.IsMulticast() {
		return netip.Addr{}, usageErrorf("HOST %q is not a unicast IPv4 address", s)
	}
	return a, nil
}

func parseTarget(host, eoj string) (netip.Addr, echonet.EOJ, error) {
	a, err := parseHost(host)
	if err != nil {
		return a, 0, err
	}
	b, err := hex.DecodeString(eoj)
	if err != nil || len(b) != 3 {
		return a, 0, usageErrorf("EOJ %q is not six hex digits", eoj)
	}
	return a, echonet.EOJ(b[0])<<16 | echonet.EOJ(b[1])<<8 | echonet.EOJ(b[2]), nil
}

// parseEPC reads one two-digit hex EPC.
func parseEPC(s string) (byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 1 {
		return 0, usageErrorf("EPC %q is not two hex digits", s)
	}
	return b[0], nil
}

// parseEPCs reads EPCS ("80,82"): the properties of a read, with empty EDTs. An empty string
// is an empty list where allowed (a SetGet without a get part).
func parseEPCs(s string, emptyOK bool) ([]echonet.Property, error) {
	if s == "" && emptyOK {
		return nil, nil
	}
	fields := strings.Split(s, ",")
	if len(fields) > 255 {
		return nil, usageErrorf("%d EPCs in one request (at most 255)", len(fields))
	}
	props := make([]echonet.Property, 0, len(fields))
	for _, f := range fields {
		epc, err := parseEPC(f)
		if err != nil {
			return nil, err
		}
		props = append(props, echonet.Property{EPC: epc})
	}
	return props, nil
}

// parseSets reads SETS ("80=30,b3=19"): EPCs with the EDTs to write (HEXDATA may be empty,
// PDC 0).
func parseSets(s string, emptyOK bool) ([]echonet.Property, error) {
	if s == "" && emptyOK {
		return nil, nil
	}
	fields := strings.Split(s, ",")
	if len(fields) > 255 {
		return nil, usageErrorf("%d properties in one request (at most 255)", len(fields))
	}
	props := make([]echonet.Property, 0, len(fields))
	for _, f := range fields {
		epcHex, dataHex, ok := strings.Cut(f, "=")
		if !ok {
			return nil, usageErrorf("%q is not EPC=HEXDATA", f)
		}
		epc, err := parseEPC(epcHex)
		if err != nil {
			return nil, err
		}
		edt, err := hex.DecodeString(dataHex)
		if err != nil {
			return nil, usageErrorf("EPC %s: %q is not hex data", epcHex, dataHex)
		}
		if len(edt) > 255 {
			return nil, usageErrorf("EPC %s: %d bytes of data (at most 255)", epcHex, len(edt))
		}
		props = append(props, echonet.Property{EPC: epc, EDT: edt})
	}
	return props, nil
}

// JSON output (SPEC §8). Hex is written in lower case.

type propertyJSON struct {
	EPC string `json:"epc"`
	EDT string `json:"edt"`
}

type replyJSON struct {
	Host       string          `json:"host"`
	TID        string          `json:"tid"`
	SEOJ       *string         `json:"seoj"`
	DEOJ       *string         `json:"deoj"`
	ESV        *string         `json:"esv"`
	Properties *[]propertyJSON `json:"properties,omitempty"`
	Set        *[]propertyJSON `json:"set,omitempty"`
	Get        *[]propertyJSON `json:"get,omitempty"`
	Attempts   int             `json:"attempts"`
	Ignored    int             `json:"ignored"`
}

type nodeJSON struct {
	Host      string   `json:"host"`
	EOJ       string   `json:"eoj"`
	Instances []string `json:"instances"`
}

type discoveryJSON struct {
	Nodes    []nodeJSON `json:"nodes"`
	ElapsedS float64    `json:"elapsed_s"`
	Attempts int        `json:"attempts"`
	Ignored  int        `json:"ignored"`
}

type benchJSON struct {
	Mode       string  `json:"mode"`
	Iterations int     `json:"iterations"`
	Requests   int     `json:"requests"`
	ElapsedS   float64 `json:"elapsed_s"`
	Retries    int     `json:"retries"`
	Ignored    int     `json:"ignored"`
}

func propertiesJSON(props []echonet.Property) *[]propertyJSON {
	out := make([]propertyJSON, 0, len(props))
	for _, p := range props {
		out = append(out, propertyJSON{EPC: fmt.Sprintf("%02x", p.EPC), EDT: hex.EncodeToString(p.EDT)})
	}
	return &out
}

func ptr(s string) *string { return &s }

func replyToJSON(host netip.Addr, reply *echonet.Frame, attempts, ignored int) replyJSON {
	r := replyJSON{
		Host:     host.String(),
		TID:      fmt.Sprintf("%04x", reply.TID),
		SEOJ:     ptr(reply.SEOJ.String()),
		DEOJ:     ptr(reply.DEOJ.String()),
		ESV:      ptr(fmt.Sprintf("%02x", byte(reply.ESV))),
		Attempts: attempts,
		Ignored:  ignored,
	}
	if reply.ESV.HasSetGetLayout() {
		r.Set, r.Get = propertiesJSON(reply.Props), propertiesJSON(reply.GetProps)
	} else {
		r.Properties = propertiesJSON(reply.Props)
	}
	return r
}

// exchange sends one request with retries and prints its reply, refusals included.
func exchange(c *echonet.Client, host netip.Addr, req *echonet.Frame) (any, error) {
	reply, attempts, err := c.Request(host, req)
	if err != nil {
		return nil, err
	}
	return replyToJSON(host, reply, attempts, c.Ignored), nil
}

// setI sends a SetI once: success has no reply, so after one timeout without a SetI_SNA the
// reply's fields are null.
func setI(c *echonet.Client, host netip.Addr, req *echonet.Frame) (any, error) {
	reply, err := c.RequestOnce(host, req)
	if err != nil {
		return nil, err
	}
	if reply != nil {
		return replyToJSON(host, reply, 1, c.Ignored), nil
	}
	return replyJSON{
		Host:       host.String(),
		TID:        fmt.Sprintf("%04x", req.TID),
		Properties: &[]propertyJSON{},
		Attempts:   1,
		Ignored:    c.Ignored,
	}, nil
}

func discover(c *echonet.Client, expect int, wait time.Duration) (any, error) {
	d, err := c.Discover(expect, wait)
	if err != nil {
		return nil, err
	}
	out := discoveryJSON{Nodes: []nodeJSON{}, ElapsedS: d.Elapsed.Seconds(), Attempts: d.Attempts, Ignored: c.Ignored}
	for _, n := range d.Nodes {
		instances := make([]string, 0, len(n.Instances))
		for _, eoj := range n.Instances {
			instances = append(instances, eoj.String())
		}
		out.Nodes = append(out.Nodes, nodeJSON{Host: n.Addr.String(), EOJ: n.EOJ.String(), Instances: instances})
	}
	return out, nil
}

// bench runs the seed's loop (SPEC §8): per iteration 12 one-property Gets of the node
// profile, each awaited (faithful), or one Get of all 12 (batched). Every reply is checked:
// Get_Res with the EPCs asked, in order. The requests are built once; a request and its reply
// allocate nothing in the loop. Retries and ignored datagrams count for the measured
// iterations only, like requests and elapsed_s.
func bench(c *echonet.Client, host netip.Addr, mode string, iterations, warmup int) (any, error) {
	var reqs []echonet.Frame
	newGet := func(props []echonet.Property) echonet.Frame {
		return echonet.Frame{SEOJ: echonet.Controller, DEOJ: echonet.NodeProfile, ESV: echonet.Get, Props: props}
	}
	all := make([]echonet.Property, len(benchEPCs))
	for i, epc := range benchEPCs {
		all[i] = echonet.Property{EPC: epc}
	}
	if mode == "faithful" {
		for i := range all {
			reqs = append(reqs, newGet(all[i:i+1]))
		}
	} else {
		reqs = append(reqs, newGet(all))
	}

	iterate := func(n int) error {
		for range n {
			for i := range reqs {
				reply, _, err := c.Request(host, &reqs[i])
				if err != nil {
					return err
				}
				if err := checkBenchReply(&reqs[i], reply); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := iterate(warmup); err != nil {
		return nil, err
	}
	c.Resent, c.Ignored = 0, 0
	start := time.Now()
	if err := iterate(iterations); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	return benchJSON{
		Mode: mode, Iterations: iterations, Requests: iterations * len(reqs),
		ElapsedS: elapsed.Seconds(), Retries: c.Resent, Ignored: c.Ignored,
	}, nil
}

func checkBenchReply(req, reply *echonet.Frame) error {
	if reply.ESV != echonet.GetRes {
		return fmt.Errorf("wrong reply from the node: ESV %02x, want 72 (TID %04x)", byte(reply.ESV), req.TID)
	}
	if len(reply.Props) != len(req.Props) {
		return fmt.Errorf("wrong reply from the node: %d properties, want %d (TID %04x)", len(reply.Props), len(req.Props), req.TID)
	}
	for i, p := range reply.Props {
		if p.EPC != req.Props[i].EPC {
			return fmt.Errorf("wrong reply from the node: property %d is EPC %02x, want %02x (TID %04x)", i, p.EPC, req.Props[i].EPC, req.TID)
		}
	}
	return nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd, err := parseArgs(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (try --help)\n", name, err)
		return 2
	}
	fail := func(err error) int {
		line, _ := json.Marshal(map[string]string{"error": err.Error()})
		fmt.Fprintf(stdout, "%s\n", line)
		return 1
	}
	t, err := echonet.Open(echonet.TransportConfig{Bind: cmd.bind, IfAddr: cmd.ifaddr, Port: cmd.port})
	if err != nil {
		return fail(err)
	}
	defer t.Close()
	out, err := cmd.run(echonet.NewClient(t, cmd.port, cmd.timeout, cmd.retries))
	if err != nil {
		return fail(err)
	}
	line, err := json.Marshal(out)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "%s\n", line)
	return 0
}
