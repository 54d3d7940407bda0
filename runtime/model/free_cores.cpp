#include "kvframe/runtime/free_cores.h"

#include <ATen/Parallel.h>
#include <sched.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cctype>
#include <chrono>
#include <atomic>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

namespace kvframe::runtime {
namespace {

// Between two samples: long enough that /proc's 10 ms ticks give a share to
// a few percent, short enough that a game starting up is seen at once.
constexpr auto kSampleEvery = std::chrono::milliseconds(250);

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The CPUs this process may run on.
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) {
    for (unsigned cpu = 0; cpu < std::max(1u, std::thread::hardware_concurrency()); ++cpu) {
      cpus.push_back(static_cast<int>(cpu));
    }
  }
  return cpus;
}

// A cgroup v2 CPU quota ("200000 100000": two cores' worth), rounded up; 0: none.
int cgroup_core_limit() {
  std::istringstream in(read_file("/sys/fs/cgroup/cpu.max"));
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
  return std::max(1, static_cast<int>(std::ceil(std::stod(quota) / period)));
}

// The thread count other processes leave room for, re-read by a thread of
// its own so that a request arriving after a quiet spell meets the load of
// now, not the average since the last pass. Never destroyed: the thread
// reads it until the process ends.
struct LoadSampler {
  int most = 1;  // the cores this process may use
  std::vector<int> cpus;
  std::atomic<int> target{0};
};

std::atomic<LoadSampler*> the_sampler{nullptr};

double self_ticks() { return parse_self_stat_ticks(read_file("/proc/self/stat")); }

}  // namespace

CpuTicks parse_proc_stat(const std::string& text, const std::vector<int>& cpus) {
  CpuTicks out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !std::isdigit(static_cast<unsigned char>(line[3]))) continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    // Steal is time the hypervisor gave another guest: not free either.
    const double busy = user + nice + system + irq + softirq + steal;
    out.busy += busy;
    out.total += busy + idle + iowait;
  }
  return out;
}

double parse_self_stat_ticks(const std::string& text) {
  // Fields after the command name, which is in parentheses and may hold spaces.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return utime + stime;
}

int threads_for_free_cores(double others_busy_cores, int most) {
  // A process that keeps a quarter of a core busy is enough to stall a
  // thread sharing its core at every parallel region: give that core up.
  constexpr double kToleratedShare = 0.25;
  const int taken = static_cast<int>(std::ceil(std::max(0.0, others_busy_cores - kToleratedShare)));
  return std::clamp(most - taken, 1, std::max(1, most));
}

void fit_threads_to_free_cores_from_now_on(int most) {
  if (the_sampler.load() != nullptr) return;
  auto* s = new LoadSampler;
  s->cpus = allowed_cpus();
  const int limit = cgroup_core_limit();
  s->most = most > 0 ? most : static_cast<int>(s->cpus.size());
  if (limit > 0) s->most = std::min(s->most, limit);
  s->target = s->most;
  std::thread([s] {
    CpuTicks last = parse_proc_stat(read_file("/proc/stat"), s->cpus);
    double last_self = self_ticks();
    for (;;) {
      std::this_thread::sleep_for(kSampleEvery);
      const CpuTicks ticks = parse_proc_stat(read_file("/proc/stat"), s->cpus);
      const double self = self_ticks();
      const double elapsed_per_cpu = (ticks.total - last.total) / static_cast<double>(s->cpus.size());
      if (elapsed_per_cpu > 0) {
        const double others = std::max(0.0, (ticks.busy - last.busy) - (self - last_self)) / elapsed_per_cpu;
        s->target = threads_for_free_cores(others, s->most);
      }
      last = ticks;
      last_self = self;
    }
  }).detach();
  the_sampler = s;
}

int fit_threads_to_free_cores() {
  const LoadSampler* s = the_sampler.load();
  if (s == nullptr) return at::get_num_threads();
  const int target = s->target;
  set_threads_of_this_thread(target);
  return target;
}

void set_threads_of_this_thread(int threads) {
  // at::get_num_threads() first gives this thread its count from libtorch's
  // default if it had none yet, which would otherwise overwrite ours later.
  if (threads < 1 || at::get_num_threads() == threads) return;
#ifdef _OPENMP
  omp_set_num_threads(threads);
#else
  at::set_num_threads(threads);  // a libtorch without OpenMP keeps one pool: the process's count
#endif
}

}  // namespace kvframe::runtime
