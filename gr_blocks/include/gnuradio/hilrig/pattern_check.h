/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HILRIG_PATTERN_CHECK_H
#define INCLUDED_HILRIG_PATTERN_CHECK_H

#include <gnuradio/hilrig/api.h>
#include <gnuradio/sync_block.h>
#include <pmt/pmt.h>

#include <cstdint>
#include <string>

namespace gr {
namespace hilrig {

/*!
 * \brief Checks the hilrig counter pattern in a flowgraph, per channel: samples,
 * pattern errors, gaps and the samples they miss.
 * \ingroup hilrig
 *
 * One input per channel (cpu_format as pattern_source). Channel c expects word
 * tick * channels + c, from tick first_sample on. A sample that differs is a
 * pattern error, unless it and the next sample continue the pattern further on:
 * then it is a gap of that many samples (found up to half the word range ahead:
 * 2^31 / channels samples for sc16/fc32, 2^15 / channels for sc8).
 *
 * Message port "stats": a PMT dict (samples, pattern_errors, gaps,
 * missing_samples as totals, and *_per_channel u64 vectors), posted every
 * stats_interval_s (0: never periodically), when stop_after_samples is reached
 * and when the flowgraph stops. stop_after_samples > 0: the block checks that many
 * samples per channel, then reports WORK_DONE so that the flowgraph ends.
 * The comparison is the core's pattern_check.
 */
class HILRIG_API pattern_check : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<pattern_check> sptr;

    static sptr make(const std::string& cpu_format,
                     int channels = 1,
                     uint64_t stop_after_samples = 0,
                     uint64_t first_sample = 0,
                     double stats_interval_s = 1.0);

    //! Counters of one channel, or the sum over all channels with channel = -1.
    virtual uint64_t samples(int channel = -1) const = 0;
    virtual uint64_t pattern_errors(int channel = -1) const = 0;
    virtual uint64_t gaps(int channel = -1) const = 0;
    virtual uint64_t missing_samples(int channel = -1) const = 0;
    //! When samples reached the check (the core's clock, CLOCK_MONOTONIC ns, 0 before
    //! any) and in how many work calls: the arrival counters of a source that has none.
    virtual uint64_t first_sample_ns() const = 0;
    virtual uint64_t last_sample_ns() const = 0;
    virtual uint64_t buffers() const = 0;
    //! The dict the stats port carries.
    virtual pmt::pmt_t stats() const = 0;
};

} // namespace hilrig
} // namespace gr

#endif /* INCLUDED_HILRIG_PATTERN_CHECK_H */
