"""What an operator reads: start-up, configuration, the model service, Redis and sources."""

from __future__ import annotations

# --- the model service's refusals ------------------------------------------------------------------------------------
MODEL_MISCONFIGURED = (
    "Folio is misconfigured: the model service refused its settings, so I cannot answer. "
    "Please tell an admin; Folio's log names the setting to fix."
)
MODEL_QUOTA = "The model service says Folio's quota is used up, so I cannot answer. Please tell an admin to check the plan and billing."
CONTENT_FILTERED = (
    "The model service's content filter blocked this question or its answer. Rephrase the question and ask again."
)
CONTEXT_TOO_LONG = "This thread has grown too long for the model. Mention me in a new message to start afresh."
HISTORY_TRIMMED = "This thread had grown too long for the model, so I left out its oldest questions."
MODEL_RATE_LIMITED = (
    "The model service is limiting how fast I may ask it right now. Please try again in a minute; if it keeps "
    "happening, tell an admin."
)
MODEL_REFUSED = "The model service refused this request. Please try again; if it keeps failing, tell an admin."


# --- start-up and operations: lines an operator reads on stderr ------------------------------------------------------
EMBEDDED_REDIS_GAVE_UP = (
    "The embedded Redis kept dying, so Folio stops here for its supervisor (Docker, systemd) to start it afresh. "
    "Its last log lines are above; set REDIS_URL to use a Redis server instead."
)


def slack_token_refused(variable: str, error: str | None) -> str:
    """`SLACK_BOT_TOKEN` / `SLACK_APP_TOKEN` refused by Slack at start-up, with where to get a good one."""
    where = (
        "Basic Information > App-Level Tokens (an xapp- token with connections:write)"
        if variable == "SLACK_APP_TOKEN"
        else "OAuth & Permissions > Bot User OAuth Token (xoxb-...)"
    )
    return f"Slack refused {variable} ({error or 'no reason given'}). Copy it again from your app's {where} into .env."


SLACK_NOT_ASKED_YET = "not answered yet (Folio is starting)"
STOPPING_NOT_READY = "stopping: this process is shutting down and takes no new events"


def unreachable(service: str, *, url: str, setting: str, host: str, cause: str, detail: str) -> tuple[str, str]:
    """A service Folio could not reach, by the real cause (dns, refused, tls, timeout, other), and what to check."""
    why, fix = {
        "dns": (
            f"the name {host} does not resolve ({detail})",
            (
                f"Check the DNS and outbound network of this machine or container; {setting} is only wrong if you "
                "changed it"
            ),
        ),
        "refused": (
            f"{host} refused the connection",
            f"Check {setting}, and any proxy (HTTPS_PROXY) or firewall between Folio and {service}",
        ),
        "tls": (
            f"the TLS handshake with {host} failed ({detail})",
            (
                "Check the system's CA certificates (SSL_CERT_FILE) and any proxy that intercepts TLS; an http:// "
                f"server behind an https:// {setting} fails this way too"
            ),
        ),
        "timeout": (
            f"{host} did not answer in time",
            "Check the outbound network: a firewall or proxy may be dropping the connection",
        ),
    }.get(cause, (detail, f"Check {setting} and the outbound network"))
    return f"{service} cannot be reached at {setting} ({url}): {why}", fix


# Redis TLS options in REDIS_URL (bot.app.redis_client)
def redis_tls_in_url(names: list[str]) -> str:
    return (
        f"REDIS_URL sets {', '.join(names)}: Folio takes TLS (the certificate check, the CA file) only from "
        "REDIS_TLS_VERIFY and REDIS_TLS_CA_FILE, which a URL option would silently override. Remove it from "
        "REDIS_URL and set REDIS_TLS_CA_FILE (or, for tests only, REDIS_TLS_VERIFY=false) instead."
    )


# Sources (`folio sync`, `folio sources`): what an operator reads about each source.
def source_listed_empty(name: str, where: str, held: int) -> str:
    return (
        f"source {name}: {where} listed no files, though {held} were indexed from it; nothing was removed. If the "
        f"source really is empty now, remove its documents with `folio remove` (or fix `from:` in the sources file)."
    )


def source_not_fetched(why: str) -> str:
    return f"could not be fetched ({why}); tried again next run"


def source_line(*, name: str, container: str, result: str) -> str:
    return f"{name} -> {container}: {result}"


def source_counts(*, files: int, indexed: int, unchanged: int, unreadable: int, removed: int, skipped: int) -> str:
    parts = [
        f"{files} files",
        f"{indexed} indexed",
        f"{unchanged} unchanged",
        f"{unreadable} unreadable",
        f"{removed} removed",
    ]
    return ", ".join(parts + ([f"{skipped} skipped"] if skipped else []))


def source_failed(name: str, error: str) -> str:
    return f"{name}: NOT LISTED: {error}"


SOURCE_STOPPED = "stopped before the end (removals wait for the next run)"
SOURCES_NONE = "No sources are declared: write a sources file (see docs/sources.md), or set FOLIO_SOURCES to its path."
SOURCE_NEVER_RUN = "never synced"


def source_busy(name: str) -> str:
    return f"{name}: another `folio sync` is syncing this source now; skipped this time"


def known_bad_skipped(name: str, why: str) -> str:
    return f"{name}: not read again, unchanged since it failed ({why}); --retry-failed tries it again"


def source_name_taken(document: str, *, source: str, path: str) -> str:
    return (
        f"{document} is already the name of {path} (source {source}) in this container; rename one of them, then "
        "run `folio sync --retry-failed`"
    )


def source_undeclared(name: str, files: int) -> str:
    return (
        f"source {name} is no longer in the sources file; the documents of its {files} files stay indexed: "
        f"`folio sync --forget {name}` removes them"
    )


def source_forgotten(name: str, removed: int) -> str:
    return f"{name}: forgotten, {removed} documents removed"


__all__ = [
    "CONTENT_FILTERED",
    "CONTEXT_TOO_LONG",
    "EMBEDDED_REDIS_GAVE_UP",
    "HISTORY_TRIMMED",
    "MODEL_MISCONFIGURED",
    "MODEL_QUOTA",
    "MODEL_RATE_LIMITED",
    "MODEL_REFUSED",
    "SLACK_NOT_ASKED_YET",
    "SOURCES_NONE",
    "SOURCE_NEVER_RUN",
    "SOURCE_STOPPED",
    "STOPPING_NOT_READY",
    "known_bad_skipped",
    "redis_tls_in_url",
    "slack_token_refused",
    "source_busy",
    "source_counts",
    "source_failed",
    "source_forgotten",
    "source_line",
    "source_listed_empty",
    "source_name_taken",
    "source_not_fetched",
    "source_undeclared",
    "unreachable",
]
