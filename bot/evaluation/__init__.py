"""Evaluation: golden questions in, scores and reports out. Pure functions; the CLI does the I/O.

    golden     parse golden JSONL files (question, truth ending in [file.pdf#page=N], or "unanswerable": true)
    scoring    per-question scores of a full turn or a single search, and their summary
    report     the JSON summary, Markdown tables, and the comparison of two runs

Imports `bot.models`, `bot.errors`, and the tool names of `bot.agent.tools`.
"""
