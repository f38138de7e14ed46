/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <pybind11/pybind11.h>

#include <gnuradio/hilrig/pattern_check.h>

namespace py = pybind11;

void bind_pattern_check(py::module& m)
{
    using gr::hilrig::pattern_check;
    py::class_<pattern_check, gr::sync_block, gr::block, gr::basic_block, std::shared_ptr<pattern_check>>(
        m, "pattern_check", "Checks the hilrig counter pattern per channel: samples, errors, gaps.")
        .def(py::init(&pattern_check::make),
             py::arg("cpu_format"),
             py::arg("channels") = 1,
             py::arg("stop_after_samples") = 0,
             py::arg("first_sample") = 0,
             py::arg("stats_interval_s") = 1.0)
        .def("samples", &pattern_check::samples, py::arg("channel") = -1)
        .def("pattern_errors", &pattern_check::pattern_errors, py::arg("channel") = -1)
        .def("gaps", &pattern_check::gaps, py::arg("channel") = -1)
        .def("missing_samples", &pattern_check::missing_samples, py::arg("channel") = -1)
        .def("first_sample_ns", &pattern_check::first_sample_ns)
        .def("last_sample_ns", &pattern_check::last_sample_ns)
        .def("buffers", &pattern_check::buffers)
        .def("stats", &pattern_check::stats);
}
