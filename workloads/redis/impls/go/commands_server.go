package main

// commands_server.go: connection and server commands: PING, ECHO, QUIT, HELLO, CLIENT,
// CONFIG, COMMAND, INFO, TIME. Replies that are server-specific by nature (INFO, COMMAND)
// keep redis's shape so that clients and redis-cli can use them.

import (
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"
)

const redisVersion = "7.0.15"

func init() {
	srvCmd := func(name string, arity int, run func(*client, [][]byte), flags, group, summary, since string) *command {
		return &command{name: name, arity: arity, run: run, flags: flags, group: group, summary: summary, since: since}
	}
	sub := func(name string, arity int, run func(*client, [][]byte), summary string) *command {
		return &command{name: name, arity: arity, run: run, summary: summary, since: "2.0.0"}
	}
	config := container("config", "server", "A container for server configuration commands",
		sub("get", -3, cmdConfigGet, "Get the values of configuration parameters"),
		sub("set", -4, cmdConfigSet, "Set configuration parameters to the given values"),
		sub("resetstat", 2, cmdOK, "Reset the stats returned by INFO"),
		sub("help", 2, cmdConfigHelp, "Show helpful text about the different subcommands"),
	)
	client := container("client", "connection", "A container for client connection commands",
		sub("id", 2, cmdClientID, "Returns the client ID for the current connection"),
		sub("getname", 2, cmdClientGetname, "Get the current connection name"),
		sub("setname", 3, cmdClientSetname, "Set the current connection name"),
		sub("info", 2, cmdClientInfo, "Returns information about the current client connection."),
		sub("list", -2, cmdClientList, "Get the list of client connections"),
		sub("help", 2, cmdClientHelp, "Show helpful text about the different subcommands"),
	)
	command := container("command", "server", "Get array of Redis command details",
		sub("count", 2, cmdCommandCount, "Get total number of Redis commands"),
		sub("docs", -2, cmdCommandDocs, "Get array of specific Redis command documentation"),
		sub("info", -2, cmdCommandInfo, "Get array of specific Redis command details, or all when no argument is given."),
		sub("list", -2, cmdCommandList, "Get an array of Redis command names"),
		sub("help", 2, cmdCommandHelp, "Show helpful text about the different subcommands"),
	)
	command.arity, command.run = -1, cmdCommand
	register(config, client, command,
		srvCmd("ping", -1, cmdPing, "fast", "connection", "Ping the server", "1.0.0"),
		srvCmd("echo", 2, cmdEcho, "fast", "connection", "Echo the given string", "1.0.0"),
		srvCmd("quit", -1, cmdQuit, "allow_busy fast", "connection", "Close the connection", "1.0.0"),
		srvCmd("auth", -2, cmdAuth, "noscript loading stale fast no_auth allow_busy", "connection", "Authenticate to the server", "1.0.0"),
		srvCmd("hello", -1, cmdHello, "noscript loading stale fast no_auth allow_busy", "connection", "Handshake with Redis", "6.0.0"),
		srvCmd("info", -1, cmdInfo, "loading stale", "server", "Get information and statistics about the server", "1.0.0"),
		srvCmd("time", 1, cmdTime, "loading stale fast", "server", "Return the current server time", "2.6.0"),
	)
}

func cmdOK(c *client, args [][]byte) { c.reply(replyOK) }

func cmdPing(c *client, args [][]byte) {
	switch len(args) {
	case 1:
		c.reply("+PONG\r\n")
	case 2:
		c.replyBulk(args[1])
	default:
		c.arityError("ping")
	}
}

func cmdEcho(c *client, args [][]byte) { c.replyBulk(args[1]) }

func cmdQuit(c *client, args [][]byte) {
	c.reply(replyOK)
	c.quit = true
}

func cmdTime(c *client, args [][]byte) {
	now := time.Now()
	c.replyArrayLen(2)
	c.out = appendBulkInt(c.out, now.Unix())
	c.out = appendBulkInt(c.out, int64(now.Nanosecond()/1000))
}

// cmdAuth: there is only redis's default user, with no password (nopass), so the
// one-argument form is the configuration error redis reports and the two-argument form
// succeeds for "default" with any password.
func cmdAuth(c *client, args [][]byte) {
	switch {
	case len(args) > 3:
		c.reply(errSyntax)
	case len(args) == 2:
		c.replyError("ERR AUTH <password> called without any password configured for the default user. " +
			"Are you sure your configuration is correct?")
	case string(args[1]) == "default":
		c.reply(replyOK)
	default:
		c.replyError("WRONGPASS invalid username-password pair or user is disabled.")
	}
}

// cmdHello switches the protocol (2 or 3), optionally authenticating (there is only the
// default user, without a password) and naming the connection, and describes the server.
func cmdHello(c *client, args [][]byte) {
	var ver int64
	next := 1
	if len(args) >= 2 {
		var ok bool
		if ver, ok = parseInt(args[1]); !ok {
			c.replyError("ERR Protocol version is not an integer or out of range")
			return
		}
		if ver < 2 || ver > 3 {
			c.replyError("NOPROTO unsupported protocol version")
			return
		}
		next = 2
	}
	var user, name []byte
	for j := next; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case isOption(args[j], "auth") && more >= 2:
			user = args[j+1]
			j += 2
		case isOption(args[j], "setname") && more >= 1:
			name = args[j+1]
			j++
		default:
			c.replyError("ERR Syntax error in HELLO option '" + cString(args[j]) + "'")
			return
		}
	}
	if user != nil && string(user) != "default" {
		c.replyError("WRONGPASS invalid username-password pair or user is disabled.")
		return
	}
	if name != nil && !c.setName(name) {
		return
	}
	if ver != 0 {
		c.resp = int(ver)
	}
	c.replyMapLen(7)
	c.replyBulkString("server")
	c.replyBulkString("redis")
	c.replyBulkString("version")
	c.replyBulkString(redisVersion)
	c.replyBulkString("proto")
	c.replyInt(int64(c.resp))
	c.replyBulkString("id")
	c.replyInt(c.id)
	c.replyBulkString("mode")
	c.replyBulkString("standalone")
	c.replyBulkString("role")
	c.replyBulkString("master")
	c.replyBulkString("modules")
	c.reply(replyEmptyArray)
}

// --- CLIENT ----------------------------------------------------------------------------

func cmdClientID(c *client, args [][]byte) { c.replyInt(c.id) }

func cmdClientGetname(c *client, args [][]byte) {
	if c.name == "" {
		c.replyNull()
	} else {
		c.replyBulkString(c.name)
	}
}

// setName validates and sets the connection name (an empty one clears it).
func (c *client) setName(name []byte) bool {
	for _, ch := range name {
		if ch < '!' || ch > '~' {
			c.replyError("ERR Client names cannot contain spaces, newlines or special characters.")
			return false
		}
	}
	c.name = string(name)
	return true
}

func cmdClientSetname(c *client, args [][]byte) {
	if c.setName(args[2]) {
		c.reply(replyOK)
	}
}

func (c *client) infoLine() string {
	return "id=" + itoa(c.id) + " addr=" + c.conn.RemoteAddr().String() + " laddr=" + c.conn.LocalAddr().String() +
		" name=" + c.name + " db=" + strconv.Itoa(c.dbIndex) + " resp=" + strconv.Itoa(c.resp) + " cmd=client|info\n"
}

func cmdClientInfo(c *client, args [][]byte) { c.replyVerbatim(c.infoLine()) }

// cmdClientList lists only the calling connection: clients are not registered centrally
// (that would cost every accept and close a shared-map update).
func cmdClientList(c *client, args [][]byte) { c.replyVerbatim(c.infoLine()) }

func (c *client) replyHelp(lines ...string) {
	c.replyArrayLen(len(lines))
	for _, l := range lines {
		c.out = appendSimple(c.out, l)
	}
}

func cmdClientHelp(c *client, args [][]byte) {
	c.replyHelp("CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GETNAME", "    Return the name of the current connection.",
		"ID", "    Return the ID of the current connection.",
		"INFO", "    Return information about the current client connection.",
		"LIST", "    Return information about client connections.",
		"SETNAME <name>", "    Assign the name <name> to the current connection.",
		"HELP", "    Print this help.")
}

// --- CONFIG ----------------------------------------------------------------------------

// configDefaults are the parameters CONFIG GET knows, with redis 7.0.15's values as the
// reference is started (persistence off, 64 MiB limit for normal clients).
var configDefaults = map[string]string{
	"save":                       "",
	"appendonly":                 "no",
	"databases":                  "16",
	"maxclients":                 "10000",
	"maxmemory":                  "0",
	"maxmemory-policy":           "noeviction",
	"timeout":                    "0",
	"tcp-keepalive":              "300",
	"proto-max-bulk-len":         "536870912",
	"client-query-buffer-limit":  "1073741824",
	"hash-max-listpack-entries":  "512",
	"hash-max-listpack-value":    "64",
	"set-max-intset-entries":     "512",
	"zset-max-listpack-entries":  "128",
	"zset-max-listpack-value":    "64",
	"list-max-listpack-size":     "-2",
	"hz":                         "10",
	"client-output-buffer-limit": "normal 67108864 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
}

func cmdConfigGet(c *client, args [][]byte) {
	var found []string
	asked := map[string]string{} // a name given without glob characters: replied as written
	for _, pat := range args[2:] {
		pattern := strings.ToLower(string(pat)) // redis matches names case-insensitively
		for name := range configDefaults {
			if globMatch(pattern, name) && !slices.Contains(found, name) {
				found = append(found, name)
				if !strings.ContainsAny(pattern, "*?[") {
					asked[name] = string(pat)
				}
			}
		}
	}
	slices.Sort(found)
	c.replyMapLen(len(found))
	for _, name := range found {
		if as, ok := asked[name]; ok {
			c.replyBulkString(as)
		} else {
			c.replyBulkString(name)
		}
		c.replyBulkString(c.srv.config(name))
	}
}

func cmdConfigSet(c *client, args [][]byte) {
	if len(args)%2 != 0 {
		c.arityError("config|set")
		return
	}
	for i := 2; i < len(args); i += 2 {
		if _, ok := configDefaults[strings.ToLower(string(args[i]))]; !ok {
			c.replyError("ERR Unknown option or number of arguments for CONFIG SET - '" + cString(args[i]) + "'")
			return
		}
	}
	for i := 2; i < len(args); i += 2 {
		c.srv.setConfig(strings.ToLower(string(args[i])), string(args[i+1]))
	}
	c.reply(replyOK)
}

func cmdConfigHelp(c *client, args [][]byte) {
	c.replyHelp("CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>", "    Set the configuration <directive> to <value>.",
		"RESETSTAT", "    Reset statistics reported by the INFO command.",
		"HELP", "    Print this help.")
}

// --- COMMAND ---------------------------------------------------------------------------

func sortedCommands() []*command {
	cmds := make([]*command, 0, len(commandTable.byName))
	for _, cmd := range commandTable.byName {
		cmds = append(cmds, cmd)
	}
	slices.SortFunc(cmds, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	return cmds
}

func cmdCommand(c *client, args [][]byte) {
	cmds := sortedCommands()
	c.replyArrayLen(len(cmds))
	for _, cmd := range cmds {
		c.replyCommandInfo(cmd)
	}
}

func cmdCommandCount(c *client, args [][]byte) { c.replyInt(int64(len(commandTable.byName))) }

func cmdCommandList(c *client, args [][]byte) {
	cmds := sortedCommands()
	c.replyArrayLen(len(cmds))
	for _, cmd := range cmds {
		c.replyBulkString(cmd.name)
	}
}

func cmdCommandInfo(c *client, args [][]byte) {
	if len(args) == 2 {
		cmdCommand(c, args)
		return
	}
	c.replyArrayLen(len(args) - 2)
	for _, name := range args[2:] {
		if cmd := commandTable.find(name); cmd != nil {
			c.replyCommandInfo(cmd)
		} else {
			c.replyNull()
		}
	}
}

// replyCommandInfo is one command's COMMAND entry in redis 7's ten-field layout.
func (c *client) replyCommandInfo(cmd *command) {
	c.replyArrayLen(10)
	c.replyBulkString(cmd.name)
	c.replyInt(int64(cmd.arity))
	flags := strings.Fields(cmd.flags)
	c.replySetLen(len(flags))
	for _, f := range flags {
		c.out = appendSimple(c.out, f)
	}
	c.replyInt(int64(cmd.firstKey))
	c.replyInt(int64(cmd.lastKey))
	c.replyInt(int64(cmd.step))
	c.replySetLen(1)
	c.out = appendSimple(c.out, "@"+cmd.group)
	c.reply(replyEmptyArray) // tips
	c.reply(replyEmptyArray) // key specs
	subs := sortedSubcommands(cmd)
	c.replyArrayLen(len(subs))
	for _, s := range subs {
		c.replyCommandInfo(s)
	}
}

func sortedSubcommands(cmd *command) []*command {
	var subs []*command
	if cmd.subcommands == nil {
		return nil
	}
	for _, s := range cmd.subcommands.byName {
		subs = append(subs, s)
	}
	slices.SortFunc(subs, func(a, b *command) int { return strings.Compare(a.name, b.name) })
	return subs
}

// cmdCommandDocs replies a map (a flat array in RESP2) of command name to its docs:
// summary, since, group, and the subcommands' docs. redis-cli builds its help from it.
func cmdCommandDocs(c *client, args [][]byte) {
	var cmds []*command
	if len(args) == 2 {
		cmds = sortedCommands()
	} else {
		for _, name := range args[2:] {
			if cmd := commandTable.find(name); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
	}
	c.replyMapLen(len(cmds))
	for _, cmd := range cmds {
		c.replyBulkString(cmd.name)
		c.replyCommandDocs(cmd)
	}
}

func (c *client) replyCommandDocs(cmd *command) {
	subs := sortedSubcommands(cmd)
	n := 3
	if len(subs) > 0 {
		n++
	}
	c.replyMapLen(n)
	c.replyBulkString("summary")
	c.replyBulkString(cmd.summary)
	c.replyBulkString("since")
	c.replyBulkString(cmd.since)
	c.replyBulkString("group")
	c.replyBulkString(cmd.group)
	if len(subs) > 0 {
		c.replyBulkString("subcommands")
		c.replyMapLen(len(subs))
		for _, s := range subs {
			c.replyBulkString(s.name)
			c.replyCommandDocs(s)
		}
	}
}

func cmdCommandHelp(c *client, args [][]byte) {
	c.replyHelp("COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"(no subcommand)", "    Return details about all Redis commands.",
		"COUNT", "    Return the total number of commands in this Redis server.",
		"LIST", "    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
		"DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
		"HELP", "    Print this help.")
}

// --- INFO ------------------------------------------------------------------------------

var infoSections = []string{"server", "clients", "memory", "keyspace"}

func cmdInfo(c *client, args [][]byte) {
	want := map[string]bool{}
	if len(args) == 1 {
		for _, s := range infoSections {
			want[s] = true
		}
	}
	for _, a := range args[1:] {
		switch s := strings.ToLower(string(a)); s {
		case "all", "everything", "default":
			for _, s := range infoSections {
				want[s] = true
			}
		default:
			want[s] = true
		}
	}
	var b strings.Builder
	for _, s := range infoSections {
		if !want[s] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		c.srv.writeInfo(&b, s)
	}
	c.replyVerbatim(b.String())
}

func infoLine(b *strings.Builder, field string, value any) {
	b.WriteString(field)
	b.WriteByte(':')
	switch v := value.(type) {
	case string:
		b.WriteString(v)
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(v, 10))
	}
	b.WriteString("\r\n")
}

// writeInfo writes one INFO section. Runs under the keyspace lock.
func (s *server) writeInfo(b *strings.Builder, section string) {
	switch section {
	case "server":
		uptime := int64(time.Since(s.started).Seconds())
		exe, _ := os.Executable()
		b.WriteString("# Server\r\n")
		infoLine(b, "redis_version", redisVersion)
		infoLine(b, "redis_git_sha1", "00000000")
		infoLine(b, "redis_git_dirty", "0")
		infoLine(b, "redis_mode", "standalone")
		infoLine(b, "os", runtime.GOOS+" "+runtime.GOARCH)
		infoLine(b, "arch_bits", "64")
		infoLine(b, "multiplexing_api", "epoll")
		infoLine(b, "go_version", runtime.Version())
		infoLine(b, "process_id", os.Getpid())
		infoLine(b, "tcp_port", s.port)
		infoLine(b, "server_time_usec", time.Now().UnixMicro())
		infoLine(b, "uptime_in_seconds", uptime)
		infoLine(b, "uptime_in_days", uptime/86400)
		infoLine(b, "hz", "10")
		infoLine(b, "executable", exe)
	case "clients":
		b.WriteString("# Clients\r\n")
		infoLine(b, "connected_clients", s.connected.Load())
		infoLine(b, "maxclients", "10000")
		infoLine(b, "blocked_clients", "0")
	case "memory":
		sample := []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/memory/classes/total:bytes"},
		}
		metrics.Read(sample)
		used := sample[0].Value.Uint64()
		b.WriteString("# Memory\r\n")
		infoLine(b, "used_memory", used)
		infoLine(b, "used_memory_human", humanBytes(used))
		infoLine(b, "used_memory_rss", sample[1].Value.Uint64())
		infoLine(b, "maxmemory", "0")
		infoLine(b, "maxmemory_policy", "noeviction")
		infoLine(b, "mem_allocator", "go")
	case "keyspace":
		b.WriteString("# Keyspace\r\n")
		now := nowMs()
		for i := range s.ks.dbs {
			d := &s.ks.dbs[i]
			if d.size() == 0 {
				continue
			}
			// The mean TTL, summed as quotients and remainders of the count so that TTLs
			// near MaxInt64 cannot wrap it negative (found by difffuzz.py).
			avg := int64(0)
			if n := int64(len(d.expires)); n > 0 {
				var quotients, remainders int64
				for _, when := range d.expires {
					ttl := max(when-now, 0)
					quotients += ttl / n
					remainders += ttl % n
				}
				avg = quotients + remainders/n
			}
			b.WriteString("db" + strconv.Itoa(i) + ":keys=" + strconv.Itoa(d.size()) +
				",expires=" + strconv.Itoa(len(d.expires)) + ",avg_ttl=" + strconv.FormatInt(avg, 10) + "\r\n")
		}
	}
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 2, 64) + "G"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 2, 64) + "M"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 2, 64) + "K"
	}
	return strconv.FormatUint(n, 10) + "B"
}
