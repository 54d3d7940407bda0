// Threads that fit the cores other processes leave free.
//
// A parallel region ends when its slowest thread does. A thread that shares
// its core with a busy process (the game, on the machine a game and its AI
// share) waits for the scheduler at every region, and a forward pass has
// hundreds: a server that runs a thread per core slows by an order of
// magnitude beside one busy core, while one that gives that core up loses
// only that core's share. So, when the thread count is left to kvframe, a
// thread of its own reads four times a second how busy the other processes
// keep the cores this process may use, and passes run on the rest.
#pragma once

#include <string>
#include <vector>

namespace kvframe::runtime {

// From now on fit_threads_to_free_cores() picks the thread count, at most
// `most` (0: the cores this process may use: its affinity and cgroup quota).
// tune_cpu_process() calls it when no thread count was given.
void fit_threads_to_free_cores_from_now_on(int most = 0);

// Call between passes on the thread that runs them (cheap: an atomic read).
// Returns the thread count it set; without
// fit_threads_to_free_cores_from_now_on(), changes nothing.
int fit_threads_to_free_cores();

// Sets the calling thread's own thread count for its passes (OpenMP's count
// is per thread), leaving alone the default that threads started later take
// and every other thread's: at::set_num_threads would set that default too.
// Cheap when the count is already `threads`.
void set_threads_of_this_thread(int threads);

// The parts, for tests.
struct CpuTicks {
  double busy = 0;   // user, nice, system, irq, softirq and steal
  double total = 0;  // busy, idle and iowait
};
// /proc/stat's per-CPU lines of `cpus`, summed.
CpuTicks parse_proc_stat(const std::string& text, const std::vector<int>& cpus);
// utime + stime of /proc/self/stat, in clock ticks.
double parse_self_stat_ticks(const std::string& text);
// The threads to run when other processes keep `others_busy_cores` busy.
int threads_for_free_cores(double others_busy_cores, int most);

}  // namespace kvframe::runtime
