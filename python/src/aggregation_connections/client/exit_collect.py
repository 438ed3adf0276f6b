"""Collects garbage at exit, before the interpreter finalizes: temporalio's Client sits in a reference
cycle (Client and its _ClientImpl), so unless a collection ran after the caller dropped it, it is freed
during finalization, where its Rust side's threads touching the GIL abort a short-lived process
("Fatal Python error: PyGILState_Release", temporalio/sdk-python#300; seen in the docs' client example).
An atexit hook runs while the interpreter is still whole."""

from __future__ import annotations

import atexit
import gc

atexit.register(gc.collect)
