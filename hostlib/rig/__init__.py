"""Rig inventory (rigs/*.yaml): which devices a rig has, their drivers, limits and result sink.

    from hostlib.rig import load_rig, default_rig_path
    rig = load_rig(default_rig_path())
    entry = rig.devices["dut"]
"""
from hostlib.rig.inventory import DeviceEntry, Rig, default_rig_path, load_rig, resolve_rig_path

__all__ = ["DeviceEntry", "Rig", "default_rig_path", "load_rig", "resolve_rig_path"]
