package main

import "testing"

func TestParseArgsDefaults(t *testing.T) {
	cfg, err := parseArgs([]string{"--port", "7600"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg != (config{host: "127.0.0.1", port: 7600, pool: 8, maxBody: 64 << 20}) {
		t.Fatalf("%+v", cfg)
	}
}

func TestParseArgsAllOptions(t *testing.T) {
	cfg, err := parseArgs([]string{"--port=1", "--host", "127.0.0.2", "--pool", "2",
		"--max-body", "0"})
	if err != nil || cfg != (config{host: "127.0.0.2", port: 1, pool: 2, maxBody: 0}) {
		t.Fatalf("%+v, %v", cfg, err)
	}
}

func TestParseArgsRejects(t *testing.T) {
	for _, args := range [][]string{
		{}, {"--port"}, {"--port", "0"}, {"--port", "65536"}, {"--port", "x"},
		{"--port", "1", "--pool", "0"}, {"--port", "1", "--max-body", "-1"},
		{"--port", "1", "--max-body", "4294967296"}, {"--port", "1", "extra"},
		{"--port", "1", "--bogus"}, {"--port", "1", "--host"}, {"--port", "1", "--host", ""},
		{"--port", "1", "--host", "nope"}, {"--port", "1", "--host", "300.1.1.1"},
		{"--port", "1", "--host", "::1"}, {"--port", "1", "--host", "::ffff:127.0.0.1"},
	} {
		if _, err := parseArgs(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
