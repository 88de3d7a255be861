package main

// store.go: the keyspace. Sixteen databases, each a hash table of keys (store_dict.go) plus
// the expiry times of the keys that have one, kept apart as redis keeps its `expires` dict:
// most keys have no TTL, so they pay one flag bit for it, not eight bytes.
//
// Every method here runs with keyspace.mu held (one lock for the whole keyspace: the server
// runs on one CPU, so a finer lock would buy nothing but contention bookkeeping).
//
// Expiry is lazy and active, as in redis: an expired key is deleted when a command touches
// it, and a background task samples keys with a TTL every 100 ms so that keys nobody touches
// disappear too.

import (
	"strings"
	"sync"
	"time"
)

const numDBs = 16

// object is a value that is not stored inline in its entry's kv string.
type object interface {
	// typeName is the TYPE command's answer.
	typeName() string
}

// stringBuf is a string value that has grown by APPEND. It lives in a strings.Builder so
// repeated appends are amortised O(1) (like redis's sds free space), while the value handed
// out is still an immutable string: a Builder only ever writes past the bytes it has shown.
type stringBuf struct{ b strings.Builder }

func (*stringBuf) typeName() string { return "string" }

type keyspace struct {
	mu  sync.Mutex
	dbs [numDBs]db
	// watchers are the clients WATCHing each key (commands_transactions.go).
	watchers map[watchKey][]*client
}

func (ks *keyspace) init() {
	ks.watchers = map[watchKey][]*client{}
	for i := range ks.dbs {
		ks.dbs[i].id = i
		ks.dbs[i].ks = ks
	}
}

type db struct {
	id   int
	ks   *keyspace
	dict dict
	// objects holds the values that are not plain strings; a slot refers to one by index.
	// free lists the unused indexes.
	objects []object
	free    []int32
	// expires maps a key to its expiry time (Unix ms). Its keys share their bytes with
	// the entries' kv strings, so a TTL costs a map slot and no copy of the key.
	expires map[string]int64
}

func nowMs() int64 { return time.Now().UnixMilli() }

// lookup returns key's entry, or nil if the key does not exist or has expired (deleting it).
// The pointer is valid until the next insertion or deletion in this database.
func (db *db) lookup(key []byte) *entry {
	e, _ := db.lookupHash(key)
	return e
}

// lookupHash is lookup that also returns the key's hash, for a following insert.
func (db *db) lookupHash(key []byte) (*entry, uint32) {
	h := hashBytes(key)
	i := db.dict.find(key, h)
	if i < 0 {
		return nil, h
	}
	e := &db.dict.slots[i]
	if e.hasTTL() && db.expires[e.key()] <= nowMs() {
		db.deleteIndex(i)
		return nil, h
	}
	return e, h
}

// touch tells the clients WATCHing key that it changed (redis's signalModifiedKey). Every
// change of a key goes through a method here that calls it, except changes inside a
// collection, whose commands call touchBytes themselves.
func (db *db) touch(key string) {
	if len(db.ks.watchers) == 0 {
		return
	}
	for _, c := range db.ks.watchers[watchKey{db.id, key}] {
		c.keyTouched(db, key)
	}
}

func (db *db) touchBytes(key []byte) {
	if len(db.ks.watchers) != 0 {
		db.touch(string(key))
	}
}

// value returns e's object (a collection or a growable string), or nil for a plain string.
func (db *db) value(e *entry) object {
	if !e.isObject() {
		return nil
	}
	return db.objects[e.objectIndex()]
}

func (db *db) newObject(obj object) int {
	if n := len(db.free); n > 0 {
		idx := int(db.free[n-1])
		db.free = db.free[:n-1]
		db.objects[idx] = obj
		return idx
	}
	db.objects = append(db.objects, obj)
	return len(db.objects) - 1
}

func (db *db) freeObject(idx int) {
	db.objects[idx] = nil
	db.free = append(db.free, int32(idx))
}

// addString creates key (known to be absent) with a string value.
func (db *db) addString(key []byte, h uint32, val []byte) *entry {
	e := db.dict.insert(joinKV(string(key), val), len(key), h, -1)
	db.touch(e.key())
	return e
}

// addObject creates key (known to be absent) with a collection value.
func (db *db) addObject(key []byte, h uint32, obj object) *entry {
	e := db.dict.insert(string(key), len(key), h, db.newObject(obj))
	db.touch(e.key())
	return e
}

// setString makes e a plain string holding val, keeping or dropping its TTL.
func (db *db) setString(e *entry, val []byte, keepTTL bool) {
	defer db.touch(e.key())
	if e.isObject() {
		db.freeObject(e.objectIndex())
	}
	if !e.hasTTL() {
		e.setInline(val)
		return
	}
	oldKey := e.key()
	when := db.expires[oldKey]
	delete(db.expires, oldKey)
	e.setInline(val)
	if keepTTL {
		db.expires[e.key()] = when // re-keyed: the old kv must not stay pinned by the map
	} else {
		e.meta &^= metaTTL
	}
}

// setObject replaces e's value with obj (any type), keeping its TTL.
func (db *db) setObject(e *entry, obj object) {
	defer db.touch(e.key())
	if e.isObject() {
		db.objects[e.objectIndex()] = obj
		return
	}
	if !e.hasTTL() {
		e.setObjectIndex(db.newObject(obj))
		return
	}
	oldKey := e.key()
	when := db.expires[oldKey]
	delete(db.expires, oldKey)
	e.setObjectIndex(db.newObject(obj))
	db.expires[e.key()] = when
}

// remove deletes key; it reports whether a live key was deleted.
func (db *db) remove(key []byte) bool {
	h := hashBytes(key)
	i := db.dict.find(key, h)
	if i < 0 {
		return false
	}
	e := &db.dict.slots[i]
	live := !e.hasTTL() || db.expires[e.key()] > nowMs()
	db.deleteIndex(i)
	return live
}

// removeEntry deletes the key of e (e.g. a collection that became empty).
func (db *db) removeEntry(e *entry) {
	mask := db.dict.mask()
	for i := e.hash() & mask; ; i = (i + 1) & mask {
		if &db.dict.slots[i] == e {
			db.deleteIndex(int(i))
			return
		}
	}
}

func (db *db) deleteIndex(i int) {
	e := &db.dict.slots[i]
	key := e.key()
	if e.hasTTL() {
		delete(db.expires, key)
	}
	if e.isObject() {
		db.freeObject(e.objectIndex())
	}
	db.dict.deleteAt(i)
	db.touch(key)
}

// expireAt returns e's expiry time in Unix ms, or -1 if it has none.
func (db *db) expireAt(e *entry) int64 {
	if !e.hasTTL() {
		return -1
	}
	return db.expires[e.key()]
}

func (db *db) setExpire(e *entry, when int64) {
	if db.expires == nil {
		db.expires = make(map[string]int64)
	}
	db.expires[e.key()] = when
	e.meta |= metaTTL
	db.touch(e.key())
}

// persist removes e's TTL; it reports whether there was one.
func (db *db) persist(e *entry) bool {
	if !e.hasTTL() {
		return false
	}
	delete(db.expires, e.key())
	e.meta &^= metaTTL
	db.touch(e.key())
	return true
}

// isExpired reports whether e has a TTL that has passed (KEYS and SCAN skip such keys).
func (db *db) isExpired(e *entry, now int64) bool {
	return e.hasTTL() && db.expires[e.key()] <= now
}

func (db *db) size() int { return db.dict.count }

func (db *db) flush() {
	for k := range db.ks.watchers {
		if k.db == db.id && db.dict.findString(k.key, hashString(k.key)) >= 0 {
			db.touch(k.key)
		}
	}
	db.dict.clear()
	db.expires = nil
	db.objects, db.free = nil, nil
}

// stringValue returns e's value if it is a string.
func (db *db) stringValue(e *entry) (string, bool) {
	if !e.isObject() {
		return e.inlineStr(), true
	}
	if v, ok := db.objects[e.objectIndex()].(*stringBuf); ok {
		return v.b.String(), true
	}
	return "", false
}

func (db *db) typeName(e *entry) string {
	if !e.isObject() {
		return "string"
	}
	return db.objects[e.objectIndex()].typeName()
}

// --- Active expiry ----------------------------------------------------------------------

const (
	activeExpireInterval = 100 * time.Millisecond
	activeExpireSample   = 20 // keys sampled per round, as ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP
	activeExpireBudget   = 25 * time.Millisecond
)

// activeExpire runs every 100 ms for the life of the process. In each database with TTLs
// it samples keys and deletes the expired ones, and samples again while more than a quarter
// of a sample had expired (so a mass expiry is cleaned up quickly), within a time budget
// that keeps the lock from being held long.
func (ks *keyspace) activeExpire() {
	for range time.Tick(activeExpireInterval) {
		ks.mu.Lock()
		start := time.Now()
		for i := range ks.dbs {
			db := &ks.dbs[i]
			for len(db.expires) > 0 && time.Since(start) < activeExpireBudget {
				if db.expireSample(nowMs()) <= activeExpireSample/4 {
					break
				}
			}
		}
		ks.mu.Unlock()
	}
}

// expireSample deletes the expired keys among up to activeExpireSample keys with a TTL
// (a Go map's iteration starts at a random place, which makes the sample) and returns how
// many it deleted.
func (db *db) expireSample(now int64) int {
	var expired [activeExpireSample]string
	n, seen := 0, 0
	for key, when := range db.expires {
		if when <= now {
			expired[n] = key
			n++
		}
		if seen++; seen == activeExpireSample {
			break
		}
	}
	for _, key := range expired[:n] {
		if i := db.dict.findString(key, hashString(key)); i >= 0 {
			db.deleteIndex(i)
		}
	}
	return n
}
