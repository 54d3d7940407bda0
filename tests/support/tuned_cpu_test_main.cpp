// GoogleTest main() for tests that run real models: the same CPU tuning as
// the tools, so the suite runs the model at the speed users see, but with a
// thread count that stays put (OMP_NUM_THREADS, else every core).
#include <gtest/gtest.h>

#include "kvframe/runtime/cpu_process.h"

int main(int argc, char** argv) {
  kvframe::runtime::tune_cpu_process(argv, 0, kvframe::runtime::UnsetThreads::kEveryCore);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
