// A growable byte buffer with a consumed prefix: what a connection reads into and replies are
// written to. Unlike std::string it grows without zero-filling (reads land in the spare room)
// and drops consumed bytes lazily, moving the rest to the front only when room is needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace redis {

// memcpy for the short strings replies are made of (list elements, keys, small values): a
// call to the library's memcpy costs more than the copy itself below 17 bytes, so those are
// two overlapping loads and stores of a fixed width, which the compiler inlines. Up to 16
// bytes every load comes before any store, so the ranges may overlap (as with memmove).
inline void copy_bytes(char *dst, const char *src, std::size_t n) {
    if (n < 4) { // first, middle and last cover 1 to 3 bytes (redis-benchmark's values are 3)
        if (n != 0) {
            const char first = src[0];
            const char middle = src[n / 2];
            const char last = src[n - 1];
            dst[0] = first;
            dst[n / 2] = middle;
            dst[n - 1] = last;
        }
    } else if (n < 8) {
        std::uint32_t head = 0;
        std::uint32_t tail = 0;
        std::memcpy(&head, src, 4);
        std::memcpy(&tail, src + n - 4, 4);
        std::memcpy(dst, &head, 4);
        std::memcpy(dst + n - 4, &tail, 4);
    } else if (n <= 16) {
        std::uint64_t head = 0;
        std::uint64_t tail = 0;
        std::memcpy(&head, src, 8);
        std::memcpy(&tail, src + n - 8, 8);
        std::memcpy(dst, &head, 8);
        std::memcpy(dst + n - 8, &tail, 8);
    } else {
        std::memcpy(dst, src, n);
    }
}

class ByteBuffer {
  public:
    ByteBuffer() = default;
    ByteBuffer(const ByteBuffer &) = delete;
    ByteBuffer &operator=(const ByteBuffer &) = delete;
    ByteBuffer(ByteBuffer &&) noexcept = default;
    ByteBuffer &operator=(ByteBuffer &&) noexcept = default;

    // The bytes not yet consumed.
    [[nodiscard]] const char *data() const {
        return buf_.get() + begin_;
    }
    [[nodiscard]] char *data() {
        return buf_.get() + begin_;
    }
    [[nodiscard]] std::size_t size() const {
        return end_ - begin_;
    }
    [[nodiscard]] bool empty() const {
        return end_ == begin_;
    }
    [[nodiscard]] std::size_t capacity() const {
        return capacity_;
    }
    [[nodiscard]] std::string_view view() const {
        return {data(), size()};
    }

    // Room for at least `n` more bytes after the data; returns where they go. Call commit()
    // with the number actually written.
    char *reserve(std::size_t n) {
        if (capacity_ - end_ < n) {
            make_room(n);
        }
        return buf_.get() + end_;
    }
    [[nodiscard]] std::size_t spare() const {
        return capacity_ - end_;
    }
    void commit(std::size_t n) {
        end_ += n;
    }

    void append(const char *p, std::size_t n) {
        char *dst = reserve(n);
        std::memcpy(dst, p, n);
        end_ += n;
    }
    void append(std::string_view s) {
        append(s.data(), s.size());
    }
    void push_back(char c) {
        *reserve(1) = c;
        ++end_;
    }

    // Drops `n` bytes from the front.
    void consume(std::size_t n) {
        begin_ += n;
        if (begin_ == end_) {
            begin_ = end_ = 0;
        }
    }
    void clear() {
        begin_ = end_ = 0;
    }
    // Gives the memory back (an idle connection keeps no buffer).
    void release() {
        buf_.reset();
        capacity_ = begin_ = end_ = 0;
    }

  private:
    void make_room(std::size_t n) {
        const std::size_t used = end_ - begin_;
        if (capacity_ - used >= n && used <= capacity_ / 2) {
            // Enough room once the consumed prefix is dropped, and at least half the buffer is
            // free after the move, so moves cost O(1) per appended byte: slide to the front.
            std::memmove(buf_.get(), buf_.get() + begin_, used);
        } else {
            std::size_t cap = capacity_ < 64 ? 64 : capacity_;
            while (cap - used < n) {
                cap *= 2;
            }
            auto fresh = std::unique_ptr<char[]>(new char[cap]);
            if (used != 0) {
                std::memcpy(fresh.get(), buf_.get() + begin_, used);
            }
            buf_ = std::move(fresh);
            capacity_ = cap;
        }
        begin_ = 0;
        end_ = used;
    }

    std::unique_ptr<char[]> buf_;
    std::size_t capacity_ = 0;
    std::size_t begin_ = 0;
    std::size_t end_ = 0;
};

} // namespace redis
