// Start-up settings. In connectionless mode (sendNativeMessage) the browser starts one host
// per message, so process start-up is most of the cost, and the Go runtime's own start-up is
// most of that. These three switch off runtime work this single-goroutine host has no use
// for; measured together they cut roughly 50 µs (about 5%) of CPU per spawn on the lab VM:
//   - containermaxprocs=0: do not keep the CPU cgroup's limit files open to size GOMAXPROCS
//     from the container quota (one goroutine does not care how many Ps there are);
//   - updatemaxprocs=0: and do not start the goroutine, nor the sysmon checks, that re-read
//     the affinity mask and the cgroup limit to resize GOMAXPROCS while running;
//   - decoratemappings=0: do not name each anonymous memory mapping with an extra prctl(2)
//     (a debugging aid for /proc/PID/maps that costs one system call per mmap).
// They are settings of a program, so every Go host repeats them in its own main.go.

//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
//go:debug decoratemappings=0

// Command nativemsg-go is the Go host of the msgbench nativemsg workload: a browser Native
// Messaging host that answers ping, echo and fill requests on stdin/stdout (see SPEC.md).
// Everything but the JSON library (host.go) is package nmhost, shared with go-go-json.
package main

func main() {
	host.Main() // never returns: it exits with the host's status (nmhost/main.go)
}
