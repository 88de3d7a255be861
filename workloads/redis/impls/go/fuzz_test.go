package main

import (
	"strings"
	"testing"
)

// FuzzRequestReader: no input makes the parser panic, and splitting the input in two
// never changes what it parses.
func FuzzRequestReader(f *testing.F) {
	for _, seed := range []string{
		"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "PING\r\n", `ECHO "a\x41" 'b\'c'` + "\r\n", "*1\r\n+x\r\n",
		"*-1\r\n*0\r\n\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\n", "\"unbalanced\r\n",
	} {
		f.Add(seed, 3)
	}
	f.Fuzz(func(t *testing.T, in string, cut int) {
		whole, wholeErr := parseAll(in, 0)
		if len(in) == 0 {
			return
		}
		cut = 1 + (cut&0xffff)%len(in)
		split, splitErr := parseAll(in, cut)
		if strings.Join(whole, "/") != strings.Join(split, "/") || wholeErr != splitErr {
			t.Fatalf("chunks of %d: %q %q, whole: %q %q", cut, split, splitErr, whole, wholeErr)
		}
	})
}

// FuzzCommands: no request sequence makes a command panic.
func FuzzCommands(f *testing.F) {
	for _, seed := range []string{
		cmd("SET", "k", "v", "EX", "10") + cmd("GETRANGE", "k", "-5", "2") + cmd("SETRANGE", "k", "3", "x"),
		cmd("RPUSH", "l", "a", "b") + cmd("LRANGE", "l", "-9", "9") + cmd("LTRIM", "l", "1", "-1") + cmd("LSET", "l", "-1", "z"),
		cmd("ZADD", "z", "1", "a", "2", "b") + cmd("ZRANGE", "z", "(1", "+inf", "BYSCORE", "LIMIT", "0", "1") + cmd("ZPOPMAX", "z", "3"),
		cmd("HSET", "h", "f", "1") + cmd("HINCRBYFLOAT", "h", "f", "1.5") + cmd("HGETALL", "h"),
		cmd("SADD", "s", "1", "x") + cmd("SPOP", "s", "2") + cmd("SCAN", "0", "MATCH", "*", "COUNT", "2"),
		cmd("MULTI") + cmd("INCR", "n") + cmd("EXEC") + cmd("KEYS", "[a-"),
		cmd("HELLO", "3") + cmd("ZRANGE", "z", "0", "-1", "WITHSCORES") + cmd("INCRBYFLOAT", "f", "0x1p3"),
		"*1\r0\r0", // a bulk header line that is only "\r"
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c := testClient(t)
		c.feed(in)
	})
}
