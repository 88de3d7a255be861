package main

// commands_sets.go: set commands (t_set.c).

func init() {
	setCmd := func(name string, arity int, run func(*client, [][]byte), flags, summary, since string) *command {
		return &command{name: name, arity: arity, run: run, flags: flags, firstKey: 1, lastKey: 1, step: 1,
			group: "set", summary: summary, since: since}
	}
	register(
		setCmd("sadd", -3, cmdSadd, "write denyoom fast", "Add one or more members to a set", "1.0.0"),
		setCmd("srem", -3, cmdSrem, "write fast", "Remove one or more members from a set", "1.0.0"),
		setCmd("smembers", 2, cmdSmembers, "readonly", "Get all the members in a set", "1.0.0"),
		setCmd("sismember", 3, cmdSismember, "readonly fast", "Determine if a given value is a member of a set", "1.0.0"),
		setCmd("smismember", -3, cmdSmismember, "readonly fast", "Returns the membership associated with the given elements for a set", "6.2.0"),
		setCmd("scard", 2, cmdScard, "readonly fast", "Get the number of members in a set", "1.0.0"),
		setCmd("spop", -2, cmdSpop, "write fast", "Remove and return one or multiple random members from a set", "1.0.0"),
	)
}

// setEntry looks key up for a set command: (nil, nil, true) if absent; ok is false (and
// WRONGTYPE sent) if it holds another type.
func (c *client) setEntry(key []byte) (*entry, *set, bool) {
	e := c.db.lookup(key)
	if e == nil {
		return nil, nil, true
	}
	s, ok := c.db.value(e).(*set)
	if !ok {
		c.reply(errWrongType)
	}
	return e, s, ok
}

func cmdSadd(c *client, args [][]byte) {
	e, h := c.db.lookupHash(args[1])
	var s *set
	if e == nil {
		s = newSetFor(args[2])
		c.db.addObject(args[1], h, s)
	} else {
		var ok bool
		if s, ok = c.db.value(e).(*set); !ok {
			c.reply(errWrongType)
			return
		}
	}
	added := 0
	for _, m := range args[2:] {
		if s.add(m) {
			added++
		}
	}
	if added > 0 {
		c.db.touchBytes(args[1])
	}
	c.replyInt(int64(added))
}

func cmdSrem(c *client, args [][]byte) {
	e, s, ok := c.setEntry(args[1])
	if !ok {
		return
	}
	n := 0
	if e != nil {
		for _, m := range args[2:] {
			if s.remove(m) {
				n++
				c.db.touchBytes(args[1])
				if s.len() == 0 {
					c.db.removeEntry(e)
					break
				}
			}
		}
	}
	c.replyInt(int64(n))
}

// replyMembers replies with every member (ascending for an intset, as redis).
func (c *client) replyMembers(s *set) {
	c.replySetLen(s.len())
	if s.m == nil {
		for _, v := range s.ints {
			c.out = appendBulkInt(c.out, v)
		}
		return
	}
	for m := range s.m {
		c.replyBulkString(m)
	}
}

func cmdSmembers(c *client, args [][]byte) {
	e, s, ok := c.setEntry(args[1])
	switch {
	case !ok:
	case e == nil:
		c.replySetLen(0)
	default:
		c.replyMembers(s)
	}
}

func cmdSismember(c *client, args [][]byte) {
	if e, s, ok := c.setEntry(args[1]); ok {
		if e != nil && s.has(args[2]) {
			c.reply(replyOne)
		} else {
			c.reply(replyZero)
		}
	}
}

func cmdSmismember(c *client, args [][]byte) {
	e, s, ok := c.setEntry(args[1])
	if !ok {
		return
	}
	c.replyArrayLen(len(args) - 2)
	for _, m := range args[2:] {
		if e != nil && s.has(m) {
			c.reply(replyOne)
		} else {
			c.reply(replyZero)
		}
	}
}

func cmdScard(c *client, args [][]byte) {
	if e, s, ok := c.setEntry(args[1]); ok {
		if e == nil {
			c.reply(replyZero)
		} else {
			c.replyInt(int64(s.len()))
		}
	}
}

func cmdSpop(c *client, args [][]byte) {
	if len(args) > 3 {
		c.reply(errSyntax)
		return
	}
	if len(args) == 3 {
		spopCount(c, args)
		return
	}
	e, s, ok := c.setEntry(args[1])
	switch {
	case !ok:
	case e == nil:
		c.replyNull()
	default:
		c.replyBulkString(s.pop())
		c.db.touchBytes(args[1])
		if s.len() == 0 {
			c.db.removeEntry(e)
		}
	}
}

// spopCount is SPOP with a count: that many random members (all of them, and the key
// deleted, if the count reaches the size).
func spopCount(c *client, args [][]byte) {
	count, ok := c.positiveArg(args[2])
	if !ok {
		return
	}
	e, s, ok := c.setEntry(args[1])
	switch {
	case !ok:
		return
	case e == nil || count == 0:
		c.replySetLen(0)
		return
	}
	if count >= int64(s.len()) {
		c.replyMembers(s)
		c.db.removeEntry(e)
		return
	}
	c.replySetLen(int(count))
	for range count {
		c.replyBulkString(s.pop())
	}
	c.db.touchBytes(args[1])
}
