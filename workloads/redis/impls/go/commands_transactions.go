package main

// commands_transactions.go: MULTI / EXEC / DISCARD / WATCH / UNWATCH (multi.c). Client
// libraries wrap pipelines in MULTI ... EXEC by default (redis-py does), so these are part
// of "a client library must work".
//
// A queued command is checked for existence and arity when it arrives (an error there
// aborts the EXEC, as in redis) and runs at EXEC. A watched key that changes (the store
// calls db.touch on every change, as redis calls signalModifiedKey) or expires makes the
// next EXEC reply a null array.

func init() {
	txCmd := func(name string, arity int, run func(*client, [][]byte), summary, since string) *command {
		return &command{name: name, arity: arity, run: run, flags: "noscript loading stale fast allow_busy",
			group: "transactions", summary: summary, since: since, notQueued: true}
	}
	watch := txCmd("watch", -2, cmdWatch, "Watch the given keys to determine execution of the MULTI/EXEC block", "2.2.0")
	watch.firstKey, watch.lastKey, watch.step = 1, -1, 1
	register(
		txCmd("multi", 1, cmdMulti, "Mark the start of a transaction block", "1.2.0"),
		txCmd("exec", 1, cmdExec, "Execute all commands issued after MULTI", "1.2.0"),
		txCmd("discard", 1, cmdDiscard, "Discard all commands issued after MULTI", "2.0.0"),
		watch,
		txCmd("unwatch", 1, cmdUnwatch, "Forget about all watched keys", "2.2.0"),
	)
	// Inside MULTI redis runs only EXEC, DISCARD, MULTI, WATCH, QUIT and RESET at once:
	// UNWATCH is queued like any other command.
	commandTable.byName["unwatch"].notQueued = false
	commandTable.byName["quit"].notQueued = true
}

// transaction is a client's MULTI state.
type transaction struct {
	queue [][][]byte // the queued requests, copied out of the read buffer
	dirty bool       // a queued command was rejected: EXEC must abort
}

// watchKey names a watched key.
type watchKey struct {
	db  int
	key string
}

// watch is one key a client watches.
type watch struct {
	watchKey
	expired bool // the key was already logically expired when watched
}

// copyArgs copies a request out of the read buffer into one allocation.
func copyArgs(args [][]byte) [][]byte {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		out[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	return out
}

func cmdMulti(c *client, args [][]byte) {
	if c.multi != nil {
		c.replyError("ERR MULTI calls can not be nested")
		return
	}
	c.multi = &transaction{}
	c.reply(replyOK)
}

func cmdExec(c *client, args [][]byte) {
	tx := c.multi
	if tx == nil {
		c.replyError("ERR EXEC without MULTI")
		return
	}
	c.multi = nil
	aborted := c.dirtyCAS || c.watchedKeyExpired()
	c.unwatchAll()
	switch {
	case tx.dirty:
		c.reply("-EXECABORT Transaction discarded because of previous errors.\r\n")
		return
	case aborted:
		c.replyNullArray()
		return
	}
	c.replyArrayLen(len(tx.queue))
	for _, req := range tx.queue {
		c.call(resolvedCommand(req), req)
	}
}

// resolvedCommand finds a queued request's command (it was checked when queued).
func resolvedCommand(args [][]byte) *command {
	cmd := commandTable.find(args[0])
	if cmd.subcommands != nil && len(args) > 1 {
		cmd = cmd.subcommands.find(args[1])
	}
	return cmd
}

func cmdDiscard(c *client, args [][]byte) {
	if c.multi == nil {
		c.replyError("ERR DISCARD without MULTI")
		return
	}
	c.multi = nil
	c.unwatchAll()
	c.reply(replyOK)
}

func cmdWatch(c *client, args [][]byte) {
	if c.multi != nil {
		c.replyError("ERR WATCH inside MULTI is not allowed")
		return
	}
	w := c.srv.ks.watchers
	for _, key := range args[1:] {
		k := watchKey{c.dbIndex, string(key)}
		if c.watching(k) {
			continue
		}
		expired := false
		if i := c.db.dict.find(key, hashBytes(key)); i >= 0 {
			expired = c.db.isExpired(&c.db.dict.slots[i], nowMs())
		}
		c.watched = append(c.watched, watch{k, expired})
		w[k] = append(w[k], c)
	}
	c.reply(replyOK)
}

func cmdUnwatch(c *client, args [][]byte) {
	c.unwatchAll()
	c.reply(replyOK)
}

func (c *client) watching(k watchKey) bool {
	for _, w := range c.watched {
		if w.watchKey == k {
			return true
		}
	}
	return false
}

// unwatchAll forgets the client's watched keys (and their dirtiness). Runs under the
// keyspace lock.
func (c *client) unwatchAll() {
	for _, w := range c.watched {
		list := c.srv.ks.watchers[w.watchKey]
		for i, other := range list {
			if other == c {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(c.srv.ks.watchers, w.watchKey)
		} else {
			c.srv.ks.watchers[w.watchKey] = list
		}
	}
	c.watched = c.watched[:0]
	c.dirtyCAS = false
}

// watchedKeyExpired reports whether a key that was live when watched has expired since.
func (c *client) watchedKeyExpired() bool {
	now := nowMs()
	for _, w := range c.watched {
		if w.expired {
			continue
		}
		db := &c.srv.ks.dbs[w.db]
		if i := db.dict.findString(w.key, hashString(w.key)); i >= 0 && db.isExpired(&db.dict.slots[i], now) {
			return true
		}
	}
	return false
}

// call runs a command, directly or from EXEC.
func (c *client) call(cmd *command, args [][]byte) { cmd.run(c, args) }

// keyTouched marks the client dirty because a key it watches changed, unless the key had
// already expired when watched and has now merely been deleted (no logical change).
func (c *client) keyTouched(db *db, key string) {
	for i := range c.watched {
		w := &c.watched[i]
		if w.db == db.id && w.key == key && w.expired {
			if db.dict.findString(key, hashString(key)) < 0 {
				w.expired = false
				return
			}
			break
		}
	}
	c.dirtyCAS = true
}
