"""Slack's checks of the blocks a message carries (chat.postMessage, chat.update, chat.stopStream): 50 blocks at most,
and the `markdown` block's schema: `type`, `text` (standard markdown) and an optional `block_id`; its text at most
12,000 characters, counted over every markdown block of the payload. Slack answers `invalid_blocks`."""

from __future__ import annotations

from typing import Any

BLOCK_LIMIT = 50
MARKDOWN_LIMIT = 12_000


def blocks_problem(blocks: Any) -> str | None:
    """`invalid_blocks` when Slack would refuse these blocks, else None."""
    if not blocks:
        return None
    if not isinstance(blocks, list) or len(blocks) > BLOCK_LIMIT:
        return "invalid_blocks"
    markdown = [block for block in blocks if isinstance(block, dict) and block.get("type") == "markdown"]
    for block in markdown:
        if set(block) - {"type", "text", "block_id"} or not isinstance(block.get("text"), str) or not block["text"]:
            return "invalid_blocks"
    if sum(len(block["text"]) for block in markdown) > MARKDOWN_LIMIT:
        return "invalid_blocks"
    return None
