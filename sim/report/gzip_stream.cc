#include "sim/report/gzip_stream.h"

#include <zlib.h>

#include <array>
#include <cassert>
#include <streambuf>

namespace meshsim {

// Collects characters in `in_`; each time it fills (and at the end) deflates them into
// `out_`, which goes to the sink whenever zlib fills it.
class GzipOstream::Buffer : public std::streambuf {
 public:
  Buffer(std::ostream& sink, int level) : sink_(sink) {
    // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
    ok_ = deflateInit2(&z_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    setp(in_.data(), in_.data() + in_.size());
  }
  ~Buffer() override {
    if (!finished_) Finish();
    deflateEnd(&z_);
  }

  bool Finish() {
    if (finished_) return ok_;
    finished_ = true;
    Deflate(Z_FINISH);
    setp(nullptr, nullptr);
    return ok_ && sink_.flush().good();
  }

 protected:
  int_type overflow(int_type ch) override {
    if (finished_ || !Deflate(Z_NO_FLUSH)) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  // std::flush does not force a deflate block (that would only cost compression).
  int sync() override { return ok_ ? 0 : -1; }

 private:
  // Deflates the pending input; with Z_FINISH also ends the stream.
  bool Deflate(int flush) {
    if (!ok_) return false;
    z_.next_in = reinterpret_cast<Bytef*>(pbase());
    z_.avail_in = static_cast<uInt>(pptr() - pbase());
    int rc = Z_OK;
    do {
      z_.next_out = reinterpret_cast<Bytef*>(out_.data());
      z_.avail_out = static_cast<uInt>(out_.size());
      rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return ok_ = false;
      const std::streamsize n = static_cast<std::streamsize>(out_.size() - z_.avail_out);
      if (n > 0 && !sink_.write(out_.data(), n)) return ok_ = false;
    } while (z_.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    assert(z_.avail_in == 0);
    setp(in_.data(), in_.data() + in_.size());
    return true;
  }

  std::ostream& sink_;
  z_stream z_{};
  bool ok_ = false;
  bool finished_ = false;
  std::array<char, 1 << 16> in_;
  std::array<char, 1 << 16> out_;
};

GzipOstream::GzipOstream(std::ostream& sink, int level)
    : std::ostream(nullptr), buffer_(std::make_unique<Buffer>(sink, level)) {
  rdbuf(buffer_.get());
}

GzipOstream::~GzipOstream() = default;

bool GzipOstream::Finish() {
  const bool ok = good() && buffer_->Finish();
  if (!ok) setstate(std::ios::badbit);
  return ok;
}

}  // namespace meshsim
