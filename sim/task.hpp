// Task<T>: the coroutine type of simulated threads' bodies and of every
// routine they call that takes simulated time.
//
// A routine that charges CPU time, sleeps or waits is written as a C++20
// coroutine returning Task<T> and called with `co_await`. A Task starts
// suspended and runs when awaited; when it ends, control transfers straight
// back to the awaiting coroutine (symmetric transfer: no stack grows however
// deep the calls). The engine (sim/world.hpp) resumes only the innermost
// coroutine of a thread, the one that awaited a time-taking operation.
// An exception thrown in a Task is rethrown in its awaiter.
//
// Coroutine frames are allocated from a per-size free list: a thread calls
// the same routines once per message, and malloc per call would dominate.
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

namespace vsim {

namespace detail {

// Frames of equal size (rounded to 64 bytes) reuse each other's memory.
// Simulations run single-threaded; the pool lives as long as the process.
class FramePool {
public:
  static void* allocate(std::size_t n);
  static void release(void* p, std::size_t n) noexcept;
};

struct PromiseBase {
  std::coroutine_handle<> continuation = std::noop_coroutine();
  std::exception_ptr error;

  static void* operator new(std::size_t n) { return FramePool::allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { FramePool::release(p, n); }

  std::suspend_always initial_suspend() noexcept { return {}; }
  struct Final {
    bool await_ready() noexcept { return false; }
    template <typename P> std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept
    {
      return h.promise().continuation;
    }
    void await_resume() noexcept {}
  };
  Final final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <typename T> struct Promise : PromiseBase {
  std::optional<T> value;
  void return_value(T v) { value.emplace(std::move(v)); }
};
template <> struct Promise<void> : PromiseBase {
  void return_void() noexcept {}
};

} // namespace detail

template <typename T = void> class [[nodiscard]] Task {
public:
  struct promise_type : detail::Promise<T> {
    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept
  {
    if (this != &o) {
      if (h_)
        h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task()
  {
    if (h_)
      h_.destroy();
  }

  bool done() const { return !h_ || h_.done(); }
  Handle handle() const { return h_; }

  // co_await task: run it; continue here when it ends.
  auto operator co_await() const& noexcept { return Awaiter{h_}; }
  auto operator co_await() const&& noexcept { return Awaiter{h_}; }

private:
  struct Awaiter {
    Handle h;
    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept
    {
      h.promise().continuation = caller;
      return h;
    }
    T await_resume()
    {
      if (h.promise().error)
        std::rethrow_exception(h.promise().error);
      if constexpr (!std::is_void_v<T>)
        return std::move(*h.promise().value);
    }
  };
  Handle h_;
};

} // namespace vsim
