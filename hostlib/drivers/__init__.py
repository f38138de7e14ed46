"""Device drivers: the simulator now; UHD and SoapySDR bind to the same protocol."""
from .base import Driver, Snapshot, driver_class, known_drivers, register_driver

# isort: split
# Importing a driver module registers it: "sim"; "soapy" and "uhd" (they need the native
# core only when used); "usb" (a lab's board over libusb). After .base: they import the
# engine, which imports driver_class from here.
from . import sim, soapy, uhd, usb  # noqa: F401  (imported for their registration)

__all__ = ["Driver", "Snapshot", "driver_class", "known_drivers", "register_driver"]
