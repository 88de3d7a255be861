package main

// commands_lists.go: list commands (t_list.c).

func init() {
	listCmd := func(name string, arity int, run func(*client, [][]byte), flags, summary, since string) *command {
		return &command{name: name, arity: arity, run: run, flags: flags, firstKey: 1, lastKey: 1, step: 1,
			group: "list", summary: summary, since: since}
	}
	register(
		listCmd("lpush", -3, cmdLpush, "write denyoom fast", "Prepend one or multiple elements to a list", "1.0.0"),
		listCmd("rpush", -3, cmdRpush, "write denyoom fast", "Append one or multiple elements to a list", "1.0.0"),
		listCmd("lpushx", -3, cmdLpushx, "write denyoom fast", "Prepend an element to a list, only if the list exists", "2.2.0"),
		listCmd("rpushx", -3, cmdRpushx, "write denyoom fast", "Append an element to a list, only if the list exists", "2.2.0"),
		listCmd("lpop", -2, cmdLpop, "write fast", "Remove and get the first elements in a list", "1.0.0"),
		listCmd("rpop", -2, cmdRpop, "write fast", "Remove and get the last elements in a list", "1.0.0"),
		listCmd("lrange", 4, cmdLrange, "readonly", "Get a range of elements from a list", "1.0.0"),
		listCmd("llen", 2, cmdLlen, "readonly fast", "Get the length of a list", "1.0.0"),
		listCmd("lindex", 3, cmdLindex, "readonly", "Get an element from a list by its index", "1.0.0"),
		listCmd("lset", 4, cmdLset, "write denyoom", "Set the value of an element in a list by its index", "1.0.0"),
		listCmd("ltrim", 4, cmdLtrim, "write", "Trim a list to the specified range", "1.0.0"),
	)
}

// listEntry looks key up for a list command: (nil, nil, true) if absent; ok is false (and
// WRONGTYPE sent) if it holds another type.
func (c *client) listEntry(key []byte) (*entry, *list, bool) {
	e := c.db.lookup(key)
	if e == nil {
		return nil, nil, true
	}
	l, ok := c.db.value(e).(*list)
	if !ok {
		c.reply(errWrongType)
	}
	return e, l, ok
}

func (c *client) push(args [][]byte, front, onlyIfExists bool) {
	e, h := c.db.lookupHash(args[1])
	var l *list
	if e != nil {
		var ok bool
		if l, ok = c.db.value(e).(*list); !ok {
			c.reply(errWrongType)
			return
		}
	} else {
		if onlyIfExists {
			c.reply(replyZero)
			return
		}
		l = &list{}
		c.db.addObject(args[1], h, l)
	}
	for _, v := range args[2:] {
		if front {
			l.pushFront(bulkElement(v))
		} else {
			l.pushBack(bulkElement(v))
		}
	}
	c.db.touchBytes(args[1])
	c.replyInt(int64(l.len()))
}

func cmdLpush(c *client, args [][]byte) { c.push(args, true, false) }

func cmdRpush(c *client, args [][]byte) { c.push(args, false, false) }

func cmdLpushx(c *client, args [][]byte) { c.push(args, true, true) }

func cmdRpushx(c *client, args [][]byte) { c.push(args, false, true) }

// pop is popGenericCommand: one element as a bulk, or with a count an array.
func (c *client) pop(args [][]byte, front bool, name string) {
	if len(args) > 3 {
		c.arityError(name)
		return
	}
	hasCount := len(args) == 3
	var count int64
	if hasCount {
		var ok bool
		if count, ok = c.positiveArg(args[2]); !ok {
			return
		}
	}
	e, l, ok := c.listEntry(args[1])
	switch {
	case !ok:
		return
	case e == nil && hasCount:
		c.replyNullArray()
		return
	case e == nil:
		c.replyNull()
		return
	case hasCount && count == 0:
		c.reply(replyEmptyArray)
		return
	}
	if !hasCount {
		if front {
			c.reply(l.popFront())
		} else {
			c.reply(l.popBack())
		}
	} else {
		n := int(min(count, int64(l.len())))
		c.replyArrayLen(n)
		for range n {
			if front {
				c.reply(l.popFront())
			} else {
				c.reply(l.popBack())
			}
		}
	}
	c.db.touchBytes(args[1])
	if l.len() == 0 {
		c.db.removeEntry(e)
	}
}

func cmdLpop(c *client, args [][]byte) { c.pop(args, true, "lpop") }

func cmdRpop(c *client, args [][]byte) { c.pop(args, false, "rpop") }

func cmdLrange(c *client, args [][]byte) {
	start, ok := c.intArg(args[2])
	if !ok {
		return
	}
	stop, ok := c.intArg(args[3])
	if !ok {
		return
	}
	e, l, ok := c.listEntry(args[1])
	if !ok {
		return
	}
	if e == nil {
		c.reply(replyEmptyArray)
		return
	}
	from, to, ok := rangeIndexes(start, stop, l.len())
	if !ok {
		c.reply(replyEmptyArray)
		return
	}
	c.replyArrayLen(to - from + 1)
	a, b := l.runs(from, to+1) // elements are already bulk strings: copy them
	c.out = appendStrings(appendStrings(c.out, a), b)
}

func cmdLlen(c *client, args [][]byte) {
	if e, l, ok := c.listEntry(args[1]); ok {
		if e == nil {
			c.reply(replyZero)
		} else {
			c.replyInt(int64(l.len()))
		}
	}
}

// listIndex turns a LINDEX/LSET index into a position, or -1 if out of range.
func listIndex(i int64, n int) int {
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return -1
	}
	return int(i)
}

func cmdLindex(c *client, args [][]byte) {
	e, l, ok := c.listEntry(args[1])
	if !ok {
		return
	}
	if e == nil {
		c.replyNull()
		return
	}
	idx, ok := c.intArg(args[2])
	if !ok {
		return
	}
	if i := listIndex(idx, l.len()); i >= 0 {
		c.reply(l.at(i))
	} else {
		c.replyNull()
	}
}

func cmdLset(c *client, args [][]byte) {
	e, l, ok := c.listEntry(args[1])
	if !ok {
		return
	}
	if e == nil {
		c.reply(errNoSuchKey)
		return
	}
	idx, ok := c.intArg(args[2])
	if !ok {
		return
	}
	i := listIndex(idx, l.len())
	if i < 0 {
		c.reply(errIndexRange)
		return
	}
	l.set(i, bulkElement(args[3]))
	c.db.touchBytes(args[1])
	c.reply(replyOK)
}

func cmdLtrim(c *client, args [][]byte) {
	start, ok := c.intArg(args[2])
	if !ok {
		return
	}
	stop, ok := c.intArg(args[3])
	if !ok {
		return
	}
	e, l, ok := c.listEntry(args[1])
	if !ok {
		return
	}
	if e != nil {
		if from, to, ok := rangeIndexes(start, stop, l.len()); ok {
			l.trim(from, to)
		} else {
			l.trim(0, -1) // empty range: drop everything
		}
		c.db.touchBytes(args[1])
		if l.len() == 0 {
			c.db.removeEntry(e)
		}
	}
	c.reply(replyOK)
}
