package main

// store_set.go: the set type in redis 7.0's two encodings. A set whose members are all
// integers (in string2ll's canonical form) and number at most 512 (set-max-intset-entries)
// is a sorted []int64, as redis's intset, so SMEMBERS lists it in ascending order as redis
// does. Any other set is a Go map (redis's hashtable encoding: arbitrary order there too).

import (
	"math/rand/v2"
	"slices"
	"strconv"
)

const setMaxIntsetEntries = 512

type set struct {
	ints []int64             // the intset encoding, sorted, while m is nil
	m    map[string]struct{} // the hashtable encoding
}

func (*set) typeName() string { return "set" }

// newSetFor creates an empty set in the encoding redis picks for a set whose first member
// is first.
func newSetFor(first []byte) *set {
	if _, ok := parseInt(first); ok {
		return &set{}
	}
	return &set{m: make(map[string]struct{})}
}

func (s *set) len() int {
	if s.m != nil {
		return len(s.m)
	}
	return len(s.ints)
}

func (s *set) convert() {
	s.m = make(map[string]struct{}, len(s.ints)+1)
	for _, v := range s.ints {
		s.m[strconv.FormatInt(v, 10)] = struct{}{}
	}
	s.ints = nil
}

func (s *set) add(member []byte) bool {
	if s.m == nil {
		if v, ok := parseInt(member); ok {
			i, found := slices.BinarySearch(s.ints, v)
			if found {
				return false
			}
			if len(s.ints) < setMaxIntsetEntries {
				s.ints = slices.Insert(s.ints, i, v)
				return true
			}
		}
		s.convert()
	}
	if _, ok := s.m[string(member)]; ok {
		return false
	}
	s.m[string(member)] = struct{}{}
	return true
}

func (s *set) has(member []byte) bool {
	if s.m != nil {
		_, ok := s.m[string(member)]
		return ok
	}
	v, ok := parseInt(member)
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(s.ints, v)
	return found
}

func (s *set) remove(member []byte) bool {
	if s.m != nil {
		if _, ok := s.m[string(member)]; !ok {
			return false
		}
		delete(s.m, string(member))
		return true
	}
	v, ok := parseInt(member)
	if !ok {
		return false
	}
	i, found := slices.BinarySearch(s.ints, v)
	if found {
		s.ints = slices.Delete(s.ints, i, i+1)
	}
	return found
}

// pop removes and returns a random member (the set must not be empty). A Go map's
// iteration starts at a random position, which is the random pick.
func (s *set) pop() string {
	if s.m != nil {
		for m := range s.m {
			delete(s.m, m)
			return m
		}
	}
	i := rand.IntN(len(s.ints))
	v := s.ints[i]
	s.ints = slices.Delete(s.ints, i, i+1)
	return strconv.FormatInt(v, 10)
}

// each calls fn for every member (ascending for an intset).
func (s *set) each(fn func(member string)) {
	if s.m != nil {
		for m := range s.m {
			fn(m)
		}
		return
	}
	for _, v := range s.ints {
		fn(strconv.FormatInt(v, 10))
	}
}
