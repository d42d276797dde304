// Stop requests: SIGINT, SIGTERM and SIGHUP to a command that runs
// simulations (run, validate, a shard under Slurm, where scancel sends
// SIGTERM).
//
// The handler exists from before main() (install() runs from a constructor of
// the vsocksim executable) and also replaces an inherited SIG_IGN (a shell
// starting `vsocksim run ... &` ignores SIGINT for it), so no request is lost
// whenever it comes. It records the first signal and makes wake_fd() readable
// (a self-pipe), so a poll() that started just before the signal returns at
// once instead of waiting for a child. The code that runs simulations checks
// requested() before and after every fork and between points, ends its
// children and leaves with exit_status(): 130 for SIGINT, 143 for SIGTERM,
// 129 for SIGHUP.
//
// A second request ends the process at once from the handler: every tracked
// child's process group is killed, the temporary file being written (if any)
// is removed, and the process exits with the status of the first request.
// Files under --output are written to a temporary name and renamed, so no
// partial file is left either way.
#pragma once

#include <sys/types.h>

namespace vsim::app::stop {

// Installs the handler for SIGINT, SIGTERM and SIGHUP and unblocks them; a
// request a launcher left pending is taken now. Idempotent.
void install();

// For commands that run no simulation: back to the default dispositions. A
// request that came before ends the process now, by that signal.
void restore_default();

// The first stop signal received, 0 while none.
int requested();

// 128 + requested() (130, 143, 129), the exit status of a stopped command.
int exit_status();

// Readable once a stop is requested (never read: it stays readable); -1 if
// install() was not called.
int wake_fd();

// In a forked simulation child, first thing: default dispositions and
// unblocked signals, the self-pipe closed, a process group of its own (the
// parent ends it with kill(-pid)), and death with the parent (a parent killed
// by SIGKILL leaves no orphan simulating on).
void enter_child(pid_t parent);

// Process groups of running children, killed by a second request before the
// process ends. At most kMaxTracked at once (the --jobs limit).
inline constexpr int kMaxTracked = 1024;
void track(pid_t pgid);
void untrack(pid_t pgid);

// The temporary file being written, removed by a second request; nullptr
// when none. The path is copied (at most 4095 bytes; a longer one is not
// tracked).
void writing(const char* tmp_path);

} // namespace vsim::app::stop
