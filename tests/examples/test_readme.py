"""The README's quick start runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_quick_start_runs() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"## Quick start\n\n```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "README has one python block under '## Quick start'"
    exec(compile(blocks[0], str(README), "exec"), {})
