// The client side of comm (the seed's Connector): one TCP connection, a send queue drained by
// a send thread, and a receive thread filling a receive queue.
//
//   post  - queue a message (waits only while the send queue is full)
//   get   - the next message received (waits until one arrives)
//   close - end the sending side after everything posted: an END or QUIT message, or a
//           half-close (EOF); replies keep arriving until the server ends the session
//
// post may be called from any thread, get from one thread at a time. The send thread writes
// every frame queued since its last write with one send(2); the receive thread reads up to
// read_size bytes at a time and queues the complete frames it finds (see bounded_queue.hpp).
#pragma once

#include "bounded_queue.hpp"
#include "byte_buffer.hpp"
#include "fd.hpp"
#include "frame.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

namespace comm {

enum class SessionEnd : std::uint8_t { end, quit, eof };

// A received message; its body stays valid until the next get() or the Connector's end.
struct MessageView {
    std::uint8_t type = kDefault;
    std::span<const std::uint8_t> body;
};

// Small by design: the buffers are touched for the first time during a run, and with 16
// connections larger ones cost more in page faults than they save in system calls (measured:
// 256 KiB / 1 MiB queues took 50% more CPU in the seed's Test4 than these).
struct ConnectorOptions {
    std::size_t send_queue_bytes = 64 * 1024;
    std::size_t receive_queue_bytes = 128 * 1024;
    std::size_t read_size = 64 * 1024;
    std::uint64_t max_body = kDefaultMaxBody; // a longer reply is an error
};

class ConnectError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class Connector {
  public:
    // Connects to host (an IPv4 address, or "localhost") and port, and starts both threads.
    // Throws ConnectError with the reason.
    Connector(const std::string &host, std::uint16_t port, ConnectorOptions options = {});
    // Joins both threads. After close() it first lets the send thread finish and waits for
    // the session's end; otherwise it aborts.
    ~Connector();
    Connector(const Connector &) = delete;
    Connector &operator=(const Connector &) = delete;

    // Queues a message for sending; false once the connection cannot send any more.
    bool post(std::uint8_t type, std::span<const std::uint8_t> body);
    // The next message, or nullopt when the session is over: ended normally (the server's
    // END, or EOF between frames) if error() is empty.
    std::optional<MessageView> get();
    // Ends the session from this side once the messages posted so far are sent.
    void close(SessionEnd how);
    // Breaks the connection at once: both threads stop, post and get fail.
    void abort();
    // The first error seen on the connection ("" if none).
    std::string error() const;

  private:
    void send_loop();
    void receive_loop();
    bool receive_some(ByteBuffer &fill);
    void fail(const std::string &why);

    ConnectorOptions options_;
    Fd socket_;
    FrameQueue send_queue_;
    FrameQueue receive_queue_;
    std::atomic<SessionEnd> end_{SessionEnd::end}; // how close() ends; read by the send thread
    bool closed_ = false;                          // close() was called (by the owner's thread)
    // The getter's side: a batch taken from the receive queue, read frame by frame.
    ByteBuffer batch_;
    std::size_t batch_pos_ = 0;
    mutable std::mutex error_mutex_;
    std::string error_;
    std::thread sender_, receiver_;
};

} // namespace comm
