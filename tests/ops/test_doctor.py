"""`folio doctor` against the fakes: every part wired right, then each part broken in turn, each failure naming its fix."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import yaml
from azure.core.credentials import AzureKeyCredential

from bot.cli import main
from bot.retrieval.azure import AzureSearchRetriever
from tests.conftest import ROOT
from tests.fakes.azure_search import FakeAzureSearch
from tests.fakes.openai_responses import FakeResponses, Request, Step, error, reply
from tests.fakes.slack_api import FakeSlack
from tests.retrieval.helpers import API_KEY, chunk

# doctor asks each converter its version, tesseract its languages: `python3 dev.py test --quick` skips it
pytestmark = pytest.mark.slow

KEY = "sk-the-right-key"
SCOPES = tuple(yaml.safe_load((ROOT / "manifest.yaml").read_text())["oauth_config"]["scopes"]["bot"])
CHANNELS = "channels:\n  C0BENEFIT1:\n    container: benefits\n"
# LibreOffice, OCRmyPDF and Tesseract are installed where CI runs (.ci/run); a laptop without them gets a warning.
CONVERTERS = "ok" if all(shutil.which(program) for program in ("soffice", "ocrmypdf", "tesseract")) else "warn"


@pytest.fixture
def model(fake_model: FakeResponses) -> FakeResponses:
    """The model service, holding gpt-5-mini and gpt-5, taking only KEY; it answers every probe."""
    fake_model.api_key, fake_model.models = KEY, {"gpt-5-mini", "gpt-5"}
    fake_model.respond_with(lambda request: reply("OK"))
    return fake_model


@pytest.fixture
async def search() -> AsyncIterator[FakeAzureSearch]:
    """Azure AI Search with Folio's index, as `folio index` creates it, holding one passage in container benefits."""
    with FakeAzureSearch(api_key=API_KEY) as fake:
        writer = AzureSearchRetriever(
            endpoint=fake.endpoint, index_name="folio", credential=AzureKeyCredential(API_KEY)
        )
        await writer.replace_file("benefits", "plan.pdf", "v1", [chunk("benefits", "plan.pdf", "Hearing aids.")])
        await writer.close()
        yield fake


@pytest.fixture
def configured(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    model: FakeResponses,
    slack: FakeSlack,
    search: FakeAzureSearch,
    redis_url: str,
) -> None:
    """Every part configured, against the fakes."""
    slack.scopes = SCOPES
    (tmp_path / "channels.yaml").write_text(CHANNELS)
    for name, value in {
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": model.base_url,
        "FOLIO_MODEL_FAST": "gpt-5-mini",
        "FOLIO_MODEL_THOROUGH": "gpt-5",
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_APP_TOKEN": slack.app_token,
        "SLACK_API_URL": slack.base_url,
        "AZURE_SEARCH_ENDPOINT": search.endpoint,
        "AZURE_SEARCH_KEY": API_KEY,
        "REDIS_URL": redis_url,
        "FOLIO_DOCS_BASE_URL": "https://files.example/docs/",
    }.items():
        monkeypatch.setenv(name, value)


Doctor = Callable[..., tuple[int, dict[str, dict]]]


@pytest.fixture
def doctor(capsys: pytest.CaptureFixture[str]) -> Iterator[Doctor]:
    """Run `folio doctor --json`: its exit code and its checks by part."""

    def run(*args: str) -> tuple[int, dict[str, dict]]:
        code = main(["doctor", "--json", *args])
        shown = json.loads(capsys.readouterr().out)
        assert shown["ok"] == (code == 0)
        return code, {check["part"]: check for check in shown["checks"]}

    yield run


def test_every_part_wired_right_is_ok(configured: None, doctor: Doctor) -> None:
    code, checks = doctor()

    assert code == 0
    assert {part: check["status"] for part, check in checks.items()} == {
        "settings": "ok",
        "channel policy": "ok",
        "index": "ok",
        "redis": "ok",
        "model (fast)": "ok",
        "model (thorough)": "ok",
        "model state": "ok",
        "azure search": "ok",
        "slack": "ok",
        "shared files": "ok",
        "slack events": "ok",
        "slack connect": "ok",
        "document links": "ok",
        "converters": CONVERTERS,
        "mcp": "skip",
        "sources": "skip",
    }
    assert "benefits (1 passages)" in checks["channel policy"]["summary"]
    assert checks["slack"]["facts"]["team"] == "Folio Test"
    chains = "the service keeps responses: conversations chain by previous_response_id"
    assert checks["model state"]["summary"] == chains


@pytest.mark.parametrize(
    ("mode", "status", "summary"),
    [
        (
            "server",
            "fail",
            "the service keeps no responses: it refused previous_response_id (HTTP 400): Error code: "
            "400 - llama.cpp does not support 'previous_response_id'.",
        ),
        (
            "auto",
            "ok",
            "the service keeps no responses: Folio resends each conversation (auto learns it from one "
            "refused call per process; FOLIO_MODEL_STATE=client skips that call)",
        ),
        ("client", "ok", "the service keeps no responses: Folio resends each conversation (FOLIO_MODEL_STATE=client)"),
    ],
)
def test_doctor_tells_whether_the_model_server_keeps_responses(
    doctor: Doctor, monkeypatch: pytest.MonkeyPatch, mode: str, status: str, summary: str
) -> None:
    with FakeResponses(server="llama.cpp") as llama:
        llama.respond_with(lambda request: reply("OK"))
        for name, value in {
            "OPENAI_API_KEY": "not-needed",
            "OPENAI_BASE_URL": llama.base_url,
            "FOLIO_MODEL_FAST": "local",
            "FOLIO_MODEL_THOROUGH": "local",
            "FOLIO_CODE_INTERPRETER": "false",
            "FOLIO_REASONING": "false",
            "FOLIO_MODEL_STATE": mode,
        }.items():
            monkeypatch.setenv(name, value)

        code, checks = doctor()

    assert checks["model (fast)"]["status"] == "ok"
    assert (checks["model state"]["status"], checks["model state"]["summary"]) == (status, summary)
    assert code == (1 if status == "fail" else 0)
    if mode == "server":
        fix = "set FOLIO_MODEL_STATE=client (or auto) so that Folio resends each conversation"
        assert checks["model state"]["fix"] == fix


def test_connected_channels_shared_outside_the_organisation_are_listed(
    configured: None, doctor: Doctor, slack: FakeSlack
) -> None:
    slack.share_channel("C0BENEFIT1")

    code, checks = doctor()

    assert code == 0 and checks["slack connect"]["status"] == "warn"
    assert checks["slack connect"]["summary"] == "shared outside the organisation: C0BENEFIT1 (refused)"
    assert checks["slack connect"]["facts"]["shared_outside"] == ["C0BENEFIT1"]


BOTH_MODELS = "model (fast)", "model (thorough)"
BROKEN = {  # what to break -> (the parts that fail, what the first one's line says, what its fix says)
    "wrong key": ({"OPENAI_API_KEY": "sk-a-revoked-key"}, BOTH_MODELS, "HTTP 401", "OPENAI_API_KEY"),
    "unknown model": ({"FOLIO_MODEL_FAST": "gpt-9"}, "model (fast)", "'gpt-9' was not found", "FOLIO_MODEL_FAST"),
    "unreachable redis": ({"REDIS_URL": "redis://127.0.0.1:9/0"}, "redis", "does not answer", "REDIS_URL"),
    "redis url with a password and a bad port": (  # seen: a traceback from hiding the password, not this line
        {"REDIS_URL": "redis://:pass-word-9@127.0.0.1:6379x/0"},
        "redis",
        "redis://:***@127.0.0.1:6379x/0",
        "REDIS_URL",
    ),
    "missing index": ({"AZURE_SEARCH_INDEX": "docs"}, "azure search", "index docs does not exist", "folio index"),
    "slack invalid_auth": ({"SLACK_BOT_TOKEN": "xoxb-revoked"}, "slack", "SLACK_BOT_TOKEN (invalid_auth)", "token"),
    "app token": ({"SLACK_APP_TOKEN": "xapp-wrong"}, "slack events", "SLACK_APP_TOKEN (invalid_auth)", "app-level"),
    "bad setting": ({"FOLIO_MAX_ITERATIONS": "lots"}, "settings", "FOLIO_MAX_ITERATIONS", ".env"),
    # Seen: "check SLACK_API_URL" when the cause was name resolution (a container without DNS).
    "slack name not resolved": (
        {"SLACK_API_URL": "https://folio-nowhere.invalid/api/"},
        "slack",
        "the name folio-nowhere.invalid does not resolve",
        (
            "Check the DNS and outbound network of this machine or container; SLACK_API_URL is "
            "only wrong if you changed it"
        ),
    ),
    "slack refused": (
        {"SLACK_API_URL": "http://127.0.0.1:9/api/"},
        "slack",
        "127.0.0.1:9 refused the connection",
        "Check SLACK_API_URL, and any proxy (HTTPS_PROXY) or firewall between Folio and Slack",
    ),
}


@pytest.mark.parametrize("broken", BROKEN, ids=list(BROKEN))
def test_each_broken_part_fails_and_names_its_fix(
    configured: None, doctor: Doctor, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    changed, parts, says, fix = BROKEN[broken]
    failing = (parts,) if isinstance(parts, str) else parts
    for name, value in changed.items():
        monkeypatch.setenv(name, value)

    code, checks = doctor()

    assert code == 1
    assert [name for name, check in checks.items() if check["status"] == "fail"] == list(failing)  # others still ran
    assert says in checks[failing[0]]["summary"] and fix in checks[failing[0]]["fix"]


def test_missing_scopes_are_named_with_how_to_grant_them(configured: None, doctor: Doctor, slack: FakeSlack) -> None:
    slack.scopes = tuple(scope for scope in SCOPES if scope not in {"commands", "users:read"})

    code, checks = doctor()

    assert code == 1 and checks["slack"]["facts"]["missing"] == ["commands", "users:read"]
    assert "Reinstall to Workspace" in checks["slack"]["fix"]


def test_a_token_that_cannot_read_files_says_shared_files_are_refused(
    configured: None, doctor: Doctor, slack: FakeSlack
) -> None:
    slack.scopes = tuple(scope for scope in SCOPES if scope != "files:read")

    _, checks = doctor()

    assert checks["shared files"]["status"] == "warn" and "lacks files:read" in checks["shared files"]["summary"]
    assert checks["slack"]["facts"]["missing"] == ["files:read"]


@pytest.mark.parametrize(
    ("refused", "setting"), [("reasoning", "FOLIO_REASONING"), ("code_interpreter", "FOLIO_CODE_INTERPRETER")]
)
def test_a_model_refusing_a_switch_says_which_setting_to_turn_off(
    configured: None, doctor: Doctor, model: FakeResponses, refused: str, setting: str
) -> None:
    setattr(model, refused, False)

    code, checks = doctor()

    assert code == 1
    for profile in ("fast", "thorough"):
        assert checks[f"model ({profile})"]["fix"] == f"set {setting}=false"


def test_an_index_unlike_folios_names_what_differs(configured: None, doctor: Doctor, search: FakeAzureSearch) -> None:
    index = search.indexes["folio"]
    index["fields"] = [field for field in index["fields"] if field["name"] != "tags"]
    index.pop("semantic")

    code, checks = doctor()

    assert code == 1
    summary = checks["azure search"]["summary"]
    assert "field tags is missing" in summary and "semantic configuration folio-semantic is missing" in summary
    assert "AZURE_SEARCH_SEMANTIC=false" in checks["azure search"]["fix"]


def test_the_embedded_defaults_pass_and_say_what_is_skipped(doctor: Doctor, capsys: pytest.CaptureFixture[str]) -> None:
    code, checks = doctor()

    assert code == 0
    assert [part for part, check in checks.items() if check["status"] == "skip"] == [
        "channel policy",
        "model",
        "azure search",
        "slack",
        "mcp",
        "sources",
    ]
    assert checks["redis"]["status"] == "ok" and "embedded" in checks["redis"]["summary"]
    assert main(["doctor"]) == 0  # and as lines: one per part
    assert len(capsys.readouterr().out.splitlines()) == len(checks)


def test_an_empty_index_is_a_warning_not_a_failure(
    doctor: Doctor, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FOLIO_SAMPLE_CORPUS", "false")
    (tmp_path / "channels.yaml").write_text(CHANNELS)

    code, checks = doctor()

    assert code == 0
    assert checks["index"]["status"] == "warn" and checks["index"]["fix"] == "folio index PATH --container NAME"
    assert checks["channel policy"]["fix"] == "folio index PATH --container benefits"


def test_a_refusal_that_names_no_switch_is_traced_to_one_by_trying_without_each(
    configured: None, doctor: Doctor, model: FakeResponses
) -> None:
    def other_server(request: Request) -> Step:  # a compatible server that words its refusal its own way
        if any(tool["type"] == "code_interpreter" for tool in request.body.get("tools", [])):
            return error(400, "invalid_request", kind="invalid_request_error", message="Unsupported tool type.")
        return reply("OK")

    model.respond_with(other_server)

    code, checks = doctor()

    assert code == 1 and checks["model (fast)"]["fix"] == "set FOLIO_CODE_INTERPRETER=false"


def test_a_base_url_answering_a_web_page_fails_naming_openai_base_url(
    configured: None, doctor: Doctor, model: FakeResponses
) -> None:
    model.web_page = True  # seen: "gpt-5-mini answers" from a web server's start page (200, HTML)

    code, checks = doctor()

    assert code == 1
    for profile in ("fast", "thorough"):
        check = checks[f"model ({profile})"]
        assert check["status"] == "fail" and "not a Responses API reply" in check["summary"]
        assert "OPENAI_BASE_URL" in check["fix"]


@pytest.mark.parametrize("written", ["{url}/0?password={pw}", "redis://:{pw_quoted}@{where}/0"])
def test_a_redis_password_in_any_form_redis_accepts_is_never_printed(
    configured: None,
    doctor: Doctor,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    redis_url: str,
    written: str,
) -> None:
    # Issue 18, item 8: `?password=` (redis-py reads it) was printed by `folio doctor` and `--json` as it stood.
    password = "s3cret/pa@ss"
    where = redis_url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
    url = written.format(url=redis_url.rsplit("/", 1)[0], pw=password, pw_quoted="s3cret%2Fpa%40ss", where=where)
    monkeypatch.setenv("REDIS_URL", url)

    _, checks = doctor()
    assert main(["doctor"]) in (0, 1)
    shown = json.dumps(checks) + capsys.readouterr().out

    assert "REDIS_URL" in shown
    for form in (password, "s3cret%2Fpa%40ss", "s3cret/pa%40ss"):
        assert form not in shown
