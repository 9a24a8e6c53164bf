"""Files shared in a thread: fetched from Slack as Slack serves them (files.info, then the private URL with the bot
token), read by the `folio index` pipeline into the thread's own container, answered from with citations to their
pages, seen by no other thread or person, and deleted with the conversation. Every refusal is said in the thread."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from fpdf import FPDF

from bot.models import display_name
from bot.slack.render import ACTION_DELETE
from bot.store import ThreadKey
from bot.turns.thread_files import files_container, safe_name, sweep_thread_files, sweeping_every
from tests.fakes.openai_responses import FakeResponses, call, reply, search, tools
from tests.fakes.slack_api import PARTNER, TEAM, FakeSlack
from tests.ingest import made_files
from tests.slack.conftest import running_app
from tests.slack.harness import ALICE, BOB, CHANNEL, DM, Harness

LEASE_FACT = "The notice period of the Harbour Street lease is ninety days"
QUESTION = "What is the notice period in this lease?"
OTHER_PAGES = (
    "The landlord is Quayside Estates and the tenant is Folio Books.",
    "",
    "Rent of 2,400 euros is paid on the first working day of each month.",
)


def lease_pdf(pages: int = 2) -> bytes:
    """A contract of `pages` pages; the notice period only on page 2."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for number in range(1, pages + 1):
        pdf.add_page()
        text = LEASE_FACT + "." if number == 2 else OTHER_PAGES[(number - 1) % len(OTHER_PAGES)]
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


App = Callable[..., AbstractAsyncContextManager[Harness]]


@pytest.fixture
def app(slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, tmp_path: Path) -> App:
    """`app(**settings)`: the app with its own copy of the index (thread files are written into it), Folio serving
    its copies, and `settings` over the harness's."""
    index = tmp_path / "index.sqlite"
    shutil.copy(corpus_index, index)
    serving = {"folio_docs_base_url": None, "folio_public_url": "https://folio.example"}
    return lambda **settings: running_app(slack, fake_model, redis_url, index, **{**serving, **settings})


@pytest.fixture
async def harness(app: App) -> AsyncIterator[Harness]:
    async with app() as running:
        yield running


def answer_from_the_file(model: FakeResponses) -> None:
    model.script(tools(search("Harbour Street lease notice period ninety days")), reply("Ninety days [S1]."))


async def test_a_pdf_shared_in_a_dm_is_answered_from_with_a_citation_to_its_page(harness: Harness) -> None:
    answer_from_the_file(harness.model)
    shared = harness.slack.add_file("lease.pdf", lease_pdf(), user=ALICE, mimetype="application/pdf")

    ts = await harness.message(QUESTION, channel=DM, channel_type="im", files=[shared], subtype="file_share")
    await harness.settle()

    [answer] = harness.texts(ts, channel=DM)
    assert "Read lease.pdf, 2 pages." in answer
    assert "Ninety days" in answer and "lease.pdf" in answer
    assert "https://folio.example/" in answer and "page=2" in answer  # the kept copy, at the cited page
    assert harness.slack.downloads == [(shared["id"], True)]  # fetched once, with the bot token
    conversation = await harness.store.load(harness.thread_key(ts, channel=DM))
    assert conversation is not None and [file.name for file in conversation.thread_files] == ["lease.pdf"]


async def test_another_thread_and_another_persons_dm_cannot_find_a_threads_file(harness: Harness) -> None:
    answer_from_the_file(harness.model)
    shared = harness.slack.add_file("lease.pdf", lease_pdf(), user=ALICE)
    first = await harness.mention(QUESTION, files=[shared])
    await harness.settle()
    assert "Read lease.pdf" in harness.texts(first)[0]

    for _ in range(2):  # the other thread, then Bob's DM
        harness.model.script(
            tools(search("Harbour Street lease notice period ninety days")), reply("[NOT_IN_DOCUMENTS]")
        )
    elsewhere = await harness.mention("What is the notice period of the Harbour Street lease?")
    bobs = await harness.message(
        "Harbour Street lease notice period?", channel="D0BOB00001", channel_type="im", user=BOB
    )
    await harness.settle()

    own = files_container(harness.thread_key(first))
    later = harness.retriever.scopes[-2:]
    assert all(own not in scope.containers for scope in later)
    for text in (*harness.texts(elsewhere), *harness.texts(bobs, channel="D0BOB00001")):
        assert "lease.pdf" not in text


async def test_a_follow_up_in_the_thread_still_searches_its_file(harness: Harness) -> None:
    answer_from_the_file(harness.model)
    shared = harness.slack.add_file("lease.pdf", lease_pdf(), user=ALICE)
    ts = await harness.mention(QUESTION, files=[shared])
    await harness.settle()

    harness.model.script(tools(search("Harbour Street lease ninety days")), reply("Still ninety days [S1]."))
    await harness.message("And is that in days or months?", thread_ts=ts)
    await harness.settle()

    assert "Still ninety days" in harness.texts(ts)[-1] and "lease.pdf" in harness.texts(ts)[-1]
    assert harness.slack.downloads == [(shared["id"], True)]  # read once, searched since


async def test_summarise_this_reads_the_shared_file_whole_in_page_order(harness: Harness) -> None:
    harness.model.script(
        tools(call("read_document", title="lease.pdf")),
        reply("It sets out the parties [S1] and a ninety-day notice period [S2]."),
    )
    shared = harness.slack.add_file("lease.pdf", lease_pdf(pages=3), user=ALICE)

    ts = await harness.message("Summarise this", channel=DM, channel_type="im", files=[shared])
    await harness.settle()

    first, second = harness.model.requests[0].body, harness.model.requests[1].body
    [read_tool] = [tool for tool in first["tools"] if tool.get("name") == "read_document"]
    assert read_tool["parameters"]["properties"]["title"]["enum"] == ["lease.pdf"]  # only this thread's files
    [output] = [item["output"] for item in second["input"] if item.get("type") == "function_call_output"]
    pages = [source["page"] for source in json.loads(output)["sources"]]
    assert pages == [1, 2, 3]  # the whole file, in reading order
    [answer] = harness.texts(ts, channel=DM)
    assert "page=1" in answer and "page=2" in answer


async def test_read_document_is_offered_only_in_a_thread_with_files(harness: Harness) -> None:
    harness.model.script(
        tools(call("read_document", title="../../other-thread/secret.pdf")), reply("[NOT_IN_DOCUMENTS]")
    )

    ts = await harness.mention(QUESTION)
    await harness.settle()

    assert all(tool.get("name") != "read_document" for tool in harness.model.requests[0].body["tools"])
    [output] = [
        item["output"] for item in harness.model.requests[1].body["input"] if item.get("type") == "function_call_output"
    ]
    assert "No file named" in output and harness.texts(ts)


async def test_deleting_the_conversation_deletes_its_files_and_their_copies(harness: Harness, tmp_path: Path) -> None:
    answer_from_the_file(harness.model)
    shared = harness.slack.add_file("lease.pdf", lease_pdf(), user=ALICE)
    ts = await harness.mention(QUESTION, files=[shared])
    await harness.settle()
    container = files_container(harness.thread_key(ts))
    index = harness.retriever.inner
    assert [display_name(held.file) for held in await index.files(container)] == ["lease.pdf"]
    documents = harness.folio.documents
    assert documents is not None and documents.stored(container, "lease.pdf") is not None

    [first, *_] = harness.slack.thread(CHANNEL, ts)
    await harness.click(ACTION_DELETE, thread_ts=ts, message_ts=first.ts)
    await harness.settle()

    assert await index.files(container) == []
    assert documents.stored(container, "lease.pdf") is None


async def test_a_file_alone_is_read_and_acknowledged_without_a_model_call(harness: Harness) -> None:
    shared = harness.slack.add_file("lease.pdf", lease_pdf(), user=ALICE)

    ts = await harness.message("", channel=DM, channel_type="im", files=[shared], subtype="file_share")
    await harness.settle()

    [reply_text] = harness.texts(ts, channel=DM)
    assert "Read lease.pdf, 2 pages." in reply_text and "Ask me about lease.pdf" in reply_text
    assert harness.model.requests == []


async def test_an_oversized_file_is_refused_by_its_size_before_any_download(harness: Harness) -> None:
    answer_from_the_file(harness.model)
    shared = harness.slack.add_file("scan.pdf", lease_pdf(), user=ALICE, size=300 * 1024 * 1024)

    ts = await harness.mention(QUESTION, files=[shared])
    await harness.settle()

    [answer] = harness.texts(ts)
    assert "Did not read scan.pdf: 300.0 MB, and a file shared in a thread may be 25 MB" in answer
    assert harness.slack.downloads == []


async def test_a_file_larger_than_files_info_said_is_cut_off_while_it_downloads(
    app: App, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    answer_from_the_file(fake_model)
    async with app(folio_thread_file_mb=0.5) as harness:
        shared = slack.add_file("lease.pdf", lease_pdf() + b"\n%" + b"x" * 2_000_000, user=ALICE, size=1000)
        ts = await harness.mention(QUESTION, files=[shared])
        await harness.settle()

        [answer] = harness.texts(ts)
        assert "Did not read lease.pdf: over 0.5 MB, and a file shared in a thread may be 0.5 MB" in answer


async def test_a_thread_reads_no_more_files_than_its_cap_however_they_are_sent(
    app: App, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    answer_from_the_file(fake_model)
    async with app(folio_thread_files=1) as harness:
        first = slack.add_file("lease.pdf", lease_pdf(), user=ALICE)
        second = slack.add_file("annex.pdf", lease_pdf(), user=ALICE)
        ts = await harness.mention(QUESTION, files=[first, second, first])  # the same file twice, and one more
        await harness.settle()

        [answer] = harness.texts(ts)
        assert "Read lease.pdf, 2 pages." in answer
        assert "Did not read annex.pdf: this thread has 1 files already (FOLIO_THREAD_FILES)" in answer
        assert [file_id for file_id, _ in slack.downloads] == [first["id"]]


async def test_a_file_shared_by_a_person_of_another_organisation_is_not_read(harness: Harness) -> None:
    answer_from_the_file(harness.model)
    harness.slack.add_user("U0GUEST01", team=PARTNER)
    shared = harness.slack.add_file("lease.pdf", lease_pdf(), user="U0GUEST01", team=PARTNER)

    ts = await harness.mention(QUESTION, files=[shared])  # Alice asks about a file a guest shared
    await harness.settle()

    [answer] = harness.texts(ts)
    assert "Did not read lease.pdf: it was shared by a person of another organisation" in answer
    assert harness.slack.downloads == []


async def test_a_file_folio_cannot_read_says_why_in_the_thread(harness: Harness) -> None:
    answer_from_the_file(harness.model)
    shared = harness.slack.add_file("notes.pages", b"PK\x03\x04 an Apple Pages file", user=ALICE)
    broken = harness.slack.add_file("broken.pdf", b"%PDF-1.7 this is no PDF at all", user=ALICE)

    ts = await harness.mention(QUESTION, files=[shared, broken])
    await harness.settle()

    [answer] = harness.texts(ts)
    assert "Could not read notes.pages" in answer and "Could not read broken.pdf" in answer


async def test_without_files_read_slack_answers_a_sign_in_page_and_folio_says_so(
    app: App, slack: FakeSlack, fake_model: FakeResponses
) -> None:
    slack.scopes = tuple(scope for scope in slack.scopes if scope != "files:read")
    answer_from_the_file(fake_model)
    async with app() as harness:
        shared = slack.add_file("lease.pdf", lease_pdf(), user=ALICE)
        ts = await harness.mention(QUESTION, files=[shared])
        await harness.settle()

        [answer] = harness.texts(ts)
        assert "Could not fetch lease.pdf from Slack (missing_scope)" in answer and "files:read" in answer


async def test_a_forged_download_address_is_never_fetched(harness: Harness) -> None:
    answer_from_the_file(harness.model)
    shared = harness.slack.add_file("lease.pdf", lease_pdf(), user=ALICE)
    harness.slack.files[shared["id"]]["url_private_download"] = "http://169.254.169.254/latest/meta-data/"

    ts = await harness.mention(QUESTION, files=[{**shared, "url_private": "http://169.254.169.254/"}])
    await harness.settle()

    assert "Could not fetch lease.pdf from Slack (Slack gave no download address of its own)" in harness.texts(ts)[0]


@pytest.mark.parametrize(
    ("given", "taken", "kept"),
    [
        ("../../etc/passwd", set(), "passwd"),
        ("..\\..\\windows\\win.ini", set(), "win.ini"),
        ("report\x00.pdf", set(), "report.pdf"),
        ("~$lock.docx", set(), "lock.docx"),
        ("", set(), "file"),
        ("contract.pdf", {"contract.pdf"}, "contract (2).pdf"),
        ("Contract.PDF", {"contract.pdf", "Contract (2).PDF"}, "Contract (3).PDF"),
        ("a" * 300 + ".xlsx", set(), "a" * 115 + ".xlsx"),
    ],
)
def test_a_shared_files_name_is_kept_safe_and_apart(given: str, taken: set[str], kept: str) -> None:
    assert safe_name(given, taken) == kept


async def test_a_sweep_removes_thread_files_past_their_days_and_nothing_else(harness: Harness) -> None:
    answer_from_the_file(harness.model)
    shared = harness.slack.add_file("lease.pdf", lease_pdf(), user=ALICE)
    ts = await harness.mention(QUESTION, files=[shared])
    await harness.settle()
    index, container = harness.retriever.inner, files_container(harness.thread_key(ts))
    before = await index.containers()

    assert await sweep_thread_files(index, harness.folio.documents, days=30) == 0  # read today: kept
    assert await sweep_thread_files(index, harness.folio.documents, days=0) == 1  # as if 30 days had passed

    assert container in before and container not in await index.containers()
    assert (await index.containers())["benefits"] == before["benefits"]  # the organisation's documents stay


async def test_a_serving_folio_sweeps_files_past_their_days_without_a_new_share(harness: Harness) -> None:
    """A Folio left serving for weeks, with nobody sharing a file, still keeps none past its days (its hourly timer)."""
    answer_from_the_file(harness.model)
    shared = harness.slack.add_file("lease.pdf", lease_pdf(), user=ALICE)
    ts = await harness.mention(QUESTION, files=[shared])
    await harness.settle()
    index, container = harness.retriever.inner, files_container(harness.thread_key(ts))
    assert container in await index.containers()

    async with sweeping_every(index, harness.folio.documents, days=0, seconds=0.05):  # as if 30 days had passed
        for _ in range(100):
            if container not in await index.containers():
                break
            await asyncio.sleep(0.05)

    assert container not in await index.containers()


def test_each_thread_has_a_container_of_its_own_no_policy_can_name() -> None:
    one = files_container(ThreadKey(team=TEAM, channel=CHANNEL, thread_ts="1.1"))
    other = files_container(ThreadKey(team=TEAM, channel=CHANNEL, thread_ts="1.2"))
    assert one != other and one.startswith("thread-") and CHANNEL not in one


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed (libreoffice-writer-nogui)")
async def test_a_word_document_shared_in_a_channel_thread_is_cited_at_its_page(
    harness: Harness, tmp_path: Path
) -> None:
    harness.model.script(tools(search("parking permit costs euros month")), reply("45 euros a month [S1]."))
    data = made_files.docx(tmp_path / "report.docx").read_bytes()
    shared = harness.slack.add_file("report.docx", data, user=ALICE)

    ts = await harness.mention("How much is the parking permit?", files=[shared])
    await harness.settle()

    [answer] = harness.texts(ts)
    assert "Read report.docx, 2 pages." in answer and "report.docx" in answer and "page=2" in answer


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ocrmypdf") is None, reason="OCRmyPDF is not installed (ocrmypdf tesseract-ocr)")
async def test_a_screenshot_is_read_through_ocr_and_cited(harness: Harness, tmp_path: Path) -> None:
    harness.model.script(tools(search("Bramblewood Supplies invoice due")), reply("On 15 January [S1]."))
    [picture] = made_files.picture_pages([(made_files.PICTURE_FACT, *made_files.FILLER)])
    picture.save(tmp_path / "screenshot.png")  # no resolution, as screenshots are saved
    shared = harness.slack.add_file(
        "Screenshot 2026-12-02.png", (tmp_path / "screenshot.png").read_bytes(), user=ALICE, mimetype="image/png"
    )

    ts = await harness.message("When is the Bramblewood invoice due?", channel=DM, channel_type="im", files=[shared])
    await harness.settle()

    [answer] = harness.texts(ts, channel=DM)
    assert "Read Screenshot 2026-12-02.png, 1 page." in answer and "On 15 January" in answer


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed (libreoffice-calc-nogui)")
async def test_a_spreadsheet_shared_in_a_thread_is_answered_from_its_rows(harness: Harness, tmp_path: Path) -> None:
    harness.model.script(tools(search("Imogen Thwaite desk")), reply("Desk 4.17 [S1]."))
    data = made_files.xlsx(tmp_path / "orders.xlsx").read_bytes()
    shared = harness.slack.add_file("orders.xlsx", data, user=ALICE)

    ts = await harness.mention("Which desk is Imogen Thwaite at?", files=[shared])
    await harness.settle()

    [answer] = harness.texts(ts)
    assert "Read orders.xlsx." in answer and "Desk 4.17" in answer
    assert "orders.xlsx" in answer.split("Desk 4.17", 1)[1]  # cited under the answer
