"""SoapyRemote serving driver=hilrig (the bench's network peer): the server runs on the
bench's private D-Bus without avahi, and samples cross it in order."""
from __future__ import annotations

import shutil

import pytest

from hostlib.tests.conftest import requires_native, skip_unless_required

pytestmark = requires_native


@pytest.mark.serial  # judges the sample rate over a wall-clock second (the bench's zero-loss rule)
def test_soapyremote_serves_driver_hilrig_without_avahi():
    from hostlib.bench import soapyremote

    for exe in ("SoapySDRServer", "dbus-daemon"):
        if shutil.which(exe) is None:
            skip_unless_required(f"{exe} not installed (soapyremote-server, dbus-daemon)")
    server = soapyremote.RemoteServer()
    try:
        why = server.start()
        assert why is None, why
        # remote:mtu and the module's frame_bytes: 1472-byte datagrams and frames
        r = soapyremote.run_client(server, 1472, 2e6, 1.0)
    finally:
        server.close()
    assert "error" not in r, r
    assert r["rate_sps"] == 2e6
    assert r["breaks"] == 0 and not r["errors"], r
    assert 0.99 * 2e6 * r["seconds"] <= r["samples"] <= 1.01 * 2e6 * r["seconds"] + 4096, r
    assert r["module_missing_frames"] == 0 and r["module_pattern_errors"] == 0, r
    assert soapyremote.zero_loss(r)
    assert server.server is not None and server.server.poll() is not None  # stopped, reaped
