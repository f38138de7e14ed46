"""The `uhd` driver: USRPs through libuhd's C++ API (native core, UHD 4.3).

Counting is benchmark_rate's, in C++ (hostlib/native/radio/uhd_driver.cpp), under the
sim path's names: overruns (O), seq_errors (D, out-of-sequence), dropped_samples
from time-stamp gaps, late_commands, timeouts; TX underruns and TX sequence errors
from async messages. Device args come from the rig entry (args + serial) plus the
case's transport_args (num_recv_frames, recv_frame_size, send_frame_size,
recv_buff_size ...); stream args (spp ...) from the case's stream_args.
"""
from __future__ import annotations

from .._exceptions import ConfigError, DeviceAbsent, DeviceError, InfrastructureError
from ..dsl.case import Case
from ..rig.args import RadioArgs
from ..rig.inventory import DeviceEntry
from ..rig.probe import Found, Probe
from ..transports.usb import b2xx_frame_problems, is_b2xx, uhd_usb_transport_args
from ._native_facade import NativeRadio, have, uhd_find
from .base import register_driver
from .radio import RadioDriver, args_string, probe_library, radio_config, rate_checked


def uhd_args(device: DeviceEntry, case: Case | None = None) -> str:
    return args_string(uhd_device_args(device, case), device.serial)


def uhd_device_args(device: DeviceEntry, case: Case | None = None) -> dict[str, str]:
    """Rig args, then a usb case's transport keys as UHD's frame args
    (transfer_bytes -> recv/send_frame_size, transfers -> num_recv/send_frames), then
    the case's own transport_args, which win."""
    args = dict(device.args.device_args()) if isinstance(device.args, RadioArgs) else {}
    if case is not None:
        args.update({k: str(v) for k, v in uhd_usb_transport_args(case).items()})
        args.update({k: str(v) for k, v in case.transport_args.items()})
    return args


@register_driver
class UhdDriver(RadioDriver):
    name = "uhd"
    library = "UHD"

    @classmethod
    def probe(cls) -> Probe:
        def ask(out: Probe) -> None:
            try:
                out.found += [Found("uhd", a) for a in uhd_find("")]
            except RuntimeError as exc:
                out.problems.append(f"UHD find failed: {exc}")

        return probe_library("UHD", "UHD", ask)

    def args_text(self) -> str:
        return uhd_args(self.device, self._case)

    def open(self) -> None:
        if not have("UHD"):
            raise InfrastructureError("hostlib._native was built without UHD (apt-get install libuhd-dev; make build)")
        find_args = uhd_args(self.device)
        try:
            found = uhd_find(find_args)
        except RuntimeError as exc:
            raise DeviceError(f"UHD find {find_args!r} failed: {exc}") from exc
        if not found:
            raise DeviceAbsent(f"no UHD device matching {find_args!r}")

    def versions(self) -> dict[str, str]:
        found = {"uhd": self._info.get("uhd", "?"), "mboard": self._info.get("mboard"),
                 "fpga": self._info.get("fpga_version"), "firmware": self._info.get("fw_version")}
        return {key: str(value) for key, value in found.items() if value is not None}

    def configure(self, case: Case) -> None:
        # The transport args are device args in UHD, so the device opens here, per case.
        self._case = case
        if is_b2xx(self.args.device_args()):
            # B2xx frame rules before the device is made (docs/drivers.md "UHD over USB").
            problems = b2xx_frame_problems(dict(uhd_device_args(self.device, case)))
            if problems:
                raise ConfigError(f"{case.location}: B2xx over USB: " + "; ".join(problems))
        args = uhd_args(self.device, case)
        if case.host == "gnuradio":
            return self._configure_flowgraph(case, args)
        try:
            radio = NativeRadio("uhd", args)
            self.radio = radio
            self._info = radio.info()
            stream_args = {k: str(v) for k, v in case.stream_args.items()}
            self.configured = radio.configure(radio_config(case, self.args, stream_args, False))
        except RuntimeError as exc:
            raise DeviceError(f"UHD device {args!r}: {exc}") from exc
        rate_checked(case, self.configured, f"UHD device {args!r}")

    def _configure_flowgraph(self, case: Case, args: str) -> None:
        """host: gnuradio: gr-uhd's usrp_source opens the USRP with the same device args
        (rig args, usb frame args, transport_args), in front of pattern_check."""
        from .flowgraph import FlowgraphRadio, formats_for, source_spec_uhd

        chain, source_format, check_format = formats_for(case)
        radio = FlowgraphRadio(source_spec_uhd(case, args, source_format, self.args.frequency_hz), case, chain,
                               check_format)
        self.radio = radio
        self.configured = radio.configured()
        rate_checked(case, self.configured, f"UHD device {args!r} (GNU Radio usrp_source)")
