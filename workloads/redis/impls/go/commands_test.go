package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testClient is a client without a connection: requests go through the parser and the
// dispatcher, replies accumulate in out.
func testClient(t testing.TB) *client {
	t.Helper()
	srv := newServer(0)
	return &client{srv: srv, db: &srv.ks.dbs[0], resp: 2, in: newRequestReader(), id: 1}
}

// run feeds raw request bytes and returns the replies they produce.
func (c *client) run(raw string) string {
	c.feed(raw)
	out := string(c.out)
	c.out = c.out[:0]
	return out
}

// feed executes raw request bytes, leaving the replies in c.out.
func (c *client) feed(raw string) {
	buf := c.in.readSpace()
	for len(raw) > len(buf) { // grow as the connection loop would
		n := copy(buf, raw)
		c.in.filled(n)
		raw = raw[n:]
		buf = c.in.readSpace()
	}
	c.in.filled(copy(buf, raw))
	for c.processInput() {
	}
}

// cmd encodes a request as a multibulk.
func cmd(args ...string) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return b.String()
}

func TestCommandReplies(t *testing.T) {
	c := testClient(t)
	for _, tc := range []struct{ req, want string }{
		{cmd("SET", "k", "v"), "+OK\r\n"},
		{cmd("GET", "k"), "$1\r\nv\r\n"},
		{cmd("get", "nokey"), "$-1\r\n"},
		{cmd("GET"), "-ERR wrong number of arguments for 'get' command\r\n"},
		{cmd("FOO", "a", "b"), "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"},
		{cmd("INCR", "k"), "-ERR value is not an integer or out of range\r\n"},
		{cmd("SET", "n", "9223372036854775807"), "+OK\r\n"},
		{cmd("INCR", "n"), "-ERR increment or decrement would overflow\r\n"},
		{cmd("LPUSH", "k", "x"), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{cmd("ZADD", "z", "nan", "e"), "-ERR value is not a valid float\r\n"},
		{cmd("ZADD", "z", "0.1", "a"), ":1\r\n"},
		{cmd("ZPOPMIN", "z"), "*2\r\n$1\r\na\r\n$19\r\n0.10000000000000001\r\n"},
		{cmd("EXISTS", "z"), ":0\r\n"},
		{cmd("RPUSH", "l", "a", "b", "c"), ":3\r\n"},
		{cmd("LRANGE", "l", "-2", "100"), "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{cmd("SET", "f", "10.5"), "+OK\r\n"},
		{cmd("INCRBYFLOAT", "f", "0.1"), "$4\r\n10.6\r\n"},
		{cmd("SADD", "s", "3", "1", "2"), ":3\r\n"},
		{cmd("SMEMBERS", "s"), "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"},
		{cmd("HSET", "h", "b", "1", "a", "2"), ":2\r\n"},
		{cmd("HGETALL", "h"), "*4\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n2\r\n"},
		{cmd("CONFIG", "GET", "save"), "*2\r\n$4\r\nsave\r\n$0\r\n\r\n"},
		{cmd("CONFIG", "GET", "appendonly"), "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"},
		{cmd("CONFIG", "FOO"), "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"},
		{cmd("CONFIG"), "-ERR wrong number of arguments for 'config' command\r\n"},
		{cmd("CONFIG", "GET"), "-ERR wrong number of arguments for 'config|get' command\r\n"},
		{cmd("SELECT", "16"), "-ERR DB index is out of range\r\n"},
		{"PING\r\nPING hi\r\n", "+PONG\r\n$2\r\nhi\r\n"},
		{"*0\r\n*-1\r\n\r\n", ""},
	} {
		if got := c.run(tc.req); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.req, got, tc.want)
		}
	}
}

func TestResp3Replies(t *testing.T) {
	c := testClient(t)
	if got := c.run(cmd("HELLO", "3")); !strings.HasPrefix(got, "%7\r\n") {
		t.Fatalf("HELLO 3: %q", got)
	}
	for _, tc := range []struct{ req, want string }{
		{cmd("GET", "x"), "_\r\n"},
		{cmd("HSET", "h", "a", "1"), ":1\r\n"},
		{cmd("HGETALL", "h"), "%1\r\n$1\r\na\r\n$1\r\n1\r\n"},
		{cmd("ZADD", "z", "1.5", "m"), ":1\r\n"},
		{cmd("ZSCORE", "z", "m"), ",1.5\r\n"},
		{cmd("ZRANGE", "z", "0", "-1", "WITHSCORES"), "*1\r\n*2\r\n$1\r\nm\r\n,1.5\r\n"},
		{cmd("SMEMBERS", "nokey"), "~0\r\n"},
	} {
		if got := c.run(tc.req); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.req, got, tc.want)
		}
	}
}

func TestMultiExec(t *testing.T) {
	c := testClient(t)
	got := c.run(cmd("MULTI") + cmd("SET", "a", "1") + cmd("INCR", "a") + cmd("EXEC"))
	if want := "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n:2\r\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
	got = c.run(cmd("MULTI") + cmd("NOPE") + cmd("EXEC"))
	if !strings.HasSuffix(got, "-EXECABORT Transaction discarded because of previous errors.\r\n") {
		t.Errorf("got %q", got)
	}
	// A watched key changed by someone else makes EXEC return a null array.
	other := &client{srv: c.srv, db: c.db, resp: 2, in: newRequestReader(), id: 2}
	c.run(cmd("WATCH", "a"))
	other.run(cmd("SET", "a", "5"))
	if got := c.run(cmd("MULTI") + cmd("GET", "a") + cmd("EXEC")); got != "+OK\r\n+QUEUED\r\n*-1\r\n" {
		t.Errorf("got %q", got)
	}
}

// Found by difffuzz.py (cases.py fuzz-exec-arity-aborts, fuzz-unwatch-queued, fuzz-expiretime-max,
// fuzz-config-get-name-as-asked).
func TestFuzzFindings(t *testing.T) {
	c := testClient(t)
	abort := "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n"
	for _, tc := range []struct{ req, want string }{
		{cmd("EXEC", "x"), abort},
		{cmd("MULTI") + cmd("SET", "a", "1") + cmd("EXEC", "x") + cmd("EXEC") + cmd("GET", "a"),
			"+OK\r\n+QUEUED\r\n" + abort + "-ERR EXEC without MULTI\r\n$-1\r\n"},
		{cmd("MULTI") + cmd("UNWATCH") + cmd("EXEC"), "+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n"},
		{cmd("CONFIG", "GET", "SAVE"), "*2\r\n$4\r\nSAVE\r\n$0\r\n\r\n"},
		{cmd("CONFIG", "GET", "sav*"), "*2\r\n$4\r\nsave\r\n$0\r\n\r\n"},
		{cmd("SET", "t", "1", "PXAT", "9223372036854775807") + cmd("EXPIRETIME", "t"),
			"+OK\r\n:9223372036854776\r\n"},
	} {
		if got := c.run(tc.req); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.req, got, tc.want)
		}
	}
}

func TestEmptyCollectionsDeleteTheirKey(t *testing.T) {
	c := testClient(t)
	c.run(cmd("RPUSH", "l", "a") + cmd("SADD", "s", "a") + cmd("HSET", "h", "f", "v") + cmd("ZADD", "z", "1", "m"))
	c.run(cmd("LPOP", "l") + cmd("SREM", "s", "a") + cmd("HDEL", "h", "f") + cmd("ZREM", "z", "m"))
	if got := c.run(cmd("EXISTS", "l", "s", "h", "z") + cmd("DBSIZE")); got != ":0\r\n:0\r\n" {
		t.Errorf("got %q", got)
	}
}

func TestExpiry(t *testing.T) {
	c := testClient(t)
	c.run(cmd("SET", "k", "v", "PX", "1"))
	c.run(cmd("SET", "p", "v", "EX", "100"))
	time.Sleep(5 * time.Millisecond)
	if got := c.run(cmd("GET", "k") + cmd("TTL", "p") + cmd("TTL", "nokey") + cmd("PERSIST", "p") + cmd("TTL", "p")); got != "$-1\r\n:100\r\n:-2\r\n:1\r\n:-1\r\n" {
		t.Errorf("got %q", got)
	}
}

func TestActiveExpiryDeletesUntouchedKeys(t *testing.T) {
	c := testClient(t)
	for i := 0; i < 100; i++ {
		c.run(cmd("SET", "k"+strconv.Itoa(i), "v", "PX", "1"))
	}
	c.run(cmd("SET", "keep", "v"))
	db := c.db
	for db.size() > 1 {
		db.expireSample(nowMs() + 10)
	}
	if got := c.run(cmd("DBSIZE")); got != ":1\r\n" {
		t.Errorf("got %q", got)
	}
}

func TestOutputLimitClosesClient(t *testing.T) {
	c := testClient(t)
	c.run(cmd("SET", "big", strings.Repeat("x", 1<<20)))
	c.run(strings.Repeat(cmd("GET", "big"), 70))
	// Without a socket every reply stays pending, so the batch stops at the cap.
	if !c.overflow && len(c.out) <= outputLimit {
		t.Errorf("70 MiB of replies: overflow not detected (out %d)", len(c.out))
	}
}

func TestScanVisitsEveryKey(t *testing.T) {
	c := testClient(t)
	const n = 1000
	for i := 0; i < n; i++ {
		c.run(cmd("SET", "key"+strconv.Itoa(i), "v"))
	}
	seen := map[string]bool{}
	cursor := "0"
	for {
		reply := c.run(cmd("SCAN", cursor, "COUNT", "7"))
		lines := strings.Split(reply, "\r\n")
		cursor = lines[2]
		for i := 5; i < len(lines)-1; i += 2 {
			seen[lines[i]] = true
		}
		if cursor == "0" {
			break
		}
	}
	if len(seen) != n {
		t.Errorf("SCAN returned %d distinct keys, want %d", len(seen), n)
	}
}

// The hot path allocates nothing per request beyond the stored value itself.
func TestHotPathAllocations(t *testing.T) {
	c := testClient(t)
	c.run(cmd("SET", "key:__rand_int__", "VXK"))
	get := strings.Repeat(cmd("GET", "key:__rand_int__"), 16)
	ping := strings.Repeat("PING\r\n", 16)
	for _, tc := range []struct {
		name, batch string
		max         float64
	}{
		{"GET", get, 0},
		{"PING_INLINE", ping, 0},
		{"SET (one value per request)", strings.Repeat(cmd("SET", "key:__rand_int__", "VXK"), 16), 16},
	} {
		allocs := testing.AllocsPerRun(100, func() { c.feed(tc.batch); c.out = c.out[:0] })
		if allocs > tc.max {
			t.Errorf("%s: %.1f allocations per batch of 16, want <= %v", tc.name, allocs, tc.max)
		}
	}
}

func BenchmarkPipelinedGet(b *testing.B) {
	c := testClient(b)
	c.run(cmd("SET", "key:__rand_int__", "VXK"))
	batch := strings.Repeat(cmd("GET", "key:__rand_int__"), 16)
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		c.feed(batch)
		c.out = c.out[:0]
	}
}

func BenchmarkPipelinedSet(b *testing.B) {
	c := testClient(b)
	batch := strings.Repeat(cmd("SET", "key:__rand_int__", "VXK"), 16)
	b.ReportAllocs()
	for b.Loop() {
		c.feed(batch)
		c.out = c.out[:0]
	}
}

func BenchmarkKeyspaceSet(b *testing.B) {
	c := testClient(b)
	var batch bytes.Buffer
	for i := 0; i < 16; i++ {
		batch.WriteString(cmd("SET", "key:"+strconv.Itoa(100000000000+i), "VXK"))
	}
	raw := batch.String()
	b.ReportAllocs()
	for b.Loop() {
		c.feed(raw)
		c.out = c.out[:0]
	}
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

// LRANGE walks the list's ring as up to two runs of bulk-encoded elements: check ranges that
// wrap around its end, with one- and two-digit lengths.
func TestLrangeAcrossTheRing(t *testing.T) {
	c := testClient(t)
	var want []string
	for i := 0; i < 12; i++ {
		v := strings.Repeat("v", i) // lengths 0..11
		c.run(cmd("LPUSH", "l", v)) // LPUSH moves the ring's head backwards: it wraps at once
		want = append([]string{v}, want...)
	}
	for _, r := range [][2]int{{0, -1}, {1, 3}, {5, 11}, {-4, -1}, {3, 3}, {11, 11}} {
		from, to := r[0], r[1]
		if from < 0 {
			from += len(want)
		}
		if to < 0 {
			to += len(want)
		}
		exp := "*" + strconv.Itoa(to-from+1) + "\r\n"
		for _, v := range want[from : to+1] {
			exp += "$" + strconv.Itoa(len(v)) + "\r\n" + v + "\r\n"
		}
		got := c.run(cmd("LRANGE", "l", strconv.Itoa(r[0]), strconv.Itoa(r[1])))
		if got != exp {
			t.Errorf("LRANGE %d %d = %q, want %q", r[0], r[1], got, exp)
		}
	}
}
