"""STYLE.md: files under ~400 lines, one job each. The agent's modules are held to it (the tool loop grew past it
with the stateless model mode, issue 23)."""

from __future__ import annotations

from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "bot" / "agent"
LIMIT = 400


def test_every_agent_module_is_under_400_lines() -> None:
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in AGENT.glob("*.py")}
    assert "loop.py" in sizes
    assert {name: size for name, size in sizes.items() if size > LIMIT} == {}
