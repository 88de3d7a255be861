package main

// commands_zsets.go: sorted set commands (t_zset.c).

import (
	"math"
	"strconv"
)

func init() {
	zCmd := func(name string, arity int, run func(*client, [][]byte), flags, summary, since string) *command {
		return &command{name: name, arity: arity, run: run, flags: flags, firstKey: 1, lastKey: 1, step: 1,
			group: "sorted-set", summary: summary, since: since}
	}
	register(
		zCmd("zadd", -4, cmdZadd, "write denyoom fast", "Add one or more members to a sorted set, or update its score if it already exists", "1.2.0"),
		zCmd("zincrby", 4, cmdZincrby, "write denyoom fast", "Increment the score of a member in a sorted set", "1.2.0"),
		zCmd("zrem", -3, cmdZrem, "write fast", "Remove one or more members from a sorted set", "1.2.0"),
		zCmd("zcard", 2, cmdZcard, "readonly fast", "Get the number of members in a sorted set", "1.2.0"),
		zCmd("zscore", 3, cmdZscore, "readonly fast", "Get the score associated with the given member in a sorted set", "1.2.0"),
		zCmd("zmscore", -3, cmdZmscore, "readonly fast", "Get the score associated with the given members in a sorted set", "6.2.0"),
		zCmd("zrank", 3, cmdZrank, "readonly fast", "Determine the index of a member in a sorted set", "2.0.0"),
		zCmd("zrevrank", 3, cmdZrevrank, "readonly fast", "Determine the index of a member in a sorted set, with scores ordered from high to low", "2.0.0"),
		zCmd("zcount", 4, cmdZcount, "readonly fast", "Count the members in a sorted set with scores within the given values", "2.0.0"),
		zCmd("zrange", -4, cmdZrange, "readonly", "Return a range of members in a sorted set", "1.2.0"),
		zCmd("zrevrange", -4, cmdZrevrange, "readonly", "Return a range of members in a sorted set, by index, with scores ordered from high to low", "1.2.0"),
		zCmd("zrangebyscore", -4, cmdZrangebyscore, "readonly", "Return a range of members in a sorted set, by score", "1.0.5"),
		zCmd("zrevrangebyscore", -4, cmdZrevrangebyscore, "readonly", "Return a range of members in a sorted set, by score, with scores ordered from high to low", "2.2.0"),
		zCmd("zrangebylex", -4, cmdZrangebylex, "readonly", "Return a range of members in a sorted set, by lexicographical range", "2.8.9"),
		zCmd("zrevrangebylex", -4, cmdZrevrangebylex, "readonly", "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "2.8.9"),
		zCmd("zpopmin", -2, cmdZpopmin, "write fast", "Remove and return members with the lowest scores in a sorted set", "5.0.0"),
		zCmd("zpopmax", -2, cmdZpopmax, "write fast", "Remove and return members with the highest scores in a sorted set", "5.0.0"),
	)
}

// zsetEntry looks key up for a sorted set command: (nil, nil, true) if absent; ok is false
// (and WRONGTYPE sent) if it holds another type.
func (c *client) zsetLookup(key []byte) (*entry, *zset, bool) {
	e := c.db.lookup(key)
	if e == nil {
		return nil, nil, true
	}
	z, ok := c.db.value(e).(*zset)
	if !ok {
		c.reply(errWrongType)
	}
	return e, z, ok
}

// ZADD's options.
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddIncr
	zaddCH
)

func cmdZadd(c *client, args [][]byte) { zaddGeneric(c, args, 0) }

func cmdZincrby(c *client, args [][]byte) { zaddGeneric(c, args, zaddIncr) }

// zaddGeneric is zaddGenericCommand (ZADD and ZINCRBY): options, then every score parsed
// before anything changes, then the key's type, then the updates.
func zaddGeneric(c *client, args [][]byte, flags int) {
	i := 2
	for ; i < len(args); i++ {
		switch opt := args[i]; {
		case isOption(opt, "nx"):
			flags |= zaddNX
		case isOption(opt, "xx"):
			flags |= zaddXX
		case isOption(opt, "ch"):
			flags |= zaddCH
		case isOption(opt, "incr"):
			flags |= zaddIncr
		case isOption(opt, "gt"):
			flags |= zaddGT
		case isOption(opt, "lt"):
			flags |= zaddLT
		default:
			goto pairs
		}
	}
pairs:
	elements := len(args) - i
	if elements%2 != 0 || elements == 0 {
		c.reply(errSyntax)
		return
	}
	elements /= 2
	nx, xx, gt, lt, incr := flags&zaddNX != 0, flags&zaddXX != 0, flags&zaddGT != 0, flags&zaddLT != 0, flags&zaddIncr != 0
	if nx && xx {
		c.replyError("ERR XX and NX options at the same time are not compatible")
		return
	}
	if gt && nx || lt && nx || gt && lt {
		c.replyError("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	}
	if incr && elements > 1 {
		c.replyError("ERR INCR option supports a single increment-element pair")
		return
	}
	var scoreBuf [8]float64
	scores := scoreBuf[:0]
	for j := range elements {
		s, ok := c.floatArg(args[i+2*j])
		if !ok {
			return
		}
		scores = append(scores, s)
	}
	e, h := c.db.lookupHash(args[1])
	var z *zset
	if e != nil {
		var ok bool
		if z, ok = c.db.value(e).(*zset); !ok {
			c.reply(errWrongType)
			return
		}
	}
	added, updated, processed := 0, 0, 0
	var score float64
	if z == nil && !xx {
		z = newZsetFor(args[i+1])
		c.db.addObject(args[1], h, z)
	}
	for j := 0; z != nil && j < elements; j++ {
		member := args[i+2*j+1]
		score = scores[j]
		cur, exists := z.score(member)
		switch {
		case exists && nx, !exists && xx:
			continue // nothing to do for this one
		case exists:
			if incr {
				score += cur
				if math.IsNaN(score) {
					c.replyError("ERR resulting score is not a number (NaN)")
					return
				}
			}
			if lt && score >= cur || gt && score <= cur {
				continue
			}
			if score != cur {
				z.update(member, cur, score)
				updated++
			}
		default:
			z.insert(member, score)
			added++
		}
		processed++
	}
	if added+updated > 0 {
		c.db.touchBytes(args[1])
	}
	switch {
	case incr && processed > 0:
		c.replyDouble(score)
	case incr:
		c.replyNull()
	case flags&zaddCH != 0:
		c.replyInt(int64(added + updated))
	default:
		c.replyInt(int64(added))
	}
}

func cmdZrem(c *client, args [][]byte) {
	e, z, ok := c.zsetLookup(args[1])
	if !ok {
		return
	}
	n := 0
	if e != nil {
		for _, m := range args[2:] {
			if z.remove(m) {
				n++
				c.db.touchBytes(args[1])
				if z.len() == 0 {
					c.db.removeEntry(e)
					break
				}
			}
		}
	}
	c.replyInt(int64(n))
}

func cmdZcard(c *client, args [][]byte) {
	if e, z, ok := c.zsetLookup(args[1]); ok {
		if e == nil {
			c.reply(replyZero)
		} else {
			c.replyInt(int64(z.len()))
		}
	}
}

func cmdZscore(c *client, args [][]byte) {
	e, z, ok := c.zsetLookup(args[1])
	if !ok {
		return
	}
	if e != nil {
		if s, found := z.score(args[2]); found {
			c.replyDouble(s)
			return
		}
	}
	c.replyNull()
}

func cmdZmscore(c *client, args [][]byte) {
	e, z, ok := c.zsetLookup(args[1])
	if !ok {
		return
	}
	c.replyArrayLen(len(args) - 2)
	for _, m := range args[2:] {
		if e != nil {
			if s, found := z.score(m); found {
				c.replyDouble(s)
				continue
			}
		}
		c.replyNull()
	}
}

func (c *client) zrank(args [][]byte, rev bool) {
	e, z, ok := c.zsetLookup(args[1])
	if !ok {
		return
	}
	if e != nil {
		if r, found := z.rank(args[2]); found {
			if rev {
				r = z.len() - 1 - r
			}
			c.replyInt(int64(r))
			return
		}
	}
	c.replyNull()
}

func cmdZrank(c *client, args [][]byte) { c.zrank(args, false) }

func cmdZrevrank(c *client, args [][]byte) { c.zrank(args, true) }

// --- Ranges ----------------------------------------------------------------------------

// scoreBound is one end of a BYSCORE range: "(1.5" is exclusive, "1.5" inclusive.
type scoreBound struct {
	value     float64
	exclusive bool
}

// parseScoreBound is one half of redis's zslParseRange, which calls strtod directly: leading
// blanks and out-of-range values are accepted, the number ends at a NUL byte, and an empty
// string reads as 0. Only trailing garbage and NaN are rejected.
func parseScoreBound(b []byte) (scoreBound, bool) {
	var bound scoreBound
	s := []byte(cString(b))
	if len(s) > 0 && s[0] == '(' {
		bound.exclusive = true
		s = s[1:]
	}
	v, ok := strtodWhole(s)
	if !ok || math.IsNaN(v) {
		return bound, false
	}
	bound.value = v
	return bound, true
}

// strtodWhole is strtod(s) whose end pointer must reach the end of s: blanks may lead,
// the empty (or all-consumed) string is 0, overflow gives ±Inf.
func strtodWhole(s []byte) (float64, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i == len(s) {
		return 0, i == 0 // strtod consumed nothing: fine only if there was nothing
	}
	kind, ok := floatSyntax(s[i:])
	if !ok {
		return 0, false
	}
	if kind == 'n' {
		return math.NaN(), true
	}
	text := string(s[i:])
	if kind == 'x' && !containsByte(s[i:], 'p', 'P') {
		text += "p0"
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

func (b scoreBound) belowMax(s float64) bool {
	return s < b.value || !b.exclusive && s == b.value
}

func (b scoreBound) aboveMin(s float64) bool {
	return s > b.value || !b.exclusive && s == b.value
}

// lexBound is one end of a BYLEX range: "-", "+", "[abc" (inclusive) or "(abc" (exclusive).
type lexBound struct {
	value     string
	exclusive bool
	inf       int // -1 for "-", +1 for "+"
}

func parseLexBound(b []byte) (lexBound, bool) {
	if len(b) == 0 {
		return lexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) > 1 && b[1] != 0 {
			return lexBound{}, false
		}
		if b[0] == '+' {
			return lexBound{inf: 1, exclusive: true}, true
		}
		return lexBound{inf: -1, exclusive: true}, true
	case '(':
		return lexBound{value: string(b[1:]), exclusive: true}, true
	case '[':
		return lexBound{value: string(b[1:])}, true
	}
	return lexBound{}, false
}

func (b lexBound) belowMax(m string) bool {
	switch b.inf {
	case 1:
		return true
	case -1:
		return false
	}
	return m < b.value || !b.exclusive && m == b.value
}

func (b lexBound) aboveMin(m string) bool {
	switch b.inf {
	case 1:
		return false
	case -1:
		return true
	}
	return m > b.value || !b.exclusive && m == b.value
}

// ZRANGE's range kinds and directions.
const (
	byAuto = iota
	byRank
	byScore
	byLex

	dirAuto = iota
	dirForward
	dirReverse
)

func cmdZrange(c *client, args [][]byte)    { zrangeGeneric(c, args, byAuto, dirAuto) }
func cmdZrevrange(c *client, args [][]byte) { zrangeGeneric(c, args, byRank, dirReverse) }
func cmdZrangebyscore(c *client, args [][]byte) {
	zrangeGeneric(c, args, byScore, dirForward)
}
func cmdZrevrangebyscore(c *client, args [][]byte) {
	zrangeGeneric(c, args, byScore, dirReverse)
}
func cmdZrangebylex(c *client, args [][]byte) { zrangeGeneric(c, args, byLex, dirForward) }
func cmdZrevrangebylex(c *client, args [][]byte) {
	zrangeGeneric(c, args, byLex, dirReverse)
}

// zrangeGeneric is zrangeGenericCommand: the options, their conflicts, the range (all
// validated before the key is looked up), then the reply.
func zrangeGeneric(c *client, args [][]byte, by, dir int) {
	withScores := false
	offset, limit := int64(0), int64(-1)
	for j := 4; j < len(args); j++ {
		left := len(args) - j - 1
		switch opt := args[j]; {
		case isOption(opt, "withscores"):
			withScores = true
		case isOption(opt, "limit") && left >= 2:
			var ok bool
			if offset, ok = c.intArg(args[j+1]); !ok {
				return
			}
			if limit, ok = c.intArg(args[j+2]); !ok {
				return
			}
			j += 2
		case dir == dirAuto && isOption(opt, "rev"):
			dir = dirReverse
		case by == byAuto && isOption(opt, "bylex"):
			by = byLex
		case by == byAuto && isOption(opt, "byscore"):
			by = byScore
		default:
			c.reply(errSyntax)
			return
		}
	}
	if dir == dirAuto {
		dir = dirForward
	}
	if by == byAuto {
		by = byRank
	}
	if limit != -1 && by == byRank {
		c.replyError("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && by == byLex {
		c.replyError("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	rev := dir == dirReverse
	minArg, maxArg := args[2], args[3]
	if rev && by != byRank {
		minArg, maxArg = maxArg, minArg // given as max, min
	}
	var start, stop int64
	var smin, smax scoreBound
	var lmin, lmax lexBound
	switch by {
	case byRank:
		var ok bool
		if start, ok = c.intArg(minArg); !ok {
			return
		}
		if stop, ok = c.intArg(maxArg); !ok {
			return
		}
	case byScore:
		var ok1, ok2 bool
		smin, ok1 = parseScoreBound(minArg)
		smax, ok2 = parseScoreBound(maxArg)
		if !ok1 || !ok2 {
			c.replyError("ERR min or max is not a float")
			return
		}
	case byLex:
		var ok1, ok2 bool
		lmin, ok1 = parseLexBound(minArg)
		lmax, ok2 = parseLexBound(maxArg)
		if !ok1 || !ok2 {
			c.replyError("ERR min or max not valid string range item")
			return
		}
	}
	e, z, ok := c.zsetLookup(args[1])
	if !ok {
		return
	}
	if e == nil {
		c.reply(replyEmptyArray)
		return
	}
	if by == byRank {
		from, to, ok := rangeIndexes(start, stop, z.len())
		if !ok {
			c.reply(replyEmptyArray)
			return
		}
		c.replyRangeLen(to-from+1, withScores)
		z.rangeByRank(from, to, rev, func(ze zsetEntry) { c.replyZsetEntry(ze, withScores) })
		return
	}
	// BYSCORE / BYLEX: walk in order from the near end, skipping what is before the range
	// and stopping past it.
	var in []zsetEntry
	if !(offset > 0 && offset >= int64(z.len())) {
		inRange := func(ze zsetEntry) (before, inside bool) {
			if by == byScore {
				lo, hi := smin.aboveMin(ze.score), smax.belowMax(ze.score)
				if rev {
					return !hi, lo
				}
				return !lo, hi
			}
			lo, hi := lmin.aboveMin(ze.member), lmax.belowMax(ze.member)
			if rev {
				return !hi, lo
			}
			return !lo, hi
		}
		z.each(rev, func(ze zsetEntry) bool {
			before, inside := inRange(ze)
			if before {
				return true
			}
			if !inside {
				return false
			}
			if offset != 0 { // a negative offset skips everything, as in redis
				offset--
				return true
			}
			if limit == 0 {
				return false
			}
			limit--
			in = append(in, ze)
			return true
		})
	}
	c.replyRangeLen(len(in), withScores)
	for _, ze := range in {
		c.replyZsetEntry(ze, withScores)
	}
}

// replyRangeLen starts a reply of n sorted set entries: with scores, a flat array of
// member, score in RESP2 and an array of [member, score] pairs in RESP3.
func (c *client) replyRangeLen(n int, withScores bool) {
	if withScores && c.resp == 2 {
		n *= 2
	}
	c.replyArrayLen(n)
}

// replyZsetEntry replies one entry of a range (see replyRangeLen).
func (c *client) replyZsetEntry(ze zsetEntry, withScore bool) {
	if withScore && c.resp == 3 {
		c.replyArrayLen(2)
	}
	c.replyBulkString(ze.member)
	if withScore {
		c.replyDouble(ze.score)
	}
}

func cmdZcount(c *client, args [][]byte) {
	smin, ok1 := parseScoreBound(args[2])
	smax, ok2 := parseScoreBound(args[3])
	if !ok1 || !ok2 {
		c.replyError("ERR min or max is not a float")
		return
	}
	e, z, ok := c.zsetLookup(args[1])
	if !ok {
		return
	}
	n := 0
	if e != nil {
		z.each(false, func(ze zsetEntry) bool {
			if !smin.aboveMin(ze.score) {
				return true
			}
			if !smax.belowMax(ze.score) {
				return false
			}
			n++
			return true
		})
	}
	c.replyInt(int64(n))
}

// zpop is ZPOPMIN/ZPOPMAX: a flat array of member, score pairs.
func (c *client) zpop(args [][]byte, max bool) {
	if len(args) > 3 {
		c.reply(errSyntax)
		return
	}
	count := int64(-1)
	if len(args) == 3 {
		var ok bool
		if count, ok = c.positiveArg(args[2]); !ok {
			return
		}
	}
	e, z, ok := c.zsetLookup(args[1])
	switch {
	case !ok:
		return
	case e == nil || count == 0:
		c.reply(replyEmptyArray)
		return
	}
	if count == -1 {
		count = 1
	}
	n := int(min(count, int64(z.len())))
	// RESP3 nests [member, score] pairs when a count was given, else it is flat.
	nested := c.resp == 3 && len(args) == 3
	if nested {
		c.replyArrayLen(n)
	} else {
		c.replyArrayLen(2 * n)
	}
	for range n {
		ze := z.popEnd(max)
		if nested {
			c.replyArrayLen(2)
		}
		c.replyBulkString(ze.member)
		c.replyDouble(ze.score)
	}
	if n > 0 {
		c.db.touchBytes(args[1])
	}
	if z.len() == 0 {
		c.db.removeEntry(e)
	}
}

func cmdZpopmin(c *client, args [][]byte) { c.zpop(args, false) }

func cmdZpopmax(c *client, args [][]byte) { c.zpop(args, true) }
