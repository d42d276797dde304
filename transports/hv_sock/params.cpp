#include "transports/hv_sock/params.hpp"

#include <fmt/format.h>
#include <string>
#include <vector>

#include <optional>
#include <utility>

namespace vsim::hv_sock {

const std::vector<Preset>& presets()
{
  // net/vmw_vsock/hyperv_transport.c before and after Sunil Muthuswamy's
  // 2019 series: the ring sizes follow SO_SNDBUF / SO_RCVBUF (ac383f58f3c9),
  // one hvs_stream_enqueue call loops over packets (14a1eaa8820e, net-next
  // May 2019) and pending_send_sz is set once at connect instead of on every
  // space check (June 2019); all three are in Linux 5.3. Later kernels copy
  // each received packet out of the ring before copying it to the user
  // (about 5.19), which is not modelled: linux-5.3 is the newest modelled.
  // The 2019 measurements themselves ran on a kernel with the ring sizing
  // patch but neither of the others (the shipped hv_sock studies set the
  // three knobs so).
  static const std::vector<Preset> list = {
      {"linux-5.1",
       "Linux 5.1 and before: both rings 6 pages, one packet per enqueue call, pending_send_sz set and cleared on "
       "every space check",
       {{"hv_sock.ring_sizing", "fixed"}, {"hv_sock.send_loop", "false"}, {"hv_sock.pending_send_size", "per_check"}}},
      {"linux-5.3",
       "Linux 5.3 to 5.18 (the 2019 series merged): rings from the socket options, the send loop, pending_send_sz "
       "set once",
       {{"hv_sock.ring_sizing", "sockopt"}, {"hv_sock.send_loop", "true"}, {"hv_sock.pending_send_size", "once"}}},
  };
  return list;
}

const Preset* find_preset(const std::string& name)
{
  for (const Preset& p : presets())
    if (p.name == name)
      return &p;
  return nullptr;
}

void declare_params(ParamRegistry& reg)
{
  std::vector<std::string> names;
  for (const Preset& p : presets())
    names.push_back(p.name);
  // A knob whose default is the preset's value, which its documentation
  // ends with ("linux-5.1: fixed, linux-5.3: sockopt").
  auto knob = [](const char* path) {
    return Param(path).def(kFromPreset).derives_from({"hv_sock.preset"}).scope("hv_sock");
  };
  auto declare_knob = [&](Param& p) {
    p.doc(p.spec().doc + preset_values_doc(presets(), p.spec().path));
    reg.declare(p);
  };
  reg.declare(Param("hv_sock.preset")
                  .choice()
                  .def("linux-5.3")
                  .words(names)
                  .doc("kernel whose hv_sock behaviour hv_sock.ring_sizing, send_loop and pending_send_size default "
                       "to (linux-5.1: before the 2019 series; linux-5.3: after it, the newest modelled); each can "
                       "then be set alone. Until December 2026 the defaults were sockopt, false, per_check, the "
                       "2019 measurements' kernel")
                  .scope("hv_sock"));
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
  declare_knob(knob("hv_sock.ring_sizing")
                   .choice()
                   .words({"sockopt", "fixed"})
                   .doc("`sockopt`: rings sized from SO_SNDBUF/SO_RCVBUF (2019 patch); `fixed`: both rings 6 pages as "
                        "before")
                   .kernel("net/vmw_vsock/hyperv_transport.c: hvs_open_connection"));
  declare_knob(knob("hv_sock.send_loop")
                   .boolean()
                   .doc("true: one hvs_stream_enqueue call writes packets until the message is done or the ring is "
                        "full")
                   .kernel("net/vmw_vsock/hyperv_transport.c: hvs_stream_enqueue"));
  declare_knob(knob("hv_sock.pending_send_size")
                   .choice()
                   .words({"per_check", "once"})
                   .doc("pending_send_sz protocol: set/clear on every space check (before June 2019) or set once at "
                        "connect")
                   .kernel("net/vmw_vsock/hyperv_transport.c: hvs_stream_has_space"));
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
