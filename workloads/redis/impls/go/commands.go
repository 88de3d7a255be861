package main

// commands.go: the command table and dispatch, with redis 7.0's order of checks (unknown
// command, then unknown subcommand, then arity) and its error texts. The commands
// themselves are in commands_<type>.go, one file per data type.

import (
	"strconv"
	"strings"
)

// command is one entry of the command table.
type command struct {
	// name is the lower-case name used in arity errors; a subcommand's is "config|get".
	name string
	// arity is redis's: N means exactly N arguments (counting the name), -N at least N.
	arity int
	run   func(c *client, args [][]byte)
	// subcommands, for container commands (CONFIG, CLIENT, COMMAND).
	subcommands *commandSet

	// write: the command may change its keys (from flags; WATCH cares).
	write bool
	// notQueued: runs at once inside MULTI instead of being queued (EXEC, WATCH, ...).
	notQueued bool

	// For COMMAND and COMMAND DOCS.
	flags                     string // space-separated, e.g. "write denyoom fast"
	firstKey, lastKey, step   int
	group, summary, since     string
	aclCategories, complexity string
}

// commandSet is a table of commands by lower-case name: a map for listing them, and a
// small open-addressing index hashed over the case-folded name, so that finding the command
// of a request costs one pass over its name and one comparison, with no allocation.
type commandSet struct {
	byName map[string]*command
	index  [256]indexedCommand
}

type indexedCommand struct {
	name string // "get"; for a subcommand, its own part ("get" of "config|get")
	cmd  *command
}

func newCommandSet() *commandSet { return &commandSet{byName: map[string]*command{}} }

// nameHash hashes a command name as if it were lower-case, from its length and its first
// two and last letters: cheap, and spread enough for about a hundred names in 256 slots.
func nameHash[T string | []byte](name T) uint32 {
	n := len(name)
	if n == 0 {
		return 0
	}
	h := uint32(n)*0x9e3779b1 ^ uint32(name[0]|0x20)*0x85ebca6b ^ uint32(name[n-1]|0x20)*0xc2b2ae35
	if n > 1 {
		h ^= uint32(name[1]|0x20) * 0x27d4eb2f
	}
	return h ^ h>>15
}

func (s *commandSet) add(cmd *command) {
	name := cmd.name[strings.LastIndexByte(cmd.name, '|')+1:]
	s.byName[name] = cmd
	mask := uint32(len(s.index) - 1)
	i := nameHash(name) & mask
	for s.index[i].cmd != nil {
		i = (i + 1) & mask
	}
	s.index[i] = indexedCommand{name, cmd}
}

// find looks a command up by name, case-insensitively.
func (s *commandSet) find(name []byte) *command {
	mask := uint32(len(s.index) - 1)
	for i := nameHash(name) & mask; s.index[i].cmd != nil; i = (i + 1) & mask {
		if e := &s.index[i]; len(e.name) == len(name) && equalFold(name, e.name) {
			return e.cmd
		}
	}
	return nil
}

var commandTable = newCommandSet()

// register adds commands to the table; called from each commands_*.go file's init.
func register(cmds ...*command) {
	for _, cmd := range cmds {
		cmd.write = strings.HasPrefix(cmd.flags, "write")
		commandTable.add(cmd)
	}
}

// container makes a command with subcommands; each subcommand's name is "parent|sub".
func container(name, group, summary string, subs ...*command) *command {
	parent := &command{name: name, arity: -2, group: group, summary: summary, since: "2.0.0",
		subcommands: newCommandSet()}
	for _, s := range subs {
		s.name = name + "|" + s.name
		if s.group == "" {
			s.group = group
		}
		parent.subcommands.add(s)
	}
	return parent
}

// execute runs one request (at least one argument) and appends its reply to c.out.
func (c *client) execute(args [][]byte) {
	cmd := commandTable.find(args[0])
	if cmd != nil && cmd.subcommands != nil && len(args) > 1 {
		sub := cmd.subcommands.find(args[1])
		if sub == nil {
			c.reject("ERR unknown subcommand '" + cTrunc(args[1], 128) + "'. Try " +
				asciiUpper(cString(args[0])) + " HELP.")
			return
		}
		cmd = sub
	}
	if cmd == nil {
		c.reject(unknownCommand(args))
		return
	}
	// A container called without a subcommand has no run function and fails arity too.
	if cmd.arity > 0 && len(args) != cmd.arity || len(args) < -cmd.arity || cmd.run == nil {
		if cmd.name == "exec" {
			// redis's rejectCommand aborts the transaction for a refused EXEC (in MULTI or
			// not): execCommandAbort discards it and unwatches every key.
			c.multi = nil
			c.unwatchAll()
			c.reply("-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n")
			return
		}
		c.reject("ERR wrong number of arguments for '" + cmd.name + "' command")
		return
	}
	if c.multi != nil && !cmd.notQueued {
		c.multi.queue = append(c.multi.queue, copyArgs(args))
		c.reply("+QUEUED\r\n")
		return
	}
	c.call(cmd, args)
}

// reject replies an error for a request that could not run; inside MULTI it also dooms
// the transaction.
func (c *client) reject(msg string) {
	c.replyError(msg)
	if c.multi != nil {
		c.multi.dirty = true
	}
}

// cString is b as C's printf("%s") sees it: up to the first NUL byte.
func cString(b []byte) string {
	for i, ch := range b {
		if ch == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// asciiUpper is C's toupper over a string: ASCII letters only.
func asciiUpper(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = toUpper(b[i])
	}
	return string(b)
}

// cTrunc is printf("%.*s", n, b).
func cTrunc(b []byte, n int) string {
	s := cString(b)
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// unknownCommand is redis's error for an unknown command: the name and the first
// arguments, quoted, within about 128 bytes.
func unknownCommand(args [][]byte) string {
	var list strings.Builder
	for i := 1; i < len(args) && list.Len() < 128; i++ {
		arg := cTrunc(args[i], 128-list.Len())
		list.WriteByte('\'')
		list.WriteString(arg)
		list.WriteString("' ")
	}
	return "ERR unknown command '" + cTrunc(args[0], 128) + "', with args beginning with: " + list.String()
}

// --- Replies shared by many commands ---------------------------------------------------

const (
	replyOK          = "+OK\r\n"
	errWrongType     = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	errSyntax        = "-ERR syntax error\r\n"
	errNotInteger    = "-ERR value is not an integer or out of range\r\n"
	errNotFloat      = "-ERR value is not a valid float\r\n"
	errNotPositive   = "-ERR value is out of range, must be positive\r\n"
	errOverflow      = "-ERR increment or decrement would overflow\r\n"
	errNoSuchKey     = "-ERR no such key\r\n"
	errIndexRange    = "-ERR index out of range\r\n"
	replyEmptyArray  = "*0\r\n"
	replyZero        = ":0\r\n"
	replyOne         = ":1\r\n"
	errMaxStringSize = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
)

func (c *client) reply(raw string) { c.out = append(c.out, raw...) }

func (c *client) replyInt(n int64) { c.out = appendInt(c.out, n) }

func (c *client) replyBulk(b []byte) { c.out = appendBulk(c.out, b) }

func (c *client) replyBulkString(s string) { c.out = appendBulkString(c.out, s) }

func (c *client) replyArrayLen(n int) { c.out = appendArrayLen(c.out, n) }

func (c *client) replyError(msg string) { c.out = appendError(c.out, msg) }

// The replies below differ between RESP2 and RESP3 (after HELLO 3), as redis's
// addReplyNull, addReplyMapLen, addReplySetLen, addReplyDouble and addReplyVerbatim.

// replyNull is the null bulk string: `$-1` in RESP2, `_` in RESP3.
func (c *client) replyNull() {
	if c.resp == 3 {
		c.out = append(c.out, "_\r\n"...)
	} else {
		c.out = appendNull(c.out)
	}
}

// replyNullArray is the null array: `*-1` in RESP2, `_` in RESP3.
func (c *client) replyNullArray() {
	if c.resp == 3 {
		c.out = append(c.out, "_\r\n"...)
	} else {
		c.out = appendNullArray(c.out)
	}
}

// replyMapLen starts a map of n pairs: a flat array of 2n elements in RESP2.
func (c *client) replyMapLen(n int) {
	if c.resp == 3 {
		c.out = appendLen(c.out, '%', n)
	} else {
		c.out = appendArrayLen(c.out, 2*n)
	}
}

// replySetLen starts a set of n members: an array in RESP2.
func (c *client) replySetLen(n int) {
	if c.resp == 3 {
		c.out = appendLen(c.out, '~', n)
	} else {
		c.out = appendArrayLen(c.out, n)
	}
}

// replyDouble is a bulk string of "%.17g" in RESP2, a `,` double in RESP3.
func (c *client) replyDouble(d float64) {
	if c.resp == 3 {
		c.out = append(c.out, ',')
		c.out = formatDouble(c.out, d)
		c.out = append(c.out, crlf...)
	} else {
		c.out = appendDouble(c.out, d)
	}
}

// replyVerbatim is a bulk string in RESP2 and a verbatim "txt" string in RESP3.
func (c *client) replyVerbatim(s string) {
	if c.resp == 3 {
		c.out = appendLen(c.out, '=', len(s)+4)
		c.out = append(c.out, "txt:"...)
		c.out = append(c.out, s...)
		c.out = append(c.out, crlf...)
	} else {
		c.replyBulkString(s)
	}
}

func (c *client) arityError(name string) {
	c.replyError("ERR wrong number of arguments for '" + name + "' command")
}

// intArg parses an integer argument (redis's getLongLongFromObjectOrReply), replying the
// error itself when it fails.
func (c *client) intArg(b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok {
		c.reply(errNotInteger)
	}
	return n, ok
}

// positiveArg is getPositiveLongFromObjectOrReply: a count that may not be negative (and
// whose parse errors say so too).
func (c *client) positiveArg(b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok || n < 0 {
		c.reply(errNotPositive)
		return 0, false
	}
	return n, true
}

// floatArg parses a double argument (getDoubleFromObjectOrReply).
func (c *client) floatArg(b []byte) (float64, bool) {
	d, ok := parseDouble(b)
	if !ok {
		c.reply(errNotFloat)
	}
	return d, ok
}

// isOption compares an option argument with a lower-case keyword as strcasecmp does:
// the argument ends at its first NUL byte.
func isOption(arg []byte, keyword string) bool {
	n := len(arg)
	for i, ch := range arg {
		if ch == 0 {
			n = i
			break
		}
	}
	return equalFold(arg[:n], keyword)
}

// rangeIndexes normalises a start/stop pair of list or sorted set indexes (negative counts
// from the end) for a sequence of length n; ok is false for an empty range.
func rangeIndexes(start, stop int64, n int) (int, int, bool) {
	size := int64(n)
	if start < 0 {
		start += size
	}
	if stop < 0 {
		stop += size
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= size {
		return 0, 0, false
	}
	if stop >= size {
		stop = size - 1
	}
	return int(start), int(stop), true
}

// itoa is for the rare replies built as strings.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
