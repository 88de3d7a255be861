//! Whether a listening socket on the trial's port is the server's own (the server's CPU clock
//! and peak RSS are read with drivers/kit).

use std::collections::HashSet;

/// Whether a socket listening on `port` (IPv4 or IPv6, any address) is open in a process of
/// the process group `pgid`. The harness picks a free port and releases it before the
/// server binds it, so another program can take it in between; then the port accepts but
/// the load would go to the other program. Comparing socket inodes tells the two apart.
pub fn group_listens_on(pgid: libc::pid_t, port: u16) -> bool {
    let mut listening = HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            listening.extend(listening_inodes(&text, port));
        }
    }
    !listening.is_empty()
        && group_members(pgid)
            .iter()
            .any(|&pid| socket_inodes(pid).iter().any(|i| listening.contains(i)))
}

/// Inodes of the sockets in a /proc/net/tcp{,6} table that listen on `port`.
pub fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    const LISTEN: &str = "0A";
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local_port = fields.get(1)?.rsplit(':').next()?;
            let listens =
                u16::from_str_radix(local_port, 16).ok()? == port && *fields.get(3)? == LISTEN;
            listens.then(|| fields.get(9)?.parse().ok()).flatten()
        })
        .collect()
}

/// The processes whose process group is `pgid` (the leader included).
fn group_members(pgid: libc::pid_t) -> Vec<libc::pid_t> {
    let mut members = vec![pgid];
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return members;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if pid == pgid {
            continue;
        }
        let in_group = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                // pid (comm) state ppid pgrp ...: comm may contain spaces and parentheses.
                let after_comm = stat.rsplit_once(')')?.1;
                after_comm
                    .split_whitespace()
                    .nth(2)?
                    .parse::<libc::pid_t>()
                    .ok()
            })
            == Some(pgid);
        if in_group {
            members.push(pid);
        }
    }
    members
}

/// The socket inodes among a process's open files (`socket:[12345]` links).
fn socket_inodes(pid: libc::pid_t) -> Vec<u64> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let target = std::fs::read_link(entry.path()).ok()?;
            let inode = target
                .to_str()?
                .strip_prefix("socket:[")?
                .strip_suffix(']')?;
            inode.parse().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn listening_sockets_are_found_in_a_tcp_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
            0: 0100007F:1DB0 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0 100 0 0 10 0\n   \
            1: 0100007F:1DB0 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0 20 4 30 10 -1\n   \
            2: 00000000:1DB1 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0 100 0 0 10 0\n";
        // 0x1DB0 = 7600: the listener, not the established connection on the same port.
        assert_eq!(listening_inodes(table, 7600), vec![4242]);
        assert_eq!(listening_inodes(table, 7601), vec![4444]);
        assert!(listening_inodes(table, 7602).is_empty());
    }

    #[test]
    fn our_own_listener_is_ours() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // SAFETY: plain syscalls.
        let (pid, pgid) = unsafe { (libc::getpid(), libc::getpgrp()) };
        assert!(!socket_inodes(pid).is_empty());
        assert!(group_listens_on(pgid, port));
        drop(listener);
        assert!(!group_listens_on(pgid, port));
    }
}
