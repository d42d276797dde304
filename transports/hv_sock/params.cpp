#include "transports/hv_sock/params.hpp"

#include <fmt/format.h>
#include <string>
#include <vector>

#include <optional>

namespace vsim::hv_sock {

void declare_params(ParamRegistry& registry)
{
  // Every key here applies to hv_sock points only.
  struct Scoped {
    ParamRegistry& r;
    void declare(ParamSpec s)
    {
      s.scope = "hv_sock";
      r.declare(std::move(s));
    }
  } reg{registry};
  auto size = [&](const char* path, const char* def, const char* doc) {
    ParamSpec s{path, ParamKind::Size, "bytes", def};
    s.min = 1;
    s.max = 1ll << 30;
    s.choices = {"default"};
    s.doc = doc;
    reg.declare(s);
  };
  size("hv_sock.sndbuf", "default",
       "SO_SNDBUF set by the Linux side before connect (sizes the guest-to-host ring), or `default`");
  size("hv_sock.rcvbuf", "default",
       "SO_RCVBUF set by the Linux side before connect (sizes the host-to-guest ring), or `default`");
  reg.declare({"hv_sock.ring_sizing", ParamKind::Choice, "", "sockopt", 0, 0, {"sockopt", "fixed"},
               "`sockopt`: rings sized from SO_SNDBUF/SO_RCVBUF (2019 patch); `fixed`: both rings 6 pages as before"});
  reg.declare({"hv_sock.send_loop", ParamKind::Boolean, "", "false", 0, 0, {},
               "true: one hvs_stream_enqueue call writes packets until the message is done or the ring is full"});
  reg.declare({"hv_sock.pending_send_size", ParamKind::Choice, "", "per_check", 0, 0, {"per_check", "once"},
               "pending_send_sz protocol: set/clear on every space check (before June 2019) or set once at connect"});
  ParamSpec host_pkt{"hv_sock.host_packet_size", ParamKind::Size, "bytes", "16384"};
  host_pkt.min = 8;
  host_pkt.max = 16 * 1024;
  host_pkt.doc = "largest payload the Windows host puts in one VMBus packet (the real value is not public; default: the host MTU, 16 KiB)";
  reg.declare(host_pkt);
  reg.declare({"hv_sock.host_fill", ParamKind::Boolean, "", "true", 0, 0, {},
               "true: the Windows writer puts what fits of its next packet into the ring, as Linux's "
               "hvs_stream_enqueue does; false: it waits until a whole packet fits (not public either way)"});
  ParamSpec wmem{"hv_sock.sysctl_wmem_max", ParamKind::Size, "bytes", "212992"};
  wmem.min = 4096;
  wmem.max = 1ll << 30;
  wmem.doc = "net.core.wmem_max: cap on the value SO_SNDBUF accepts (the kernel then doubles it)";
  reg.declare(wmem);
  wmem.path = "hv_sock.sysctl_rmem_max";
  wmem.doc = "net.core.rmem_max: cap on the value SO_RCVBUF accepts (the kernel then doubles it)";
  reg.declare(wmem);
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

}  // namespace

std::vector<Effective> effective(const Params& p)
{
  const std::uint32_t out = ring_size(p, "hv_sock.sndbuf", "hv_sock.sysctl_wmem_max", SocketBuffer::Send);
  const std::uint32_t in = ring_size(p, "hv_sock.rcvbuf", "hv_sock.sysctl_rmem_max", SocketBuffer::Receive);
  return {
      {"ring_bytes_guest_to_host", static_cast<double>(out), "bytes", "hv_sock.sndbuf",
       ring_note(p, "hv_sock.sndbuf", "hv_sock.sysctl_wmem_max", SocketBuffer::Send, out)},
      {"ring_bytes_host_to_guest", static_cast<double>(in), "bytes", "hv_sock.rcvbuf",
       ring_note(p, "hv_sock.rcvbuf", "hv_sock.sysctl_rmem_max", SocketBuffer::Receive, in)},
      {"host_packet_bytes", static_cast<double>(p.integer("hv_sock.host_packet_size")), "bytes",
       "hv_sock.host_packet_size", ""},
  };
}

}  // namespace vsim::hv_sock
