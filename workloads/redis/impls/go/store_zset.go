package main

// store_zset.go: the sorted set type, ordered by (score, member bytes) like redis. Small sets
// (at most 128 members of at most 64 bytes: zset-max-listpack-entries/-value) are a sorted
// slice, as redis's listpack; larger ones a skiplist with spans (O(log n) insert, delete,
// rank and access by rank, as redis's zskiplist) plus a map from member to score.

import (
	"math/rand/v2"
	"slices"
)

const (
	zsetMaxListpackEntries = 128
	zsetMaxListpackValue   = 64
)

type zsetEntry struct {
	member string
	score  float64
}

// zless orders entries by score, then by member bytes.
func zless(aScore float64, aMember string, bScore float64, bMember string) bool {
	return aScore < bScore || aScore == bScore && aMember < bMember
}

type zset struct {
	small []zsetEntry // the listpack encoding, sorted, while sl is nil
	sl    *skiplist
	dict  map[string]float64 // member → score, with sl
}

func (*zset) typeName() string { return "zset" }

// newZsetFor creates an empty sorted set in the encoding redis picks for its first member.
func newZsetFor(first []byte) *zset {
	z := &zset{}
	if len(first) > zsetMaxListpackValue {
		z.convert()
	}
	return z
}

func (z *zset) len() int {
	if z.sl != nil {
		return z.sl.length
	}
	return len(z.small)
}

func (z *zset) convert() {
	z.sl = newSkiplist()
	z.dict = make(map[string]float64, len(z.small))
	for _, e := range z.small {
		z.sl.insert(e.score, e.member)
		z.dict[e.member] = e.score
	}
	z.small = nil
}

func (z *zset) smallIndex(member []byte) int {
	for i := range z.small {
		if z.small[i].member == string(member) {
			return i
		}
	}
	return -1
}

func (z *zset) score(member []byte) (float64, bool) {
	if z.sl != nil {
		s, ok := z.dict[string(member)]
		return s, ok
	}
	if i := z.smallIndex(member); i >= 0 {
		return z.small[i].score, true
	}
	return 0, false
}

// listpackScore is how a score reads back after redis stores it in a listpack: exact,
// except that -0 is written as the integer 0.
func listpackScore(s float64) float64 {
	if s == 0 {
		return 0
	}
	return s
}

// insert adds a member that is not in the set.
func (z *zset) insert(member []byte, score float64) {
	if z.sl == nil && (len(z.small)+1 > zsetMaxListpackEntries || len(member) > zsetMaxListpackValue) {
		z.convert()
	}
	m := string(member)
	if z.sl != nil {
		z.sl.insert(score, m)
		z.dict[m] = score
		return
	}
	score = listpackScore(score)
	i, _ := slices.BinarySearchFunc(z.small, zsetEntry{m, score}, func(a, b zsetEntry) int {
		if zless(a.score, a.member, b.score, b.member) {
			return -1
		}
		return 1
	})
	z.small = slices.Insert(z.small, i, zsetEntry{m, score})
}

// update changes an existing member's score.
func (z *zset) update(member []byte, old, score float64) {
	if z.sl != nil {
		m := z.sl.remove(old, string(member))
		z.sl.insert(score, m)
		z.dict[m] = score
		return
	}
	i := z.smallIndex(member)
	z.small = slices.Delete(z.small, i, i+1)
	z.insert(member, score)
}

func (z *zset) remove(member []byte) bool {
	if z.sl != nil {
		s, ok := z.dict[string(member)]
		if !ok {
			return false
		}
		delete(z.dict, string(member))
		z.sl.remove(s, string(member))
		return true
	}
	i := z.smallIndex(member)
	if i < 0 {
		return false
	}
	z.small = slices.Delete(z.small, i, i+1)
	return true
}

// rank returns member's 0-based position in ascending order.
func (z *zset) rank(member []byte) (int, bool) {
	if z.sl != nil {
		s, ok := z.dict[string(member)]
		if !ok {
			return 0, false
		}
		return z.sl.rank(s, string(member)) - 1, true
	}
	i := z.smallIndex(member)
	return i, i >= 0
}

// rangeByRank calls fn for the entries at ranks start..end (inclusive, valid, ascending
// ranks), in descending order when rev is set (ranks then count from the highest score).
func (z *zset) rangeByRank(start, end int, rev bool, fn func(zsetEntry)) {
	n := z.len()
	if z.sl == nil {
		for r := start; r <= end; r++ {
			if rev {
				fn(z.small[n-1-r])
			} else {
				fn(z.small[r])
			}
		}
		return
	}
	if rev {
		x := z.sl.byRank(n - start)
		for r := start; r <= end; r++ {
			fn(zsetEntry{x.member, x.score})
			x = x.back
		}
		return
	}
	x := z.sl.byRank(start + 1)
	for r := start; r <= end; r++ {
		fn(zsetEntry{x.member, x.score})
		x = x.levels[0].next
	}
}

// each calls fn for every entry in ascending order until fn returns false; rev walks
// from the highest.
func (z *zset) each(rev bool, fn func(zsetEntry) bool) {
	if z.sl == nil {
		for i := range z.small {
			e := z.small[i]
			if rev {
				e = z.small[len(z.small)-1-i]
			}
			if !fn(e) {
				return
			}
		}
		return
	}
	if rev {
		for x := z.sl.tail; x != nil && fn(zsetEntry{x.member, x.score}); x = x.back {
		}
		return
	}
	for x := z.sl.head.levels[0].next; x != nil && fn(zsetEntry{x.member, x.score}); x = x.levels[0].next {
	}
}

// popEnd removes and returns the lowest entry (or the highest if max).
func (z *zset) popEnd(max bool) zsetEntry {
	if z.sl == nil {
		i := 0
		if max {
			i = len(z.small) - 1
		}
		e := z.small[i]
		z.small = slices.Delete(z.small, i, i+1)
		return e
	}
	x := z.sl.head.levels[0].next
	if max {
		x = z.sl.tail
	}
	e := zsetEntry{x.member, x.score}
	z.sl.remove(e.score, e.member)
	delete(z.dict, e.member)
	return e
}

// --- Skiplist --------------------------------------------------------------------------

const skiplistMaxLevel = 32

type skipLevel struct {
	next *skipNode
	span int // how many ranks the link jumps over
}

type skipNode struct {
	member string
	score  float64
	back   *skipNode
	levels []skipLevel
}

type skiplist struct {
	head   *skipNode
	tail   *skipNode
	length int
	level  int
}

func newSkiplist() *skiplist {
	return &skiplist{head: &skipNode{levels: make([]skipLevel, skiplistMaxLevel)}, level: 1}
}

// randomLevel returns 1 + the number of successes with probability 1/4 each, as redis.
func randomLevel() int {
	level := 1
	for level < skiplistMaxLevel && rand.Uint32()&3 == 0 {
		level++
	}
	return level
}

func (sl *skiplist) insert(score float64, member string) {
	var update [skiplistMaxLevel]*skipNode
	var rank [skiplistMaxLevel]int
	x := sl.head
	for i := sl.level - 1; i >= 0; i-- {
		if i < sl.level-1 {
			rank[i] = rank[i+1]
		}
		for n := x.levels[i].next; n != nil && zless(n.score, n.member, score, member); n = x.levels[i].next {
			rank[i] += x.levels[i].span
			x = n
		}
		update[i] = x
	}
	level := randomLevel()
	if level > sl.level {
		for i := sl.level; i < level; i++ {
			rank[i] = 0
			update[i] = sl.head
			update[i].levels[i].span = sl.length
		}
		sl.level = level
	}
	x = &skipNode{member: member, score: score, levels: make([]skipLevel, level)}
	for i := range level {
		x.levels[i].next = update[i].levels[i].next
		update[i].levels[i].next = x
		x.levels[i].span = update[i].levels[i].span - (rank[0] - rank[i])
		update[i].levels[i].span = rank[0] - rank[i] + 1
	}
	for i := level; i < sl.level; i++ {
		update[i].levels[i].span++
	}
	if update[0] != sl.head {
		x.back = update[0]
	}
	if next := x.levels[0].next; next != nil {
		next.back = x
	} else {
		sl.tail = x
	}
	sl.length++
}

// remove deletes the entry (score, member), which must exist, and returns its member string.
func (sl *skiplist) remove(score float64, member string) string {
	var update [skiplistMaxLevel]*skipNode
	x := sl.head
	for i := sl.level - 1; i >= 0; i-- {
		for n := x.levels[i].next; n != nil && zless(n.score, n.member, score, member); n = x.levels[i].next {
			x = n
		}
		update[i] = x
	}
	x = x.levels[0].next
	for i := 0; i < sl.level; i++ {
		if update[i].levels[i].next == x {
			update[i].levels[i].span += x.levels[i].span - 1
			update[i].levels[i].next = x.levels[i].next
		} else {
			update[i].levels[i].span--
		}
	}
	if next := x.levels[0].next; next != nil {
		next.back = x.back
	} else {
		sl.tail = x.back
	}
	for sl.level > 1 && sl.head.levels[sl.level-1].next == nil {
		sl.level--
	}
	sl.length--
	return x.member
}

// rank returns the 1-based rank of (score, member), which must exist.
func (sl *skiplist) rank(score float64, member string) int {
	rank := 0
	x := sl.head
	for i := sl.level - 1; i >= 0; i-- {
		for n := x.levels[i].next; n != nil && (n.score < score || n.score == score && n.member <= member); n = x.levels[i].next {
			rank += x.levels[i].span
			x = n
		}
		if x != sl.head && x.member == member {
			return rank
		}
	}
	return 0
}

// byRank returns the node at 1-based rank.
func (sl *skiplist) byRank(rank int) *skipNode {
	traversed := 0
	x := sl.head
	for i := sl.level - 1; i >= 0; i-- {
		for x.levels[i].next != nil && traversed+x.levels[i].span <= rank {
			traversed += x.levels[i].span
			x = x.levels[i].next
		}
		if traversed == rank {
			return x
		}
	}
	return nil
}
