// KVM's halt polling (virt/kvm/kvm_main.c kvm_vcpu_halt, Documentation/
// virt/kvm/halt-polling.rst): a vCPU that executes HLT is not scheduled out
// at once; its thread polls for a wake event for up to the vCPU's own
// window, halt_poll_ns. A wake-up that comes within the window resumes the
// vCPU without a trip through the host scheduler; one that comes later
// finds the vCPU's thread asleep (kvm_vcpu_block). The window adapts after
// each halt: a halt that ended within it leaves it as it is; a long one
// (beyond the module's halt_poll_ns, the most a window may be) shrinks it
// (shrink_halt_poll_ns: divided by halt_poll_ns_shrink, and to 0 below the
// grow start; a shrink factor of 0, the module's default before Linux 6.11,
// closes it at once); a short one
// that the window missed grows it (grow_halt_poll_ns: times
// halt_poll_ns_grow, 2, from halt_poll_ns_grow_start, 10 us), up to the
// most. A most of 0 turns polling off.
#pragma once

#include <algorithm>

namespace vsim::models {

class HaltPoll {
public:
  // All in cycles of the platform clock: the module's halt_poll_ns (the
  // most) and halt_poll_ns_grow_start; and its halt_poll_ns_shrink.
  HaltPoll(double max_window, double grow_start, double shrink)
      : max_(max_window), grow_start_(grow_start), shrink_(shrink)
  {
  }

  // A halt of `halted` cycles ended with a wake event (a thread's wake-up
  // or an injected interrupt): whether the vCPU was still polling then
  // (true: it never left the CPU), and the window for the next halt. The
  // part of the halt polled, within the window, is CPU time the host sees
  // the vCPU's thread use (top, getrusage).
  bool wake(double halted)
  {
    polled_ += std::min(halted, window_);
    const bool polled = halted <= window_;
    if (max_ <= 0)
      window_ = 0;
    else if (halted <= window_)
      ; // within the window: unchanged
    else if (window_ > 0 && halted > max_)
      window_ = shrink_ <= 0 || window_ / shrink_ < grow_start_ ? 0 : window_ / shrink_; // a long block
    else if (window_ < max_ && halted < max_)
      window_ = std::min(max_, window_ > 0 ? window_ * kGrow : grow_start_); // a short one the window missed
    return polled;
  }
  double window() const { return window_; }
  // Cycles spent polling so far.
  double polled() const { return polled_; }

private:
  static constexpr double kGrow = 2; // halt_poll_ns_grow
  double max_, grow_start_, shrink_;
  double window_ = 0; // vcpu->halt_poll_ns: 0 at vCPU creation
  double polled_ = 0;
};

} // namespace vsim::models
