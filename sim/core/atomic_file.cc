#include "sim/core/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace meshsim {
namespace {

namespace fs = std::filesystem;

// Removes the temporary file unless released (the rename consumed it).
class TempFile {
 public:
  explicit TempFile(fs::path path) : path_(std::move(path)) {}
  ~TempFile() {
    std::error_code ec;
    if (!released_) fs::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const fs::path& path() const { return path_; }
  void Release() { released_ = true; }

 private:
  fs::path path_;
  bool released_ = false;
};

std::string Reason(int err) { return err != 0 ? std::strerror(err) : "unknown error"; }

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::function<bool(std::ostream&)>& write,
                           const AtomicWriteOptions& options) {
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path() && !fs::is_directory(target.parent_path())) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      return IoError(
          path, "cannot create the folder " + target.parent_path().string() + ": " + ec.message());
    }
  }
  TempFile tmp(path + ".tmp");
  {
    errno = 0;
    std::ofstream out(tmp.path(), std::ios::binary | std::ios::trunc);
    if (!out) return IoError(path, "cannot write the file: " + Reason(errno));
    const bool complete = write(out);
    out.flush();
    if (!out) return IoError(path, "cannot write the file (disk full?): " + Reason(errno));
    if (!complete) return IoError(path, "cannot write the file");
    out.close();
    if (!out) return IoError(path, "cannot write the file (disk full?): " + Reason(errno));
  }
  if (options.check) {
    if (Status s = options.check(tmp.path().string()); !s.ok()) return s;
  }
  fs::rename(tmp.path(), target, ec);
  if (ec) return IoError(path, "cannot write the file: " + ec.message());
  tmp.Release();
  return Ok{};
}

Status WriteFileAtomically(const std::string& path, const std::string& content,
                           const AtomicWriteOptions& options) {
  return WriteFileAtomically(
      path,
      [&content](std::ostream& out) {
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        return true;
      },
      options);
}

}  // namespace meshsim
