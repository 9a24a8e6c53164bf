"""Where Folio's log lines go and what they look like: FOLIO_LOG_LEVEL, FOLIO_LOG_FORMAT=text|json, no secrets.

    configure(settings)                     # once, by the `folio` command, before any subcommand runs

Every line goes to stderr. `json` prints one object a line (`time`, `level`, `logger`, `message`, and the per-turn
record under `turn`: see `bot.turns.observer`). Every secret Settings holds (tokens, keys, the Redis password in the
URL's user part or its `?password=`) is replaced by `***` in whatever a line says, whichever library wrote it,
tracebacks included: in the message before it is escaped for JSON, and in the finished line in every form a line can
write it (JSON- or repr-escaped, URL-quoted: `bot.config.secrets.written_forms`).

    say("Folio is listening for Slack on ...")   # a line for the operator: as written, or a JSON record in JSON mode

No content (questions, answers, search queries) without FOLIO_LOG_CONTENT, at DEBUG too: the libraries that log
request and response bodies at DEBUG (CONTENT) stay at INFO, and Folio's own content lines go to logger
`folio.content`, which is silent unless FOLIO_LOG_CONTENT=true.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from bot.config import Settings

# Libraries that log every request at INFO: quiet unless the operator asked for DEBUG.
CHATTY = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "azure", "slack_sdk", "slack_bolt", "aiohttp.access")
# Loggers whose DEBUG lines carry questions and answers (request and response bodies; Folio's own content lines).
CONTENT = ("openai", "slack_sdk", "slack_bolt", "folio.content")
HANDLER = "folio"
MASK = "***"  # as bot.config.secrets writes it (imported there only when Settings are loaded: start-up time)


def configure(settings: Settings | None, *, verbose: bool = False, stream: TextIO | None = None) -> logging.Handler:
    """Send log lines to `stream` (stderr) at FOLIO_LOG_LEVEL (DEBUG with `verbose`), as text or JSON, secrets masked.

    Replaces the handler an earlier call installed, and leaves other handlers (pytest's) alone. `settings` is None
    when they could not be read: the defaults apply, and the command reports what is wrong.
    """
    level = "DEBUG" if verbose else (settings.folio_log_level if settings else "INFO")
    as_json = settings is not None and settings.folio_log_format == "json"
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(HANDLER)
    handler.setFormatter(Redacting(JsonFormatter() if as_json else TextFormatter(), secrets_of(settings)))
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == HANDLER]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    content = settings is not None and settings.folio_log_content
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.NOTSET if level == "DEBUG" else logging.WARNING)
    for name in CONTENT:  # their DEBUG lines hold what people asked and were told
        logging.getLogger(name).setLevel(logging.NOTSET if level == "DEBUG" and content else logging.INFO)
    return handler


def say(text: str, *, level: int = logging.INFO) -> None:
    """A line for the operator on stderr: as written, or in JSON mode a record of logger `folio`, so that whatever
    reads the JSON lines reads every line."""
    if _json_mode():
        logging.getLogger("folio").log(level, text)
    else:
        print(text, file=sys.stderr, flush=True)


def quiet_warnings() -> Callable[[], None]:
    """Drop WARNING records from now until the returned function is called: a worker of `folio serve --workers N`
    other than the first starts quietly, since the first has said every start-up warning already."""

    def not_a_warning(record: logging.LogRecord) -> bool:
        return record.levelno != logging.WARNING

    handlers = [handler for handler in logging.getLogger().handlers if handler.get_name() == HANDLER]
    for handler in handlers:
        handler.addFilter(not_a_warning)

    def end() -> None:
        for handler in handlers:
            handler.removeFilter(not_a_warning)

    return end


def _json_mode() -> bool:
    formatters = [h.formatter for h in logging.getLogger().handlers if h.get_name() == HANDLER]
    return any(isinstance(f, Redacting) and isinstance(f.inner, JsonFormatter) for f in formatters)


def secrets_of(settings: Settings | None) -> tuple[str, ...]:
    """Every secret value in Settings worth masking: SecretStr fields, and the password in REDIS_URL."""
    if settings is None:
        return ()
    from pydantic import SecretStr  # Settings are loaded, so pydantic is too

    from bot.config.secrets import redis_passwords, written_forms

    found = [value.get_secret_value() for value in dict(settings).values() if isinstance(value, SecretStr)]
    found += redis_passwords(settings.redis_url)
    forms = {form for secret in found for form in written_forms(secret)}
    return tuple(sorted(forms, key=len, reverse=True))


class Redacting(logging.Formatter):
    """Masks every secret in the record's message, traceback and turn record before `inner` formats (and escapes)
    them, then once more in the finished line, in every form it may be written there."""

    def __init__(self, inner: logging.Formatter, secrets: tuple[str, ...]) -> None:
        super().__init__()
        self.inner = inner
        self._secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        if not self._secrets:
            return self.inner.format(record)
        masked = logging.makeLogRecord(record.__dict__)  # the record itself goes on to other handlers unchanged
        masked.msg, masked.args = mask(record.getMessage(), self._secrets), None
        if record.exc_info:
            masked.exc_text = mask(record.exc_text or self.inner.formatException(record.exc_info), self._secrets)
            masked.exc_info = None
        if record.stack_info:
            masked.stack_info = mask(record.stack_info, self._secrets)
        if getattr(record, "turn", None) is not None:
            masked.turn = _masked(record.turn, self._secrets)  # type: ignore[attr-defined]
        return mask(self.inner.format(masked), self._secrets)


def _masked(value: Any, secrets: tuple[str, ...]) -> Any:
    """`value` (a turn record: dicts, lists, strings) with every secret masked in its strings."""
    if isinstance(value, str):
        return mask(value, secrets)
    if isinstance(value, dict):
        return {key: _masked(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(item, secrets) for item in value]
    return value


def mask(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with every one of `secrets` replaced by ***."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")


class JsonFormatter(logging.Formatter):
    """One JSON object a line; the per-turn record's fields go under "turn"."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "process": record.process,  # which worker, with `folio serve --workers N`
            "message": record.getMessage(),
        }
        turn = getattr(record, "turn", None)
        if turn is not None:  # the fields say it all; the text line would repeat them
            line["message"] = "turn"
            line["turn"] = turn
        if record.exc_info or record.exc_text:
            line["exception"] = record.exc_text or self.formatException(record.exc_info)  # type: ignore[arg-type]
        return json.dumps(line, ensure_ascii=False, default=str)
