"""docs/python-pipeline.md's example runs as it is shown, with the variables it names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from .openbao import REPO


def test_the_docs_example_runs(tmp_path: Path) -> None:
    text = (REPO / "docs/python-pipeline.md").read_text("utf-8")
    example = re.search(r"## Example.*?```python\n(.*?)```", text, re.DOTALL)
    assert example is not None, "docs/python-pipeline.md has a ```python block under ## Example"
    script = tmp_path / "example.py"
    script.write_text(example.group(1))
    env = {
        "PAYLOAD_ENCRYPTION_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        "PAYLOAD_ENCRYPTION_KEY_ID": "pipeline-1",
        "PYTHONPATH": str(REPO / "python/src"),
    }
    result = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "encoding: binary/encrypted key id: pipeline-1\n"
