"""`folio doctor`'s probes: ask each part whether it is wired right, and hand the answers to `bot.app.verdicts`.

    checks = await diagnose(settings, manifest=Path("manifest.yaml"))    # one Check per part, never raises

Each probe builds its client the way Folio does (`open_folio`, `builders`), asks one small question, and turns
every failure into a Check that names its fix. What is not configured is skipped, with the reason.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import aiohttp
import openai
import yaml
from azure.core.exceptions import AzureError, HttpResponseError, ResourceNotFoundError
from openai import AsyncOpenAI
from openai.types.responses import Response
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import AuthenticationError, ClusterError, NoPermissionError, RedisClusterException
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.agent import prompts
from bot.agent.provider_errors import Call, classify, failure_of, is_azure, not_the_api
from bot.agent.wire import NotAResponse
from bot.app import Folio, Given, builders, open_folio
from bot.app.health import unreachable_parts
from bot.app.mcp_check import mcp_check
from bot.app.redis_client import RedisOptions
from bot.app.redis_server import EmbeddedRedis, running_socket
from bot.app.sharing import sharing_check
from bot.app.sources_check import sources_checks
from bot.app.verdicts import (
    Check,
    ContainerFigures,
    index_check,
    links_check,
    model_state_check,
    policy_check,
    policy_containers,
    search_index_problems,
    settings_check,
    slack_scopes_check,
    thread_files_check,
)
from bot.config import ChannelPolicy, Settings, load_policy
from bot.config.secrets import redacted_url
from bot.errors import ConfigurationError, FolioError, ModelMisconfigured
from bot.ingest import kinds
from bot.ingest.converters import probe, tesseract_languages
from bot.ingest.offline import no_network
from bot.models import Profile
from bot.retrieval.azure import AzureSearchRetriever
from bot.retrieval.azure_schema import index_definition
from bot.store.failures import REDIS_FAILURES, store_failure
from bot.store.probe import needs_cluster_client

TIMEOUT = 15.0  # seconds one probe may take
NO_SUCH_RESPONSE = "resp_" + "0" * 48  # shaped like a response id; no service holds it
PINGS = 3


async def diagnose(settings: Settings, *, manifest: Path | None) -> list[Check]:
    """Every part's Check, in the order an operator fixes them."""
    checks = [settings_check(settings)]
    policy, policy_failure = _policy(settings)
    async with AsyncExitStack() as stack:
        try:  # the model, the index and the links, as Folio opens them (an empty policy stands in for a broken one)
            folio: Folio | None = await stack.enter_async_context(
                open_folio(settings, Given(policy=policy or ChannelPolicy()))
            )
            opened = ""
        except FolioError as exc:
            folio, opened = None, str(exc)
        checks.append(policy_failure or await _policy_check(settings, folio, policy or ChannelPolicy()))
        checks.append(await _index_check(settings, folio, policy) if folio else Check("index", "fail", opened))
        checks.append(await _redis_check(settings))
        checks += await _model_checks(settings, folio)
        checks.append(await _azure_search_check(settings, folio))
        checks += await _slack_checks(settings, manifest, policy)
        checks.append(links_check(settings))
        checks.append(await mcp_check(settings))
        checks.append(await asyncio.to_thread(converters_check, settings))
        checks += await sources_checks(settings)
    return checks


def manifest_scopes(path: Path | None) -> set[str] | None:
    """The bot scopes manifest.yaml asks for, or None when there is no manifest to compare with."""
    if path is None or not path.exists():
        return None
    manifest = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return set(manifest.get("oauth_config", {}).get("scopes", {}).get("bot", []))


# --- channel policy and index ---------------------------------------------------------------------------------------
def _policy(settings: Settings) -> tuple[ChannelPolicy | None, Check | None]:
    path = settings.folio_channels_file
    if not path.exists():
        if settings.slack_configured:
            fix = f"copy channels.example.yaml to {path}, or set FOLIO_CHANNELS_FILE to your policy file"
            return None, Check("channel policy", "fail", f"{path} does not exist: Slack channels search nothing", fix)
        return None, Check("channel policy", "skip", f"no {path}: not needed until Slack is connected")
    try:
        return load_policy(path), None
    except ConfigurationError as exc:
        return None, Check("channel policy", "fail", str(exc), f"fix {path} as the message says")


async def _policy_check(settings: Settings, folio: Folio | None, policy: ChannelPolicy) -> Check:
    if folio is None:
        return Check("channel policy", "skip", "the index could not be opened (see index)")
    names = policy_containers(policy)
    counts = dict(zip(names, await asyncio.gather(*(folio.retriever.count(name) for name in names))))
    return policy_check(policy, counts, path=str(settings.folio_channels_file))


async def _index_check(settings: Settings, folio: Folio, policy: ChannelPolicy | None) -> Check:
    """Every container the index holds and every one the policy names: their files, passages, last indexing."""
    try:
        held = await folio.retriever.containers()
        names = sorted(set(held) | set(policy_containers(policy) if policy else ()))
        files = {name: await folio.retriever.files(name) if held.get(name) else [] for name in names}
    except FolioError as exc:
        return Check("index", "fail", str(exc), "check the search settings (AZURE_SEARCH_*) or FOLIO_DATA_DIR")
    figures = [ContainerFigures(name, len(files[name]), held.get(name, 0)) for name in names]
    indexed = [entry.indexed_at for listed in files.values() for entry in listed if entry.indexed_at]
    if settings.azure_search_endpoint:
        backend = f"Azure AI Search {settings.azure_search_endpoint} index {settings.azure_search_index}"
    else:
        backend = f"local {settings.folio_data_dir / 'index.sqlite'}"
    return index_check(backend, figures, last_indexed=max(indexed, default=None))


# --- Redis ----------------------------------------------------------------------------------------------------------
async def _redis_check(settings: Settings) -> Check:
    if settings.redis_url:
        options = RedisOptions.of(settings)
        shown = redacted_url(settings.redis_url)
        fix = "check REDIS_URL (redis://HOST:6379/0) and that Redis runs and accepts Folio's connections"
        mode = options.describe(settings.redis_url)
        where = f"REDIS_URL {shown}" + ("" if mode == "single server" else f" ({mode})")
        return await _ping(settings.redis_url, where, fix, options, mode=mode)
    if settings.redis_cluster:
        return Check("redis", "fail", messages.REDIS_CLUSTER_NEEDS_URL, "set REDIS_URL, or REDIS_CLUSTER=false")
    folder = settings.folio_data_dir
    socket = running_socket(folder)
    if socket is not None:
        fix = "the running Folio's embedded Redis does not answer: restart that Folio"
        return await _ping(f"unix://{socket}", f"embedded in {folder} (run by a running Folio)", fix)
    try:
        server = await EmbeddedRedis.start(builders.data_dir(settings))
    except ConfigurationError as exc:
        return Check(
            "redis", "fail", str(exc), "set FOLIO_DATA_DIR to a writable folder, or REDIS_URL to a Redis server"
        )
    try:
        return await _ping(server.url, f"embedded in {folder} (started for this check)", "see the Redis log above")
    finally:
        await server.stop()


async def _ping(url: str, where: str, fix: str, options: RedisOptions = RedisOptions(), *, mode: str = "") -> Check:
    try:
        client = builders.redis_client(url, options)
    except ConfigurationError as exc:
        return Check("redis", "fail", f"{where}: {exc}", fix)
    times = []
    try:
        for _ in range(PINGS):
            started = time.perf_counter()
            await asyncio.wait_for(client.ping(), TIMEOUT)
            times.append((time.perf_counter() - started) * 1000)
        mismatch = await _cluster_mismatch(client, options)
    except (AuthenticationError, NoPermissionError) as exc:  # it answers, and refuses: say why, and the URL's form
        fix = f"set REDIS_URL to {messages.REDIS_URL_FORMS}"
        return Check("redis", "fail", f"{where}: {store_failure(exc)}", fix)
    except REDIS_FAILURES as exc:
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):
            return Check("redis", "fail", f"{where}: {store_failure(exc)}", "set REDIS_TLS_CA_FILE")
        if isinstance(exc, (RedisClusterException, ClusterError)):  # it answers, as another kind of Redis
            return Check("redis", "fail", f"{where}: {store_failure(exc)}", "set REDIS_CLUSTER to match the server")
        return Check("redis", "fail", f"{where} does not answer ({exc or type(exc).__name__})", fix)
    except (OSError, TimeoutError) as exc:
        return Check("redis", "fail", f"{where} does not answer ({exc or type(exc).__name__})", fix)
    finally:
        await client.aclose()
    if mismatch:
        return Check("redis", "fail", f"{where}: {mismatch}", "set REDIS_CLUSTER to match the server")
    rtt = statistics.median(times)
    summary = f"{where} answers PING in {rtt:.1f} ms" + (f" as a {mode}" if mode == "single server" else "")
    return Check("redis", "ok", summary, facts={"rtt_ms": round(rtt, 2), "mode": mode or "embedded"})


async def _cluster_mismatch(client: Redis | RedisCluster, options: RedisOptions) -> str | None:
    """Why the server is not the kind REDIS_CLUSTER says, or None: a plain client on a cluster node would meet MOVED
    on most keys, a cluster client a cluster that is not whole would meet CLUSTERDOWN."""
    if isinstance(client, RedisCluster):  # what REDIS_CLUSTER=true builds (options.cluster)
        state = (await client.cluster_info()).get("cluster_state")
        return None if state in ("ok", b"ok") else messages.redis_cluster_down(f"cluster_state:{state}")
    return messages.REDIS_IS_A_CLUSTER if await needs_cluster_client(client) else None


# --- the model ------------------------------------------------------------------------------------------------------
async def _model_checks(settings: Settings, folio: Folio | None) -> list[Check]:
    if not settings.model_configured:
        return [
            Check(
                "model",
                "skip",
                "no model is set up: answers quote the best passages",
                "set OPENAI_API_KEY or AZURE_OPENAI_ENDPOINT for written answers",
            )
        ]
    if folio is None or folio.model is None:
        return [Check("model", "skip", "the model client could not be built (see index)")]
    profiles: tuple[Profile, ...] = ("fast", "thorough")
    checks = [_model_check(folio.model, settings, profile) for profile in profiles]
    return list(await asyncio.gather(*checks, _model_state_check(folio.model, settings)))


async def _model_check(client: AsyncOpenAI, settings: Settings, profile: Profile) -> Check:
    """One tiny call as the agent makes it; when refused, the same call without each switch names the one to turn off."""
    model = settings.thorough_model if profile == "thorough" else settings.folio_model_fast
    effort = settings.folio_effort_thorough if profile == "thorough" else settings.folio_effort_fast
    part, call = f"model ({profile})", Call(model=model, profile=profile, azure=is_azure(client))
    reasoning, code = settings.folio_reasoning, settings.folio_code_interpreter
    started = time.perf_counter()
    error = await _probe(client, call, effort=effort if reasoning else None, code_interpreter=code)
    took = (time.perf_counter() - started) * 1000
    if error is None:
        switches = f"reasoning {effort if reasoning else 'off'}, code interpreter {'on' if code else 'off'}"
        return Check(
            part, "ok", f"{model} answers ({switches}) in {took:.0f} ms", facts={"model": model, "ms": round(took)}
        )
    if isinstance(error, ModelMisconfigured):
        return Check(part, "fail", f"{model}: {error.detail}", error.fix, {"setting": error.setting})
    culprit = await _switch_to_blame(client, call, effort=effort, reasoning=reasoning, code_interpreter=code)
    if culprit is not None:
        return Check(
            part,
            "fail",
            f"{model} refuses what {culprit} sends ({getattr(error, 'detail', error)})",
            f"set {culprit}=false",
            {"setting": culprit},
        )
    return Check(part, "fail", f"{model}: {getattr(error, 'detail', '') or error}", _model_fix(settings))


async def _switch_to_blame(
    client: AsyncOpenAI, call: Call, *, effort: str, reasoning: bool, code_interpreter: bool
) -> str | None:
    """Which switch makes the call fail: the one without which it succeeds."""
    if reasoning and await _probe(client, call, effort=None, code_interpreter=code_interpreter) is None:
        return "FOLIO_REASONING"
    if (
        code_interpreter
        and await _probe(client, call, effort=effort if reasoning else None, code_interpreter=False) is None
    ):
        return "FOLIO_CODE_INTERPRETER"
    return None


async def _probe(client: AsyncOpenAI, call: Call, *, effort: str | None, code_interpreter: bool) -> FolioError | None:
    """One Responses call with the agent's tools and reasoning, a few output tokens, stored nowhere."""
    params: dict[str, Any] = {
        "model": call.model,
        "input": "Reply with the word OK.",
        "max_output_tokens": 16,
        "store": False,
        "tools": prompts.tool_definitions(code_interpreter=code_interpreter),
        "tool_choice": "none",
    }
    if effort:
        params["reasoning"] = {"effort": effort}
    if code_interpreter:
        params["include"] = ["code_interpreter_call.outputs"]
    try:
        answer = await asyncio.wait_for(client.responses.create(**params), TIMEOUT)
    except openai.APIError as exc:
        return classify(failure_of(exc), call)
    except TimeoutError:
        return FolioError(f"no answer within {TIMEOUT:.0f} s")
    if not isinstance(answer, Response):  # the SDK hands back the body of a reply that is not JSON (a web page)
        return not_the_api(NotAResponse(f"{client.base_url} answered with something else"), call)
    return None


async def _model_state_check(client: AsyncOpenAI, settings: Settings) -> Check:
    """Whether the service keeps responses: one call chained to a response it cannot have, which a service that
    chains answers "not found" and one that keeps none (llama.cpp) refuses; nothing is written or stored."""
    call = Call(model=settings.folio_model_fast, profile="fast", azure=is_azure(client), chained=True)
    params: dict[str, Any] = {
        "model": call.model,
        "input": "Reply with the word OK.",
        "max_output_tokens": 16,
        "store": False,
        "previous_response_id": NO_SUCH_RESPONSE,
    }
    try:
        answer = await asyncio.wait_for(client.responses.create(**params), TIMEOUT)
    except openai.APIError as exc:
        return model_state_check(settings.folio_model_state, classify(failure_of(exc), call))
    except TimeoutError:
        return model_state_check(settings.folio_model_state, FolioError(f"no answer within {TIMEOUT:.0f} s"))
    if not isinstance(answer, Response):  # a web page: the model check names OPENAI_BASE_URL
        return model_state_check(settings.folio_model_state, FolioError("not a Responses API reply"))
    return model_state_check(settings.folio_model_state, None)


def _model_fix(settings: Settings) -> str:
    if settings.azure_openai_endpoint:
        return "check AZURE_OPENAI_ENDPOINT, the deployment names and the network"
    return "check OPENAI_BASE_URL (or OpenAI's status), the network and the key's limits"


# --- Azure AI Search ------------------------------------------------------------------------------------------------
async def _azure_search_check(settings: Settings, folio: Folio | None) -> Check:
    if not settings.azure_search_endpoint:
        return Check("azure search", "skip", "AZURE_SEARCH_ENDPOINT is unset: the local index is used")
    if folio is None or not isinstance(folio.retriever, AzureSearchRetriever):
        return Check("azure search", "skip", "the search client could not be built (see index)")
    name, where = settings.azure_search_index, settings.azure_search_endpoint
    try:
        found = await asyncio.wait_for(folio.retriever.index_client.get_index(name), TIMEOUT)
    except ResourceNotFoundError:
        fix = "run `folio index PATH --container NAME` to create it, or set AZURE_SEARCH_INDEX to the existing one"
        return Check("azure search", "fail", f"index {name} does not exist at {where}", fix)
    except HttpResponseError as exc:
        fix = "set AZURE_SEARCH_KEY to an admin key, or give Folio's identity the Search Index Data Contributor role"
        return Check("azure search", "fail", f"{where} refused the request (HTTP {exc.status_code})", fix)
    except (AzureError, TimeoutError) as exc:
        return Check("azure search", "fail", f"{where} could not be reached ({exc})", "check AZURE_SEARCH_ENDPOINT")
    retriever = folio.retriever
    dimensions = retriever.embedder.dimensions if retriever.embedder else None
    expected = index_definition(name, dimensions=dimensions, vectorizer=retriever.vectorizer)
    problems = search_index_problems(found, expected, semantic=settings.azure_search_semantic)
    if problems:
        fix = "recreate the index (delete it, then `folio index` creates it as Folio needs it)"
        if any("semantic" in problem for problem in problems):
            fix += ", or set AZURE_SEARCH_SEMANTIC=false"
        return Check("azure search", "fail", f"index {name}: " + "; ".join(problems), fix)
    return Check("azure search", "ok", f"index {name} at {where} has the fields and semantic configuration Folio uses")


# --- Slack ----------------------------------------------------------------------------------------------------------
async def _slack_checks(settings: Settings, manifest: Path | None, policy: ChannelPolicy | None) -> list[Check]:
    if settings.slack_bot_token is None:
        return [Check("slack", "skip", "SLACK_BOT_TOKEN is unset: `folio serve` chats in the terminal")]
    async with builders.slack_http_session() as session:
        client = builders.slack_client(settings, session)
        try:
            answer = await client.auth_test()
        except SlackApiError as exc:
            refused = messages.slack_token_refused("SLACK_BOT_TOKEN", exc.response.get("error"))
            return [Check("slack", "fail", refused, "copy the token again, or reinstall the app")]
        except (aiohttp.ClientError, TimeoutError) as exc:
            summary, fix = unreachable_parts(exc, service="Slack", url=settings.slack_api_url, setting="SLACK_API_URL")
            return [Check("slack", "fail", summary, fix)]  # DNS, refused or TLS: each names its own fix
        granted = {scope.strip() for scope in (answer.headers.get("x-oauth-scopes") or "").split(",") if scope.strip()}
        bot = f"{answer.get('user')} ({answer.get('user_id')})"
        scopes = slack_scopes_check(
            team=str(answer.get("team")), bot_user=bot, granted=granted, wanted=manifest_scopes(manifest)
        )
        files = thread_files_check(settings, granted)
        return [scopes, files, await _connection_check(settings, client), await sharing_check(client, policy)]


async def _connection_check(settings: Settings, client: AsyncWebClient) -> Check:
    """Socket Mode: the app token opens a connection; HTTP: events can be verified."""
    if settings.slack_app_token is None:
        if settings.slack_signing_secret is None:
            fix = "copy the Signing Secret (Basic Information) into SLACK_SIGNING_SECRET, or set SLACK_APP_TOKEN"
            return Check("slack events", "fail", "HTTP events cannot be verified: SLACK_SIGNING_SECRET is unset", fix)
        return Check("slack events", "ok", f"HTTP events on port {settings.port} at /slack/events, signatures checked")
    try:
        await client.apps_connections_open(app_token=settings.slack_app_token.get_secret_value())
    except SlackApiError as exc:
        refused = messages.slack_token_refused("SLACK_APP_TOKEN", exc.response.get("error"))
        return Check("slack events", "fail", refused, "generate an app-level token with connections:write")
    return Check("slack events", "ok", "Socket Mode: SLACK_APP_TOKEN opens a connection")


# --- converters (LibreOffice, OCRmyPDF, Tesseract) ------------------------------------------------------------------
def converters_check(settings: Settings) -> Check:
    """Each converting program, its version and the OCR languages; a missing one is a warning naming its package."""
    office = probe(settings.folio_soffice, "LibreOffice")
    ocr = probe(settings.folio_ocrmypdf, "OCRmyPDF")
    tesseract = probe(settings.folio_tesseract, "Tesseract")
    languages = tesseract_languages(settings.folio_tesseract)
    wanted = settings.folio_ocr_languages.split("+")
    lacking = [language for language in wanted if tesseract.path and language not in languages]
    shown = [
        f"{found.name} {found.version or found.problem}" if found.path else f"{found.name} missing"
        for found in (office, ocr, tesseract)
    ]
    summary = "; ".join(shown) + f"; OCR {settings.folio_ocr}, languages {', '.join(languages) or 'none'}"
    # Whether a converter could reach the network (docs/security.md "What Folio fetches"): said where one is installed.
    isolated = bool(no_network()) if office.path or ocr.path else None
    if isolated is not None:
        offline = "no network (a namespace of their own)" if isolated else "a proxy to nowhere (no namespace here)"
        summary += f"; converters run with {offline}"
    converters = builders.converters(settings)
    parts = sorted({package for kind in kinds.OFFICE if (package := converters.missing(f"file{kind}"))})
    packages = [
        *parts,
        *(kinds.OCR_PACKAGES.split() if not (ocr.path and tesseract.path) else ()),
        *(kinds.tesseract_package(language) for language in lacking),
    ]
    facts: dict[str, Any] = {found.name.lower(): found.version for found in (office, ocr, tesseract) if found.version}
    facts["ocr_languages"] = list(languages)
    if isolated is not None:
        facts["converters_network"] = "none" if isolated else "proxy to nowhere"
    if packages or any(found.problem for found in (office, ocr, tesseract)):
        fix = "check FOLIO_SOFFICE, FOLIO_OCRMYPDF, FOLIO_TESSERACT"
        if packages:
            fix = f"apt-get install {' '.join(packages)}"
        why = " (those files are skipped)" if packages else ""
        return Check("converters", "warn", summary + why, fix, facts)
    return Check("converters", "ok", summary, facts=facts)
