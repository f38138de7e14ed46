"""Device drivers: the simulator now; UHD and SoapySDR bind to the same protocol."""
from .base import Driver, Snapshot, driver_class, known_drivers, register_driver
from . import sim  # noqa: F401  (registers the "sim" driver)

__all__ = ["Driver", "Snapshot", "driver_class", "known_drivers", "register_driver"]
