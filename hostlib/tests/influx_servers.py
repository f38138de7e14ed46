"""Real InfluxDB servers for the tests: Debian's influxd 1.6.7 (v1 API) and 1.8.10 (v1 + v2 API, Flux).

Each server runs from a generated config on free loopback ports with its own
temporary directories, reporting off, and is stopped (and reaped) afterwards.
The Debian package's own service is never used. Import the fixtures into a test
module with `from hostlib.tests.influx_servers import *  # noqa`.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest
import urllib3

from hostlib._process import stop_process

REPO = Path(__file__).resolve().parents[2]
DEBIAN_INFLUXD = Path("/usr/bin/influxd")
INFLUXD_18 = REPO / "build" / "influxdb-1.8.10" / "influxd"
ADMIN_USER, ADMIN_PASSWORD = "hilrig", "s3cret-Pw-4-tests"

__all__ = ["InfluxServer", "influx16", "influx18", "influx18_auth", "free_port", "ADMIN_USER", "ADMIN_PASSWORD"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class InfluxServer:
    """One influxd process. `auth=True` enables authentication with an admin user."""

    def __init__(self, binary: Path, root: Path, *, flux: bool, auth: bool = False):
        self.binary, self.root, self.flux, self.auth = Path(binary), Path(root), flux, auth
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log = self.root / "influxd.log"
        self._http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(total=10))

    def _config(self) -> str:
        d = self.root
        flux = "  flux-enabled = true\n" if self.flux else ""
        return (
            "reporting-disabled = true\n"
            f'bind-address = "127.0.0.1:{free_port()}"\n'
            f'[meta]\n  dir = "{d}/meta"\n'
            f'[data]\n  dir = "{d}/data"\n  wal-dir = "{d}/wal"\n  query-log-enabled = false\n'
            "[monitor]\n  store-enabled = false\n"
            "[continuous_queries]\n  enabled = false\n"
            f'[http]\n  enabled = true\n  bind-address = "127.0.0.1:{self.port}"\n'
            f"  auth-enabled = {'true' if self.auth else 'false'}\n  log-enabled = false\n{flux}"
        )

    def start(self) -> "InfluxServer":
        self.root.mkdir(parents=True, exist_ok=True)
        conf = self.root / "influxdb.conf"
        conf.write_text(self._config())
        env = {k: v for k, v in os.environ.items() if not k.startswith("INFLUXDB_")}
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([str(self.binary), "run", "-config", str(conf)], stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.binary} exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                if self._http.request("GET", f"{self.url}/ping").status == 204:
                    break
            except (urllib3.exceptions.HTTPError, OSError):
                pass
            time.sleep(0.1)
        else:
            self.stop()
            raise RuntimeError(f"{self.binary} did not answer /ping on {self.url} within 30 s")
        if self.auth:
            # With no user yet, influxd lets the first admin be created without credentials.
            self.query(f"CREATE USER {ADMIN_USER} WITH PASSWORD '{ADMIN_PASSWORD}' WITH ALL PRIVILEGES",
                       authenticate=False)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, 15)
        self.proc = None

    def query(self, q: str, db: str = "", *, authenticate: bool = True) -> list[dict]:
        """Run InfluxQL; returns the first statement's series (raises on an error)."""
        headers = {}
        if self.auth and authenticate:
            headers["Authorization"] = "Basic " + base64.b64encode(
                f"{ADMIN_USER}:{ADMIN_PASSWORD}".encode()).decode()
        params = urllib.parse.urlencode({"q": q, "db": db, "epoch": "ns"})
        resp = self._http.request("POST", f"{self.url}/query?{params}", headers=headers)
        doc = json.loads(resp.data or b"{}")
        if resp.status != 200 or doc.get("error"):
            raise RuntimeError(f"{q!r} on {self.url}: {resp.status} {doc}")
        result = doc["results"][0]
        if result.get("error"):
            raise RuntimeError(f"{q!r} on {self.url}: {result['error']}")
        return result.get("series") or []

    def write(self, lines: str, db: str) -> int:
        headers = {}
        if self.auth:
            headers["Authorization"] = "Basic " + base64.b64encode(
                f"{ADMIN_USER}:{ADMIN_PASSWORD}".encode()).decode()
        resp = self._http.request("POST", f"{self.url}/write?db={db}&precision=ns", body=lines.encode(),
                                  headers=headers)
        return resp.status

    def points(self, db: str, measurement: str) -> list[dict]:
        """Every point of `measurement`: {"measurement", "tags", "fields", "time"} (absent = not listed)."""
        out = []
        for series in self.query(f'SELECT * FROM "{measurement}" GROUP BY *', db):
            tags = {k: v for k, v in (series.get("tags") or {}).items() if v != ""}
            cols = series["columns"]
            for row in series["values"]:
                values = dict(zip(cols, row))
                t = values.pop("time")
                out.append({"measurement": measurement, "tags": tags, "time": t,
                            "fields": {k: v for k, v in values.items() if v is not None}})
        return out


def _server(tmp_path_factory, binary: Path, name: str, **kw):
    if not binary.exists():
        hint = "apt-get install influxdb" if binary == DEBIAN_INFLUXD else "make influxdb"
        pytest.skip(f"{binary} is absent ({hint})")
    server = InfluxServer(binary, tmp_path_factory.mktemp(name), **kw).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)


@pytest.fixture(scope="module")
def influx16(tmp_path_factory):
    """Debian's influxd 1.6.7, v1 API, no auth."""
    yield from _server(tmp_path_factory, DEBIAN_INFLUXD, "influx16", flux=False)


@pytest.fixture(scope="module")
def influx18(tmp_path_factory):
    """InfluxDB 1.8.10 (built by `make influxdb`), v1 + v2 API with Flux, no auth."""
    yield from _server(tmp_path_factory, INFLUXD_18, "influx18", flux=True)


@pytest.fixture(scope="module")
def influx18_auth(tmp_path_factory):
    """InfluxDB 1.8.10 with authentication on (v2 token = "user:password")."""
    yield from _server(tmp_path_factory, INFLUXD_18, "influx18auth", flux=True, auth=True)
