#include "sim/cli/terminal.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

namespace meshsim::cli {

bool IsTerminal(std::FILE* stream) { return ::isatty(::fileno(stream)) == 1; }

std::string Palette::Wrap(const std::string& text, const char* sgr) const {
  if (!on) return text;
  return std::string("\x1b[") + sgr + "m" + text + "\x1b[0m";
}

std::string FormatDuration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long long t = std::llround(s);
  if (t >= 3600) return fmt::format("{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60);
  return fmt::format("{}:{:02}", t / 60, t % 60);
}

void ProgressBar::Update(long long done, long long total, long long fresh,
                         const std::string& detail, bool force) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (!force && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  drawn_ = true;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? fresh / elapsed : 0;
  const double frac = total > 0 ? static_cast<double>(done) / total : 1.0;
  constexpr int kWidth = 28;
  const int filled = static_cast<int>(frac * kWidth);
  std::string bar(filled, '#');
  bar += std::string(kWidth - filled, '.');
  const std::string eta = rate > 0 ? FormatDuration((total - done) / rate) : "?";
  std::fprintf(stderr, "\r[%s] %3.0f%% %lld/%lld  %.1f/s  ETA %s  %s\x1b[K", bar.c_str(),
               100 * frac, done, total, rate, eta.c_str(), detail.c_str());
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

}  // namespace meshsim::cli
