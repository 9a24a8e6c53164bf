"""The verdicts of `folio doctor`: pure functions from what a probe found to one line per part, with its fix.

`bot.app.doctor` does the I/O (asks Slack, the model, Redis, the index) and hands the answers here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from azure.search.documents.indexes.models import SearchIndex

from bot.config import ChannelPolicy, Settings
from bot.errors import FolioError, HistoryExpired, KeepsNoResponses

Status = Literal["ok", "warn", "fail", "skip"]
Fact = str | int | float | bool | list[str]


@dataclass(frozen=True)
class Check:
    """One part's line: its status, what was found, and what to do when it is not ok."""

    part: str
    status: Status
    summary: str
    fix: str = ""
    facts: Mapping[str, Fact] = field(default_factory=dict)  # the figures behind the summary, for --json


def exit_code(checks: Iterable[Check]) -> int:
    """1 when a part Folio needs is broken; warnings and skipped parts do not fail."""
    return 1 if any(check.status == "fail" for check in checks) else 0


def settings_check(settings: Settings) -> Check:
    """Which backend each part runs on, from the settings alone."""
    slack = "terminal chat (no SLACK_BOT_TOKEN)"
    if settings.slack_configured:
        slack = "Slack, Socket Mode" if settings.slack_app_token else f"Slack over HTTP on port {settings.port}"
    model = "none: search-only answers"
    if settings.azure_openai_endpoint:
        model = "Azure OpenAI" + ("" if settings.azure_openai_api_key else " (Entra ID)")
    elif settings.openai_api_key:
        model = f"OpenAI-compatible at {settings.openai_base_url}" if settings.openai_base_url else "OpenAI"
    search = "Azure AI Search" if settings.azure_search_endpoint else f"local index in {settings.folio_data_dir}"
    redis = "REDIS_URL" if settings.redis_url else f"embedded in {settings.folio_data_dir}"
    facts: dict[str, Fact] = {"slack": slack, "model": model, "search": search, "redis": redis}
    return Check("settings", "ok", f"{slack} · model: {model} · search: {search} · Redis: {redis}", facts=facts)


def policy_containers(policy: ChannelPolicy) -> list[str]:
    """Every container the policy connects a channel (or DMs, or the default) to, sorted."""
    rules = [*policy.channels.values(), policy.dm, policy.default]
    return sorted({rule.container for rule in rules if rule is not None})


def policy_check(policy: ChannelPolicy, counts: Mapping[str, int], *, path: str) -> Check:
    """Each container the policy names, with its passages; an empty one is a warning with the command that fills it."""
    names = policy_containers(policy)
    where = [f"{len(policy.channels)} channel{'s' if len(policy.channels) != 1 else ''}"]
    where += [name for name, rule in (("dm", policy.dm), ("default", policy.default)) if rule is not None]
    held = ", ".join(f"{name} ({counts.get(name, 0):,} passages)" for name in names) or "none"
    summary = f"{path}: {', '.join(where)}; containers: {held}"
    facts: dict[str, Fact] = {"channels": len(policy.channels), **{f"passages.{n}": counts.get(n, 0) for n in names}}
    empty = [name for name in names if not counts.get(name)]
    if not names:
        return Check("channel policy", "warn", summary, "connect a channel to a container in " + path, facts)
    if empty:
        fix = "; ".join(f"folio index PATH --container {name}" for name in empty)
        return Check("channel policy", "warn", summary + f" — empty: {', '.join(empty)}", fix, facts)
    return Check("channel policy", "ok", summary, facts=facts)


@dataclass(frozen=True)
class ContainerFigures:
    name: str
    files: int
    passages: int


def index_check(backend: str, containers: Sequence[ContainerFigures], *, last_indexed: str | None) -> Check:
    """The index's containers, files and passages; an empty index is a warning."""
    passages = sum(c.passages for c in containers)
    shown = ", ".join(f"{c.name}: {c.files} files, {c.passages:,} passages" for c in containers) or "no containers"
    summary = f"{backend}; {shown}" + (f"; last written {last_indexed}" if last_indexed else "")
    facts: dict[str, Fact] = {"backend": backend, "passages": passages, "containers": [c.name for c in containers]}
    if not passages:
        return Check("index", "warn", summary + " — empty", "folio index PATH --container NAME", facts)
    return Check("index", "ok", summary, facts=facts)


def slack_scopes_check(*, team: str, bot_user: str, granted: set[str], wanted: set[str] | None) -> Check:
    """The workspace and bot user, and the scopes the installed app lacks against the manifest's."""
    summary = f"workspace {team}, bot user {bot_user}, {len(granted)} scopes granted"
    facts: dict[str, Fact] = {"team": team, "bot_user": bot_user, "scopes": sorted(granted)}
    if wanted is None:
        return Check("slack", "ok", summary + " (manifest.yaml not found: scopes not compared)", facts=facts)
    missing = sorted(wanted - granted)
    if missing:
        fix = (
            "add them to the app (paste manifest.yaml under App Manifest), then OAuth & Permissions > "
            "Reinstall to Workspace, and copy the new SLACK_BOT_TOKEN"
        )
        return Check("slack", "fail", summary + f"; missing: {', '.join(missing)}", fix, {**facts, "missing": missing})
    return Check("slack", "ok", summary + "; every scope manifest.yaml asks for", facts=facts)


def thread_files_check(settings: Settings, granted: set[str]) -> Check:
    """Whether files shared in threads are read: switched on, and the token allowed to fetch them (files:read)."""
    if not settings.folio_thread_files:
        return Check("shared files", "ok", "files shared in threads are not read (FOLIO_THREAD_FILES=0)")
    if "files:read" not in granted:
        return Check(
            "shared files",
            "warn",
            "the bot token lacks files:read: files shared with Folio are refused in the thread",
            "add files:read (manifest.yaml has it), reinstall the app, and copy the new SLACK_BOT_TOKEN",
        )
    bounds = (
        f"up to {settings.folio_thread_files} a thread, {settings.folio_thread_file_mb:g} MB and "
        f"{settings.folio_thread_file_pages} pages each, kept {settings.folio_thread_file_days} days"
    )
    links = "; their citations carry no link (FOLIO_DOCS_BASE_URL serves only indexed files)"
    return Check(
        "shared files",
        "ok",
        f"read as the thread's own documents ({bounds})" + (links if settings.folio_docs_base_url else ""),
    )


def links_check(settings: Settings) -> Check:
    """Where citation links lead, and whether people in Slack can open them."""
    if settings.folio_docs_base_url:
        return Check("document links", "ok", f"citations link to {settings.folio_docs_base_url}FILE#page=N")
    if settings.folio_public_url:
        note = "" if settings.folio_public_url.startswith("https://") else " (not HTTPS: browsers may warn)"
        return Check("document links", "ok", f"signed links to Folio's copies at {settings.folio_public_url}{note}")
    if settings.slack_configured:
        return Check(
            "document links",
            "warn",
            "citations in Slack carry no links",
            "set FOLIO_PUBLIC_URL (Folio serves the PDFs) or FOLIO_DOCS_BASE_URL (where they are served already)",
        )
    return Check("document links", "ok", "terminal: file:// links to Folio's copies")


def model_state_check(mode: str, answer: FolioError | None) -> Check:
    """Whether the model service keeps responses, against FOLIO_MODEL_STATE, from its answer to a call naming a
    response it cannot have: not found (it chains), refused (it keeps none), or answered (None: it ignored it)."""
    part, facts = "model state", {"mode": mode}
    resent = "the service keeps no responses: Folio resends each conversation"
    if isinstance(answer, KeepsNoResponses) and mode == "server":
        return Check(
            part, "fail", answer.detail, answer.fix, {**facts, "keeps_responses": False, "setting": answer.setting}
        )
    if isinstance(answer, KeepsNoResponses) and mode == "client":
        return Check(part, "ok", f"{resent} (FOLIO_MODEL_STATE=client)", facts={**facts, "keeps_responses": False})
    if isinstance(answer, KeepsNoResponses):
        how = "auto learns it from one refused call per process; FOLIO_MODEL_STATE=client skips that call"
        return Check(part, "ok", f"{resent} ({how})", facts={**facts, "keeps_responses": False})
    if isinstance(answer, HistoryExpired) and mode == "client":
        summary = "the service keeps responses, and FOLIO_MODEL_STATE=client resends each conversation all the same"
        return Check(part, "ok", f"{summary} (auto would send less)", facts={**facts, "keeps_responses": True})
    if isinstance(answer, HistoryExpired):
        summary = "the service keeps responses: conversations chain by previous_response_id"
        return Check(part, "ok", summary, facts={**facts, "keeps_responses": True})
    if answer is None and mode == "client":
        summary = "the service ignores previous_response_id: FOLIO_MODEL_STATE=client resends each conversation"
        return Check(part, "ok", summary, facts={**facts, "keeps_responses": False})
    if answer is None:  # a follow-up would reach the model without its thread, and nothing would say so
        summary = "the service answered a call chained to a response it cannot have: it ignores previous_response_id"
        return Check(part, "warn", summary, "set FOLIO_MODEL_STATE=client", {**facts, "keeps_responses": False})
    return Check(part, "skip", f"could not tell ({getattr(answer, 'detail', '') or answer})", facts=facts)


def search_index_problems(found: SearchIndex, expected: SearchIndex, *, semantic: bool) -> list[str]:
    """How an Azure AI Search index differs from the one Folio creates, in what Folio relies on."""
    have = {f.name: f for f in found.fields or []}
    problems = []
    for wanted in expected.fields or []:
        got = have.get(wanted.name)
        if got is None:
            problems.append(f"field {wanted.name} is missing")
            continue
        if got.type != wanted.type:
            problems.append(f"field {wanted.name} is {got.type}, not {wanted.type}")
        for flag in ("filterable", "searchable"):
            if getattr(wanted, flag) and not getattr(got, flag):
                problems.append(f"field {wanted.name} is not {flag}")
        if wanted.vector_search_dimensions and got.vector_search_dimensions != wanted.vector_search_dimensions:
            problems.append(
                f"field {wanted.name} has {got.vector_search_dimensions} dimensions, "
                f"FOLIO_EMBEDDING_DIMENSIONS says {wanted.vector_search_dimensions}"
            )
    if semantic:
        missing = _semantic_configurations(expected) - _semantic_configurations(found)
        problems += [f"semantic configuration {name} is missing" for name in sorted(missing)]
    return problems


def _semantic_configurations(index: SearchIndex) -> set[str]:
    semantic = index.semantic_search
    return {config.name for config in semantic.configurations or []} if semantic else set()
