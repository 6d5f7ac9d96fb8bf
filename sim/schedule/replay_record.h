// The record of an op that the replay reads (ReplayRecord), one per op of a Program, and the
// ops of one (rank, stream) queue in order (StreamRange).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

#include "sim/schedule/op.h"

namespace meshsim {

// What the replay needs of an op, kept by the Program as ops are added, in one 20-byte
// record beside the Op: a program of millions of ops does not fit in cache, and the
// replay's event loop touches this record and nothing else of the op (one cache miss per
// op instead of one per array). Program::Records() has one record past the last op, with
// no dependents. (A collective's parts are listed by the Program,
// Program::PartsBegin(), not linked through their records: the replay fetches their
// records at once instead of one after another, and ops that are no part keep no link.)
struct ReplayRecord {
  // How the replay runs the op. kShared: a part of a collective with several parts;
  // kSolo: the only part of its collective (symmetric replay makes most of them so).
  enum class Kind : uint8_t { kCompute, kMemory, kShared, kSolo };
  // How many ops wait for it, after Seal(): none, one (`dependents` is its id) or more
  // (`dependents` is where their list is, Program::DependentsBegin()).
  enum class Deps : uint8_t { kNone, kOne, kList };
  uint32_t ref = 0;            // kCompute, kMemory: Op::work; kShared, kSolo: Op::comm
  OpId next_in_queue = kNoOp;  // the op after this one on its (rank, stream) queue
  // After Seal(): its lone dependent's id (Deps::kOne), or where its dependents' list
  // begins (kList; Program::DependentsBegin()). Most ops have one dependent or none (GPT-1T
  // at 3,072 GPUs: 5.7 M of 8.3 M one, the rest none but 1 %): the replay then reads no
  // list, one cache miss less an op, and the lists take 4 bytes an op less.
  uint32_t dependents = 0;
  uint32_t queue : 27 = 0;  // rank * kStreamCount + stream
  uint32_t kind_bits : 2 = 0;
  // kMemory: its MemCategory; kCompute: kOptimizerBits for the optimizer step
  // (Tag::kOptimizerStep), else 0, so that the step analysis reads no OpInfo.
  uint32_t category_bits : 3 = 0;
  static constexpr uint32_t kOptimizerBits = 1;
  // How many of the ops it waits for have not finished: AddDep counts it up, a replay
  // counts it down, and Program::RecordsForReplay() counts it again before the next
  // replay of the same program (a Program is replayed by one thread at a time).
  mutable uint32_t pending : 30 = 0;
  uint32_t deps_bits : 2 = 0;
  Kind kind() const { return static_cast<Kind>(kind_bits); }
  Deps deps() const { return static_cast<Deps>(deps_bits); }
  MemCategory category() const { return static_cast<MemCategory>(category_bits); }  // kMemory
  // kCompute: whether it is the optimizer step (Tag::kOptimizerStep).
  bool optimizer() const { return category_bits == kOptimizerBits; }
  int rank() const { return static_cast<int>(queue / kStreamCount); }
};
static_assert(sizeof(ReplayRecord) == 20);
// (rank, stream) queues a ReplayRecord can name.
constexpr uint64_t kMaxQueues = uint64_t{1} << 27;

// The ops of one (rank, stream) queue in order, following ReplayRecord::next_in_queue.
class StreamRange {
 public:
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = OpId;
    using difference_type = std::ptrdiff_t;
    using pointer = const OpId*;
    using reference = OpId;
    Iterator() = default;
    Iterator(const ReplayRecord* records, OpId id) : records_(records), id_(id) {}
    OpId operator*() const { return id_; }
    Iterator& operator++() {
      id_ = records_[id_].next_in_queue;
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const Iterator& o) const { return id_ == o.id_; }

   private:
    const ReplayRecord* records_ = nullptr;
    OpId id_ = kNoOp;
  };
  StreamRange(const ReplayRecord* records, OpId first) : records_(records), first_(first) {}
  Iterator begin() const { return Iterator(records_, first_); }
  Iterator end() const { return Iterator(records_, kNoOp); }
  bool empty() const { return first_ == kNoOp; }

 private:
  const ReplayRecord* records_;
  OpId first_;
};

}  // namespace meshsim
