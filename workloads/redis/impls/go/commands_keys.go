package main

// commands_keys.go: commands on keys of any type and on databases (db.c, expire.c).

import (
	"math"
	"strconv"
)

func init() {
	keyCmd := func(name string, arity int, run func(*client, [][]byte), flags, summary, since string) *command {
		return &command{name: name, arity: arity, run: run, flags: flags, firstKey: 1, lastKey: 1, step: 1,
			group: "generic", summary: summary, since: since}
	}
	multiKey := func(cmd *command) *command { cmd.lastKey = -1; return cmd }
	twoKeys := func(cmd *command) *command { cmd.lastKey = 2; return cmd }
	register(
		multiKey(keyCmd("del", -2, cmdDel, "write", "Delete a key", "1.0.0")),
		multiKey(keyCmd("unlink", -2, cmdDel, "write fast", "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", "4.0.0")),
		multiKey(keyCmd("exists", -2, cmdExists, "readonly fast", "Determine if a key exists", "1.0.0")),
		multiKey(keyCmd("touch", -2, cmdExists, "readonly fast", "Alters the last access time of a key(s). Returns the number of existing keys specified.", "3.2.1")),
		keyCmd("type", 2, cmdType, "readonly fast", "Determine the type stored at key", "1.0.0"),
		keyCmd("expire", -3, cmdExpire, "write fast", "Set a key's time to live in seconds", "1.0.0"),
		keyCmd("pexpire", -3, cmdPexpire, "write fast", "Set a key's time to live in milliseconds", "2.6.0"),
		keyCmd("expireat", -3, cmdExpireat, "write fast", "Set the expiration for a key as a UNIX timestamp", "1.2.0"),
		keyCmd("pexpireat", -3, cmdPexpireat, "write fast", "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0"),
		keyCmd("ttl", 2, cmdTTL, "readonly fast", "Get the time to live for a key in seconds", "1.0.0"),
		keyCmd("pttl", 2, cmdPTTL, "readonly fast", "Get the time to live for a key in milliseconds", "2.6.0"),
		keyCmd("expiretime", 2, cmdExpiretime, "readonly fast", "Get the expiration Unix timestamp for a key", "7.0.0"),
		keyCmd("pexpiretime", 2, cmdPexpiretime, "readonly fast", "Get the expiration Unix timestamp for a key in milliseconds", "7.0.0"),
		keyCmd("persist", 2, cmdPersist, "write fast", "Remove the expiration from a key", "2.2.0"),
		twoKeys(keyCmd("rename", 3, cmdRename, "write", "Rename a key", "1.0.0")),
		twoKeys(keyCmd("renamenx", 3, cmdRenamenx, "write fast", "Rename a key, only if the new key does not exist", "1.0.0")),
		&command{name: "keys", arity: 2, run: cmdKeys, flags: "readonly", group: "generic", summary: "Find all keys matching the given pattern", since: "1.0.0"},
		&command{name: "scan", arity: -2, run: cmdScan, flags: "readonly", group: "generic", summary: "Incrementally iterate the keys space", since: "2.8.0"},
		&command{name: "randomkey", arity: 1, run: cmdRandomkey, flags: "readonly", group: "generic", summary: "Return a random key from the keyspace", since: "1.0.0"},
		&command{name: "dbsize", arity: 1, run: cmdDbsize, flags: "readonly fast", group: "server", summary: "Return the number of keys in the selected database", since: "1.0.0"},
		&command{name: "select", arity: 2, run: cmdSelect, flags: "loading stale fast", group: "connection", summary: "Change the selected database for the current connection", since: "1.0.0"},
		&command{name: "flushdb", arity: -1, run: cmdFlushdb, flags: "write", group: "server", summary: "Remove all keys from the current database", since: "1.0.0"},
		&command{name: "flushall", arity: -1, run: cmdFlushall, flags: "write", group: "server", summary: "Remove all keys from all databases", since: "1.0.0"},
	)
}

func cmdDel(c *client, args [][]byte) {
	n := 0
	for _, key := range args[1:] {
		if c.db.remove(key) {
			n++
		}
	}
	c.replyInt(int64(n))
}

// cmdExists serves EXISTS and TOUCH: how many of the arguments name live keys (a key named
// twice counts twice).
func cmdExists(c *client, args [][]byte) {
	n := 0
	for _, key := range args[1:] {
		if c.db.lookup(key) != nil {
			n++
		}
	}
	c.replyInt(int64(n))
}

func cmdType(c *client, args [][]byte) {
	name := "none"
	if e := c.db.lookup(args[1]); e != nil {
		name = c.db.typeName(e)
	}
	c.out = appendSimple(c.out, name)
}

// EXPIRE's NX/XX/GT/LT options.
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

// expireGeneric is redis's expireGenericCommand: basetime is now for EXPIRE/PEXPIRE and 0
// for the *AT forms; seconds says the argument's unit.
func (c *client) expireGeneric(args [][]byte, cmd string, basetime int64, seconds bool) {
	flags := 0
	for _, opt := range args[3:] {
		switch {
		case isOption(opt, "nx"):
			flags |= expireNX
		case isOption(opt, "xx"):
			flags |= expireXX
		case isOption(opt, "gt"):
			flags |= expireGT
		case isOption(opt, "lt"):
			flags |= expireLT
		default:
			c.replyError("ERR Unsupported option " + cString(opt))
			return
		}
	}
	if flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0 {
		c.replyError("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		c.replyError("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := c.intArg(args[2])
	if !ok {
		return
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.replyError("ERR invalid expire time in '" + cmd + "' command")
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-basetime {
		c.replyError("ERR invalid expire time in '" + cmd + "' command")
		return
	}
	when += basetime
	e := c.db.lookup(args[1])
	if e == nil {
		c.reply(replyZero)
		return
	}
	if flags != 0 {
		current := c.db.expireAt(e)
		if flags&expireNX != 0 && current != -1 ||
			flags&expireXX != 0 && current == -1 ||
			flags&expireGT != 0 && (when <= current || current == -1) ||
			flags&expireLT != 0 && current != -1 && when >= current {
			c.reply(replyZero)
			return
		}
	}
	if when <= nowMs() {
		c.db.removeEntry(e)
	} else {
		c.db.setExpire(e, when)
	}
	c.reply(replyOne)
}

func cmdExpire(c *client, args [][]byte) { c.expireGeneric(args, "expire", nowMs(), true) }

func cmdPexpire(c *client, args [][]byte) { c.expireGeneric(args, "pexpire", nowMs(), false) }

func cmdExpireat(c *client, args [][]byte) { c.expireGeneric(args, "expireat", 0, true) }

func cmdPexpireat(c *client, args [][]byte) { c.expireGeneric(args, "pexpireat", 0, false) }

// ttl replies -2 for a missing key, -1 for one without TTL, else the time left (seconds
// rounded to nearest, or ms).
func (c *client) ttl(key []byte, ms bool) {
	e := c.db.lookup(key)
	if e == nil {
		c.replyInt(-2)
		return
	}
	when := c.db.expireAt(e)
	if when == -1 {
		c.replyInt(-1)
		return
	}
	left := max(when-nowMs(), 0)
	if !ms {
		left = roundSeconds(left)
	}
	c.replyInt(left)
}

// roundSeconds is redis's (ms+500)/1000 for a non-negative ms, without overflowing near
// MaxInt64 (EXPIRETIME of PXAT 9223372036854775807 is 9223372036854776 in redis).
func roundSeconds(ms int64) int64 {
	return ms/1000 + (ms%1000+500)/1000
}

func cmdTTL(c *client, args [][]byte) { c.ttl(args[1], false) }

func cmdPTTL(c *client, args [][]byte) { c.ttl(args[1], true) }

func (c *client) expiretime(key []byte, ms bool) {
	e := c.db.lookup(key)
	switch {
	case e == nil:
		c.replyInt(-2)
	case !e.hasTTL():
		c.replyInt(-1)
	case ms:
		c.replyInt(c.db.expireAt(e))
	default:
		c.replyInt(roundSeconds(c.db.expireAt(e)))
	}
}

func cmdExpiretime(c *client, args [][]byte) { c.expiretime(args[1], false) }

func cmdPexpiretime(c *client, args [][]byte) { c.expiretime(args[1], true) }

func cmdPersist(c *client, args [][]byte) {
	if e := c.db.lookup(args[1]); e != nil && c.db.persist(e) {
		c.reply(replyOne)
	} else {
		c.reply(replyZero)
	}
}

func (c *client) rename(args [][]byte, nx bool) {
	src := c.db.lookup(args[1])
	if src == nil {
		c.reply(errNoSuchKey)
		return
	}
	if string(args[1]) == string(args[2]) {
		if nx {
			c.reply(replyZero)
		} else {
			c.reply(replyOK)
		}
		return
	}
	// Take the value out before the table changes under the entry pointer.
	obj, str, when := c.db.value(src), src.inlineStr(), c.db.expireAt(src)
	dst, h := c.db.lookupHash(args[2])
	if dst != nil {
		if nx {
			c.reply(replyZero)
			return
		}
		c.db.removeEntry(dst)
	}
	c.db.remove(args[1])
	var e *entry
	if obj != nil {
		e = c.db.addObject(args[2], h, obj)
	} else {
		e = c.db.addString(args[2], h, []byte(str))
	}
	if when != -1 {
		c.db.setExpire(e, when)
	}
	if nx {
		c.reply(replyOne)
	} else {
		c.reply(replyOK)
	}
}

func cmdRename(c *client, args [][]byte) { c.rename(args, false) }

func cmdRenamenx(c *client, args [][]byte) { c.rename(args, true) }

func cmdKeys(c *client, args [][]byte) {
	pattern := string(args[1])
	all := pattern == "*"
	now := nowMs()
	// The count comes first in the reply: gather, then write.
	var keys []string
	slots := c.db.dict.slots
	for i := range slots {
		e := &slots[i]
		if !e.used() || c.db.isExpired(e, now) {
			continue
		}
		if k := e.key(); all || globMatch(pattern, k) {
			keys = append(keys, k)
		}
	}
	c.replyArrayLen(len(keys))
	for _, k := range keys {
		c.replyBulkString(k)
	}
}

// parseCursor reads SCAN's cursor as redis's strtoul-based parseScanCursorOrReply: a
// leading sign is allowed (a '-' wraps around), a NUL ends the number, the empty string is 0.
func parseCursor(b []byte) (uint64, bool) {
	if len(b) > 0 && isSpace(b[0]) {
		return 0, false
	}
	s := cString(b)
	i, neg := 0, false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var v uint64
	overflow := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			overflow = true
		}
		v = v*10 + d
	}
	if i == start { // no digits: strtoul consumed nothing
		return 0, len(s) == 0
	}
	if i != len(s) || overflow {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

func cmdScan(c *client, args [][]byte) {
	cursor, ok := parseCursor(args[1])
	if !ok {
		c.replyError("ERR invalid cursor")
		return
	}
	count := int64(10)
	var pattern, typ []byte
	for i := 2; i < len(args); i += 2 {
		left := len(args) - i
		switch {
		case isOption(args[i], "count") && left >= 2:
			if count, ok = c.intArg(args[i+1]); !ok {
				return
			}
			if count < 1 {
				c.reply(errSyntax)
				return
			}
		case isOption(args[i], "match") && left >= 2:
			pattern = args[i+1]
		case isOption(args[i], "type") && left >= 2:
			typ = args[i+1]
		default:
			c.reply(errSyntax)
			return
		}
	}
	var keys []string
	visit := func(e *entry) { keys = append(keys, e.key()) }
	// Visit buckets until COUNT keys are gathered (or 10×COUNT buckets are seen, so a
	// sparse table cannot make one call long), as redis's SCAN.
	for iterations := count * 10; ; {
		cursor = c.db.dict.scan(cursor, visit)
		iterations--
		if cursor == 0 || iterations < 0 || int64(len(keys)) >= count {
			break
		}
	}
	usePattern := pattern != nil && !(len(pattern) == 1 && pattern[0] == '*')
	kept := keys[:0]
	for _, k := range keys {
		if usePattern && !globMatch(string(pattern), k) {
			continue
		}
		// The key's bytes live in its entry; look it up again now (it may expire here).
		e := c.db.lookup([]byte(k))
		if typ != nil {
			name := "none"
			if e != nil {
				name = c.db.typeName(e)
			}
			if !isOption(typ, name) {
				continue
			}
		}
		if e == nil {
			continue
		}
		kept = append(kept, k)
	}
	c.replyArrayLen(2)
	c.replyBulkString(strconv.FormatUint(cursor, 10))
	c.replyArrayLen(len(kept))
	for _, k := range kept {
		c.replyBulkString(k)
	}
}

func cmdRandomkey(c *client, args [][]byte) {
	for {
		i := c.db.dict.randomIndex()
		if i < 0 {
			c.replyNull()
			return
		}
		e := &c.db.dict.slots[i]
		key := e.key()
		if !c.db.isExpired(e, nowMs()) {
			c.replyBulkString(key)
			return
		}
		c.db.deleteIndex(i)
	}
}

func cmdDbsize(c *client, args [][]byte) { c.replyInt(int64(c.db.size())) }

func cmdSelect(c *client, args [][]byte) {
	id, ok := c.intArg(args[1])
	switch {
	case !ok:
	case id < math.MinInt32 || id > math.MaxInt32:
		c.replyError("ERR value is out of range, value must between -2147483648 and 2147483647")
	case id < 0 || id >= numDBs:
		c.replyError("ERR DB index is out of range")
	default:
		c.dbIndex = int(id)
		c.db = &c.srv.ks.dbs[id]
		c.reply(replyOK)
	}
}

// flushArgsOK accepts FLUSHDB/FLUSHALL's optional SYNC or ASYNC.
func (c *client) flushArgsOK(args [][]byte) bool {
	if len(args) == 1 || len(args) == 2 && (isOption(args[1], "sync") || isOption(args[1], "async")) {
		return true
	}
	c.reply(errSyntax)
	return false
}

func cmdFlushdb(c *client, args [][]byte) {
	if c.flushArgsOK(args) {
		c.db.flush()
		c.reply(replyOK)
	}
}

func cmdFlushall(c *client, args [][]byte) {
	if c.flushArgsOK(args) {
		for i := range c.srv.ks.dbs {
			c.srv.ks.dbs[i].flush()
		}
		c.reply(replyOK)
	}
}
