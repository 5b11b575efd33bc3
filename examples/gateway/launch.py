"""Start the upstream stub and gateways as child processes, and always stop them.

    with serve(["upstream_stub.py"]) as stub, serve(["app.py", "--upstream", stub.url]) as gw:
        ...  # gw.url, gw.pid

Each server binds 127.0.0.1 port 0 (a free port) itself and prints its
address as the first line on stdout; `serve` waits for that line (bounded),
then for GET /health to answer. On leaving the block the child gets SIGTERM
(uvicorn's graceful shutdown), then SIGKILL if it has not exited within a few
seconds, also when the block raised. On Linux the child also gets SIGTERM if
this process dies without leaving the block (killed by a test timeout, say).
"""

from __future__ import annotations

import contextlib
import ctypes
import select
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass
class Server:
    proc: subprocess.Popen[str]
    url: str

    @property
    def pid(self) -> int:
        return self.proc.pid


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            return proc.stdout.readline()
        if proc.poll() is not None:
            break
    raise RuntimeError(f"{proc.args} did not start (exit code {proc.poll()})")


def _wait_healthy(url: str, proc: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer /health within {timeout} s")


def _die_with_parent() -> None:
    """In the child before exec: ask Linux for SIGTERM when the parent dies."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the `finally` below is the only guard


def stop(proc: subprocess.Popen[str], grace: float = 5.0, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(grace)
    if proc.stdout is not None:
        proc.stdout.close()


@contextlib.contextmanager
def serve(
    argv: list[str],
    timeout: float = 60.0,
    wrapper: tuple[str, ...] = (),
    stop_signal: int = signal.SIGTERM,
) -> Iterator[Server]:
    """Run `python [wrapper] <examples/gateway/argv[0]> argv[1:]` until the block ends.

    wrapper: say ("-m", "cProfile", "-o", "out.prof") to profile the server; then
    stop it with SIGINT (uvicorn re-raises the signal it stopped on, and a SIGTERM
    would end the process before the profiler writes its report)."""
    cmd = [sys.executable, *wrapper, str(HERE / argv[0]), *argv[1:]]
    linux = sys.platform.startswith("linux")
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        text=True,
        cwd=HERE,
        preexec_fn=_die_with_parent if linux else None,
    )
    try:
        line = _first_line(proc, timeout)
        url = line.split(" on ", 1)[1].strip()
        _wait_healthy(url, proc, timeout)
        yield Server(proc, url)
    finally:
        stop(proc, grace=30.0 if wrapper else 5.0, sig=stop_signal)
