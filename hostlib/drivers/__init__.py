"""Device drivers: the simulator now; UHD and SoapySDR bind to the same protocol."""
from .base import Driver, Snapshot, driver_class, known_drivers, register_driver
from . import sim  # noqa: F401  (registers the "sim" driver)
from . import soapy, uhd  # noqa: F401,E402  (register "soapy" and "uhd"; need the native core only when used)
from . import usb  # noqa: F401,E402  (registers "usb": a lab's board over libusb)

__all__ = ["Driver", "Snapshot", "driver_class", "known_drivers", "register_driver"]
