// A growable byte buffer that never zero-fills: socket reads land straight in its spare
// capacity. Shared by the server's sessions and the client's frame queues.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>

namespace comm {

class ByteBuffer {
  public:
    ByteBuffer() noexcept = default;
    explicit ByteBuffer(std::size_t capacity) {
        reserve(capacity);
    }

    std::uint8_t *data() noexcept {
        return data_.get();
    }
    const std::uint8_t *data() const noexcept {
        return data_.get();
    }
    std::size_t size() const noexcept {
        return size_;
    }
    std::size_t capacity() const noexcept {
        return capacity_;
    }
    bool empty() const noexcept {
        return size_ == 0;
    }
    std::span<const std::uint8_t> bytes() const noexcept {
        return {data_.get(), size_};
    }

    // The spare capacity after the content: write into it, then commit what was written.
    std::uint8_t *tail() noexcept {
        return data_.get() + size_;
    }
    std::size_t room() const noexcept {
        return capacity_ - size_;
    }
    void commit(std::size_t n) noexcept {
        size_ += n;
    }

    // Keeps only the first n bytes (n <= size()).
    void truncate(std::size_t n) noexcept {
        size_ = n;
    }
    void clear() noexcept {
        size_ = 0;
    }

    void append(const void *bytes, std::size_t n) {
        if (n > room())
            reserve(std::max(size_ + n, capacity_ * 2));
        if (n > 0)
            std::memcpy(tail(), bytes, n);
        size_ += n;
    }

    // Drops the first n bytes, moving the rest to the front.
    void erase_front(std::size_t n) noexcept {
        if (n == 0)
            return;
        if (n < size_)
            std::memmove(data_.get(), data_.get() + n, size_ - n);
        size_ = n < size_ ? size_ - n : 0;
    }

    // Makes the capacity at least n, keeping the content.
    void reserve(std::size_t n) {
        if (n > capacity_)
            reallocate(n);
    }

    // Gives back memory: the capacity becomes n if the content fits in it.
    void shrink_to(std::size_t n) {
        if (n < capacity_ && size_ <= n)
            reallocate(n);
    }

    void swap(ByteBuffer &other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
        std::swap(capacity_, other.capacity_);
    }

  private:
    void reallocate(std::size_t n) {
        auto fresh = std::make_unique_for_overwrite<std::uint8_t[]>(n);
        if (size_ > 0)
            std::memcpy(fresh.get(), data_.get(), size_);
        data_ = std::move(fresh);
        capacity_ = n;
    }

    std::unique_ptr<std::uint8_t[]> data_;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
};

} // namespace comm
