"""Ship the outbox to InfluxDB (v1 or v2 API) and read results back.

The target comes from the rig file's `results.influxdb` section (docs/results.md).
Shipping rules, per outbox file, oldest run first, in batches of `batch_lines`:

* every batch accepted (2xx)         -> the file moves to `<outbox>/sent/`
* connection error, timeout, 5xx, 429 -> the file stays; shipping stops (server down or
                                        busy); the next run or `hilrig results push` retries
* 401/403 (credentials), 404 (database/bucket missing) -> the file stays and shipping
                                        stops: the target is misconfigured, the data is fine
* any other 4xx (400 field type conflict, 413 ...) -> the file moves to `<outbox>/rejected/`
                                        with `<name>.reason` holding the server's message;
                                        it is never retried
* a file whose run is still going (its flock is held, see outbox.RunLock) is not touched

Shipping the same file again never duplicates a point: every line carries the
timestamp fixed when it was measured, and InfluxDB overwrites a point with the
same measurement, tags and timestamp.

Secrets (token, password) are read from the environment or a file when a client
is made, kept in `_Secret` (whose repr is masked), sent only in an Authorization
header, and scrubbed from every message this module produces.
"""
from __future__ import annotations

import base64
import json
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import urllib3

from .._exceptions import InfluxRejected, InfluxSetupError, InfluxUnavailable, InfrastructureError, ResultServerError
from ._fsio import fsync_dir, replace_durable
from .outbox import Outbox, is_active

if TYPE_CHECKING:
    from influxdb_client import InfluxDBClient

    from ..rig import Rig

SENT_DIR = "sent"
REJECTED_DIR = "rejected"


class _Secret:
    """A token or password that must never be printed."""

    def __init__(self, value: str):
        self.value = value

    def __repr__(self) -> str:
        return "_Secret('***')"

    __str__ = __repr__


# ------------------------------------------------------------------------- target

@dataclass(frozen=True)
class InfluxTarget:
    url: str
    api: str                          # "v1" | "v2"
    rig_file: str = ""
    line: int | None = None           # line of results.influxdb in the rig file
    database: str | None = None
    retention_policy: str | None = None
    org: str | None = None
    bucket: str | None = None
    username: str | None = None
    password_env: str | None = None
    password_file: str | None = None
    token_env: str | None = None
    token_file: str | None = None
    tls_verify: bool = True
    ca_file: str | None = None
    timeout_s: float = 10.0
    batch_lines: int = 5000

    @classmethod
    def from_rig(cls, rig: Rig) -> InfluxTarget | None:
        """The rig's InfluxDB target, or None when its results section names none."""
        cfg = rig.results.get("influxdb")
        if not cfg:
            return None
        keys = {k: v for k, v in cfg.items() if k in cls.__dataclass_fields__}
        if "timeout" in cfg:
            keys["timeout_s"] = float(cfg["timeout"])
        return cls(rig_file=rig.file, **keys)

    @property
    def where(self) -> str:
        """Where the target is configured: `rigs/lab.yaml:14 (results.influxdb)`."""
        at = f"{self.rig_file}:{self.line}" if self.line else self.rig_file
        return f"{at} (results.influxdb)"

    def describe(self) -> str:
        if self.api == "v1":
            rp = f", retention policy {self.retention_policy}" if self.retention_policy else ""
            return f"InfluxDB {self.url} (v1, database {self.database}{rp})"
        return f"InfluxDB {self.url} (v2, org {self.org}, bucket {self.bucket})"

    def _read_secret(self, env: str | None, file: str | None, what: str) -> _Secret | None:
        if env:
            value = os.environ.get(env)
            if not value:
                raise InfluxSetupError(f"{self.where}: {what}_env names ${env}, which is not set or empty")
            return _Secret(value)
        if file:
            path = Path(file).expanduser()
            if not path.is_absolute() and self.rig_file:
                path = Path(self.rig_file).parent / path
            try:
                value = path.read_text().strip()
            except OSError as exc:
                raise InfluxSetupError(f"{self.where}: cannot read {what}_file {path}: "
                                       f"{exc.strerror or exc}") from None
            if not value:
                raise InfluxSetupError(f"{self.where}: {what}_file {path} is empty")
            return _Secret(value)
        return None

    def client(self) -> _Client:
        """A client for this target, with its secret resolved now (never stored in the target)."""
        password = self._read_secret(self.password_env, self.password_file, "password")
        token = self._read_secret(self.token_env, self.token_file, "token")
        return _Client(self, token=token, password=password)


# ------------------------------------------------------------------------- outcomes of one request
# The client maps every low-level error (urllib3, influxdb_client, an HTTP status) once,
# in _classify and _unreachable, to the tree's ResultServerError kinds.

def _server_message(status: int, body: bytes | str | None, headers: Mapping[str, str] | None = None) -> str:
    """The server's own words: X-Influxdb-Error, else the JSON error/message, else the body."""
    text = headers.get("X-Influxdb-Error") or "" if isinstance(headers, Mapping) else ""
    if not text and body:
        raw = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
        try:
            doc = json.loads(raw)
            text = (doc.get("error") or doc.get("message") or raw) if isinstance(doc, dict) else raw
        except ValueError:
            text = raw
    return " ".join(f"{status} {text}".split())


class _Client:
    """One target's HTTP face: write line-protocol batches, run read queries."""

    def __init__(self, target: InfluxTarget, *, token: _Secret | None, password: _Secret | None):
        self.target = target
        self._secrets = [s.value for s in (token, password) if s is not None]
        self._http = urllib3.PoolManager(
            cert_reqs="CERT_REQUIRED" if target.tls_verify else "CERT_NONE",
            ca_certs=target.ca_file or _default_ca(),
            retries=False,  # retrying is the outbox's job, across runs
            timeout=urllib3.Timeout(total=target.timeout_s),
        )
        if not target.tls_verify:
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self._headers: dict[str, str] = {}
        if target.api == "v1" and target.username:
            pw = password.value if password else ""
            basic = base64.b64encode(f"{target.username}:{pw}".encode()).decode()
            self._headers["Authorization"] = f"Basic {basic}"
        self._v2: InfluxDBClient | None = None
        if target.api == "v2":
            from influxdb_client import InfluxDBClient

            # InfluxDB 1.8's v2 compatibility takes "username:password" as the token.
            if token is not None:
                v2_token = token.value
            elif target.username:
                v2_token = f"{target.username}:{password.value if password else ''}"
            else:
                v2_token = ""
            if not target.org or not target.bucket:  # the rig file's validation requires both
                raise InfluxSetupError(f"{target.describe()}: api v2 needs org and bucket")
            self._v2 = InfluxDBClient(url=target.url, token=v2_token, org=target.org,
                                      timeout=int(target.timeout_s * 1000), verify_ssl=target.tls_verify,
                                      ssl_ca_cert=target.ca_file, retries=False)

    def close(self) -> None:
        if self._v2 is not None:
            self._v2.close()
        self._http.clear()

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def _classify(self, status: int, message: str) -> ResultServerError:
        message = self.scrub(message)
        if status in (401, 403):
            return InfluxSetupError(f"{self.target.describe()} refused the credentials from {self.target.where}: "
                                    f"{message}")
        if status == 404:
            return InfluxSetupError(f"{self.target.describe()} has no such database/bucket (see {self.target.where}): "
                            f"{message}")
        if status == 429 or status >= 500:
            return InfluxUnavailable(f"{self.target.describe()} answered {message}")
        return InfluxRejected(message)

    def _unreachable(self, exc: BaseException) -> InfluxUnavailable:
        reason = exc.reason if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason else exc
        text = str(reason)
        if "Connection refused" in text:
            text = "connection refused"
        elif "timed out" in text.lower():
            text = f"no answer within {self.target.timeout_s:g} s"
        return InfluxUnavailable(f"{self.target.describe()} is unreachable: {self.scrub(text)}")

    # -- writing

    def write(self, lines: list[str]) -> None:
        body = "\n".join(lines).encode("utf-8")
        if self._v2 is not None:
            return self._write_v2(body)
        t = self.target
        query = {"db": t.database, "precision": "ns"}
        if t.retention_policy:
            query["rp"] = t.retention_policy
        url = f"{t.url.rstrip('/')}/write?{urllib.parse.urlencode(query)}"
        try:
            resp = self._http.request("POST", url, body=body,
                                      headers={**self._headers, "Content-Type": "text/plain; charset=utf-8"})
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._unreachable(exc) from None
        if not 200 <= resp.status < 300:
            raise self._classify(resp.status, _server_message(resp.status, resp.data, resp.headers))

    def _v2_api(self) -> tuple[InfluxDBClient, str, str]:
        """The v2 client with the target's org and bucket (an api: v2 target has both)."""
        t = self.target
        if self._v2 is None or not t.org or not t.bucket:
            raise InfluxSetupError(f"{t.describe()}: the v2 API needs api: v2 with org and bucket")
        return self._v2, t.org, t.bucket

    def _write_v2(self, body: bytes) -> None:
        from influxdb_client import WritePrecision
        from influxdb_client.client.write_api import SYNCHRONOUS
        from influxdb_client.rest import ApiException

        client, org, bucket = self._v2_api()
        try:
            # influxdb_client types its WritePrecision.NS as str, its write() as WritePrecision
            client.write_api(write_options=SYNCHRONOUS).write(
                bucket=bucket, org=org, record=body,
                write_precision=WritePrecision.NS)  # type: ignore[arg-type]
        except ApiException as exc:
            status = int(exc.status or 0)
            raise self._classify(status, _server_message(status, exc.body, exc.headers)) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._unreachable(exc) from None

    # -- reading (for `hilrig results show` and the tests)

    def influxql(self, query: str) -> list[dict]:
        """v1 /query with ns timestamps; returns the `series` of the first statement."""
        t = self.target
        params = {"db": t.database or "", "q": query, "epoch": "ns"}
        if t.retention_policy:
            params["rp"] = t.retention_policy
        url = f"{t.url.rstrip('/')}/query?{urllib.parse.urlencode(params)}"
        try:
            resp = self._http.request("POST", url, headers=self._headers)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._unreachable(exc) from None
        if resp.status != 200:
            raise self._classify(resp.status, _server_message(resp.status, resp.data, resp.headers))
        doc = json.loads(resp.data)
        result = (doc.get("results") or [{}])[0]
        if result.get("error"):
            raise InfluxSetupError(f"{t.describe()}: query failed: {self.scrub(result['error'])}")
        return result.get("series") or []

    def flux_rows(self, flux: str) -> list[dict]:
        """Run a Flux query (v2 API) and return each record's values as a dict."""
        from influxdb_client.rest import ApiException

        try:
            client, org, _ = self._v2_api()
            tables = client.query_api().query(flux, org=org)
        except ApiException as exc:
            status = int(exc.status or 0)
            raise self._classify(status, _server_message(status, exc.body, exc.headers)) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._unreachable(exc) from None
        return [dict(rec.values) for table in tables for rec in table.records]


def _default_ca() -> str | None:
    try:
        import certifi
    except ImportError:  # pragma: no cover - certifi comes with influxdb-client
        return None
    return certifi.where()


# ------------------------------------------------------------------------- shipping

@dataclass
class ShipReport:
    """What one shipping pass did. `lines()` is what the console shows."""

    target: str                                   # InfluxTarget.describe(), or "" without a target
    outbox: Path
    sent: list[tuple[Path, int]] = field(default_factory=list)        # (file now in sent/, points)
    rejected: list[tuple[Path, str]] = field(default_factory=list)    # (file now in rejected/, reason)
    kept: list[Path] = field(default_factory=list)                    # still pending in the outbox
    active: list[Path] = field(default_factory=list)                  # skipped: their run is going
    problem: str = ""                              # why files were kept (unreachable, credentials ...)
    problem_kind: str = ""                         # "unavailable" | "setup" | ""

    @property
    def points_sent(self) -> int:
        return sum(n for _, n in self.sent)

    @property
    def ok(self) -> bool:
        return not self.problem and not self.rejected

    def exit_code(self) -> int:
        if self.problem:
            return InfrastructureError.exit_code
        return 1 if self.rejected else 0

    def lines(self) -> list[str]:
        out = []
        if self.sent:
            out.append(f"hilrig results: {self.points_sent} points from {len(self.sent)} outbox file(s) "
                       f"shipped to {self.target}")
        for path, reason in self.rejected:
            out.append(f"hilrig results: {path.name} set aside in {path.parent} (never retried): "
                       f"{self.target} rejected it: {reason}")
        if self.problem:
            n = len(self.kept)
            kept = f"{n} run file(s) kept in the outbox {self.outbox}" if n else "nothing shipped"
            hint = ("`hilrig results push` ships them when it is back" if self.problem_kind == "unavailable"
                    else "fix the rig file or the secret, then `hilrig results push`")
            out.append(f"hilrig results: {kept}: {self.problem}; {hint}")
        if self.active:
            out.append(f"hilrig results: {len(self.active)} file(s) of runs still going left for later")
        if not out:
            out.append(f"hilrig results: nothing to ship in {self.outbox}")
        return out


def _read_lines(path: Path) -> list[str]:
    """The complete lines of an outbox file. Appends are whole lines in one write, so only a
    writer killed inside write() leaves a partial last line; that fragment is not shipped."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    lines.pop()  # after the last "\n": "" or a partial line
    return [line for line in lines if line.strip()]


def _move(path: Path, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    target = folder / path.name
    n = 1
    while target.exists():  # a run file shipped again after new appends keeps both copies
        target = folder / f"{path.stem}.{n}{path.suffix}"
        n += 1
    os.replace(path, target)
    fsync_dir(folder)
    fsync_dir(path.parent)
    return target


def ship_outbox(outbox_dir: str | Path, target: InfluxTarget) -> ShipReport:
    """Ship every finished run file of the outbox to `target`, oldest first. Never raises for
    server or credential problems: they are in the report (see the module doc for the rules)."""
    outbox = Path(outbox_dir)
    report = ShipReport(target=target.describe(), outbox=outbox)
    pending: list[Path] = []
    for path in Outbox(outbox, git_sha="").pending_files():
        (report.active if is_active(path) else pending).append(path)
    if not pending:
        return report
    try:
        client = target.client()
    except InfluxSetupError as exc:
        report.problem, report.problem_kind, report.kept = str(exc), "setup", pending
        return report
    try:
        for index, path in enumerate(pending):
            lines = _read_lines(path)
            try:
                for start in range(0, len(lines), target.batch_lines):
                    client.write(lines[start:start + target.batch_lines])
            except InfluxRejected as exc:
                moved = _move(path, outbox / REJECTED_DIR)
                reason = str(exc)
                replace_durable(moved.with_name(moved.name + ".reason"),
                                f"{target.describe()} rejected {path.name}: {reason}\n")
                report.rejected.append((moved, reason))
                continue
            except (InfluxUnavailable, InfluxSetupError) as exc:
                report.problem = str(exc)
                report.problem_kind = "unavailable" if isinstance(exc, InfluxUnavailable) else "setup"
                report.kept = pending[index:]
                break
            report.sent.append((_move(path, outbox / SENT_DIR), len(lines)))
    finally:
        client.close()
    return report


def ship_after_run(rig: Rig, outbox_dir: str | Path) -> list[str]:
    """The end-of-run step of Robot and `hilrig run`: ship if the rig names a server.
    Returns the console lines; never raises (verdicts must stand whatever the server does)."""
    try:
        target = InfluxTarget.from_rig(rig)
        if target is None:
            return [f"hilrig results: no InfluxDB in {rig.file}; "
                    f"results stay in the outbox {outbox_dir}"]
        return ship_outbox(outbox_dir, target).lines()
    except Exception as exc:  # noqa: BLE001  a bug here must not turn a measured verdict into an error
        return [f"hilrig results: shipping failed ({type(exc).__name__}: {exc}); "
                f"results stay in the outbox {outbox_dir}"]
