package main

// store_dict.go: the hash table behind each database.
//
// Why not a Go map: SCAN needs a cursor that survives between calls and across resizes,
// and a Go map has neither a stable order nor a position one can resume from. So this is
// an open-addressing table (linear probing, power-of-two size) whose SCAN cursor walks
// *home buckets* in redis's reverse-binary order: a cursor names the keys whose hash maps
// to one bucket, wherever probing placed them, so the guarantees of redis's dictScan hold
// (every key present for the whole scan is returned at least once, even if the table grows
// or shrinks in between).
//
// Memory: a slot is 24 bytes: the key and a short string value share one allocation (kv),
// and the rest (lengths, flags, hash) packs into one word. A collection value (list, hash,
// set, sorted set) lives in its database's object table; its slot holds the index.

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"strings"
)

var hashSeed = maphash.MakeSeed()

// hashBytes is the 31-bit hash a slot stores.
func hashBytes(key []byte) uint32 { return uint32(maphash.Bytes(hashSeed, key)) >> 1 }

// hashString equals hashBytes of the same bytes (maphash guarantees it).
func hashString(key string) uint32 { return uint32(maphash.String(hashSeed, key)) >> 1 }

// entry is one slot of the table.
type entry struct {
	// kv is the key, followed, for a plain string value, by the value's bytes.
	kv string
	// meta packs, from bit 0: the key's length, or for an object value its index in the
	// object table (30 bits); the has-a-TTL flag; the used flag; the object flag; and the
	// key's 31-bit hash, which spares most key comparisons and every rehash.
	meta uint64
}

const (
	metaLow    = 1<<30 - 1 // key length (keys are at most 512 MiB) or object index
	metaTTL    = 1 << 30
	metaUsed   = 1 << 31
	metaObject = 1 << 32
	metaHash   = 33
)

func (e *entry) used() bool     { return e.meta&metaUsed != 0 }
func (e *entry) hasTTL() bool   { return e.meta&metaTTL != 0 }
func (e *entry) isObject() bool { return e.meta&metaObject != 0 }
func (e *entry) hash() uint32   { return uint32(e.meta >> metaHash) }

// objectIndex is the value's index in the object table (only for an object value).
func (e *entry) objectIndex() int { return int(e.meta & metaLow) }

func (e *entry) keyLen() int {
	if e.isObject() {
		return len(e.kv)
	}
	return int(e.meta & metaLow)
}

func (e *entry) key() string { return e.kv[:e.keyLen()] }

// inlineStr is the value of a plain string entry.
func (e *entry) inlineStr() string { return e.kv[e.keyLen():] }

// joinKV makes the kv string of a key and its value with a single allocation.
func joinKV(key string, val []byte) string {
	var b strings.Builder
	b.Grow(len(key) + len(val))
	b.WriteString(key)
	b.Write(val)
	return b.String()
}

// setInline makes e a plain string entry holding val.
func (e *entry) setInline(val []byte) {
	key := e.key()
	e.kv = joinKV(key, val)
	e.meta = e.meta&^(metaLow|metaObject) | uint64(len(key))
}

// setObjectIndex makes e an object entry whose value is object idx.
func (e *entry) setObjectIndex(idx int) {
	if !e.isObject() && len(e.kv) != e.keyLen() {
		e.kv = strings.Clone(e.key()) // let the old value's bytes go
	}
	e.meta = e.meta&^metaLow | metaObject | uint64(idx)
}

type dict struct {
	slots []entry // len is 0 or a power of two
	count int
}

const dictMinSize = 8

func (d *dict) mask() uint32 { return uint32(len(d.slots) - 1) }

// find returns the index of key's slot, or -1.
func (d *dict) find(key []byte, h uint32) int {
	if d.count == 0 {
		return -1
	}
	mask := d.mask()
	for i := h & mask; ; i = (i + 1) & mask {
		e := &d.slots[i]
		if e.meta&metaUsed == 0 {
			return -1
		}
		if e.hash() == h && e.keyLen() == len(key) && e.kv[:len(key)] == string(key) {
			return int(i)
		}
	}
}

// findString is find for a key held as a string.
func (d *dict) findString(key string, h uint32) int {
	if d.count == 0 {
		return -1
	}
	mask := d.mask()
	for i := h & mask; ; i = (i + 1) & mask {
		e := &d.slots[i]
		if e.meta&metaUsed == 0 {
			return -1
		}
		if e.hash() == h && e.keyLen() == len(key) && e.kv[:len(key)] == key {
			return int(i)
		}
	}
}

// insert adds a key known to be absent and returns its slot, valid until the next insert or
// delete. kv is the key followed by a string value, of which the first keyLen bytes are
// the key; or, if objIdx >= 0, kv is the key and objIdx the value's object index.
func (d *dict) insert(kv string, keyLen int, h uint32, objIdx int) *entry {
	if (d.count+1)*4 > len(d.slots)*3 {
		d.resize(max(dictMinSize, 2*len(d.slots)))
	}
	d.count++
	e := d.place(h)
	meta := uint64(h)<<metaHash | metaUsed | uint64(keyLen)
	if objIdx >= 0 {
		meta = uint64(h)<<metaHash | metaUsed | metaObject | uint64(objIdx)
	}
	*e = entry{kv: kv, meta: meta}
	return e
}

// place returns the first free slot on h's probe path.
func (d *dict) place(h uint32) *entry {
	mask := d.mask()
	i := h & mask
	for d.slots[i].meta&metaUsed != 0 {
		i = (i + 1) & mask
	}
	return &d.slots[i]
}

// deleteAt empties slot i. Entries after it on the same probe run move back so that every
// key stays reachable from its home slot without crossing an empty one (no tombstones).
func (d *dict) deleteAt(i int) {
	mask := d.mask()
	hole := uint32(i)
	for j := (hole + 1) & mask; d.slots[j].meta&metaUsed != 0; j = (j + 1) & mask {
		home := d.slots[j].hash() & mask
		// The entry at j may fill the hole unless its home lies cyclically in (hole, j].
		if (j-home)&mask >= (j-hole)&mask {
			d.slots[hole] = d.slots[j]
			hole = j
		}
	}
	d.slots[hole] = entry{}
	d.count--
	// Shrink a table that fell below 1/10 full, as redis's cron does.
	if len(d.slots) > 64 && d.count*10 < len(d.slots) {
		d.resize(max(dictMinSize, int(nextPow2(uint64(d.count)*2))))
	}
}

func nextPow2(n uint64) uint64 {
	if n <= 1 {
		return 1
	}
	return 1 << (64 - bits.LeadingZeros64(n-1))
}

func (d *dict) resize(size int) {
	old := d.slots
	d.slots = make([]entry, size)
	for i := range old {
		if old[i].meta&metaUsed != 0 {
			*d.place(old[i].hash()) = old[i]
		}
	}
}

// clear empties the table and frees its slots.
func (d *dict) clear() { *d = dict{} }

// scan visits the keys whose home bucket is the cursor's and returns the next cursor
// (0 when the scan is complete). The cursor increments in reverse-binary order, so the
// buckets still to visit map onto the same hash bits whatever the table size is next time.
func (d *dict) scan(cursor uint64, visit func(e *entry)) uint64 {
	if d.count == 0 {
		return 0
	}
	mask := uint64(len(d.slots) - 1)
	bucket := cursor & mask
	for i := bucket; d.slots[i].meta&metaUsed != 0; i = (i + 1) & mask {
		if uint64(d.slots[i].hash())&mask == bucket {
			visit(&d.slots[i])
		}
	}
	cursor |= ^mask
	cursor = bits.Reverse64(cursor)
	cursor++
	return bits.Reverse64(cursor)
}

// randomIndex returns the index of a used slot picked at random (slots after a run of empty
// ones are likelier, which is fine for sampling), or -1 if the table is empty.
func (d *dict) randomIndex() int {
	if d.count == 0 {
		return -1
	}
	mask := d.mask()
	i := uint32(rand.Uint64()) & mask
	for d.slots[i].meta&metaUsed == 0 {
		i = (i + 1) & mask
	}
	return int(i)
}
