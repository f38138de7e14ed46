// hilrig-sim built with -DHILRIG_RTL=OFF (or a sanitizer build): no RTL model.
#include "hilrig/rtl/rtl_core.hpp"

namespace hilrig {
std::unique_ptr<RtlCore> make_loopback_rtl() { return nullptr; }
}  // namespace hilrig
