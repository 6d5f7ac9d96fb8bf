// An output stream that gzip-compresses (RFC 1952, via zlib) everything written to it
// into another stream, as it goes: memory stays at zlib's window plus one buffer, however
// much is written. The output is one gzip member with no file name and mtime 0, so the
// same input always gives the same bytes.
#pragma once

#include <memory>
#include <ostream>

namespace meshsim {

class GzipOstream : public std::ostream {
 public:
  // `sink` must outlive this stream. level: zlib's 1 (fastest) .. 9 (smallest).
  explicit GzipOstream(std::ostream& sink, int level = 6);
  GzipOstream(const GzipOstream&) = delete;
  GzipOstream& operator=(const GzipOstream&) = delete;
  // Finishes the stream if Finish was not called (errors then go unreported).
  ~GzipOstream() override;

  // Compresses what is buffered, writes the gzip trailer and flushes the sink. Returns
  // false if zlib or the sink failed at any point; writing after Finish is an error.
  bool Finish();

 private:
  class Buffer;
  std::unique_ptr<Buffer> buffer_;
};

}  // namespace meshsim
