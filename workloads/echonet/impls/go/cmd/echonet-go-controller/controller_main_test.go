package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"

	"msgbench/workloads/echonet/impls/go/echonet"
)

// These tests bind to 127.40.0.40-49: a node at .40, the controller at .41, both on 3610.

const (
	nodeAddr = "127.40.0.40"
	ctlAddr  = "127.40.0.41"
)

// startNode runs a node on nodeAddr:3610 answering through the echonet package's responder,
// after passing each reply through tamper (nil: unchanged).
func startNode(t *testing.T, tamper func([]byte)) {
	t.Helper()
	a := netip.MustParseAddr(nodeAddr)
	tr, err := echonet.Open(echonet.TransportConfig{Bind: a, IfAddr: a, Port: 3610})
	if err != nil {
		t.Fatal(err)
	}
	node, _ := echonet.NewNode(a)
	r := echonet.NewResponder(node)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, echonet.RecvBufferLen)
		var req echonet.Frame
		for {
			n, src, _, err := tr.Receive(buf)
			if err != nil {
				return
			}
			if req.Decode(buf[:n]) != nil {
				continue
			}
			r.Handle(&req, func(b []byte) {
				if tamper != nil {
					tamper(b)
				}
				_ = tr.Send(b, src)
			})
		}
	}()
	t.Cleanup(func() { tr.Close(); wg.Wait() })
}

// runJSON runs the controller from ctlAddr and returns its exit status and its stdout as
// JSON.
func runJSON(t *testing.T, args ...string) (int, map[string]any) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"--bind", ctlAddr, "--timeout-ms", "200", "--retries", "1"}, args...), &out, &errOut)
	if errOut.Len() != 0 {
		t.Errorf("stderr: %q", errOut.String())
	}
	if strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("stdout is not one line: %q", out.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	return code, got
}

func jsonOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func expectJSON(t *testing.T, want string, args ...string) {
	t.Helper()
	code, got := runJSON(t, args...)
	if w := jsonOf(t, want); code != 0 || !reflect.DeepEqual(got, w) {
		t.Fatalf("%q: exit %d\n got  %v\n want %v", args, code, got, w)
	}
}

func TestGet(t *testing.T) {
	startNode(t, nil)
	expectJSON(t, `{"host": "127.40.0.40", "tid": "0001", "seoj": "0ef001", "deoj": "05ff01", "esv": "72",
		"properties": [{"epc": "80", "edt": "30"}, {"epc": "82", "edt": "010e0100"},
		{"epc": "83", "edt": "feffffff0000000000000000007f280028"}],
		"attempts": 1, "ignored": 0}`,
		"get", nodeAddr, "0EF001", "80,82,83")
}

func TestGetRefusalIsAReply(t *testing.T) {
	startNode(t, nil)
	expectJSON(t, `{"host": "127.40.0.40", "tid": "0001", "seoj": "013001", "deoj": "05ff01", "esv": "52",
		"properties": [{"epc": "b3", "edt": "14"}, {"epc": "f0", "edt": ""}], "attempts": 1, "ignored": 0}`,
		"get", nodeAddr, "013000", "B3,f0")
}

func TestSetCSetIAndSetGet(t *testing.T) {
	startNode(t, nil)
	expectJSON(t, `{"host": "127.40.0.40", "tid": "0001", "seoj": "013001", "deoj": "05ff01", "esv": "71",
		"properties": [{"epc": "80", "edt": ""}, {"epc": "b3", "edt": ""}], "attempts": 1, "ignored": 0}`,
		"setc", nodeAddr, "013001", "80=30,b3=19")
	// An accepted SetI has no reply.
	expectJSON(t, `{"host": "127.40.0.40", "tid": "0001", "seoj": null, "deoj": null, "esv": null,
		"properties": [], "attempts": 1, "ignored": 0}`,
		"seti", nodeAddr, "013001", "b0=42")
	expectJSON(t, `{"host": "127.40.0.40", "tid": "0001", "seoj": "013001", "deoj": "05ff01", "esv": "50",
		"properties": [{"epc": "b0", "edt": "99"}], "attempts": 1, "ignored": 0}`,
		"seti", nodeAddr, "013001", "b0=99")
	expectJSON(t, `{"host": "127.40.0.40", "tid": "0001", "seoj": "013001", "deoj": "05ff01", "esv": "7e",
		"set": [{"epc": "81", "edt": ""}], "get": [{"epc": "80", "edt": "30"}, {"epc": "b0", "edt": "42"}, {"epc": "b3", "edt": "19"}],
		"attempts": 1, "ignored": 0}`,
		"setget", nodeAddr, "013001", "81=05", "80,b0,b3")
	expectJSON(t, `{"host": "127.40.0.40", "tid": "0001", "seoj": "013001", "deoj": "05ff01", "esv": "7e",
		"set": [], "get": [{"epc": "81", "edt": "05"}], "attempts": 1, "ignored": 0}`,
		"setget", nodeAddr, "013001", "", "81")
}

func TestInfReq(t *testing.T) {
	startNode(t, nil)
	expectJSON(t, `{"host": "127.40.0.40", "tid": "0001", "seoj": "0ef001", "deoj": "05ff01", "esv": "73",
		"properties": [{"epc": "d5", "edt": "01013001"}], "attempts": 1, "ignored": 0}`,
		"inf-req", nodeAddr, "0ef001", "d5")
}

func TestBench(t *testing.T) {
	startNode(t, nil)
	for _, tc := range []struct {
		mode     string
		requests float64
	}{{"faithful", 240}, {"batched", 20}} {
		code, got := runJSON(t, "bench", nodeAddr, "--mode", tc.mode, "--iterations", "20", "--warmup", "3")
		if code != 0 || got["mode"] != tc.mode || got["iterations"] != 20.0 || got["requests"] != tc.requests ||
			got["retries"] != 0.0 || got["ignored"] != 0.0 {
			t.Errorf("bench %s: exit %d, %v", tc.mode, code, got)
		}
		if e, ok := got["elapsed_s"].(float64); !ok || e <= 0 {
			t.Errorf("elapsed_s %v", got["elapsed_s"])
		}
	}
}

func TestBenchFailsOnAWrongReply(t *testing.T) {
	// A node that answers 0xD7 with the wrong EPC: the reply matches (TID, source, ESV) but
	// is not the property asked.
	startNode(t, func(b []byte) {
		if len(b) > 12 && b[12] == 0xD7 {
			b[12] = 0xD8
		}
	})
	code, got := runJSON(t, "bench", nodeAddr, "--mode", "faithful", "--iterations", "2")
	if msg, _ := got["error"].(string); code != 1 || !strings.Contains(msg, "EPC d8, want d7") {
		t.Fatalf("exit %d, %v", code, got)
	}
}

func TestUnansweredRequestFails(t *testing.T) {
	code, got := runJSON(t, "get", "127.40.0.49", "0ef001", "80")
	if msg, _ := got["error"].(string); code != 1 || !strings.Contains(msg, "after 2 attempt") || len(got) != 1 {
		t.Fatalf("exit %d, %v", code, got)
	}
}

func TestBadCommandLines(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"--port", "0", "get", nodeAddr, "0ef001", "80"},
		{"--timeout-ms", "0", "get", nodeAddr, "0ef001", "80"},
		{"--retries", "-1", "get", nodeAddr, "0ef001", "80"},
		{"--bind", "1.2.3.4.5", "get", nodeAddr, "0ef001", "80"},
		{"--bogus", "get", nodeAddr, "0ef001", "80"},
		{"get", nodeAddr, "0ef001"},
		{"get", nodeAddr, "0ef001", "80", "extra"},
		{"get", "host.example", "0ef001", "80"},
		{"get", "224.0.23.0", "0ef001", "80"},
		{"get", nodeAddr, "0ef01", "80"},
		{"get", nodeAddr, "0ef001x", "80"},
		{"get", nodeAddr, "0ef001", "8"},
		{"get", nodeAddr, "0ef001", "80,"},
		{"get", nodeAddr, "0ef001", ""},
		{"get", nodeAddr, "0ef001", "80", "--expect", "1"},
		{"setc", nodeAddr, "013001", "80"},
		{"setc", nodeAddr, "013001", "80=3"},
		{"setc", nodeAddr, "013001", "80=zz"},
		{"setget", nodeAddr, "013001", "", ""},
		{"discover", "--expect", "0"},
		{"discover", "--wait-ms", "-1"},
		{"discover", "extra"},
		{"bench", nodeAddr, "--iterations", "5"},
		{"bench", nodeAddr, "--mode", "fast", "--iterations", "5"},
		{"bench", nodeAddr, "--mode", "faithful"},
		{"bench", nodeAddr, "--mode", "faithful", "--iterations", "5", "--warmup", "-1"},
		{"bench", "--mode", "faithful", "--iterations", "5"},
	} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		if code != 2 || out.Len() != 0 || errOut.Len() == 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
}

func TestParseArgs(t *testing.T) {
	cmd, err := parseArgs([]string{"get", nodeAddr, "0ef001", "80"})
	if err != nil || cmd.bind.String() != "0.0.0.0" || cmd.port != 3610 || cmd.timeout.Milliseconds() != 500 || cmd.retries != 3 {
		t.Fatalf("defaults: %+v, %v", cmd.settings, err)
	}
	// Global options may follow the command; flags and arguments may mix.
	cmd, err = parseArgs([]string{"bench", "--mode", "batched", nodeAddr, "--iterations", "3", "--bind", ctlAddr, "--port=3611"})
	if err != nil || cmd.bind.String() != ctlAddr || cmd.ifaddr.String() != ctlAddr || cmd.port != 3611 {
		t.Fatalf("%+v, %v", cmd.settings, err)
	}
	for _, args := range [][]string{{"--help"}, {"get", "--help"}, {"bench", "-h"}} {
		if _, err := parseArgs(args); !errors.Is(err, errHelp) {
			t.Errorf("%q: %v", args, err)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"--help"}, &out, &out); code != 0 || !strings.HasPrefix(out.String(), "usage:") {
		t.Errorf("--help: exit %d, %q", code, out.String())
	}
}
