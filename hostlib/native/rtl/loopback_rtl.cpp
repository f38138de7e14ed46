// The Verilator model of firmware/rtl/loopback_top behind hilrig::RtlCore. AXI-Stream: a
// beat moves at the edge where tvalid and tready were both high before it. loopback_top's
// outputs are registers (rx_axis_*, tx_axis_tready and the counters), so the handshakes
// of the coming edge are known from the outputs of the last one and the inputs set now:
// one clock is one evaluation, the rising edge (see posedge()).
#include <algorithm>
#include <cstring>
#include <deque>
#include <vector>

#include "Vloopback_top.h"
#include "Vloopback_top___024root.h"
#include "hilrig/rtl/rtl_core.hpp"

namespace hilrig {
namespace {

// A rising edge. Verilator finds an edge by comparing clk with its value at the last
// evaluation; a falling-edge evaluation only records clk = 0 (the design has no negedge
// logic) and costs as much as the rising one (its input-combinational pass runs on every
// evaluation). Where this Verilator keeps that record as __Vtrigrprev__TOP__clk, it is
// cleared instead: one evaluation per clock, 1.25x the clocks per second. Other versions
// take the two evaluations.
template <class M>
auto clear_clk_record(M& m, int) -> decltype(m.rootp->__Vtrigrprev__TOP__clk = 0, true) {
  m.rootp->__Vtrigrprev__TOP__clk = 0;
  return true;
}
template <class M>
bool clear_clk_record(M&, long) {
  return false;
}
template <class M>
void posedge(M& m) {
  if (!clear_clk_record(m, 0)) {
    m.clk = 0;
    m.eval();
  }
  m.clk = 1;
  m.eval();
}

constexpr std::uint32_t kHeaderBeats = std::uint32_t(kFrameHeaderBytes / 8);

class LoopbackRtl final : public RtlCore {
 public:
  LoopbackRtl() {
    image_.image = HILRIG_RTL_IMAGE;
    image_.version = HILRIG_RTL_VERSION;
    image_.rtl_git_hash = HILRIG_RTL_GIT_HASH;
    image_.channels = 1;                      // rtl.cmake HILRIG_RTL_PARAMS
    image_.sample_format = SampleFormat::sc16;
    image_.samples_per_frame = 248;
    image_.crc = false;
    image_.rx_fifo_beats = image_.tx_fifo_beats = 512;
    rx_buf_.resize(kHeaderBeats + image_.samples_per_frame * image_.channels + 8);
  }
  const RtlImage& image() const override { return image_; }

  void reset(std::uint16_t rx_rate_div, std::uint16_t tx_rate_div, bool rx_stop) override {
    m_.rx_rate_div = rx_rate_div;
    m_.tx_rate_div = tx_rate_div;
    m_.rx_stop = rx_stop;
    m_.time_ns = 0;  // no host-synchronised time: the link stamps send_time_ns on publication
    m_.rx_axis_tready = 0;
    m_.tx_axis_tvalid = 0;
    m_.tx_axis_tlast = 0;
    m_.tx_axis_tdata = 0;
    m_.rst = 1;
    for (int i = 0; i < 4; ++i) clock();
    m_.rst = 0;
    cycles_ = 0;
    rx_beats_ = 0;
    rx_complete_ = false;
    tx_.clear();
    tx_off_ = 0;
    tx_samples_ok_ = 0;
  }
  void set_rx_stop(bool stop) override { m_.rx_stop = stop; }

  void push_tx_frame(const std::uint8_t* frame, std::uint32_t len) override {
    TxFrame f;
    f.beats.assign((len + 7) / 8, 0);
    std::memcpy(f.beats.data(), frame, len);
    if (len >= kFrameHeaderBytes) {
      const FrameHeader h = read_header(frame);
      const unsigned tick_bytes = bytes_per_sample(SampleFormat(h.sample_format)) * std::max<unsigned>(h.channels, 1);
      f.samples = h.payload_bytes / tick_bytes;
    }
    if (f.beats.empty()) return;  // nothing to put on the bus
    tx_.push_back(std::move(f));
  }
  std::uint64_t tx_queued_frames() const override { return tx_.size(); }

  std::uint64_t run(std::uint64_t cycles) override {
    const bool was_complete = rx_complete_;
    std::uint64_t n = 0;
    while (n < cycles) {
      // Inputs for this clock.
      const bool tx_valid = !tx_.empty();
      const TxFrame* f = tx_valid ? &tx_.front() : nullptr;
      const bool tx_last = tx_valid && tx_off_ + 1 == f->beats.size();
      m_.tx_axis_tvalid = tx_valid;
      m_.tx_axis_tdata = tx_valid ? f->beats[tx_off_] : 0;
      m_.tx_axis_tlast = tx_last;
      m_.rx_axis_tready = !rx_complete_;
      const bool rx_take = m_.rx_axis_tvalid && !rx_complete_;
      const std::uint64_t rx_data = m_.rx_axis_tdata;
      const bool rx_last = m_.rx_axis_tlast;
      const bool tx_take = tx_valid && m_.tx_axis_tready;
      const std::uint32_t ok_before = m_.tx_frames_ok;
      posedge(m_);
      ++n;
      if (tx_take) {
        if (tx_last) {
          if (m_.tx_frames_ok != ok_before) tx_samples_ok_ += f->samples;  // the checker took it as good
          tx_.pop_front();
          tx_off_ = 0;
        } else {
          ++tx_off_;
        }
      }
      if (rx_take) {
        if (rx_beats_ < rx_buf_.size()) rx_buf_[rx_beats_] = rx_data;
        ++rx_beats_;
        if (rx_last) {
          rx_complete_ = true;
          if (!was_complete) break;  // a new frame: hand it over before clocking on
        }
      }
    }
    cycles_ += n;
    return n;
  }

  const std::uint8_t* rx_frame(std::uint32_t* len) const override {
    if (!rx_complete_) return nullptr;
    *len = std::uint32_t(std::min<std::size_t>(rx_beats_, rx_buf_.size()) * 8);
    return reinterpret_cast<const std::uint8_t*>(rx_buf_.data());
  }
  void take_rx_frame() override {
    rx_complete_ = false;
    rx_beats_ = 0;
  }
  std::uint64_t cycles() const override { return cycles_; }

  RtlCounters counters() const override {
    RtlCounters c;
    c.rx_frames_dropped = m_.rx_frames_dropped;
    c.rx_ticks_lost = m_.rx_ticks_lost;
    c.tx_frames_ok = m_.tx_frames_ok;
    c.tx_malformed_frames = m_.tx_malformed_frames;
    c.tx_seq_errors = m_.tx_seq_errors;
    c.tx_missing_frames = m_.tx_missing_frames;
    c.tx_late_frames = m_.tx_late_frames;
    c.tx_pattern_errors = m_.tx_pattern_errors;
    c.tx_underruns = m_.tx_underruns;
    c.tx_consumed_beats = m_.tx_consumed_beats;
    c.tx_samples_ok = tx_samples_ok_;
    c.tx_eob_seen = m_.tx_eob_seen;
    c.rx_stopped = m_.rx_stopped;
    return c;
  }

 private:
  struct TxFrame {
    std::vector<std::uint64_t> beats;  // little-endian: byte 0 of the frame is bits 7:0 of beat 0
    std::uint64_t samples = 0;
  };
  void clock() { posedge(m_); }

  Vloopback_top m_;
  RtlImage image_;
  std::uint64_t cycles_ = 0;
  std::vector<std::uint64_t> rx_buf_;
  std::size_t rx_beats_ = 0;
  bool rx_complete_ = false;
  std::deque<TxFrame> tx_;
  std::size_t tx_off_ = 0;
  std::uint64_t tx_samples_ok_ = 0;
};

}  // namespace

std::unique_ptr<RtlCore> make_loopback_rtl() { return std::make_unique<LoopbackRtl>(); }

}  // namespace hilrig
