package main

// commands_hashes.go: hash commands (t_hash.c).

import (
	"math"
	"strconv"
)

func init() {
	hashCmd := func(name string, arity int, run func(*client, [][]byte), flags, summary, since string) *command {
		return &command{name: name, arity: arity, run: run, flags: flags, firstKey: 1, lastKey: 1, step: 1,
			group: "hash", summary: summary, since: since}
	}
	register(
		hashCmd("hset", -4, cmdHset, "write denyoom fast", "Set the string value of a hash field", "2.0.0"),
		hashCmd("hmset", -4, cmdHmset, "write denyoom fast", "Set multiple hash fields to multiple values", "2.0.0"),
		hashCmd("hsetnx", 4, cmdHsetnx, "write denyoom fast", "Set the value of a hash field, only if the field does not exist", "2.0.0"),
		hashCmd("hget", 3, cmdHget, "readonly fast", "Get the value of a hash field", "2.0.0"),
		hashCmd("hmget", -3, cmdHmget, "readonly fast", "Get the values of all the given hash fields", "2.0.0"),
		hashCmd("hgetall", 2, cmdHgetall, "readonly", "Get all the fields and values in a hash", "2.0.0"),
		hashCmd("hkeys", 2, cmdHkeys, "readonly", "Get all the fields in a hash", "2.0.0"),
		hashCmd("hvals", 2, cmdHvals, "readonly", "Get all the values in a hash", "2.0.0"),
		hashCmd("hdel", -3, cmdHdel, "write fast", "Delete one or more hash fields", "2.0.0"),
		hashCmd("hlen", 2, cmdHlen, "readonly fast", "Get the number of fields in a hash", "2.0.0"),
		hashCmd("hstrlen", 3, cmdHstrlen, "readonly fast", "Get the length of the value of a hash field", "3.2.0"),
		hashCmd("hexists", 3, cmdHexists, "readonly fast", "Determine if a hash field exists", "2.0.0"),
		hashCmd("hincrby", 4, cmdHincrby, "write denyoom fast", "Increment the integer value of a hash field by the given number", "2.0.0"),
		hashCmd("hincrbyfloat", 4, cmdHincrbyfloat, "write denyoom fast", "Increment the float value of a hash field by the given amount", "2.6.0"),
	)
}

// hashEntry looks key up for a hash command: (nil, nil, true) if absent; ok is false (and
// WRONGTYPE sent) if it holds another type.
func (c *client) hashEntry(key []byte) (*entry, *hash, bool) {
	e := c.db.lookup(key)
	if e == nil {
		return nil, nil, true
	}
	h, ok := c.db.value(e).(*hash)
	if !ok {
		c.reply(errWrongType)
	}
	return e, h, ok
}

// hashForWrite returns key's hash, creating an empty one if the key is absent
// (hashTypeLookupWriteOrCreate); nil (and WRONGTYPE sent) if it holds another type.
func (c *client) hashForWrite(key []byte) *hash {
	e, hv := c.db.lookupHash(key)
	if e == nil {
		h := &hash{}
		c.db.addObject(key, hv, h)
		return h
	}
	h, ok := c.db.value(e).(*hash)
	if !ok {
		c.reply(errWrongType)
		return nil
	}
	return h
}

// setFields stores HSET's field/value pairs and returns how many fields are new.
func (c *client) setFields(args [][]byte) (*hash, int) {
	h := c.hashForWrite(args[1])
	if h == nil {
		return nil, 0
	}
	added := 0
	for i := 2; i < len(args); i += 2 {
		if h.set(args[i], args[i+1]) {
			added++
		}
	}
	c.db.touchBytes(args[1])
	return h, added
}

func cmdHset(c *client, args [][]byte) {
	if len(args)%2 == 1 {
		c.arityError("hset")
		return
	}
	if h, added := c.setFields(args); h != nil {
		c.replyInt(int64(added))
	}
}

func cmdHmset(c *client, args [][]byte) {
	if len(args)%2 == 1 {
		c.arityError("hmset")
		return
	}
	if h, _ := c.setFields(args); h != nil {
		c.reply(replyOK)
	}
}

func cmdHsetnx(c *client, args [][]byte) {
	h := c.hashForWrite(args[1])
	if h == nil {
		return
	}
	if _, exists := h.get(args[2]); exists {
		c.reply(replyZero)
		return
	}
	h.set(args[2], args[3])
	c.db.touchBytes(args[1])
	c.reply(replyOne)
}

func cmdHget(c *client, args [][]byte) {
	e, h, ok := c.hashEntry(args[1])
	if !ok {
		return
	}
	if e != nil {
		if v, found := h.get(args[2]); found {
			c.replyBulkString(v)
			return
		}
	}
	c.replyNull()
}

func cmdHmget(c *client, args [][]byte) {
	e, h, ok := c.hashEntry(args[1])
	if !ok {
		return
	}
	c.replyArrayLen(len(args) - 2)
	for _, f := range args[2:] {
		if e != nil {
			if v, found := h.get(f); found {
				c.replyBulkString(v)
				continue
			}
		}
		c.replyNull()
	}
}

// hashAll replies with the fields and/or values of a hash.
func (c *client) hashAll(key []byte, fields, values bool) {
	e, h, ok := c.hashEntry(key)
	if !ok {
		return
	}
	if e == nil {
		if fields && values {
			c.replyMapLen(0)
		} else {
			c.reply(replyEmptyArray)
		}
		return
	}
	if fields && values {
		c.replyMapLen(h.len())
	} else {
		c.replyArrayLen(h.len())
	}
	h.each(func(f, v string) {
		if fields {
			c.replyBulkString(f)
		}
		if values {
			c.replyBulkString(v)
		}
	})
}

func cmdHgetall(c *client, args [][]byte) { c.hashAll(args[1], true, true) }

func cmdHkeys(c *client, args [][]byte) { c.hashAll(args[1], true, false) }

func cmdHvals(c *client, args [][]byte) { c.hashAll(args[1], false, true) }

func cmdHdel(c *client, args [][]byte) {
	e, h, ok := c.hashEntry(args[1])
	if !ok {
		return
	}
	n := 0
	if e != nil {
		for _, f := range args[2:] {
			if h.del(f) {
				n++
				c.db.touchBytes(args[1])
				if h.len() == 0 {
					c.db.removeEntry(e)
					break
				}
			}
		}
	}
	c.replyInt(int64(n))
}

func cmdHlen(c *client, args [][]byte) {
	if e, h, ok := c.hashEntry(args[1]); ok {
		if e == nil {
			c.reply(replyZero)
		} else {
			c.replyInt(int64(h.len()))
		}
	}
}

func cmdHstrlen(c *client, args [][]byte) {
	if e, h, ok := c.hashEntry(args[1]); ok {
		n := 0
		if e != nil {
			v, _ := h.get(args[2])
			n = len(v)
		}
		c.replyInt(int64(n))
	}
}

func cmdHexists(c *client, args [][]byte) {
	if e, h, ok := c.hashEntry(args[1]); ok {
		if e != nil {
			if _, found := h.get(args[2]); found {
				c.reply(replyOne)
				return
			}
		}
		c.reply(replyZero)
	}
}

func cmdHincrby(c *client, args [][]byte) {
	delta, ok := c.intArg(args[3])
	if !ok {
		return
	}
	h := c.hashForWrite(args[1])
	if h == nil {
		return
	}
	var cur int64
	if v, found := h.get(args[2]); found {
		if cur, ok = parseInt(v); !ok {
			c.replyError("ERR hash value is not an integer")
			return
		}
	}
	if delta < 0 && cur < 0 && delta < math.MinInt64-cur || delta > 0 && cur > 0 && delta > math.MaxInt64-cur {
		c.reply(errOverflow)
		return
	}
	cur += delta
	var buf [20]byte
	h.set(args[2], strconv.AppendInt(buf[:0], cur, 10))
	c.db.touchBytes(args[1])
	c.replyInt(cur)
}

func cmdHincrbyfloat(c *client, args [][]byte) {
	incr, ok := parseLongDouble(args[3])
	if !ok {
		c.reply(errNotFloat)
		return
	}
	if incr.inf != 0 {
		c.replyError("ERR value is NaN or Infinity")
		return
	}
	h := c.hashForWrite(args[1])
	if h == nil {
		return
	}
	cur := longDouble{f: zeroLongDouble()}
	if v, found := h.get(args[2]); found {
		if cur, ok = parseLongDouble([]byte(v)); !ok {
			c.replyError("ERR hash value is not a float")
			return
		}
	}
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		c.replyError("ERR increment would produce NaN or Infinity")
		return
	}
	text := formatLongDouble(sum)
	h.set(args[2], []byte(text))
	c.db.touchBytes(args[1])
	c.replyBulkString(text)
}
