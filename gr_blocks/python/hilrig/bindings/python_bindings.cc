/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// gnuradio.hilrig.hilrig_python: hand-written bindings of the four blocks.
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_pattern_source(py::module& m);
void bind_pattern_check(py::module& m);
void bind_rig_source(py::module& m);
void bind_rig_sink(py::module& m);

PYBIND11_MODULE(hilrig_python, m)
{
    // The base classes (gr::sync_block, gr::block, gr::basic_block) are registered
    // by gnuradio.gr; it must be imported before our classes name them.
    py::module::import("gnuradio.gr");
    py::module::import("pmt"); // pmt_t (pattern_check.stats)

    bind_pattern_source(m);
    bind_pattern_check(m);
    bind_rig_source(m);
    bind_rig_sink(m);
}
