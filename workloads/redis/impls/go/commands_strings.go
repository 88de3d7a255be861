package main

// commands_strings.go: string commands (t_string.c).

import (
	"math"
	"strconv"
	"strings"
)

func init() {
	register(
		&command{name: "get", arity: 2, run: cmdGet, flags: "readonly fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get the value of a key", since: "1.0.0"},
		&command{name: "set", arity: -3, run: cmdSet, flags: "write denyoom", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the string value of a key", since: "1.0.0"},
		&command{name: "setnx", arity: 3, run: cmdSetnx, flags: "write denyoom fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the value of a key, only if the key does not exist", since: "1.0.0"},
		&command{name: "setex", arity: 4, run: cmdSetex, flags: "write denyoom", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the value and expiration of a key", since: "2.0.0"},
		&command{name: "psetex", arity: 4, run: cmdPsetex, flags: "write denyoom", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the value and expiration in milliseconds of a key", since: "2.6.0"},
		&command{name: "getset", arity: 3, run: cmdGetset, flags: "write denyoom fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Set the string value of a key and return its old value", since: "1.0.0"},
		&command{name: "getdel", arity: 2, run: cmdGetdel, flags: "write fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get the value of a key and delete the key", since: "6.2.0"},
		&command{name: "getex", arity: -2, run: cmdGetex, flags: "write fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get the value of a key and optionally set its expiration", since: "6.2.0"},
		&command{name: "mget", arity: -2, run: cmdMget, flags: "readonly fast", firstKey: 1, lastKey: -1, step: 1, group: "string", summary: "Get the values of all the given keys", since: "1.0.0"},
		&command{name: "mset", arity: -3, run: cmdMset, flags: "write denyoom", firstKey: 1, lastKey: -1, step: 2, group: "string", summary: "Set multiple keys to multiple values", since: "1.0.1"},
		&command{name: "msetnx", arity: -3, run: cmdMsetnx, flags: "write denyoom", firstKey: 1, lastKey: -1, step: 2, group: "string", summary: "Set multiple keys to multiple values, only if none of the keys exist", since: "1.0.1"},
		&command{name: "incr", arity: 2, run: cmdIncr, flags: "write denyoom fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Increment the integer value of a key by one", since: "1.0.0"},
		&command{name: "decr", arity: 2, run: cmdDecr, flags: "write denyoom fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Decrement the integer value of a key by one", since: "1.0.0"},
		&command{name: "incrby", arity: 3, run: cmdIncrby, flags: "write denyoom fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Increment the integer value of a key by the given amount", since: "1.0.0"},
		&command{name: "decrby", arity: 3, run: cmdDecrby, flags: "write denyoom fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Decrement the integer value of a key by the given number", since: "1.0.0"},
		&command{name: "incrbyfloat", arity: 3, run: cmdIncrbyfloat, flags: "write denyoom fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Increment the float value of a key by the given amount", since: "2.6.0"},
		&command{name: "append", arity: 3, run: cmdAppend, flags: "write denyoom fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Append a value to a key", since: "2.0.0"},
		&command{name: "strlen", arity: 2, run: cmdStrlen, flags: "readonly fast", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get the length of the value stored in a key", since: "2.2.0"},
		&command{name: "getrange", arity: 4, run: cmdGetrange, flags: "readonly", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Get a substring of the string stored at a key", since: "2.4.0"},
		&command{name: "setrange", arity: 4, run: cmdSetrange, flags: "write denyoom", firstKey: 1, lastKey: 1, step: 1, group: "string", summary: "Overwrite part of a string at key starting at the specified offset", since: "2.2.0"},
	)
}

// stringEntry looks key up for a string command: nil if absent; ok is false (and the
// WRONGTYPE error sent) if it holds another type.
func (c *client) stringEntry(key []byte) (e *entry, val string, ok bool) {
	e = c.db.lookup(key)
	if e == nil {
		return nil, "", true
	}
	val, ok = c.db.stringValue(e)
	if !ok {
		c.reply(errWrongType)
	}
	return e, val, ok
}

func cmdGet(c *client, args [][]byte) {
	e, val, ok := c.stringEntry(args[1])
	switch {
	case !ok:
	case e == nil:
		c.replyNull()
	default:
		c.replyBulkString(val)
	}
}

// SET's options, as parseExtendedStringArgumentsOrReply's flags.
const (
	setNX = 1 << iota
	setXX
	setGet
	setKeepTTL
	setPersist
	setEX
	setPX
	setEXAT
	setPXAT

	setAnyExpire = setEX | setPX | setEXAT | setPXAT
)

// parseSetOptions parses SET's (or, with getex, GETEX's) options from args[first:] exactly
// as redis does, including which combinations are a syntax error.
func (c *client) parseSetOptions(args [][]byte, first int, getex bool) (flags int, expire []byte, ok bool) {
	for j := first; j < len(args); j++ {
		opt := args[j]
		hasNext := j+1 < len(args)
		switch {
		case isOption(opt, "nx") && flags&setXX == 0 && !getex:
			flags |= setNX
		case isOption(opt, "xx") && flags&setNX == 0 && !getex:
			flags |= setXX
		case isOption(opt, "get") && !getex:
			flags |= setGet
		case isOption(opt, "keepttl") && flags&(setPersist|setAnyExpire) == 0 && !getex:
			flags |= setKeepTTL
		case isOption(opt, "persist") && getex && flags&(setAnyExpire|setKeepTTL) == 0:
			flags |= setPersist
		case isOption(opt, "ex") && flags&(setKeepTTL|setPersist|setEXAT|setPX|setPXAT) == 0 && hasNext:
			flags |= setEX
			expire = args[j+1]
			j++
		case isOption(opt, "px") && flags&(setKeepTTL|setPersist|setEX|setEXAT|setPXAT) == 0 && hasNext:
			flags |= setPX
			expire = args[j+1]
			j++
		case isOption(opt, "exat") && flags&(setKeepTTL|setPersist|setEX|setPX|setPXAT) == 0 && hasNext:
			flags |= setEXAT
			expire = args[j+1]
			j++
		case isOption(opt, "pxat") && flags&(setKeepTTL|setPersist|setEX|setEXAT|setPX) == 0 && hasNext:
			flags |= setPXAT
			expire = args[j+1]
			j++
		default:
			c.reply(errSyntax)
			return 0, nil, false
		}
	}
	return flags, expire, true
}

// expireMillis turns SET/GETEX's expire argument into an absolute Unix time in ms
// (getExpireMillisecondsOrReply).
func (c *client) expireMillis(arg []byte, flags int, cmd string) (int64, bool) {
	ms, ok := c.intArg(arg)
	if !ok {
		return 0, false
	}
	seconds := flags&(setEX|setEXAT) != 0
	if ms <= 0 || seconds && ms > math.MaxInt64/1000 {
		c.replyError("ERR invalid expire time in '" + cmd + "' command")
		return 0, false
	}
	if seconds {
		ms *= 1000
	}
	if flags&(setEX|setPX) != 0 {
		ms += nowMs() // may wrap negative, caught below as redis does
	}
	if ms <= 0 {
		c.replyError("ERR invalid expire time in '" + cmd + "' command")
		return 0, false
	}
	return ms, true
}

// setGeneric is redis's setGenericCommand. okReply and abortReply replace "+OK" and the
// null reply (SETNX answers :1 and :0); an empty abortReply means the null reply.
func (c *client) setGeneric(cmd string, flags int, key, val, expire []byte, okReply, abortReply string) {
	var when int64
	if expire != nil {
		var ok bool
		if when, ok = c.expireMillis(expire, flags, cmd); !ok {
			return
		}
	}
	if flags&setGet != 0 {
		e, old, ok := c.stringEntry(key)
		if !ok {
			return
		}
		if e == nil {
			c.replyNull()
		} else {
			c.replyBulkString(old)
		}
	}
	e, h := c.db.lookupHash(key)
	if flags&setNX != 0 && e != nil || flags&setXX != 0 && e == nil {
		if flags&setGet == 0 {
			if abortReply == "" {
				c.replyNull()
			} else {
				c.reply(abortReply)
			}
		}
		return
	}
	if e == nil {
		e = c.db.addString(key, h, val)
	} else {
		c.db.setString(e, val, flags&setKeepTTL != 0)
	}
	if expire != nil {
		c.db.setExpire(e, when)
	}
	if flags&setGet == 0 {
		c.reply(okReply)
	}
}

func cmdSet(c *client, args [][]byte) {
	flags, expire, ok := c.parseSetOptions(args, 3, false)
	if ok {
		c.setGeneric("set", flags, args[1], args[2], expire, replyOK, "")
	}
}

func cmdSetnx(c *client, args [][]byte) {
	c.setGeneric("setnx", setNX, args[1], args[2], nil, replyOne, replyZero)
}

func cmdSetex(c *client, args [][]byte) {
	c.setGeneric("setex", setEX, args[1], args[3], args[2], replyOK, "")
}

func cmdPsetex(c *client, args [][]byte) {
	c.setGeneric("psetex", setPX, args[1], args[3], args[2], replyOK, "")
}

func cmdGetset(c *client, args [][]byte) {
	e, old, ok := c.stringEntry(args[1])
	if !ok {
		return
	}
	if e == nil {
		c.replyNull()
		c.db.addString(args[1], hashBytes(args[1]), args[2])
		return
	}
	c.replyBulkString(old)
	c.db.setString(e, args[2], false)
}

func cmdGetdel(c *client, args [][]byte) {
	e, val, ok := c.stringEntry(args[1])
	switch {
	case !ok:
	case e == nil:
		c.replyNull()
	default:
		c.replyBulkString(val)
		c.db.removeEntry(e)
	}
}

func cmdGetex(c *client, args [][]byte) {
	flags, expire, ok := c.parseSetOptions(args, 2, true)
	if !ok {
		return
	}
	e, val, ok := c.stringEntry(args[1])
	if !ok {
		return
	}
	if e == nil {
		c.replyNull()
		return
	}
	var when int64
	if expire != nil {
		if when, ok = c.expireMillis(expire, flags, "getex"); !ok {
			return
		}
	}
	c.replyBulkString(val)
	switch {
	case flags&(setEXAT|setPXAT) != 0 && when <= nowMs():
		c.db.removeEntry(e)
	case expire != nil:
		c.db.setExpire(e, when)
	case flags&setPersist != 0:
		c.db.persist(e)
	}
}

func cmdMget(c *client, args [][]byte) {
	c.replyArrayLen(len(args) - 1)
	for _, key := range args[1:] {
		e := c.db.lookup(key)
		if e == nil {
			c.replyNull()
			continue
		}
		if val, ok := c.db.stringValue(e); ok {
			c.replyBulkString(val)
		} else {
			c.replyNull()
		}
	}
}

// setPairs stores MSET's key/value pairs, dropping their TTLs.
func (c *client) setPairs(args [][]byte) {
	for i := 1; i < len(args); i += 2 {
		if e, h := c.db.lookupHash(args[i]); e == nil {
			c.db.addString(args[i], h, args[i+1])
		} else {
			c.db.setString(e, args[i+1], false)
		}
	}
}

func cmdMset(c *client, args [][]byte) {
	if len(args)%2 == 0 {
		c.arityError("mset")
		return
	}
	c.setPairs(args)
	c.reply(replyOK)
}

func cmdMsetnx(c *client, args [][]byte) {
	if len(args)%2 == 0 {
		c.arityError("msetnx")
		return
	}
	for i := 1; i < len(args); i += 2 {
		if c.db.lookup(args[i]) != nil {
			c.reply(replyZero)
			return
		}
	}
	c.setPairs(args)
	c.reply(replyOne)
}

// incrBy is incrDecrCommand: the stored value must be a canonical integer, the result
// must fit in an int64, and the key keeps its TTL.
func (c *client) incrBy(key []byte, delta int64) {
	e, h := c.db.lookupHash(key)
	var cur int64
	if e != nil {
		val, ok := c.db.stringValue(e)
		if !ok {
			c.reply(errWrongType)
			return
		}
		if cur, ok = parseInt(val); !ok {
			c.reply(errNotInteger)
			return
		}
	}
	if delta < 0 && cur < 0 && delta < math.MinInt64-cur || delta > 0 && cur > 0 && delta > math.MaxInt64-cur {
		c.reply(errOverflow)
		return
	}
	cur += delta
	var buf [20]byte
	digits := strconv.AppendInt(buf[:0], cur, 10)
	if e == nil {
		c.db.addString(key, h, digits)
	} else {
		c.db.setString(e, digits, true)
	}
	c.replyInt(cur)
}

func cmdIncr(c *client, args [][]byte) { c.incrBy(args[1], 1) }

func cmdDecr(c *client, args [][]byte) { c.incrBy(args[1], -1) }

func cmdIncrby(c *client, args [][]byte) {
	if delta, ok := c.intArg(args[2]); ok {
		c.incrBy(args[1], delta)
	}
}

func cmdDecrby(c *client, args [][]byte) {
	delta, ok := c.intArg(args[2])
	switch {
	case !ok:
	case delta == math.MinInt64:
		c.replyError("ERR decrement would overflow")
	default:
		c.incrBy(args[1], -delta)
	}
}

func cmdIncrbyfloat(c *client, args [][]byte) {
	e, h := c.db.lookupHash(args[1])
	cur := longDouble{f: zeroLongDouble()}
	if e != nil {
		val, ok := c.db.stringValue(e)
		if !ok {
			c.reply(errWrongType)
			return
		}
		if cur, ok = parseLongDouble([]byte(val)); !ok {
			c.reply(errNotFloat)
			return
		}
	}
	incr, ok := parseLongDouble(args[2])
	if !ok {
		c.reply(errNotFloat)
		return
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		c.replyError("ERR increment would produce NaN or Infinity")
		return
	}
	text := formatLongDouble(sum)
	if e == nil {
		c.db.addString(args[1], h, []byte(text))
	} else {
		c.db.setString(e, []byte(text), true)
	}
	c.replyBulkString(text)
}

func cmdAppend(c *client, args [][]byte) {
	e, h := c.db.lookupHash(args[1])
	if e == nil {
		c.db.addString(args[1], h, args[2])
		c.replyInt(int64(len(args[2])))
		return
	}
	val, ok := c.db.stringValue(e)
	if !ok {
		c.reply(errWrongType)
		return
	}
	if len(val)+len(args[2]) > bulkMax {
		c.reply(errMaxStringSize)
		return
	}
	buf, ok := c.db.value(e).(*stringBuf)
	if !ok {
		// First append: move the value into a growable buffer, so that a string built by
		// many appends costs amortised O(1) per append.
		buf = &stringBuf{}
		buf.b.Grow(2 * (len(val) + len(args[2])))
		buf.b.WriteString(val)
		c.db.setObject(e, buf)
	}
	buf.b.Write(args[2])
	c.db.touchBytes(args[1])
	c.replyInt(int64(buf.b.Len()))
}

func cmdStrlen(c *client, args [][]byte) {
	if _, val, ok := c.stringEntry(args[1]); ok {
		c.replyInt(int64(len(val)))
	}
}

func cmdGetrange(c *client, args [][]byte) {
	start, ok := c.intArg(args[2])
	if !ok {
		return
	}
	end, ok := c.intArg(args[3])
	if !ok {
		return
	}
	e, val, ok := c.stringEntry(args[1])
	if !ok {
		return
	}
	if e == nil || start < 0 && end < 0 && start > end {
		c.replyBulkString("")
		return
	}
	n := int64(len(val))
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.replyBulkString("")
		return
	}
	c.replyBulkString(val[start : end+1])
}

func cmdSetrange(c *client, args [][]byte) {
	offset, ok := c.intArg(args[2])
	if !ok {
		return
	}
	if offset < 0 {
		c.replyError("ERR offset is out of range")
		return
	}
	value := args[3]
	e, h := c.db.lookupHash(args[1])
	var old string
	if e != nil {
		if old, ok = c.db.stringValue(e); !ok {
			c.reply(errWrongType)
			return
		}
	}
	if len(value) == 0 {
		c.replyInt(int64(len(old)))
		return
	}
	if offset+int64(len(value)) > bulkMax {
		c.reply(errMaxStringSize)
		return
	}
	var b strings.Builder
	size := max(len(old), int(offset)+len(value))
	b.Grow(size)
	b.WriteString(old[:min(len(old), int(offset))])
	for b.Len() < int(offset) {
		b.WriteByte(0)
	}
	b.Write(value)
	if end := int(offset) + len(value); end < len(old) {
		b.WriteString(old[end:])
	}
	val := b.String()
	if e == nil {
		c.db.addString(args[1], h, []byte(val))
	} else {
		c.db.setString(e, []byte(val), true)
	}
	c.replyInt(int64(len(val)))
}
