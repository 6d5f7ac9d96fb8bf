#include "sim/report/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <iterator>
#include <string_view>
#include <unordered_map>

#include "sim/core/hash.h"

namespace meshsim {
namespace {

using Json = nlohmann::ordered_json;

// Sets j[a][b]... for the dotted `name`.
template <typename T>
void SetDotted(Json& j, const std::string& name, const T& value) {
  Json* node = &j;
  size_t start = 0;
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', start)) {
    node = &(*node)[name.substr(start, dot - start)];
    start = dot + 1;
  }
  (*node)[name.substr(start)] = value;
}

// An object with room for `keys` members, filled in order by Put (ordered_json's
// operator[] searches the keys and grows the storage one member at a time: a summary of
// 100,000 devices makes 100,000 of each object).
Json Object(size_t keys) {
  Json j = Json::object();
  j.get_ref<Json::object_t&>().reserve(keys);
  return j;
}

// Appends a member. Precondition: `key` is not in `j` yet.
template <typename T>
void Put(Json& j, std::string_view key, T&& value) {
  j.get_ref<Json::object_t&>().emplace_back(std::string(key), Json(std::forward<T>(value)));
}

Json MemoryJson(const MemoryGib& m) {
  Json j = Object(5);
  Put(j, "weights", m.weights);
  Put(j, "gradients", m.gradients);
  Put(j, "optimizer", m.optimizer);
  Put(j, "activations", m.activations);
  Put(j, "buffers", m.buffers);
  return j;
}

Json DeviceJson(const DeviceSummary& d) {
  Json j = Object(8);
  Put(j, "rank", d.rank);
  Put(j, "node", d.node);
  const Coords& c = d.coords;
  Json coords = Object(5);
  Put(coords, "tp", c.tp);
  Put(coords, "pp", c.pp);
  Put(coords, "dp", c.dp);
  Put(coords, "cp", c.cp);
  Put(coords, "ep", c.ep);
  Put(j, "coords", std::move(coords));
  Put(j, "peak_memory_gib", d.peak_memory_gib);
  Put(j, "memory_breakdown_gib", MemoryJson(d.memory_breakdown_gib));
  Put(j, "compute_busy_fraction", d.compute_busy_fraction);
  Put(j, "comm_busy_fraction", d.comm_busy_fraction);
  Json sent = Object(kCommClassCount);
  for (int k = 0; k < kCommClassCount; ++k) {
    Put(sent, CommClassName(static_cast<CommClass>(k)), d.sent_bytes[k]);
  }
  Put(j, "sent_bytes", std::move(sent));
  return j;
}

Json RerouteJson(const RerouteSummary& r) {
  Json links = Json::array();
  for (const auto& [name, bytes] : r.links) links.push_back({{"name", name}, {"bytes", bytes}});
  Json j;
  j["what_if"] = r.what_if;
  j["ignored"] = r.ignored;
  j["bytes"] = r.bytes;
  j["links"] = std::move(links);
  return j;
}

// "1.23 GB", "45.6 MB", "789 kB".
std::string Bytes(double b) {
  if (b >= 1e9) return fmt::format("{:.3g} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.3g} MB", b / 1e6);
  return fmt::format("{:.3g} kB", b / 1e3);
}

// "  what-if ..." for people: the changes, and the rerouted traffic and its busiest detours.
std::string WhatIfLine(const RerouteSummary& r) {
  std::string changes;
  for (const std::string& c : r.what_if) changes += (changes.empty() ? "" : ", ") + c;
  std::string out = "  what-if          " + changes;
  if (r.ignored) return out + ": ignored by network_model alpha_beta (no routes; use flow)\n";
  if (r.bytes <= 0) return out + "; no traffic rerouted\n";
  out += "; " + Bytes(r.bytes) + " rerouted over ";
  constexpr size_t kShown = 4;
  for (size_t i = 0; i < r.links.size() && i < kShown; ++i) {
    out += fmt::format("{}{} ({})", i ? ", " : "", r.links[i].first, Bytes(r.links[i].second));
  }
  if (r.links.size() > kShown) out += fmt::format(" and {} more links", r.links.size() - kShown);
  return out + "\n";
}

// Every part of time_breakdown_s, in its order: the exposed communication classes on one
// line ("exposed comm  tp 0.0123 s, ..."), the others on the "critical path" line, with
// the precision of the step time so that the printed parts add up to it.
std::string BreakdownLines(const StepSummary& s) {
  std::string path, comm;
  VisitScalarFields(s, [&](std::string_view field, const auto& value, FieldKind) {
    constexpr std::string_view kPrefix = "time_breakdown_s.";
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, double>) {
      if (!field.starts_with(kPrefix)) return;
      std::string name(field.substr(kPrefix.size()));
      std::string* line = &path;
      if (name.starts_with("exposed_")) {
        name = name.substr(8);
        if (name.ends_with("_comm")) name.resize(name.size() - 5);
        line = &comm;
      }
      std::replace(name.begin(), name.end(), '_', ' ');
      *line += fmt::format("{}{} {:.4f} s", line->empty() ? "" : ", ", name, value);
    }
  });
  return "  critical path    " + path + "\n  exposed comm     " + comm + "\n";
}

}  // namespace

namespace {

// summary.json's members before "devices": the scalars outside `sim`.
Json HeadJson(const StepSummary& s) {
  Json j;
  VisitScalarFields(s, [&j](std::string_view name, const auto& value, FieldKind) {
    SetDotted(j, std::string(name), value);
  });
  return j;
}

// Its members after "devices": links, rerouted, dp_comm, sim.
Json TailJson(const StepSummary& s) {
  Json j;
  Json links = Json::array();
  for (const LinkSummary& l : s.links) {
    links.push_back({{"name", l.name},
                     {"bytes", l.bytes},
                     {"busy_fraction", l.busy_fraction},
                     {"links", l.links}});
  }
  j["links"] = std::move(links);
  if (s.rerouted) j["rerouted"] = RerouteJson(*s.rerouted);
  if (s.dp_comm) {
    const DpCommSummary& d = *s.dp_comm;
    j["dp_comm"] = {{"collectives", d.collectives},
                    {"bytes", d.bytes},
                    {"busy_s", d.busy_s},
                    {"latency_s", d.latency_s},
                    {"bandwidth_s", d.bandwidth_s}};
  }
  VisitSimFields(s, [&j](std::string_view name, const auto& value, FieldKind) {
    SetDotted(j, std::string(name), value);
  });
  return j;
}

}  // namespace

Json SummaryJson(const StepSummary& s) {
  Json j = HeadJson(s);
  if (!s.devices.empty()) {
    Json devices = Json::array();
    devices.get_ref<Json::array_t&>().reserve(s.devices.size());
    for (const DeviceSummary& d : s.devices) devices.push_back(DeviceJson(d));
    j["devices"] = std::move(devices);
  }
  Json tail = TailJson(s);
  for (auto& [key, value] : tail.get_ref<Json::object_t&>()) j[key] = std::move(value);
  return j;
}

namespace {

// Text gathered in a string, handed to `out` (when there is one) about 1 MiB at a time.
class TextSink {
 public:
  explicit TextSink(std::ostream* out) : out_(out) {}
  void Append(std::string_view text) {
    text_.append(text);
    if (out_ != nullptr && text_.size() >= kPiece) Flush();
  }
  void Flush() {
    if (out_ == nullptr) return;
    out_->write(text_.data(), static_cast<std::streamsize>(text_.size()));
    text_.clear();
  }
  std::string& text() { return text_; }

 private:
  static constexpr size_t kPiece = size_t{1} << 20;
  std::ostream* out_;
  std::string text_;
};

// `text`, a value dumped at indent 0, as it reads nested `spaces` deeper: its raw newlines
// are its line breaks (strings escape theirs).
std::string Nested(std::string_view text, int spaces) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(static_cast<size_t>(spaces), ' ');
  }
  return out;
}

// One member of summary.json's top level, `  "key": value`, without its separator.
void AppendMember(TextSink& sink, const std::string& key, const Json& value) {
  sink.Append("  ");
  sink.Append(Json(key).dump());
  sink.Append(": ");
  sink.Append(Nested(value.dump(2), 2));
}

// The members of a device's object after its coords (what was measured: memory, busy
// fractions, bytes sent) as they read in "devices", formatted once per distinct value
// (compared bit for bit, so that -0 and NaNs stay apart).
class MeasuredTexts {
 public:
  const std::string& Of(const DeviceSummary& d) {
    Key key{};
    size_t i = 0;
    auto add = [&key, &i](double v) { key[i++] = std::bit_cast<uint64_t>(v); };
    const MemoryGib& m = d.memory_breakdown_gib;
    for (double v : {d.peak_memory_gib, m.weights, m.gradients, m.optimizer, m.activations,
                     m.buffers, d.compute_busy_fraction, d.comm_busy_fraction}) {
      add(v);
    }
    for (double v : d.sent_bytes) add(v);
    auto [it, added] = texts_.try_emplace(key);
    if (added) it->second = Format(d);
    return it->second;
  }

 private:
  using Key = std::array<uint64_t, 8 + kCommClassCount>;
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = 0;
      for (uint64_t w : k) h = Fmix64(h ^ w);
      return static_cast<size_t>(h);
    }
  };
  // DeviceJson's members but rank, node and coords, dumped at a device's depth (6).
  static std::string Format(const DeviceSummary& d) {
    const Json whole = DeviceJson(d);
    Json measured = Object(whole.size());
    for (const auto& [key, value] : whole.get_ref<const Json::object_t&>()) {
      if (key != "rank" && key != "node" && key != "coords") Put(measured, key, value);
    }
    const std::string text = measured.dump(2);  // "{\n  ...\n}"
    return "    " + Nested(std::string_view(text).substr(2, text.size() - 4), 4);
  }
  std::unordered_map<Key, std::string, KeyHash> texts_;
};

// One element of "devices", as SummaryJson(s).dump(2) writes it.
void AppendDevice(TextSink& sink, const DeviceSummary& d, MeasuredTexts& measured) {
  fmt::memory_buffer b;
  const Coords& c = d.coords;
  fmt::format_to(std::back_inserter(b),
                 "    {{\n      \"rank\": {},\n      \"node\": {},\n      \"coords\": {{\n"
                 "        \"tp\": {},\n        \"pp\": {},\n        \"dp\": {},\n"
                 "        \"cp\": {},\n        \"ep\": {}\n      }},\n",
                 d.rank, d.node, c.tp, c.pp, c.dp, c.cp, c.ep);
  sink.Append(std::string_view(b.data(), b.size()));
  sink.Append(measured.Of(d));
  sink.Append("\n    }");
}

void WriteSummary(const StepSummary& s, TextSink& sink) {
  sink.Append("{\n");
  bool first = true;
  auto separate = [&first, &sink] {
    if (!first) sink.Append(",\n");
    first = false;
  };
  const Json head = HeadJson(s);
  for (const auto& [key, value] : head.get_ref<const Json::object_t&>()) {
    separate();
    AppendMember(sink, key, value);
  }
  if (!s.devices.empty()) {
    separate();
    sink.Append("  \"devices\": [\n");
    MeasuredTexts measured;
    for (size_t i = 0; i < s.devices.size(); ++i) {
      if (i > 0) sink.Append(",\n");
      AppendDevice(sink, s.devices[i], measured);
    }
    sink.Append("\n  ]");
  }
  const Json tail = TailJson(s);
  for (const auto& [key, value] : tail.get_ref<const Json::object_t&>()) {
    separate();
    AppendMember(sink, key, value);
  }
  sink.Append("\n}");
}

}  // namespace

std::string SummaryText(const StepSummary& s) {
  TextSink sink(nullptr);
  constexpr size_t kDeviceChars = 800;  // a device's text is about 700 characters
  sink.text().reserve(4096 + s.devices.size() * kDeviceChars);
  WriteSummary(s, sink);
  return std::move(sink.text());
}

void WriteSummaryText(const StepSummary& s, std::ostream& out) {
  TextSink sink(&out);
  WriteSummary(s, sink);
  sink.Flush();
}

Json BuildSummary(const Simulation& sim, const SummaryOptions& options) {
  return SummaryJson(SummarizeStep(sim, options));
}

std::string HumanSummary(const StepSummary& s) {
  const MemoryGib& m = s.memory_breakdown_gib;
  std::string out;
  out += fmt::format("{}: {} GPUs, {:.2f}B parameters\n", s.name, s.gpus, s.params_total / 1e9);
  out += fmt::format("  step time        {:.4f} s   ({:.0f} tokens/s)\n", s.step_time_s,
                     s.tokens_per_s);
  out += fmt::format("  throughput       {:.1f} TFLOP/s per GPU   MFU {:.1f}%   HFU {:.1f}%\n",
                     s.tflops_per_gpu, 100 * s.mfu, 100 * s.hfu);
  out += fmt::format("  pipeline bubble  {:.1f}%\n", 100 * s.bubble_fraction);
  out += BreakdownLines(s);
  out += fmt::format(
      "  peak memory      {:.2f} GiB of {:.0f} GiB ({}) on rank {}: weights {:.2f}, grads {:.2f}, "
      "optimizer {:.2f}, activations {:.2f}, buffers {:.2f}\n",
      s.peak_memory_gib, s.memory_budget_gib, s.fits ? "fits" : "DOES NOT FIT", s.worst_memory_rank,
      m.weights, m.gradients, m.optimizer, m.activations, m.buffers);
  if (s.rerouted) out += WhatIfLine(*s.rerouted);
  if (s.dp_comm) {
    const DpCommSummary& d = *s.dp_comm;
    out += fmt::format(
        "  dp collectives   {} on rank {}, {:.3f} GB, busy {:.4f} s: latency {:.4f} s, "
        "bandwidth {:.4f} s\n",
        d.collectives, s.critical_rank, d.bytes / 1e9, d.busy_s, d.latency_s, d.bandwidth_s);
  }
  out += fmt::format("  simulated        {} events in {:.3f} s\n", s.sim.events, s.sim.wall_s);
  return out;
}

}  // namespace meshsim
