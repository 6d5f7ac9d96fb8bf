// Terminal helpers for the CLI: tty detection, ANSI colour, a progress bar.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace meshsim::cli {

bool IsTerminal(std::FILE* stream);

// ANSI SGR sequences, or "" when colour is off.
struct Palette {
  bool on = false;
  std::string Wrap(const std::string& text, const char* sgr) const;
  std::string Bold(const std::string& t) const { return Wrap(t, "1"); }
  std::string Dim(const std::string& t) const { return Wrap(t, "2"); }
  std::string Red(const std::string& t) const { return Wrap(t, "31"); }
  std::string Green(const std::string& t) const { return Wrap(t, "32"); }
  std::string Yellow(const std::string& t) const { return Wrap(t, "33"); }
};

// A one-line progress bar with rate and ETA, redrawn in place on stderr at most ten times
// a second. Draws nothing when disabled (stderr is not a terminal, or -q).
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled), start_(Clock::now()) {}
  // `done` of `total` items; `fresh` of them were done by this process (for the rate);
  // `detail` is appended (e.g. counts by status).
  void Update(long long done, long long total, long long fresh, const std::string& detail,
              bool force = false);
  void Finish();

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  Clock::time_point start_;
  Clock::time_point last_{};
  bool drawn_ = false;
};

// "1:02:03" / "2:03" for a duration in seconds.
std::string FormatDuration(double seconds);

}  // namespace meshsim::cli
