#pragma once
// Where a buffer's lines are when a core copies out of it (issue 50: a
// copy's rate follows its situation). A buffer another core wrote is, line
// by line, still in that core's private L2 (the reader pulls each modified
// line from it: a snoop through the L3's directory) or already evicted to
// the shared L3 by what that core brought into its L2 since (a plain L3 hit,
// faster on the ring of client parts). The reader's own writes are hot in
// its own L2 unless evicted too.
//
// The L2 is taken as fully associative with LRU replacement over the bytes
// its core brought in (Cpu::cache_fills): the line at offset x of a buffer
// whose write moved the writer's fill count from fill0 to fill1 has been
// followed by now - fill0 - x (fill1 - fill0) / len bytes, and is evicted
// when that exceeds the L2's size. Real L2s are 4-20-way set associative
// with adaptive replacement, so this is the mean behaviour, sharp where the
// real one is gradual.

#include <algorithm>
#include <cstdint>

namespace vsim {

class Cpu;

// Who wrote a buffer and what that core's fill count was before and after.
struct WriteStamp {
  const Cpu* cpu = nullptr; // nullptr: not tracked (another core's L2 assumed)
  std::uint64_t fill0 = 0, fill1 = 0;
  std::uint32_t len = 0; // the bytes the write covered, offsets [0, len)
};

// A copy's bytes by where their source lines are; the rest are in another
// core's L2.
struct CopySplit {
  double hot = 0; // in the copying core's own L2 (it wrote them)
  double l3 = 0;  // evicted from the writer's L2 to the shared L3
};

// The bytes of [off, off + n) of a buffer written as `w` said whose lines
// have left the writer's L2 once it has brought in `now_fill` bytes in all
// (an L2 of `l2` bytes). The evicted lines are the oldest: those before the
// offset where the fill since passes l2.
inline double evicted_bytes(const WriteStamp& w, std::uint64_t now_fill, double off, double n, double l2)
{
  if (l2 <= 0 || n <= 0 || w.len == 0)
    return 0;
  const double since_first = static_cast<double>(now_fill) - static_cast<double>(w.fill0); // after line 0
  const double per_byte = static_cast<double>(w.fill1 - w.fill0) / w.len;
  double edge = 0; // lines below `edge` are evicted
  if (per_byte <= 0)
    edge = since_first > l2 ? w.len : 0;
  else
    edge = std::clamp((since_first - l2) / per_byte, 0.0, static_cast<double>(w.len));
  return std::clamp(edge - off, 0.0, n);
}

// A copy of [off, off + n) of a buffer stamped `w`, by `reader` whose fill
// count `writer_fill` is the writer core's now.
inline CopySplit split_copy(const WriteStamp& w, const Cpu* reader, std::uint64_t writer_fill, double off, double n,
                            double l2)
{
  if (l2 <= 0 || w.cpu == nullptr)
    return {};
  const double gone = evicted_bytes(w, writer_fill, off, n, l2);
  if (w.cpu == reader)
    return {n - gone, gone};
  return {0, gone};
}

} // namespace vsim
