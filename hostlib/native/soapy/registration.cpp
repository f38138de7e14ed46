// driver=hilrig: discovery and construction, registered with SoapySDR (as
// SoapyRTLSDR's Registration.cpp).
#include <SoapySDR/Registry.hpp>

#include "hilrig/soapy/soapy_simproc.hpp"
#include "hilrig/soapy/hilrig_soapy.hpp"

namespace {

SoapySDR::KwargsList find_hilrig(const SoapySDR::Kwargs& args) {
  using hilrig_soapy::arg;
  // Only when asked for by name: a plain `SoapySDRUtil --find` on a lab machine
  // should list radios, not start simulators.
  if (arg(args, "driver") != "hilrig") return {};
  const std::string binary = hilrig::find_sim_binary(arg(args, "sim_binary"));
  if (binary.empty()) return {};
  SoapySDR::Kwargs r = {{"driver", "hilrig"}, {"label", "hilrig simulator (hilrig-sim)"}, {"serial", "hilrig-sim0"},
                        {"sim_binary", binary}};
  if (args.count("serial") && args.at("serial") != r["serial"]) return {};
  return {r};
}

SoapySDR::Device* make_hilrig(const SoapySDR::Kwargs& args) { return new hilrig_soapy::HilrigDevice(args); }

}  // namespace

static SoapySDR::Registry register_hilrig("hilrig", &find_hilrig, &make_hilrig, SOAPY_SDR_ABI_VERSION);
