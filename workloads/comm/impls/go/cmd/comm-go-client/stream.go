package main

import (
	"fmt"
	"sync"
	"time"

	"msgbench/workloads/comm/impls/go/comm"
)

// runStream is the seed's Test4: every client posts all its messages without waiting, then
// its session end, while the receiving side checks every reply. Throughput is measured from
// the first send to the last reply of all clients.
func runStream(opt options) (result, error) {
	pat := comm.NewPattern(opt.size)
	f, err := dialFleet(opt)
	if err != nil {
		return result{}, err
	}
	defer f.close()

	last := make([]time.Time, len(f.conns))
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range f.conns {
		wg.Add(2)
		go func() { // the caller that feeds the Connector's send queue
			defer wg.Done()
			for m := range opt.messages {
				if err := c.Post(comm.Message{Type: opt.typ, Body: pat.Body(i, m)}); err != nil {
					f.fail(fmt.Errorf("client %d: post %d: %w", i, m, err))
					return
				}
			}
			if err := endSession(c, opt.end); err != nil {
				f.fail(fmt.Errorf("client %d: end of session: %w", i, err))
			}
		}()
		go func() { // the caller that drains the Connector's receive queue
			defer wg.Done()
			for m := range opt.messages {
				if err := checkReply(c, pat, i, m); err != nil {
					f.fail(err)
					return
				}
			}
			last[i] = time.Now()
			if err := expectEnd(c, i); err != nil {
				f.fail(err)
			}
		}()
	}
	wg.Wait()
	if f.err != nil {
		return result{}, f.err
	}
	end := start
	for _, t := range last {
		if t.After(end) {
			end = t
		}
	}
	return figures(opt, end.Sub(start).Seconds()), nil
}
