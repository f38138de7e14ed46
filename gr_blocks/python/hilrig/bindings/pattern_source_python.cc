/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <pybind11/pybind11.h>

#include <gnuradio/hilrig/pattern_source.h>

namespace py = pybind11;

void bind_pattern_source(py::module& m)
{
    using gr::hilrig::pattern_source;
    py::class_<pattern_source, gr::sync_block, gr::block, gr::basic_block, std::shared_ptr<pattern_source>>(
        m, "pattern_source", "The hilrig counter pattern as samples, one output per channel.")
        .def(py::init(&pattern_source::make),
             py::arg("cpu_format"),
             py::arg("channels") = 1,
             py::arg("rate_sps") = 0.0,
             py::arg("first_sample") = 0)
        .def("samples_produced", &pattern_source::samples_produced);
}
