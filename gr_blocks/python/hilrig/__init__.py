#
# Copyright 2026 hilrig.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""gr-hilrig: GNU Radio blocks over the hilrig native core.

pattern_source, pattern_check: the counter pattern of docs/frame-format.md as samples,
and its checker; rig_source, rig_sink: hilrig frames over UDP or shared memory.
"""
from .hilrig_python import pattern_check, pattern_source, rig_sink, rig_source

__all__ = ["pattern_check", "pattern_source", "rig_sink", "rig_source"]
