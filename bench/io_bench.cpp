// I/O wrappers against the plain calls, in pairs measured in one run:
//   BM_Read_Plain vs BM_Read_Wrapped_Idle: what the wrapper adds to a read
//     when no session records I/O (target: <= 2 ns);
//   BM_Read_Wrapped_Recorded: the same read recorded by a session;
//   BM_OpenClose_Plain vs BM_OpenClose_Wrapped: what the always-on handle
//     registry adds to an open+close pair (target: <= 100 ns), and
//     BM_OpenClose_RegistryOnly: that registry work alone.
// The reads are 1 byte from /dev/zero: the cheapest real system call.
#include <fcntl.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <loupe/io.hpp>

#include "bench_support.hpp"

namespace {

// /dev/zero, opened through the wrapper so that it is registered.
class zero_file {
public:
    zero_file() : fd_(loupe::io::open("/dev/zero", O_RDONLY)) {}
    ~zero_file() { loupe::io::close(fd_); }
    int fd() const noexcept { return fd_; }

private:
    int fd_;
};

void BM_Read_Plain(benchmark::State& state) {
    zero_file zero;
    char byte;
    for (auto _ : state) benchmark::DoNotOptimize(::read(zero.fd(), &byte, 1));
}
BENCHMARK(BM_Read_Plain);

void BM_Read_Wrapped_Idle(benchmark::State& state) {
    zero_file zero;
    char byte;
    for (auto _ : state) benchmark::DoNotOptimize(loupe::io::read(zero.fd(), &byte, 1));
}
BENCHMARK(BM_Read_Wrapped_Idle);

void BM_Read_Wrapped_Recorded(benchmark::State& state) {
    zero_file zero;
    loupe_bench::discarding_session session(state, loupe::kinds::io);
    char byte;
    for (auto _ : state) benchmark::DoNotOptimize(loupe::io::read(zero.fd(), &byte, 1));
}
BENCHMARK(BM_Read_Wrapped_Recorded);

// A path long enough to be a real one (the registry copies it).
constexpr const char* open_path = "/proc/self/../../dev/zero";

void BM_OpenClose_Plain(benchmark::State& state) {
    for (auto _ : state) {
        const int fd = ::open(open_path, O_RDONLY);
        benchmark::DoNotOptimize(::close(fd));
    }
}
BENCHMARK(BM_OpenClose_Plain);

void BM_OpenClose_Wrapped(benchmark::State& state) {
    for (auto _ : state) {
        const int fd = loupe::io::open(open_path, O_RDONLY);
        benchmark::DoNotOptimize(loupe::io::close(fd));
    }
}
BENCHMARK(BM_OpenClose_Wrapped);

// The registry's share of a wrapped open+close without the two system calls
// (whose own cost varies by hundreds of ns from run to run here): what the
// wrappers do around them.
void BM_OpenClose_RegistryOnly(benchmark::State& state) {
    loupe::io::handle_registry& registry = loupe::io::registry();
    constexpr int fd = 1000;
    for (auto _ : state) {
        loupe::io::detail::register_open(fd, open_path, loupe::io::resource_kind::file);
        benchmark::DoNotOptimize(registry.end_close(registry.begin_close(fd), true));
    }
}
BENCHMARK(BM_OpenClose_RegistryOnly);

}  // namespace
