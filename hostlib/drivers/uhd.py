"""The `uhd` driver: USRPs through libuhd's C++ API (native core, UHD 4.3).

Counting is benchmark_rate's, in C++ (hostlib/native/radio/uhd_driver.cpp), under the
sim path's names: overruns (O), seq_errors (D, out-of-sequence), dropped_samples
from time-stamp gaps, late_commands, timeouts; TX underruns and TX sequence errors
from async messages. Device args come from the rig entry (args + serial) plus the
case's transport_args (num_recv_frames, recv_frame_size, send_frame_size,
recv_buff_size ...); stream args (spp ...) from the case's stream_args.
"""
from __future__ import annotations

from typing import Any

from .._exceptions import ConfigError, DeviceAbsent, DeviceError, InfrastructureError
from ..transports import native
from ..transports.usb import b2xx_frame_problems, is_b2xx, uhd_usb_transport_args
from .base import register_driver
from .radio import RadioDriver, args_string, radio_config, rate_checked


def uhd_args(device: Any, case: Any | None = None) -> str:
    return args_string(uhd_device_args(device, case), getattr(device, "serial", None))


def uhd_device_args(device: Any, case: Any | None = None) -> dict[str, Any]:
    """Rig args, then a usb case's transport keys as UHD's frame args
    (transfer_bytes -> recv/send_frame_size, transfers -> num_recv/send_frames), then
    the case's own transport_args, which win."""
    args = dict(getattr(device, "args", {}) or {})
    if case is not None:
        if getattr(case, "transport", None) is not None:
            args.update(uhd_usb_transport_args(case))
        args.update(getattr(case, "transport_args", None) or {})
    return args


@register_driver
class UhdDriver(RadioDriver):
    name = "uhd"
    library = "UHD"

    def describe(self) -> str:
        return uhd_args(self.device, self.case)

    def open(self) -> None:
        nat = native()
        if not getattr(nat, "HAVE_UHD", False):
            raise InfrastructureError("hostlib._native was built without UHD (apt-get install libuhd-dev; make build)")
        find_args = uhd_args(self.device)
        try:
            found = nat.UhdRadio.find(find_args)
        except RuntimeError as exc:
            raise DeviceError(f"UHD find {find_args!r} failed: {exc}") from exc
        if not found:
            raise DeviceAbsent(f"no UHD device matching {find_args!r}")
        self._found = found

    def versions(self) -> dict[str, str]:
        return {"uhd": str(self._info.get("uhd", "?")), **self.rate_versions()}

    def configure(self, case: Any) -> None:
        # The transport args are device args in UHD, so the device opens here, per case.
        self.case = case
        if is_b2xx(self.device):
            # B2xx frame rules before the device is made (docs/drivers.md "UHD over USB").
            problems = b2xx_frame_problems(uhd_device_args(self.device, case))
            if problems:
                raise ConfigError(f"{getattr(case, 'location', case.name)}: B2xx over USB: " + "; ".join(problems))
        args = uhd_args(self.device, case)
        if getattr(case, "host", "native") == "gnuradio":
            return self._configure_flowgraph(case, args)
        nat = native()
        try:
            self.radio = nat.UhdRadio(args)
            self._info = self.radio.info()
            stream_args = {k: str(v) for k, v in (getattr(case, "stream_args", None) or {}).items()}
            self.configured = self.radio.configure(radio_config(case, self.device, stream_args, False))
        except RuntimeError as exc:
            raise DeviceError(f"UHD device {args!r}: {exc}") from exc
        rate_checked(case, self.configured, f"UHD device {args!r}")

    def _configure_flowgraph(self, case: Any, args: str) -> None:
        """host: gnuradio: gr-uhd's usrp_source opens the USRP with the same device args
        (rig args, usb frame args, transport_args), in front of pattern_check."""
        from .flowgraph import FlowgraphRadio, formats_for, source_spec_uhd

        chain, source_format, check_format = formats_for(case)
        frequency = (getattr(self.device, "args", {}) or {}).get("frequency_hz")
        self.radio = FlowgraphRadio(source_spec_uhd(case, args, source_format, frequency), case, chain, check_format)
        self.configured = self.radio.configured()
        rate_checked(case, self.configured, f"UHD device {args!r} (GNU Radio usrp_source)")
