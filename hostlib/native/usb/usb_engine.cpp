#include "hilrig/usb/usb_engine.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <utility>

#include "hilrig/core/clock.hpp"
#include "hilrig/core/framer.hpp"
#include "hilrig/core/counter.hpp"

namespace hilrig {
namespace {

std::string hex_ep(std::uint8_t ep) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", ep);
  return std::string(b) + ((ep & 0x80) ? " IN" : " OUT");
}

std::uint64_t get_uint(const nlohmann::json& j, const char* key, std::uint64_t dflt, std::uint64_t lo, std::uint64_t hi) {
  if (!j.contains(key) || j[key].is_null()) return dflt;
  const auto& v = j[key];
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    throw std::invalid_argument(std::string("usb transport.") + key + ": must be a whole number, got " + v.dump());
  const std::uint64_t n = v.get<std::uint64_t>();
  if (n < lo || n > hi)
    throw std::invalid_argument(std::string("usb transport.") + key + ": must be in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + std::to_string(n));
  return n;
}

}  // namespace

const char* usb_status_name(UsbStatus s) {
  switch (s) {
    case UsbStatus::completed: return "completed";
    case UsbStatus::timed_out: return "timed out";
    case UsbStatus::stall: return "stall";
    case UsbStatus::no_device: return "no device";
    case UsbStatus::overflow: return "overflow (babble)";
    case UsbStatus::cancelled: return "cancelled";
    default: return "error";
  }
}

UsbLinkConfig parse_usb_link(const nlohmann::json& t) {
  if (!t.is_object()) throw std::invalid_argument("usb transport: must be an object like {\"kind\": \"usb\", ...}");
  UsbLinkConfig l;
  l.transfer_bytes = std::uint32_t(get_uint(t, "transfer_bytes", l.transfer_bytes, 1, 64u << 20));
  l.transfers = std::uint32_t(get_uint(t, "transfers", l.transfers, 1, 4096));
  l.endpoint_in = std::uint8_t(get_uint(t, "endpoint_in", l.endpoint_in, 0x81, 0x8f));
  l.endpoint_out = std::uint8_t(get_uint(t, "endpoint_out", l.endpoint_out, 0x01, 0x0f));
  l.timeout_ms = std::uint32_t(get_uint(t, "timeout_ms", 0, 0, 3'600'000));
  const std::string framing = t.value("framing", std::string("packed"));
  if (framing == "packed") l.framing = UsbFraming::packed;
  else if (framing == "short_packet") l.framing = UsbFraming::short_packet;
  else throw std::invalid_argument("usb transport.framing: must be \"packed\" or \"short_packet\", got \"" + framing + "\"");
  return l;
}

std::uint64_t usbfs_memory_limit_bytes(const char* path) {
  constexpr std::uint64_t kDefault = 16ull << 20;  // the kernel's default usbfs_memory_mb
  std::ifstream f(path);
  long long mb = -1;
  if (!(f >> mb) || mb < 0) return kDefault;
  return mb == 0 ? ~std::uint64_t(0) : std::uint64_t(mb) << 20;  // 0: the kernel sets no limit
}

std::vector<std::string> usb_geometry_problems(const UsbLinkConfig& link, std::uint32_t frame_bytes,
                                               std::uint32_t mps, unsigned directions, std::uint64_t limit) {
  std::vector<std::string> p;
  const std::uint32_t s = link.transfer_bytes;
  if (mps && s % mps != 0) {
    const std::uint32_t down = s / mps * mps, up = down + mps;
    p.push_back("transfer_bytes " + std::to_string(s) + " is not a multiple of the endpoint's max packet size " +
                std::to_string(mps) + " (a transfer that ends inside a packet ends the stream with a short packet): use " +
                (down ? std::to_string(down) + " or " : std::string()) + std::to_string(up));
  }
  if (frame_bytes > s)
    p.push_back("frame_bytes " + std::to_string(frame_bytes) + " does not fit in one transfer of transfer_bytes " +
                std::to_string(s) + ": raise transfer_bytes to at least " + std::to_string(frame_bytes) +
                (mps ? " (rounded up to a multiple of " + std::to_string(mps) + ")" : std::string()));
  else if (link.framing == UsbFraming::packed && s % frame_bytes != 0) {
    // The largest frame that divides the transfer (payload in whole 4-byte words).
    std::uint32_t fit = frame_bytes;
    while (fit > kFrameHeaderBytes && (s % fit != 0 || (fit - kFrameHeaderBytes) % 4 != 0)) --fit;
    p.push_back("packed framing: transfer_bytes " + std::to_string(s) + " is not a whole number of " +
                std::to_string(frame_bytes) + "-byte frames (a frame would straddle two transfers): use frame_bytes " +
                std::to_string(fit) + ", or transfer_bytes a multiple of both " + std::to_string(frame_bytes) +
                (mps ? " and " + std::to_string(mps) : std::string()));
  }
  if (link.framing == UsbFraming::short_packet && mps && frame_bytes % mps == 0)
    p.push_back("short_packet framing: frame_bytes " + std::to_string(frame_bytes) + " is a multiple of the max packet size " +
                std::to_string(mps) + ", so no short packet ends the frame and the transfer waits for the next one: use " +
                std::to_string(frame_bytes - 16) + " or " + std::to_string(frame_bytes + 16));
  const std::uint64_t total = std::uint64_t(s) * link.transfers * std::max(1u, directions);
  if (total > limit) {
    const std::uint64_t fit = limit / (std::uint64_t(s) * std::max(1u, directions));
    p.push_back("buffers in flight " + std::to_string(total) + " bytes (" + std::to_string(link.transfers) + " x " +
                std::to_string(s) + (directions > 1 ? " x 2 directions" : "") + ") exceed the kernel's usbfs limit of " +
                std::to_string(limit) + " bytes (usbfs_memory_mb): use transfers <= " + std::to_string(fit) +
                " or raise it: echo " + std::to_string((total + (1u << 20) - 1) >> 20) +
                " > /sys/module/usbcore/parameters/usbfs_memory_mb");
  }
  return p;
}

UsbEngine::UsbEngine(std::unique_ptr<UsbBackend> backend, const StreamConfig& cfg, const UsbLinkConfig& link)
    : backend_(std::move(backend)), cfg_(cfg), link_(link) {
  frame_len_ = std::uint32_t(kFrameHeaderBytes) + cfg_.payload_bytes();
  const bool in = cfg_.direction != Direction::tx, out = cfg_.direction != Direction::rx;
  std::vector<std::string> problems;
  for (std::uint8_t ep : {link_.endpoint_in, link_.endpoint_out}) {
    if ((ep & 0x80) ? !in : !out) continue;
    for (auto& p : usb_geometry_problems(link_, frame_len_, backend_->max_packet_bytes(ep), in && out ? 2 : 1,
                                         ~std::uint64_t(0)))  // the usbfs limit is the kernel's to enforce
      problems.push_back(backend_->describe() + " endpoint " + hex_ep(ep) + ": " + p);
  }
  if (!problems.empty()) {
    std::string all = problems[0];
    for (std::size_t i = 1; i < problems.size(); ++i) all += "; " + problems[i];
    throw std::invalid_argument(all);
  }
  framer_ = std::make_unique<PatternFramer>(cfg_);
  frames_per_out_ = link_.framing == UsbFraming::packed ? link_.transfer_bytes / frame_len_ : 1;
  auto add = [&](std::uint8_t ep) {
    auto t = std::make_unique<UsbTransfer>();
    t->endpoint = ep;
    t->storage.assign(link_.transfer_bytes, 0);
    t->buffer = t->storage.data();
    t->length = link_.transfer_bytes;
    t->timeout_ms = link_.timeout_ms;
    t->index = transfers_.size();
    backend_->prepare(*t, &UsbEngine::on_complete, this);
    transfers_.push_back(std::move(t));
  };
  for (std::uint32_t i = 0; i < link_.transfers; ++i) {
    if (in) add(link_.endpoint_in);
    if (out) add(link_.endpoint_out);
  }
  if (in) {
    in_ = std::make_unique<FrameSource>(static_cast<TransferFeed&>(*this), frame_len_);
    checker_ = std::make_unique<RxChecker>(rx_);
  }
}

UsbEngine::~UsbEngine() {
  stop();
  for (auto& t : transfers_) {
    // A transfer the device never gave back is left to the backend's close (which
    // discards it); freeing its buffer under it could let late data land in freed memory.
    if (t->in_flight) (void)t.release();
    else backend_->release(*t);
  }
  transfers_.clear();
}

void UsbEngine::start() {
  if (thread_.joinable()) return;
  stop_.store(false);
  tx_.start_ns.store(now_ns(), std::memory_order_relaxed);
  thread_ = std::thread([this] { run(); });
}

void UsbEngine::stop() {
  stop_.store(true);
  if (thread_.joinable()) {
    thread_cpu_done_ns_ += thread_cpu_ns(thread_);
    thread_.join();
  }
}

std::string UsbEngine::error() const {
  std::lock_guard<std::mutex> g(error_mu_);
  return error_;
}

void UsbEngine::fail(const std::string& what) {
  std::lock_guard<std::mutex> g(error_mu_);
  if (error_.empty()) error_ = backend_->describe() + ": " + what;
}

void UsbEngine::on_complete(void* self, UsbTransfer& t) { static_cast<UsbEngine*>(self)->complete(t); }

void UsbEngine::fill_out(UsbTransfer& t, bool eob) {
  const std::uint64_t ts = now_ns();
  for (std::uint32_t i = 0; i < frames_per_out_; ++i) {
    std::uint8_t* f = t.buffer + std::size_t(i) * frame_len_;
    framer_->build(tx_seq_++, (eob && i + 1 == frames_per_out_) ? kFlagEOB : 0, f);
    finish_frame(f, cfg_.crc, ts);
  }
  t.length = frames_per_out_ * frame_len_;
}

void UsbEngine::submit(UsbTransfer& t) {
  t.actual = 0;
  const UsbStatus s = backend_->submit(t);
  if (s == UsbStatus::completed) {
    t.in_flight = true;
    ++in_flight_;
    return;
  }
  counter_add(usb_.submit_errors);
  if (s == UsbStatus::no_device) {
    counter_add(usb_.no_device);
    fail("the device is gone (submitting to endpoint " + hex_ep(t.endpoint) + " failed: no device)");
  } else {
    if (s == UsbStatus::stall) counter_add(usb_.stalls);
    fail("submitting a transfer to endpoint " + hex_ep(t.endpoint) + " failed: " + usb_status_name(s));
  }
}

bool UsbEngine::next_transfer(std::uint64_t timeout_ns, Transfer* out) {
  const std::uint64_t deadline = now_ns() + timeout_ns;
  // OUT completions run in here too: they refill and resubmit from their callbacks.
  while (in_done_.empty() && in_flight_) {
    const std::uint64_t now = now_ns();
    backend_->handle_events(std::uint32_t(std::min<std::uint64_t>(deadline > now ? deadline - now : 0, 20'000'000) / 1000));
    if (now_ns() >= deadline) break;
  }
  if (in_done_.empty()) return false;
  in_taken_ = in_done_.front();
  in_done_.pop_front();
  *out = {in_taken_->buffer, in_taken_->actual};
  return true;
}

void UsbEngine::release_transfer() {
  UsbTransfer& t = *std::exchange(in_taken_, nullptr);
  // A cancelled transfer stays back, and nothing goes out once stopping or failed.
  if (stopping_ || t.status == UsbStatus::cancelled || !error().empty()) return;
  t.length = link_.transfer_bytes;
  submit(t);
}

void UsbEngine::on_short_transfer() { counter_add(usb_.short_transfers); }

void UsbEngine::complete(UsbTransfer& t) {
  t.in_flight = false;
  --in_flight_;
  const bool is_in = t.endpoint & 0x80;
  const std::uint64_t now = now_ns();
  bool again = !stopping_;
  switch (t.status) {
    case UsbStatus::completed:
    case UsbStatus::timed_out:
    case UsbStatus::cancelled:
      if (t.status == UsbStatus::timed_out) counter_add(usb_.timeouts);
      if (t.status == UsbStatus::cancelled) again = false;
      if (t.status != UsbStatus::cancelled || t.actual) {
        counter_add(usb_.transfers_completed);
        counter_add(usb_.bytes_transferred, t.actual);
      }
      if (is_in) {
        // A batch of in_: the event loop takes its frames, then resubmits it.
        in_done_.push_back(&t);
        return;
      }
      {
        const std::uint64_t frames = t.actual / frame_len_, asked = t.length / frame_len_;
        if (t.actual < t.length && t.status == UsbStatus::completed) counter_add(usb_.short_transfers);
        counter_add(tx_.frames_sent, frames);
        counter_add(tx_.samples_sent, frames * cfg_.samples_per_frame());
        counter_add(tx_.payload_bytes_sent, frames * cfg_.payload_bytes());
        if (frames < asked) counter_add(tx_.send_errors, asked - frames);
        if (frames) tx_.last_send_ns.store(now, std::memory_order_relaxed);
      }
      break;
    case UsbStatus::overflow:
      // The device sent more than the transfer holds: the kernel drops it all. The
      // frames in it show up as missing in the sequence accounting.
      counter_add(usb_.overflows);
      break;
    case UsbStatus::stall:
      counter_add(usb_.stalls);
      fail("endpoint " + hex_ep(t.endpoint) + " stalled (the device halted it); clear the halt or reset the device");
      again = false;
      break;
    case UsbStatus::no_device:
      counter_add(usb_.no_device);
      fail("the device is gone (unplugged or reset mid-run; a transfer on endpoint " + hex_ep(t.endpoint) +
           " ended with no device)");
      again = false;
      break;
    default:
      counter_add(usb_.errors);
      fail("a transfer on endpoint " + hex_ep(t.endpoint) + " failed (" + usb_status_name(t.status) + ")");
      again = false;
      break;
  }
  if (!error().empty()) again = false;
  if (!is_in && stopping_ && !eob_sent_ && error().empty()) {
    // The last OUT transfer ends the burst: its last frame carries EOB.
    fill_out(t, true);
    eob_sent_ = true;
    submit(t);
    return;
  }
  if (!again) return;
  if (!is_in) fill_out(t, false);
  else t.length = link_.transfer_bytes;  // an overflowed IN transfer: its data is gone
  submit(t);
}

void UsbEngine::run() {
  for (auto& t : transfers_) {
    if (!(t->endpoint & 0x80)) fill_out(*t, false);
    submit(*t);
    if (!error().empty()) break;
  }
  std::uint64_t deadline = 0;
  for (;;) {
    if (in_) {
      if (in_->wait(20'000'000)) {
        check_batch(*in_, *checker_, now_ns());
        in_->release_batch();  // resubmits the transfer
      }
    } else if (in_flight_) {
      backend_->handle_events(20'000);
    }
    const std::uint64_t now = now_ns();
    const bool failed = !error().empty();
    if ((stop_.load(std::memory_order_relaxed) || failed) && !stopping_) {
      stopping_ = true;
      deadline = now + kStopDeadlineNs;
      for (auto& t : transfers_)
        if (t->in_flight && ((t->endpoint & 0x80) || failed)) backend_->cancel(*t);
      if (!failed && cfg_.direction != Direction::rx && !eob_sent_ && in_flight_ == 0) {
        // Every OUT transfer is back already: send the EOB frame on the first one.
        for (auto& t : transfers_)
          if (!(t->endpoint & 0x80)) {
            fill_out(*t, true);
            eob_sent_ = true;
            submit(*t);
            break;
          }
      }
    }
    if (in_flight_ == 0 && in_done_.empty()) {
      if (stopping_ || failed) break;
      // Nothing in flight and not stopping: wait for stop (all submits failed).
      sleep_until_ns(now + 20'000'000);
      continue;
    }
    if (stopping_ && now > deadline && in_done_.empty()) {
      counter_add(usb_.abandoned, in_flight_);
      fail(std::to_string(in_flight_) + " transfer(s) did not come back within " +
           std::to_string(kStopDeadlineNs / 1'000'000) + " ms of stop (device not answering); abandoned");
      break;
    }
    if (checker_) checker_->on_idle(now, kRecvTimeoutNs);
  }
  if (checker_) checker_->flush();
  finished_.store(true);
}

nlohmann::json UsbEngine::stats() const {
  auto g = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const std::uint64_t cpu = thread_cpu_done_ns_ + thread_cpu_ns(const_cast<std::thread&>(thread_));
  nlohmann::json s;
  s["device"] = backend_->describe();
  s["device_stats"] = backend_->device_stats();
  s["error"] = error();
  if (cfg_.direction != Direction::tx) {
    s["rx"] = counters_json(rx_);
    s["rx"]["thread_cpu_ns"] = cpu;
    s["rx"]["warnings"] = nlohmann::json::array();
  }
  if (cfg_.direction != Direction::rx) {
    s["tx"] = {{"frames_sent", g(tx_.frames_sent)},         {"samples_sent", g(tx_.samples_sent)},
               {"payload_bytes_sent", g(tx_.payload_bytes_sent)}, {"send_errors", g(tx_.send_errors)},
               {"start_ns", g(tx_.start_ns)},               {"last_send_ns", g(tx_.last_send_ns)},
               {"thread_cpu_ns", cpu},                      {"gso", false},
               {"warnings", nlohmann::json::array()}};
  }
  s["usb"] = {{"usb_transfers_completed", g(usb_.transfers_completed)},
              {"usb_bytes_transferred", g(usb_.bytes_transferred)},
              {"usb_short_transfers", g(usb_.short_transfers)},
              {"usb_timeouts", g(usb_.timeouts)},
              {"usb_stalls", g(usb_.stalls)},
              {"usb_no_device", g(usb_.no_device)},
              {"usb_overflows", g(usb_.overflows)},
              {"usb_errors", g(usb_.errors)},
              {"usb_submit_errors", g(usb_.submit_errors)},
              {"usb_abandoned_transfers", g(usb_.abandoned)},
              {"transfer_bytes", link_.transfer_bytes},
              {"transfers", link_.transfers},
              {"running", thread_.joinable() && !finished_.load()}};
  return s;
}

}  // namespace hilrig
