/*
 * Copyright 2026 hilrig.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <pybind11/pybind11.h>

#include <gnuradio/hilrig/rig_sink.h>

namespace py = pybind11;

void bind_rig_sink(py::module& m)
{
    using gr::hilrig::rig_sink;
    py::class_<rig_sink, gr::sync_block, gr::block, gr::basic_block, std::shared_ptr<rig_sink>>(
        m, "rig_sink", "Frames samples into hilrig frames and sends them over UDP or shm.")
        // endpoint: rig_source.endpoint()'s dict (or its JSON text).
        .def(py::init([](const std::string& cpu_format,
                         int channels,
                         const py::object& endpoint,
                         int frame_bytes,
                         double rate_sps,
                         const std::string& wire_format,
                         int stream_id,
                         bool crc) {
                 const std::string text =
                     py::isinstance<py::str>(endpoint)
                         ? endpoint.cast<std::string>()
                         : py::module::import("json").attr("dumps")(endpoint).cast<std::string>();
                 return rig_sink::make(
                     cpu_format, channels, text, frame_bytes, rate_sps, wire_format, stream_id, crc);
             }),
             py::arg("cpu_format"),
             py::arg("channels"),
             py::arg("endpoint"),
             py::arg("frame_bytes") = 0,
             py::arg("rate_sps") = 0.0,
             py::arg("wire_format") = "sc16",
             py::arg("stream_id") = 0,
             py::arg("crc") = false)
        .def("frames_sent", &rig_sink::frames_sent)
        .def("samples_sent", &rig_sink::samples_sent);
}
