package main

// store_hash.go: the hash type in redis's two encodings. A small hash (at most 512 fields,
// none of them nor their values over 64 bytes: hash-max-listpack-entries/-value) is a flat
// slice of field, value pairs in insertion order, as redis's listpack keeps it; HGETALL then
// answers in the same order as redis. A larger one becomes a Go map for good (redis's
// hashtable encoding, whose order is arbitrary there too).

import "slices"

const (
	hashMaxListpackEntries = 512
	hashMaxListpackValue   = 64
)

type hash struct {
	pairs []string          // field, value, field, value, ... while m is nil
	m     map[string]string // the hashtable encoding
}

func (*hash) typeName() string { return "hash" }

func (h *hash) len() int {
	if h.m != nil {
		return len(h.m)
	}
	return len(h.pairs) / 2
}

// index returns the position of field's name in pairs, or -1.
func (h *hash) index(field []byte) int {
	for i := 0; i < len(h.pairs); i += 2 {
		if h.pairs[i] == string(field) {
			return i
		}
	}
	return -1
}

func (h *hash) get(field []byte) (string, bool) {
	if h.m != nil {
		v, ok := h.m[string(field)]
		return v, ok
	}
	if i := h.index(field); i >= 0 {
		return h.pairs[i+1], true
	}
	return "", false
}

// fitsListpack reports whether a field or value may live in the small encoding.
func fitsListpack(b []byte) bool { return len(b) <= hashMaxListpackValue }

// set stores field = val and reports whether the field is new. A field or value too long
// for the small encoding converts the hash first.
func (h *hash) set(field, val []byte) bool {
	if h.m == nil && (!fitsListpack(field) || !fitsListpack(val)) {
		h.convert()
	}
	if h.m != nil {
		_, exists := h.m[string(field)]
		h.m[string(field)] = string(val)
		return !exists
	}
	if i := h.index(field); i >= 0 {
		h.pairs[i+1] = string(val)
		return false
	}
	h.pairs = append(h.pairs, string(field), string(val))
	if h.len() > hashMaxListpackEntries {
		h.convert()
	}
	return true
}

func (h *hash) del(field []byte) bool {
	if h.m != nil {
		if _, ok := h.m[string(field)]; !ok {
			return false
		}
		delete(h.m, string(field))
		return true
	}
	i := h.index(field)
	if i < 0 {
		return false
	}
	h.pairs = slices.Delete(h.pairs, i, i+2) // zeroes the vacated tail for the GC
	return true
}

// convert switches to the hashtable encoding.
func (h *hash) convert() {
	h.m = make(map[string]string, len(h.pairs))
	for i := 0; i < len(h.pairs); i += 2 {
		h.m[h.pairs[i]] = h.pairs[i+1]
	}
	h.pairs = nil
}

// each calls fn for every field and value, in insertion order while the hash is small.
func (h *hash) each(fn func(field, val string)) {
	if h.m != nil {
		for f, v := range h.m {
			fn(f, v)
		}
		return
	}
	for i := 0; i < len(h.pairs); i += 2 {
		fn(h.pairs[i], h.pairs[i+1])
	}
}
