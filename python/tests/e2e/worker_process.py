"""The TypeScript worker as its own process, started as production starts it (src/worker.ts on the pinned
Node.js, the prebuilt workflow bundle test/python/python-e2e.test.ts wrote), so that a test can stop it and
start another with other keys (the twin of test/helpers/worker-processes.ts). ``stop()`` ends only it."""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..openbao import REPO

STARTUP_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
_READY_LINE = '"worker started"'


@dataclass
class WorkerProcess:
    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    def output(self) -> str:
        return "".join(self.lines[-200:])

    def stop(self) -> None:
        """SIGTERM (the worker drains and exits), then SIGKILL if it does not."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_worker(env: Mapping[str, str]) -> WorkerProcess:
    """Starts the worker with exactly ``env`` (plus PATH, HOME and the cache) and returns once it polls."""
    base = {name: value for name, value in os.environ.items() if name in ("PATH", "HOME", "TEMPORAL_CACHE_DIR")}
    process = subprocess.Popen(
        ["bash", "scripts/with-pinned-node.sh", "node", "--import", "tsx", "src/worker.ts"],
        cwd=REPO,
        env={**base, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    worker = WorkerProcess(process)
    ready: queue.Queue[bool] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            worker.lines.append(line)
            if _READY_LINE in line:
                ready.put(True)
        ready.put(False)

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    try:
        if not ready.get(timeout=max(deadline - time.monotonic(), 0)):
            raise RuntimeError(f"the worker exited ({process.wait()}) before it was ready:\n{worker.output()}")
    except queue.Empty:
        worker.stop()
        raise RuntimeError(f"the worker was not ready after {STARTUP_TIMEOUT_S} s:\n{worker.output()}") from None
    return worker
