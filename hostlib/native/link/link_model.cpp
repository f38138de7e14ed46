#include "hilrig/link/link_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hilrig {

namespace {
using nlohmann::json;

double get_prob(const json& j, const char* key, const std::string& where, double dflt) {
  if (!j.contains(key)) return dflt;
  const json& v = j[key];
  if (!v.is_number()) throw std::invalid_argument(where + "." + key + ": must be a number in [0, 1]");
  const double p = v.get<double>();
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument(where + "." + key + ": " + v.dump() + " is not in [0, 1]");
  return p;
}
std::uint64_t get_u64(const json& j, const char* key, const std::string& where, std::uint64_t dflt) {
  if (!j.contains(key)) return dflt;
  const json& v = j[key];
  if (!v.is_number_unsigned()) throw std::invalid_argument(where + "." + key + ": must be a whole number >= 0");
  return v.get<std::uint64_t>();
}
}  // namespace

json histogram_json(const LatencyHistogram& h) {
  return {{"count", h.count()}, {"p50", h.percentile(0.5)}, {"p90", h.percentile(0.9)},
          {"p99", h.percentile(0.99)}, {"p999", h.percentile(0.999)}, {"max", h.max()}};
}

LinkSpec link_spec_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": must be an object");
  static const char* kKeys[] = {"rate_bps", "delay_ns", "jitter_ns", "queue_bytes", "loss", "burst_p", "burst_r",
                                "burst_loss_bad", "burst_loss_good", "reorder", "duplicate", "seed"};
  for (const auto& [k, v] : j.items()) {
    if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* n) { return k == n; }) == std::end(kKeys))
      throw std::invalid_argument(where + "." + k + ": unknown key");
  }
  LinkSpec s;
  if (j.contains("rate_bps")) {
    if (!j["rate_bps"].is_number() || !(j["rate_bps"].get<double>() >= 0) || !std::isfinite(j["rate_bps"].get<double>()))
      throw std::invalid_argument(where + ".rate_bps: must be a number >= 0 (0: unlimited)");
    s.rate_bps = j["rate_bps"].get<double>();
  }
  s.delay_ns = get_u64(j, "delay_ns", where, 0);
  s.jitter_ns = get_u64(j, "jitter_ns", where, 0);
  s.queue_bytes = get_u64(j, "queue_bytes", where, 0);
  s.loss = get_prob(j, "loss", where, 0);
  s.burst_p = get_prob(j, "burst_p", where, 0);
  s.burst_r = get_prob(j, "burst_r", where, 1);
  s.burst_loss_bad = get_prob(j, "burst_loss_bad", where, 1);
  s.burst_loss_good = get_prob(j, "burst_loss_good", where, 0);
  s.reorder = get_prob(j, "reorder", where, 0);
  s.duplicate = get_prob(j, "duplicate", where, 0);
  s.seed = get_u64(j, "seed", where, 1);
  if (s.burst_p > 0 && s.burst_r == 0) throw std::invalid_argument(where + ".burst_r: must be > 0 (the bad state would never end)");
  if (s.reorder > 0 && s.delay_ns == 0) throw std::invalid_argument(where + ".reorder: needs delay_ns > 0 (a reordered packet skips the delay)");
  return s;
}

json to_json(const LinkSpec& s) {
  return {{"rate_bps", s.rate_bps}, {"delay_ns", s.delay_ns}, {"jitter_ns", s.jitter_ns}, {"queue_bytes", s.queue_limit()},
          {"loss", s.loss}, {"burst_p", s.burst_p}, {"burst_r", s.burst_r}, {"burst_loss_bad", s.burst_loss_bad},
          {"burst_loss_good", s.burst_loss_good}, {"reorder", s.reorder}, {"duplicate", s.duplicate}, {"seed", s.seed}};
}

json to_json(const LinkStats& s, const LinkSpec& spec) {
  return {{"packets_in", counter_get(s.packets_in)},       {"bytes_in", counter_get(s.bytes_in)},
          {"packets_out", counter_get(s.packets_out)},     {"bytes_out", counter_get(s.bytes_out)},
          {"dropped_queue", counter_get(s.dropped_queue)}, {"dropped_queue_bytes", counter_get(s.dropped_queue_bytes)},
          {"dropped_loss", counter_get(s.dropped_loss)},   {"duplicated", counter_get(s.duplicated)},
          {"reordered", counter_get(s.reordered)},         {"queue_bytes_max", counter_get(s.queue_bytes_max)},
          {"delay_ns", histogram_json(s.delay_ns)},        {"late_ns", histogram_json(s.late_ns)},
          {"config", to_json(spec)}};
}

LinkModel::LinkModel(const LinkSpec& spec) : spec_(spec), rng_(spec.seed) {
  ns_per_byte_ = spec.rate_bps > 0 ? 8e9 / spec.rate_bps : 0;
}

bool LinkModel::lost() {
  bool gone = chance(spec_.loss);
  if (spec_.burst_p > 0) {
    gone = chance(bad_ ? spec_.burst_loss_bad : spec_.burst_loss_good) || gone;
    bad_ = bad_ ? !chance(spec_.burst_r) : chance(spec_.burst_p);
  }
  return gone;
}

std::uint64_t LinkModel::queued_bytes(std::uint64_t t_ns) const {
  if (ns_per_byte_ == 0 || tx_free_ns_ <= double(t_ns)) return 0;
  return std::uint64_t(std::ceil((tx_free_ns_ - double(t_ns)) / ns_per_byte_));
}

bool LinkModel::enqueue(std::uint64_t t_ns, std::vector<unsigned char>&& data, std::uint32_t size) {
  double sent_ns = double(t_ns);
  if (ns_per_byte_ > 0) {
    const std::uint64_t ahead = queued_bytes(t_ns);
    if (ahead + size > spec_.queue_limit()) {
      counter_add(stats_.dropped_queue);
      counter_add(stats_.dropped_queue_bytes, size);
      return false;
    }
    counter_max(stats_.queue_bytes_max, ahead + size);
    tx_free_ns_ = std::max(tx_free_ns_, double(t_ns)) + double(size) * ns_per_byte_;
    sent_ns = tx_free_ns_;
  }
  const auto serialised = std::uint64_t(std::ceil(sent_ns));
  const bool skip_delay = spec_.delay_ns > 0 && chance(spec_.reorder);
  std::int64_t jitter = 0;
  if (spec_.jitter_ns > 0)
    jitter = std::int64_t(std::llround((2 * uniform() - 1) * double(spec_.jitter_ns)));
  std::uint64_t due;
  if (skip_delay) {
    due = serialised;
    if (due < last_due_) counter_add(stats_.reordered);   // it leaves before a predecessor
  } else {
    const std::int64_t d = std::max<std::int64_t>(0, std::int64_t(spec_.delay_ns) + jitter);
    due = std::max(serialised + std::uint64_t(d), last_due_);
    last_due_ = due;
  }
  heap_.push_back(Packet{t_ns, due, order_++, std::move(data), size});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  return true;
}

unsigned LinkModel::offer(std::uint64_t t_ns, std::vector<unsigned char>&& data, std::uint32_t size) {
  counter_add(stats_.packets_in);
  counter_add(stats_.bytes_in, size);
  if (lost()) {
    counter_add(stats_.dropped_loss);
    return 0;
  }
  unsigned copies = 0;
  if (chance(spec_.duplicate)) {
    counter_add(stats_.duplicated);
    std::vector<unsigned char> copy = data;
    copies += enqueue(t_ns, std::move(data), size);
    copies += enqueue(t_ns, std::move(copy), size);
  } else {
    copies += enqueue(t_ns, std::move(data), size);
  }
  return copies;
}

bool LinkModel::pop_due(std::uint64_t t_ns, Packet& out) {
  if (heap_.empty() || heap_.front().due_ns > t_ns) return false;
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  out = std::move(heap_.back());
  heap_.pop_back();
  counter_add(stats_.packets_out);
  counter_add(stats_.bytes_out, out.size);
  stats_.delay_ns.record(t_ns - out.in_ns);
  stats_.late_ns.record(t_ns - out.due_ns);
  return true;
}

}  // namespace hilrig
