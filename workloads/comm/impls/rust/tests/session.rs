//! End-to-end tests over loopback: the server (Listener + worker pool) against the Connector
//! and against raw sockets that break the rules on purpose.

use comm_rust::connector::{read_message, Connector, Message, Options, SessionEnd};
use comm_rust::frame::{encode_into, Header, BINARY, DEFAULT, END, FLUSH, QUIT, REPLY, TEXT};
use comm_rust::listener::{Config, Listener, Stopper};
use comm_rust::pattern::Pattern;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

struct Server {
    addr: SocketAddr,
    stopper: Stopper,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl Server {
    fn start(pool: usize, max_body: u64) -> Server {
        let listener =
            Listener::bind("127.0.0.1:0".parse().unwrap(), Config { pool, max_body }).unwrap();
        let addr = listener.local_addr().unwrap();
        let stopper = listener.stopper();
        let thread = Some(std::thread::spawn(move || listener.run()));
        Server {
            addr,
            stopper,
            thread,
        }
    }

    fn stop(&mut self) {
        self.stopper.stop();
        if let Some(t) = self.thread.take() {
            t.join().unwrap().unwrap();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn raw(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

fn frame(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    encode_into(&mut v, kind, body);
    v
}

/// Everything the server sends until it closes (EOF or reset).
fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return out,
            Err(e) => panic!("read: {e}"),
        }
    }
}

fn session(conn: &Connector, end: SessionEnd, messages: &[Message]) -> Option<Message> {
    for m in messages {
        conn.post(m.clone()).unwrap();
    }
    conn.close(end).unwrap();
    for m in messages {
        let reply = conn.get().unwrap().expect("a reply");
        assert_eq!(reply.kind, REPLY);
        assert_eq!(reply.body, m.body);
    }
    conn.get().unwrap()
}

#[test]
fn every_type_is_echoed_and_each_end_is_honoured() {
    let server = Server::start(2, 1 << 20);
    let messages: Vec<Message> = [DEFAULT, TEXT, REPLY, FLUSH, 64, BINARY, 3, 200]
        .iter()
        .enumerate()
        .map(|(i, &k)| Message::new(k, vec![i as u8; i * 1000]))
        .collect();
    for end in [SessionEnd::End, SessionEnd::Quit] {
        let conn = Connector::connect(server.addr, Options::default()).unwrap();
        let last = session(&conn, end, &messages).expect("END");
        assert_eq!((last.kind, last.body.len()), (END, 0));
        assert!(conn.get().unwrap().is_none());
    }
    let conn = Connector::connect(server.addr, Options::default()).unwrap();
    match session(&conn, SessionEnd::Eof, &messages) {
        None => {}
        Some(m) => assert_eq!((m.kind, m.body.len()), (END, 0)),
    }
}

#[test]
fn end_reply_then_close_and_nothing_after_end() {
    let server = Server::start(1, 1 << 20);
    let mut s = raw(server.addr);
    let mut out = frame(TEXT, b"one");
    out.extend(frame(QUIT, b"body of quit"));
    out.extend(frame(DEFAULT, b"after quit"));
    s.write_all(&out).unwrap();
    let mut expected = frame(REPLY, b"one");
    expected.extend(frame(END, b""));
    assert_eq!(read_to_close(&mut s), expected);
}

#[test]
fn eof_inside_a_frame_closes_without_echoing_it() {
    let server = Server::start(1, 1 << 20);
    for cut in [3, 9, 20] {
        let mut s = raw(server.addr);
        let mut out = frame(DEFAULT, b"whole");
        out.extend_from_slice(&frame(DEFAULT, &[7u8; 100])[..cut]);
        s.write_all(&out).unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        assert_eq!(read_to_close(&mut s), frame(REPLY, b"whole"), "cut {cut}");
    }
}

#[test]
fn a_length_over_the_cap_closes_only_that_connection() {
    let server = Server::start(1, 1000);
    let good = Connector::connect(server.addr, Options::default()).unwrap();
    good.post(Message::new(DEFAULT, vec![1; 1000])).unwrap();
    assert_eq!(good.get().unwrap().unwrap().body, vec![1; 1000]);

    let mut bad = raw(server.addr);
    let header = Header {
        kind: DEFAULT,
        body_len: 1001,
    };
    bad.write_all(&header.encode()).unwrap();
    assert!(read_to_close(&mut bad).is_empty());
    let mut huge = raw(server.addr);
    huge.write_all(&[DEFAULT, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
        .unwrap();
    assert!(read_to_close(&mut huge).is_empty());

    good.post(Message::new(TEXT, b"still here".to_vec()))
        .unwrap();
    assert_eq!(good.get().unwrap().unwrap().body, b"still here");
}

#[test]
fn a_16_mib_body_echoes_intact() {
    let server = Server::start(2, 64 << 20);
    let conn = Connector::connect(server.addr, Options::default()).unwrap();
    let body = Pattern::new(16 << 20).body(3, 5).to_vec();
    let small = Message::new(DEFAULT, b"after".to_vec());
    let messages = [Message::new(BINARY, body), small];
    let last = session(&conn, SessionEnd::End, &messages);
    assert_eq!(last.map(|m| m.kind), Some(END));
}

#[test]
fn every_client_is_served_at_once_on_a_small_pool() {
    // One-thread-per-session would serve only `pool` of these; each must answer while all
    // the others are still open.
    let server = Server::start(2, 1 << 20);
    let conns: Vec<Connector> = (0..64)
        .map(|_| Connector::connect(server.addr, Options::default()).unwrap())
        .collect();
    for (i, conn) in conns.iter().enumerate().rev() {
        conn.post(Message::new(DEFAULT, vec![i as u8; 100]))
            .unwrap();
        assert_eq!(conn.get().unwrap().unwrap().body, vec![i as u8; 100]);
    }
    for conn in &conns {
        conn.close(SessionEnd::End).unwrap();
        assert_eq!(conn.get().unwrap().unwrap().kind, END);
    }
}

#[test]
fn recycled_bodies_carry_only_their_own_message() {
    // Bodies come back through `buffer` (sent) and `release` (received) with their old
    // content and capacity: a reply must still be exactly its message, shorter or longer.
    let server = Server::start(1, 1 << 20);
    let options = Options {
        queue_depth: 4,
        ..Options::default()
    };
    let conn = Connector::connect(server.addr, options).unwrap();
    for round in 0..200usize {
        let size = [4096, 10, 0, 70_000, 3000][round % 5];
        let mut body = conn.buffer();
        assert!(body.is_empty());
        body.extend((0..size).map(|i| (i + round) as u8));
        let expected = body.clone();
        conn.post(Message::new(DEFAULT, body)).unwrap();
        let reply = conn.get().unwrap().expect("a reply");
        assert_eq!(
            (reply.kind, &reply.body),
            (REPLY, &expected),
            "round {round}"
        );
        conn.release(reply.body);
    }
    conn.close(SessionEnd::End).unwrap();
    assert_eq!(conn.get().unwrap().unwrap().kind, END);
}

#[test]
fn many_concurrent_streams_get_their_own_replies() {
    let server = Server::start(4, 1 << 20);
    let pattern = std::sync::Arc::new(Pattern::new(4096));
    let threads: Vec<_> = (0..32u64)
        .map(|c| {
            let (addr, pattern) = (server.addr, pattern.clone());
            std::thread::spawn(move || {
                let conn =
                    std::sync::Arc::new(Connector::connect(addr, Options::default()).unwrap());
                let poster = {
                    let (conn, pattern) = (conn.clone(), pattern.clone());
                    std::thread::spawn(move || {
                        for m in 0..300 {
                            conn.post(Message::new(DEFAULT, pattern.body(c, m).to_vec()))
                                .unwrap();
                        }
                        conn.close(SessionEnd::Eof).unwrap();
                    })
                };
                for m in 0..300 {
                    let reply = conn.get().unwrap().unwrap();
                    assert_eq!(reply.kind, REPLY);
                    assert_eq!(reply.body, pattern.body(c, m));
                }
                poster.join().unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn a_client_that_does_not_read_is_held_back_not_dropped() {
    // 8 MiB of requests sent before reading a single reply: the server must stop reading
    // (its buffer full of unsent replies) and resume when the client reads.
    let server = Server::start(1, 1 << 20);
    let s = raw(server.addr);
    let mut writer = s.try_clone().unwrap();
    let one = frame(DEFAULT, &[9u8; 8000]);
    let count = 1000;
    let sender = std::thread::spawn(move || {
        for _ in 0..count {
            writer.write_all(&one).unwrap();
        }
        writer.shutdown(Shutdown::Write).unwrap();
    });
    std::thread::sleep(Duration::from_millis(200));
    let mut reader = std::io::BufReader::new(s);
    for _ in 0..count {
        let m = read_message(&mut reader, 1 << 20).unwrap().unwrap();
        assert_eq!((m.kind, m.body.len()), (REPLY, 8000));
    }
    assert!(read_message(&mut reader, 1 << 20).unwrap().is_none());
    sender.join().unwrap();
}

#[test]
fn abrupt_disconnects_leave_the_server_serving() {
    let server = Server::start(2, 1 << 20);
    for _ in 0..20 {
        let mut s = raw(server.addr);
        // Half a frame, then a close with unread replies pending.
        s.write_all(&frame(DEFAULT, &[1u8; 5000])).unwrap();
        s.write_all(&frame(DEFAULT, &[1u8; 5000])[..100]).unwrap();
        drop(s);
    }
    let conn = Connector::connect(server.addr, Options::default()).unwrap();
    let last = session(
        &conn,
        SessionEnd::End,
        &[Message::new(TEXT, b"ok".to_vec())],
    );
    assert_eq!(last.map(|m| m.kind), Some(END));
}

#[test]
fn stop_closes_connections_and_returns_promptly() {
    let mut server = Server::start(4, 1 << 20);
    let mut idle: Vec<TcpStream> = (0..10).map(|_| raw(server.addr)).collect();
    // Make sure every connection has reached a worker.
    for s in &mut idle {
        s.write_all(&frame(DEFAULT, b"x")).unwrap();
        let mut buf = [0u8; 10];
        s.read_exact(&mut buf).unwrap();
    }
    let t0 = Instant::now();
    server.stop();
    assert!(t0.elapsed() < Duration::from_secs(2));
    for s in &mut idle {
        assert!(read_to_close(s).is_empty());
    }
    assert!(TcpStream::connect(server.addr).is_err());
}
