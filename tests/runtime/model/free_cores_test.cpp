// Fitting the thread count to the cores other processes leave free
// (runtime/model/free_cores.cpp): reading /proc and the rule it applies.
#include "kvframe/runtime/free_cores.h"

#include <gtest/gtest.h>

namespace kvframe::runtime {
namespace {

constexpr char kProcStat[] =
    "cpu  300 0 100 1600 0 0 0 0 0 0\n"
    "cpu0 100 0 50 850 0 0 0 0 0 0\n"
    "cpu1 200 0 50 750 0 0 0 0 0 0\n"
    "cpu10 9 9 9 9 9 9 9 9 0 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n";

TEST(FreeCores, ReadsTheBusyAndTotalTicksOfTheAllowedCpusOnly) {
  const CpuTicks both = parse_proc_stat(kProcStat, {0, 1});
  EXPECT_DOUBLE_EQ(both.busy, 400);
  EXPECT_DOUBLE_EQ(both.total, 2000);
  const CpuTicks second = parse_proc_stat(kProcStat, {1});
  EXPECT_DOUBLE_EQ(second.busy, 250);
  EXPECT_DOUBLE_EQ(second.total, 1000);
  const CpuTicks tenth = parse_proc_stat(kProcStat, {10});
  EXPECT_DOUBLE_EQ(tenth.busy, 54) << "user, nice, system, irq, softirq and steal";
  EXPECT_DOUBLE_EQ(tenth.total, 72);
}

TEST(FreeCores, ReadsItsOwnTicksPastACommandNameWithSpacesAndParentheses) {
  EXPECT_DOUBLE_EQ(parse_self_stat_ticks("4242 (kv serve) (x)) S 1 2 3 4 5 6 7 8 9 10 70 30 0 0 20 0 9"), 100);
  EXPECT_DOUBLE_EQ(parse_self_stat_ticks("garbage"), 0);
}

TEST(FreeCores, GivesUpEachCoreAnotherProcessKeepsBusy) {
  EXPECT_EQ(threads_for_free_cores(0.0, 2), 2);
  EXPECT_EQ(threads_for_free_cores(0.2, 2), 2) << "background noise keeps every core";
  EXPECT_EQ(threads_for_free_cores(0.5, 2), 1) << "half a core busy is enough to stall a thread beside it";
  EXPECT_EQ(threads_for_free_cores(1.0, 2), 1);
  EXPECT_EQ(threads_for_free_cores(2.0, 2), 1) << "never fewer than one";
  EXPECT_EQ(threads_for_free_cores(1.0, 16), 15);
  EXPECT_EQ(threads_for_free_cores(0.0, 0), 1);
}

}  // namespace
}  // namespace kvframe::runtime
