/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <pybind11/pybind11.h>

#include <gnuradio/hilrig/rig_source.h>

namespace py = pybind11;

void bind_rig_source(py::module& m)
{
    using gr::hilrig::rig_source;
    auto json = [](const std::string& text) { return py::module::import("json").attr("loads")(text); };
    py::class_<rig_source, gr::sync_block, gr::block, gr::basic_block, std::shared_ptr<rig_source>>(
        m, "rig_source", "Receives hilrig frames over UDP or shm and outputs their samples.")
        .def(py::init(&rig_source::make),
             py::arg("cpu_format"),
             py::arg("channels"),
             py::arg("transport"),
             py::arg("address") = "",
             py::arg("frame_bytes") = 0,
             py::arg("ring_slots") = 0,
             py::arg("socket_buffer_bytes") = 0,
             py::arg("stop_on_eob") = true,
             py::arg("rate_sps") = 0.0)
        .def("endpoint", [json](const rig_source& b) { return json(b.endpoint()); },
             "dict: where a sender sends (kind udp: host, port; kind shm: path, slots)")
        .def("stats", [json](const rig_source& b) { return json(b.stats_json()); },
             "dict: the RxStream counters")
        .def("stats_json", &rig_source::stats_json)
        .def("frames_received", &rig_source::frames_received)
        .def("samples_received", &rig_source::samples_received)
        .def("missing_frames", &rig_source::missing_frames)
        .def("dropped_samples", &rig_source::dropped_samples)
        .def("overruns", &rig_source::overruns)
        .def("pattern_errors", &rig_source::pattern_errors)
        .def("malformed_frames", &rig_source::malformed_frames)
        .def("mismatched_frames", &rig_source::mismatched_frames);
}
