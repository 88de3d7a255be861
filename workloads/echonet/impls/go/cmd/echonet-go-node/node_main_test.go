package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"msgbench/workloads/echonet/impls/go/echonet"
)

// These tests bind to 127.40.0.30-39.

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs(nil)
	if err != nil || cfg.bind.String() != "0.0.0.0" || cfg.ifaddr.String() != "0.0.0.0" || cfg.port != 3610 {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
	cfg, err = parseArgs([]string{"--bind", "127.40.0.30"})
	if err != nil || cfg.ifaddr.String() != "127.40.0.30" {
		t.Fatalf("--ifaddr defaults to --bind: %+v, %v", cfg, err)
	}
	cfg, err = parseArgs([]string{"--bind=0.0.0.0", "--ifaddr", "10.201.0.2", "--port", "3611"})
	if err != nil || cfg.bind.String() != "0.0.0.0" || cfg.ifaddr.String() != "10.201.0.2" || cfg.port != 3611 {
		t.Fatalf("%+v, %v", cfg, err)
	}
	for _, bad := range [][]string{
		{"--bogus"}, {"--bind", "1.2.3"}, {"--bind", "::1"}, {"--bind", "localhost"},
		{"--ifaddr", "224.0.23.0"}, {"--port", "0"}, {"--port", "65536"}, {"--port", "x"},
		{"--port"}, {"extra"},
	} {
		if _, err := parseArgs(bad); err == nil || err == errHelp {
			t.Errorf("%q accepted (%v)", bad, err)
		}
	}
	for _, help := range [][]string{{"--help"}, {"-h"}, {"--bind", "127.0.0.1", "--help"}} {
		if _, err := parseArgs(help); err != errHelp {
			t.Errorf("%q: %v", help, err)
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "usage:") || errOut.Len() != 0 {
		t.Errorf("--help: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := run([]string{"--port", "70000"}, &out, &errOut); code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "--port") {
		t.Errorf("bad port: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}

	// Address in use: exit 1 with a message.
	a := netip.MustParseAddr("127.40.0.33")
	tr, err := echonet.Open(echonet.TransportConfig{Bind: a, IfAddr: a, Port: 3610})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	errOut.Reset()
	if code := run([]string{"--bind", "127.40.0.33"}, io.Discard, &errOut); code != 1 || !strings.Contains(errOut.String(), "address already in use") {
		t.Errorf("address in use: exit %d, stderr %q", code, errOut.String())
	}
}

func send(t *testing.T, from *echonet.Transport, to netip.AddrPort, hexBytes string) {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(hexBytes, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := from.Send(b, to); err != nil {
		t.Fatal(err)
	}
}

func receive(t *testing.T, tr *echonet.Transport) string {
	t.Helper()
	buf := make([]byte, echonet.RecvBufferLen)
	_ = tr.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, _, _, err := tr.Receive(buf)
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	return strings.ToUpper(hex.EncodeToString(buf[:n]))
}

func TestServeCountsEveryDatagram(t *testing.T) {
	a := netip.MustParseAddr("127.40.0.30")
	nodeT, err := echonet.Open(echonet.TransportConfig{Bind: a, IfAddr: a})
	if err != nil {
		t.Fatal(err)
	}
	node, _ := echonet.NewNode(a)
	var c counters
	done := make(chan struct{})
	go func() {
		serve(nodeT, echonet.NewResponder(node), &c, io.Discard)
		close(done)
	}()
	b := netip.MustParseAddr("127.40.0.31")
	client, err := echonet.Open(echonet.TransportConfig{Bind: b, IfAddr: b})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	to := nodeT.LocalAddr()

	send(t, client, to, "10 81 00 01 05 FF 01 01 30 01 60 01 80 01 30") // SetI accepted: no reply
	send(t, client, to, "10 81 00 02 05 FF 01 01 30 01 62 01 80 00 FF") // malformed (trailing)
	send(t, client, to, "")                                             // malformed (empty)
	send(t, client, to, "10 82 00 03 00 00 00 00 00 00 00 00")          // format 2
	send(t, client, to, "10 81 00 04 05 FF 01 01 30 02 62 01 80 00")    // another instance
	send(t, client, to, "10 81 00 05 05 FF 01 0E F0 01 72 01 80 01 30") // a reply
	send(t, client, to, "10 81 00 06 05 FF 01 01 30 01 62 01 80 00")
	// In order on one socket: the Get's reply shows every datagram before it was handled.
	if got, want := receive(t, client), "1081000601300105FF0172018001"+"30"; got != want {
		t.Fatalf("reply %s, want %s", got, want)
	}
	nodeT.Close()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("serve did not end when its transport closed")
	}
	want := counters{Received: 7, Requests: 2, Replies: 1, Ignored: 2, DroppedMalformed: 2, DroppedFormat2: 1}
	if c != want {
		t.Fatalf("counters %+v, want %+v", c, want)
	}
}

// TestRunUntilSIGTERM runs the whole program: READY, a request answered, SIGTERM, the JSON
// counters, exit 0.
func TestRunUntilSIGTERM(t *testing.T) {
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"--bind", "127.40.0.34"}, pw, io.Discard)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() || lines.Text() != "READY" {
		t.Fatalf("first line %q, want READY", lines.Text())
	}
	b := netip.MustParseAddr("127.40.0.35")
	client, err := echonet.Open(echonet.TransportConfig{Bind: b, IfAddr: b})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	send(t, client, netip.MustParseAddrPort("127.40.0.34:3610"), "10 81 00 02 05 FF 01 0E F0 01 62 01 83 00")
	// 0x83 carries the node's own address (--ifaddr defaults to --bind).
	if got, want := receive(t, client), "108100020EF00105FF0172018311FEFFFFFF000000000000000000"+"7F280022"; got != want {
		t.Fatalf("reply %s, want %s", got, want)
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() {
		t.Fatal("no JSON line after SIGTERM")
	}
	var got map[string]any
	if err := json.Unmarshal(lines.Bytes(), &got); err != nil {
		t.Fatalf("%q: %v", lines.Text(), err)
	}
	for _, k := range []string{"received", "requests", "replies", "ignored", "dropped_malformed", "dropped_format2", "send_errors"} {
		if _, ok := got[k]; !ok {
			t.Errorf("counter %s missing from %s", k, lines.Text())
		}
	}
	if got["requests"] != 1.0 || got["replies"] != 1.0 {
		t.Errorf("counters %s", lines.Text())
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit %d", c)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("run did not return after SIGTERM")
	}
}
