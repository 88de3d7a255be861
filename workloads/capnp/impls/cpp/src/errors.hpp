// The program's own two failures. Everything the library detects (a hostile or truncated
// message, a broken pipe) arrives as kj::Exception instead; main turns each kind into its exit
// status (SPEC §5): 2 for a UsageError, 1 for everything else.
#pragma once

#include <stdexcept>

namespace capbench {

// A bad command line.
class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A response that is well formed but says the wrong thing; the message names what was
// expected and what came.
class WrongAnswer : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

} // namespace capbench
