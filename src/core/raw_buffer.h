// RawBuffer: a growable byte buffer that does not zero-fill, so large read windows cost only the pages
// actually written (std::string/std::vector resize would touch every byte of a fresh allocation).
// Invariant: bytes [0, size()) are readable; growing keeps the existing content.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>

namespace strata {

class RawBuffer {
 public:
  RawBuffer() = default;
  RawBuffer(RawBuffer&& other) noexcept { *this = std::move(other); }
  /// Takes `other`'s bytes; `other` is left empty (no capacity), ready to reuse.
  RawBuffer& operator=(RawBuffer&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    return *this;
  }

  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  char& operator[](size_t i) { return data_[i]; }
  char operator[](size_t i) const { return data_[i]; }

  /// Grows or shrinks to `n` bytes; new bytes are uninitialised.
  void resize(size_t n) {
    if (n > capacity_) {
      std::unique_ptr<char[]> grown(new char[n]);
      if (size_ > 0) std::memcpy(grown.get(), data_.get(), size_);
      data_ = std::move(grown);
      capacity_ = n;
    }
    size_ = n;
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace strata
