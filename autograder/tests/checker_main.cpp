// main() of every checker binary: the lab under test comes from the command line, so one binary
// serves every lab of its operation.
//   <op>_test --lab=LIBRARY [--lab-order=serial|tree] [--lab-name=04_sequential] [gtest flags]
// The options become REDUCE_LAB_LIBRARY, REDUCE_LAB_ORDER and REDUCE_LAB for this process only;
// the runner it starts for the lab gets none of them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  std::vector<char*> rest;
  const struct {
    const char* flag;
    const char* variable;
  } options[] = {{"--lab=", "REDUCE_LAB_LIBRARY"},
                 {"--lab-order=", "REDUCE_LAB_ORDER"},
                 {"--lab-name=", "REDUCE_LAB"}};
  for (int i = 0; i < argc; ++i) {
    bool taken = false;
    for (const auto& option : options) {
      const std::size_t length = std::strlen(option.flag);
      if (std::strncmp(argv[i], option.flag, length) == 0) {
        setenv(option.variable, argv[i] + length, 1);
        taken = true;
      }
    }
    if (!taken) rest.push_back(argv[i]);
  }
  int count = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  ::testing::InitGoogleTest(&count, rest.data());
  return RUN_ALL_TESTS();
}
