"""Device drivers: the simulator, UHD, SoapySDR and a lab's USB board, one protocol (base.Driver)."""
from .base import Driver, driver_class, register_driver, registered_drivers

# isort: split
# Importing a driver module registers it: "sim"; "soapy" and "uhd" (they need the native
# core only when used); "usb" (a lab's board over libusb).
from . import sim, soapy, uhd, usb  # noqa: F401  (imported for their registration)

__all__ = ["Driver", "driver_class", "register_driver", "registered_drivers"]
