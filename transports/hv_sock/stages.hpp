// The stages of an hv_sock round trip, as explain's critical path names
// them (bound.cpp round_trip_path) and as the simulation stamps their
// starts (sim/round_trips.hpp): a message guest to host in four stages, one
// host to guest in six. A round trip is one of each, in the order of
// `direction` (the initiator's message first).
#pragma once

#include <array>
#include <cstddef>

namespace vsim::hv_sock {

enum class Stage : std::size_t {
  // Guest to host.
  GuestSend,    // vsock_stream_sendmsg .. hv_ringbuffer_write (and the step it starts in)
  GuestSignal,  // vmbus_setevent: the HvSignalEvent hypercall
  SignalToHost, // host_signal_latency until the host's thread runs
  HostRecv,     // the channel DPC draining the ring into the application
  // Host to guest.
  HostSend,      // the Windows send(): packets into the ring
  HostSignal,    // host_signal_guest
  SignalToGuest, // host_interrupt_latency until vCPU 0 takes the interrupt
  GuestIrq,      // the exit, vmbus_isr, the tasklet, hvs_channel_cb
  ReaderWakeup,  // try_to_wake_up .. the reader running again
  GuestRecv,     // hvs_stream_dequeue .. the recv() returning
  Count
};

inline constexpr std::array<const char*, static_cast<std::size_t>(Stage::Count)> kStageNames = {
    "guest send()",   "guest signals the host", "signal to the host's DPC",        "host DPC and recv()",
    "host send()",    "host signals the guest", "signal to the guest's interrupt", "guest interrupt on vCPU 0",
    "reader wake-up", "guest recv()",
};

inline const char* stage_name(Stage s)
{
  return kStageNames[static_cast<std::size_t>(s)];
}

} // namespace vsim::hv_sock
