/* -*- c++ -*- */
/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_HILRIG_PATTERN_SOURCE_H
#define INCLUDED_HILRIG_PATTERN_SOURCE_H

#include <gnuradio/hilrig/api.h>
#include <gnuradio/sync_block.h>

#include <cstdint>
#include <string>

namespace gr {
namespace hilrig {

/*!
 * \brief The hilrig counter pattern (docs/frame-format.md) as samples: word k of
 * the stream is k = tick * channels + channel, one output per channel.
 * \ingroup hilrig
 *
 * cpu_format: "sc16" (complex int16, 4-byte items), "sc8" (complex int8, 2-byte
 * items) or "fc32" (the sc16 pattern scaled by 1/32768, exactly invertible).
 * rate_sps > 0 throttles to that many samples per second per channel (0: as fast
 * as downstream takes them). first_sample: the tick of the first sample.
 * The words come from the core's pattern_fill.
 */
class HILRIG_API pattern_source : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<pattern_source> sptr;

    static sptr make(const std::string& cpu_format,
                     int channels = 1,
                     double rate_sps = 0.0,
                     uint64_t first_sample = 0);

    //! Samples produced per channel so far.
    virtual uint64_t samples_produced() const = 0;
};

} // namespace hilrig
} // namespace gr

#endif /* INCLUDED_HILRIG_PATTERN_SOURCE_H */
