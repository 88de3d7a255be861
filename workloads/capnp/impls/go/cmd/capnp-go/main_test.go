package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// asProgram makes this test binary behave as capnp-go when it is started by a test (the pipe
// mode starts os.Executable() as its server).
const asProgram = "CAPNP_GO_TEST_AS_PROGRAM"

func TestMain(m *testing.M) {
	switch os.Getenv(asProgram) {
	case "1":
		main()
	case "fail": // a server that fails at once
		fmt.Fprintln(os.Stderr, "capnp-go: server: failing as asked")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func runArgs(args []string, stdin []byte) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, time.Now(), bytes.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBadCommandLines(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"carsales", "bytes", "reuse", "none"},
		{"carsales", "bytes", "reuse", "none", "10", "extra"},
		{"cats", "bytes", "reuse", "none", "10"},
		{"carsales", "mmap", "reuse", "none", "10"},
		{"carsales", "bytes", "sometimes", "none", "10"},
		{"carsales", "bytes", "reuse", "snappy", "10"},
		{"carsales", "object", "reuse", "packed", "10"},
		{"carsales", "bytes", "reuse", "none", "0"},
		{"carsales", "bytes", "reuse", "none", "-5"},
		{"carsales", "bytes", "reuse", "none", "+5"},
		{"carsales", "bytes", "reuse", "none", " 5"},
		{"carsales", "bytes", "reuse", "none", "0x10"},
		{"carsales", "bytes", "reuse", "none", "ten"},
		{"carsales", "bytes", "reuse", "none", "1000000001"},
		{"carsales", "bytes", "reuse", "none", "99999999999999999999"},
	} {
		code, out, errOut := runArgs(args, nil)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage: capnp-go") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

func parseReport(t *testing.T, line string) map[string]any {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("report %q: %v", line, err)
	}
	return r
}

func TestObjectAndBytesReports(t *testing.T) {
	for _, args := range [][]string{
		{"carsales", "object", "reuse", "none", "40"},
		{"catrank", "bytes", "no-reuse", "packed", "20"},
		{"eval", "bytes", "no-reuse", "none", "100"},
	} {
		code, out, errOut := runArgs(args, nil)
		if code != 0 || errOut != "" || strings.Count(out, "\n") != 1 {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		r := parseReport(t, out)
		if r["program"] != "capnp-go" || r["case"] != args[0] || r["mode"] != args[1] ||
			r["reuse"] != args[2] || r["compression"] != args[3] || r["warmup"] == nil ||
			r["checked"] == nil || r["setup_s"] == nil || r["cpu_s"] == nil {
			t.Errorf("%q: %v", args, r)
		}
		if _, ok := r["server_cpu_s"]; ok {
			t.Errorf("%q: server_cpu_s outside pipe mode", args)
		}
		if !strings.HasPrefix(r["library"].(string), "capnproto.org/go/capnp/v3") {
			t.Errorf("library %v", r["library"])
		}
	}
}

func TestPipeMode(t *testing.T) {
	t.Setenv(asProgram, "1") // for the server this test binary starts
	for _, compression := range []string{"none", "packed"} {
		args := []string{"eval", "pipe", "no-reuse", compression, "200"}
		code, out, errOut := runArgs(args, nil)
		if code != 0 {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errOut)
		}
		r := parseReport(t, out)
		if r["checked"] != 210.0 || r["request_bytes"].(float64) <= 0 || r["server_cpu_s"] == nil {
			t.Errorf("%q: %v", args, r)
		}
	}
}

// A server that fails makes the pipe mode fail, saying so on its last line.
func TestPipeModeWithAFailingServer(t *testing.T) {
	t.Setenv(asProgram, "fail")
	code, out, errOut := runArgs([]string{"carsales", "pipe", "no-reuse", "none", "10"}, nil)
	if code != 1 || out != "" || !strings.Contains(errOut, "the server exited with status 1") ||
		strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// The client's report is the last line of stderr; the server says what it served there.
func TestClientAndServer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := exec.Command(exe, "catrank", "server", "no-reuse", "packed", "20")
	server.Env = append(os.Environ(), asProgram+"=1")
	var serverErr bytes.Buffer
	server.Stderr = &serverErr
	toServer, _ := server.StdinPipe()
	fromServer, _ := server.StdoutPipe()
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	var clientOut bytes.Buffer
	var clientErr bytes.Buffer
	code := run([]string{"catrank", "client", "no-reuse", "packed", "20"}, time.Now(), fromServer,
		io.MultiWriter(toServer, &clientOut), &clientErr)
	_ = toServer.Close()
	if err := server.Wait(); err != nil || code != 0 {
		t.Fatalf("client exit %d (%q), server %v (%q)", code, clientErr.String(), err, serverErr.String())
	}
	lines := strings.Split(strings.TrimSpace(clientErr.String()), "\n")
	r := parseReport(t, lines[len(lines)-1])
	if r["checked"] != 21.0 || r["mode"] != "client" {
		t.Errorf("client report %v", r)
	}
	if strings.TrimSpace(serverErr.String()) != `{"served": 21}` {
		t.Errorf("server stderr %q", serverErr.String())
	}
}

func TestServerErrorsAreOneLine(t *testing.T) {
	for name, input := range map[string][]byte{
		"truncated":       {0, 0, 0, 0, 4, 0, 0, 0, 1, 2},
		"beyond the cap":  {0, 0, 0, 0, 0, 0, 0, 0x40, 1, 2, 3, 4, 5, 6, 7, 8},
		"2^32 segments":   {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0},
		"null root, fine": nil,
	} {
		code, out, errOut := runArgs([]string{"carsales", "server", "no-reuse", "none", "1"}, input)
		if input == nil {
			if code != 0 || out != "" || errOut != "{\"served\": 0}\n" {
				t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errOut)
			}
			continue
		}
		if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "capnp-go: server: request 1: ") {
			t.Errorf("%s: exit %d, stderr %q", name, code, errOut)
		}
	}
}
