// GzipOstream: what goes in comes out of zlib's inflate unchanged, whatever the write
// sizes; the bytes are the same on every run; a failing sink is reported.
#include "sim/report/gzip_stream.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <sstream>
#include <string>

namespace meshsim {
namespace {

// Inflates a gzip stream with zlib itself; "<error>" when it is not one complete stream.
std::string Gunzip(const std::string& packed) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return "<error>";
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = static_cast<uInt>(packed.size());
  std::string out;
  char buf[4096];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  const bool whole = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  return whole ? out : "<error>";
}

// About 3 MB of trace-like text: more than the 64 KiB buffers many times over.
std::string Text() {
  std::string s;
  for (int i = 0; i < 40000; ++i) {
    s += "{\"ph\":\"X\",\"pid\":" + std::to_string(i % 64) + ",\"ts\":" + std::to_string(i * 7) +
         ".125000,\"name\":\"attention fwd\"},\n";
  }
  return s;
}

std::string Compress(const std::string& text, size_t chunk) {
  std::ostringstream sink;
  GzipOstream gz(sink);
  for (size_t at = 0; at < text.size(); at += chunk) gz << text.substr(at, chunk);
  EXPECT_TRUE(gz.Finish());
  return sink.str();
}

TEST(GzipOstream, RoundTripsThroughZlibWhateverTheWriteSizes) {
  const std::string text = Text();
  for (size_t chunk : {size_t{1} << 20, size_t{65536}, size_t{4093}}) {
    const std::string packed = Compress(text, chunk);
    EXPECT_LT(packed.size() * 5, text.size()) << chunk;
    EXPECT_TRUE(Gunzip(packed) == text) << chunk;
  }
}

TEST(GzipOstream, SameInputGivesTheSameBytes) {
  const std::string text = Text();
  const std::string a = Compress(text, 1 << 20);
  EXPECT_TRUE(a == Compress(text, 777)) << "the write sizes leave no mark";
  // The gzip header: magic 1f 8b, deflate (8), no flags, mtime 0.
  ASSERT_GE(a.size(), 10u);
  EXPECT_EQ(a.substr(0, 8), std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8));
}

TEST(GzipOstream, EmptyInputIsAnEmptyGzipFile) {
  std::ostringstream sink;
  GzipOstream gz(sink);
  ASSERT_TRUE(gz.Finish());
  // 10-byte header, an empty final block (2 bytes), CRC-32 and length (8 bytes).
  EXPECT_EQ(sink.str().size(), 20u);
  EXPECT_EQ(Gunzip(sink.str()), "");
}

TEST(GzipOstream, AFailingSinkIsReported) {
  std::ostringstream sink;
  sink.setstate(std::ios::badbit);
  GzipOstream gz(sink);
  gz << Text();
  EXPECT_FALSE(gz.Finish());
  EXPECT_TRUE(gz.bad());
}

}  // namespace
}  // namespace meshsim
