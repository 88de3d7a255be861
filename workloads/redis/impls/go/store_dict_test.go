package main

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// The table agrees with a Go map through random inserts, overwrites and deletes (which
// exercise growth, shrinking and backward-shift deletion).
func TestDictAgainstMap(t *testing.T) {
	var d dict
	want := map[string]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		key := "k" + strconv.Itoa(rng.IntN(5000))
		kb := []byte(key)
		h := hashBytes(kb)
		idx := d.find(kb, h)
		switch op := rng.IntN(10); {
		case op < 6:
			val := strconv.Itoa(i)
			if idx >= 0 {
				d.slots[idx].setInline([]byte(val))
			} else {
				d.insert(joinKV(key, []byte(val)), len(key), h, -1)
			}
			want[key] = val
		default:
			if idx >= 0 {
				d.deleteAt(idx)
			}
			delete(want, key)
		}
		if i%20000 == 0 || i == 199999 {
			checkDict(t, &d, want)
		}
	}
	for key := range want {
		kb := []byte(key)
		d.deleteAt(d.find(kb, hashBytes(kb)))
	}
	if d.count != 0 || len(d.slots) > 64 {
		t.Errorf("emptied table: count %d, %d slots", d.count, len(d.slots))
	}
}

func checkDict(t *testing.T, d *dict, want map[string]string) {
	t.Helper()
	if d.count != len(want) {
		t.Fatalf("count %d, want %d", d.count, len(want))
	}
	for key, val := range want {
		i := d.find([]byte(key), hashBytes([]byte(key)))
		if i < 0 || d.slots[i].inlineStr() != val || d.slots[i].key() != key {
			t.Fatalf("key %q: index %d", key, i)
		}
	}
}

// SCAN's guarantee: a key present for the whole scan is returned, even when the table
// grows or shrinks between calls.
func TestDictScanAcrossResizes(t *testing.T) {
	var d dict
	add := func(key string) { d.insert(key, len(key), hashString(key), -1) }
	for i := 0; i < 1000; i++ {
		add("stable" + strconv.Itoa(i))
	}
	seen := map[string]bool{}
	cursor, steps := uint64(0), 0
	for {
		cursor = d.scan(cursor, func(e *entry) { seen[e.key()] = true })
		steps++
		switch steps {
		case 20: // grow: many new keys
			for i := 0; i < 5000; i++ {
				add("extra" + strconv.Itoa(i))
			}
		case 200: // shrink: remove them again
			for i := 0; i < 5000; i++ {
				k := "extra" + strconv.Itoa(i)
				d.deleteAt(d.findString(k, hashString(k)))
			}
		}
		if cursor == 0 {
			break
		}
	}
	for i := 0; i < 1000; i++ {
		if !seen["stable"+strconv.Itoa(i)] {
			t.Fatalf("stable%d not returned by the scan", i)
		}
	}
}
