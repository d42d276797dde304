#include "transports/hv_sock/params.hpp"

#include <fmt/format.h>
#include <string>
#include <vector>

#include <optional>

namespace vsim::hv_sock {

void declare_params(ParamRegistry& reg)
{
  // Every key here applies to hv_sock points only.
  reg.declare(Param("hv_sock.sndbuf")
                  .size()
                  .unit("bytes")
                  .def("default")
                  .range(1, 1ll << 30)
                  .words({"default"})
                  .doc("SO_SNDBUF set by the Linux side before connect (sizes the guest-to-host ring), or `default`")
                  .kernel("net/vmw_vsock/hyperv_transport.c: hvs_open_connection")
                  .scope("hv_sock"));
  reg.declare(Param("hv_sock.rcvbuf")
                  .size()
                  .unit("bytes")
                  .def("default")
                  .range(1, 1ll << 30)
                  .words({"default"})
                  .doc("SO_RCVBUF set by the Linux side before connect (sizes the host-to-guest ring), or `default`")
                  .kernel("net/vmw_vsock/hyperv_transport.c: hvs_open_connection")
                  .scope("hv_sock"));
  reg.declare(Param("hv_sock.ring_sizing")
                  .choice()
                  .def("sockopt")
                  .words({"sockopt", "fixed"})
                  .doc("`sockopt`: rings sized from SO_SNDBUF/SO_RCVBUF (2019 patch); `fixed`: both rings 6 pages as "
                       "before")
                  .kernel("net/vmw_vsock/hyperv_transport.c: hvs_open_connection")
                  .scope("hv_sock"));
  reg.declare(Param("hv_sock.send_loop")
                  .boolean()
                  .def("false")
                  .doc("true: one hvs_stream_enqueue call writes packets until the message is done or the ring is full")
                  .kernel("net/vmw_vsock/hyperv_transport.c: hvs_stream_enqueue")
                  .scope("hv_sock"));
  reg.declare(Param("hv_sock.pending_send_size")
                  .choice()
                  .def("per_check")
                  .words({"per_check", "once"})
                  .doc("pending_send_sz protocol: set/clear on every space check (before June 2019) or set once at "
                       "connect")
                  .kernel("net/vmw_vsock/hyperv_transport.c: hvs_stream_has_space")
                  .scope("hv_sock"));
  reg.declare(Param("hv_sock.host_packet_size")
                  .size()
                  .unit("bytes")
                  .def("16384")
                  .range(8, 16 * 1024)
                  .doc("largest payload the Windows host puts in one VMBus packet (the real value is not public; "
                       "default: the host MTU, 16 KiB)")
                  .scope("hv_sock"));
  reg.declare(Param("hv_sock.host_fill")
                  .boolean()
                  .def("true")
                  .doc("true: the Windows writer puts what fits of its next packet into the ring, as Linux's "
                       "hvs_stream_enqueue does; false: it waits until a whole packet fits (not public either way)")
                  .scope("hv_sock"));
  reg.declare(Param("hv_sock.sysctl_wmem_max")
                  .size()
                  .unit("bytes")
                  .def("212992")
                  .range(4096, 1ll << 30)
                  .doc("net.core.wmem_max: cap on the value SO_SNDBUF accepts (the kernel then doubles it)")
                  .kernel("net/core/sock.c: sock_setsockopt (SO_SNDBUF)")
                  .scope("hv_sock"));
  reg.declare(Param("hv_sock.sysctl_rmem_max")
                  .size()
                  .unit("bytes")
                  .def("212992")
                  .range(4096, 1ll << 30)
                  .doc("net.core.rmem_max: cap on the value SO_RCVBUF accepts (the kernel then doubles it)")
                  .kernel("net/core/sock.c: sock_setsockopt (SO_RCVBUF)")
                  .scope("hv_sock"));
}

std::uint32_t ring_size(const Params& p, const char* key, const char* sysctl, SocketBuffer which)
{
  std::optional<std::uint64_t> opt;
  if (!p.is_word(key, "default"))
    opt = static_cast<std::uint64_t>(p.integer(key));
  std::uint32_t sk = socket_buffer_value(opt, static_cast<std::uint64_t>(p.integer(sysctl)), which);
  return ring_size_for(sk, p.text("hv_sock.ring_sizing") == "sockopt");
}

namespace {

// What became of the SO_SNDBUF / SO_RCVBUF value on its way to the ring.
std::string ring_note(const Params& p, const char* key, const char* sysctl, SocketBuffer which, std::uint32_t ring)
{
  if (p.is_word(key, "default"))
    return "";
  const auto v = static_cast<std::uint64_t>(p.integer(key));
  if (p.text("hv_sock.ring_sizing") != "sockopt")
    return fmt::format("{}={} is ignored: hv_sock.ring_sizing is fixed, the ring is {} bytes", key, v, ring);
  const auto cap = static_cast<std::uint64_t>(p.integer(sysctl));
  const std::uint32_t sk = socket_buffer_value(v, cap, which);
  std::vector<std::string> steps;
  if (v > cap)
    steps.push_back(fmt::format("capped by {} at {}", sysctl, cap));
  if (sk > kRingMaxSize)
    steps.push_back(fmt::format("the kernel's {} exceeds the largest ring, {} bytes", sk, kRingMaxSize));
  else if (sk < kRingDefaultSize)
    steps.push_back(fmt::format("the kernel's {} is below the default ring, {} bytes", sk, kRingDefaultSize));
  if (steps.empty())
    return "";
  std::string text = fmt::format("{}={}: ", key, v);
  for (std::size_t i = 0; i < steps.size(); ++i)
    text += (i ? "; " : "") + steps[i];
  return text + fmt::format(": the ring is {} bytes", ring);
}

} // namespace

std::vector<Effective> effective(const Params& p)
{
  const std::uint32_t out = ring_size(p, "hv_sock.sndbuf", "hv_sock.sysctl_wmem_max", SocketBuffer::Send);
  const std::uint32_t in = ring_size(p, "hv_sock.rcvbuf", "hv_sock.sysctl_rmem_max", SocketBuffer::Receive);
  std::vector<Effective> e = {
      {"ring_bytes_guest_to_host", static_cast<double>(out), "bytes", "hv_sock.sndbuf",
       ring_note(p, "hv_sock.sndbuf", "hv_sock.sysctl_wmem_max", SocketBuffer::Send, out)},
      {"ring_bytes_host_to_guest", static_cast<double>(in), "bytes", "hv_sock.rcvbuf",
       ring_note(p, "hv_sock.rcvbuf", "hv_sock.sysctl_rmem_max", SocketBuffer::Receive, in)},
      {"host_packet_bytes", static_cast<double>(p.integer("hv_sock.host_packet_size")), "bytes",
       "hv_sock.host_packet_size", ""},
  };
  for (Effective& part : memory(p))
    e.push_back(std::move(part));
  return e;
}

} // namespace vsim::hv_sock
