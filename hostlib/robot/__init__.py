from .library import HilrigLibrary, YamlParser, resolve_rig_path

__all__ = ["HilrigLibrary", "YamlParser", "resolve_rig_path"]
