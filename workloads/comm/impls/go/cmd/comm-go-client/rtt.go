package main

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"msgbench/workloads/comm/impls/go/comm"
)

// latencyUS holds round-trip percentiles in microseconds (nearest rank over every sample).
type latencyUS struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// runRTT is the seed's test3: each client posts one message and waits for its reply before
// the next; every measured round trip is kept (an exact sorted array, no histogram).
func runRTT(opt options) (result, error) {
	pat := comm.NewPattern(opt.size)
	f, err := dialFleet(opt)
	if err != nil {
		return result{}, err
	}
	defer f.close()

	samples := make([][]time.Duration, len(f.conns))
	first := make([]time.Time, len(f.conns))
	last := make([]time.Time, len(f.conns))
	var wg sync.WaitGroup
	for i, c := range f.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rtts := make([]time.Duration, 0, opt.messages)
			for m := range opt.warmup + opt.messages {
				t0 := time.Now()
				if m == opt.warmup {
					first[i] = t0
				}
				if err := c.Post(comm.Message{Type: opt.typ, Body: pat.Body(i, m)}); err != nil {
					f.fail(fmt.Errorf("client %d: post %d: %w", i, m, err))
					return
				}
				if err := checkReply(c, pat, i, m); err != nil {
					f.fail(err)
					return
				}
				if m >= opt.warmup {
					rtts = append(rtts, time.Since(t0))
				}
			}
			last[i] = time.Now()
			samples[i] = rtts
			if err := endSession(c, opt.end); err != nil {
				f.fail(fmt.Errorf("client %d: end of session: %w", i, err))
				return
			}
			if err := expectEnd(c, i); err != nil {
				f.fail(err)
			}
		}()
	}
	wg.Wait()
	if f.err != nil {
		return result{}, f.err
	}
	var elapsed time.Duration
	if opt.messages > 0 {
		start, end := first[0], last[0]
		for i := range first {
			if first[i].Before(start) {
				start = first[i]
			}
			if last[i].After(end) {
				end = last[i]
			}
		}
		elapsed = end.Sub(start)
	}
	res := figures(opt, elapsed.Seconds())
	res.LatencyUS = percentiles(slices.Concat(samples...))
	return res, nil
}

// percentiles summarises round trips (nil when there are none).
func percentiles(d []time.Duration) *latencyUS {
	if len(d) == 0 {
		return nil
	}
	slices.Sort(d)
	at := func(q float64) float64 {
		k := int(math.Ceil(q*float64(len(d)))) - 1
		return us(d[min(max(k, 0), len(d)-1)])
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return &latencyUS{
		P50:  at(0.50),
		P90:  at(0.90),
		P99:  at(0.99),
		P999: at(0.999),
		Max:  us(d[len(d)-1]),
		Mean: round(float64(sum) / float64(len(d)) / 1e3),
	}
}

func us(d time.Duration) float64 { return round(float64(d) / 1e3) }
