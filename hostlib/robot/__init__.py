from .library import HilrigLibrary, resolve_rig_path

__all__ = ["HilrigLibrary", "resolve_rig_path"]
