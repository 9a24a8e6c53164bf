""" "Why this answer?": every turn keeps a trace; no answer message offers it (Slack shows a message alike to
everyone), an admin opens it from their own Home tab (or with `folio trace`), anyone else is refused, forged payloads
included, and an admin removed later loses the entry."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.cli import main
from bot.slack.render import ACTION_DELETE, ACTION_MORE
from bot.store import ThreadKey
from tests.fakes.openai_responses import FakeResponses, Request, Step, reply, search, tools
from tests.fakes.slack_api import TEAM, FakeSlack
from tests.slack.conftest import running_app
from tests.slack.harness import ADMIN, ALICE, BOB, CHANNEL, POLICY, Clock, Harness, user_ts

ADMINS_POLICY = {**POLICY, "admins": [ADMIN]}
PRIVATE = "C0PAYROLL1"  # a private channel (Slack gives new ones C ids: only conversations.info tells)
PRIVATE_POLICY = {**ADMINS_POLICY, "channels": {**POLICY["channels"], PRIVATE: {"container": "benefits"}}}
SECRET = "Does the payroll freeze cover balance billing?"  # asked in the private channel
HOME_HIDDEN = "_Question hidden: you are not in this conversation._"
HOME_UNKNOWN = "_Question hidden: Slack could not say whether you can see this conversation._"
WHY_HIDDEN = (
    "_Question and answer hidden: you are not in this conversation, and it is not a public channel of the "
    "workspace. Its searches, sources and citations are shown._"
)
WHY_UNKNOWN = (
    "_Question and answer hidden: Slack could not say whether you can see this conversation (try again in a "
    "minute). Its searches, sources and citations are shown._"
)
REFUSED = "Only Folio's admins can see why an answer said what it said (`admins:` in channels.yaml)."
HOW_TO = (
    "*Ask Folio about your documents.* Mention @Folio in a channel it is in, send it a direct message, or use "
    "`/ask [key:value ...] question` (`/ask help` shows how). Every claim links to the page it comes from; reply in "
    "the thread to follow up."
)


def answering(request: Request) -> Step:
    """A search, then an answer citing a source it was shown (S1) and one it was not (S9)."""
    if request.depth == 0:
        return tools(search("balance billing protection"))
    return reply("You are protected [S1], and also [S9].")


async def choose_why(app: Harness, *, user: str, thread_ts: str, message_ts: str, turn: int = 0) -> None:
    """The overflow menu's "Why this answer?" as Slack posts it (anyone can post this payload)."""
    payload = {
        "type": "block_actions",
        "user": {"id": user, "team_id": TEAM},
        "api_app_id": "A0FOLIO01",
        "token": "legacy",
        "trigger_id": f"tr.why.{time.monotonic_ns()}",
        "team": {"id": TEAM, "domain": "folio-test"},
        "container": {"type": "message", "message_ts": message_ts, "channel_id": CHANNEL, "thread_ts": thread_ts},
        "channel": {"id": CHANNEL, "name": "benefits"},
        "message": {"type": "message", "ts": message_ts, "thread_ts": thread_ts, "bot_id": "BFOLIO01", "text": ""},
        "response_url": app.slack.response_url("action"),
        "actions": [
            {
                "action_id": ACTION_MORE,
                "block_id": "b1",
                "type": "overflow",
                "action_ts": str(time.time()),
                "selected_option": {
                    "text": {"type": "plain_text", "text": "Why this answer? (admins)"},
                    "value": json.dumps({"turn": turn, "do": "why"}),
                },
            }
        ],
    }
    await app.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    await app.settle()


def offers_why(blocks: object) -> list[str]:
    """Every trace of "Why this answer?" in a message's or a view's blocks: its words or one of its action ids."""
    text = json.dumps(blocks)
    return [each for each in ("Why this answer", ACTION_MORE, "folio_why") if each in text]


@pytest.mark.parametrize("streaming", [False, True], ids=["posted", "streamed"])
async def test_no_answer_offers_why_this_answer_to_anyone(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, streaming: bool
) -> None:
    """Slack shows a message alike to everyone in the channel: an admins' item there is seen by all."""
    fake_model.respond_with(answering)
    async with running_app(
        slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY, streaming=streaming
    ) as app:
        ts = await app.mention("What protection is there against balance billing?")
        await app.settle()
        answers = [message for message in slack.thread(CHANNEL, ts) if message.blocks]

    assert answers and "Delete" in json.dumps(answers[-1].blocks)  # the answer's own buttons are there
    assert [offers_why(view.blocks) for message in answers for view in slack.views_of(CHANNEL, message.ts)] == [
        [] for message in answers for _ in slack.views_of(CHANNEL, message.ts)
    ]


async def open_home(app: Harness, user: str) -> dict[str, Any]:
    """The person opens Folio's Home tab (Slack sends app_home_opened, tab `home`); what it shows them then."""
    await app.event(
        {"type": "app_home_opened", "user": user, "channel": "D" + user[1:], "tab": "home", "ts": user_ts()}
    )
    await app.settle()
    return app.slack.homes[user]


async def click_home(app: Harness, *, user: str, action_id: str, value: str, view: dict[str, Any]) -> None:
    """A button of a Home tab as Slack posts it (a view container, no channel nor message): anyone can post it."""
    payload = {
        "type": "block_actions",
        "user": {"id": user, "team_id": TEAM},
        "api_app_id": "A0FOLIO01",
        "token": "legacy",
        "container": {"type": "view", "view_id": view.get("id", "VH0000001")},
        "trigger_id": f"tr.{time.time_ns()}",
        "team": {"id": TEAM, "domain": "folio-test"},
        "is_enterprise_install": False,
        "view": view,
        "actions": [
            {
                "action_id": action_id,
                "block_id": "why_0",
                "type": "button",
                "value": value,
                "text": {"type": "plain_text", "text": "Why?"},
                "action_ts": str(time.time()),
            }
        ],
    }
    await app.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    await app.settle()


async def submit_link(app: Harness, text: str, *, user: str) -> dict[str, Any]:
    """The link modal sent (anyone can post this too); what Folio answers in the ack."""
    form = {"type": "modal", "callback_id": "folio_why_link_form", "title": {"type": "plain_text", "text": "x"}}
    values = {"why_link": {"link": {"type": "plain_text_input", "value": text}}}
    assert await app.submit(form, values, user=user) == 200
    return json.loads(app.responses[-1][1] or "{}")


def buttons(view: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(action_id, value, the line beside it) of every button of a view."""
    found = []
    for block in view["blocks"]:
        for element in [block.get("accessory") or {}, *block.get("elements", [])]:
            if element.get("type") == "button":
                found.append((element["action_id"], element["value"], (block.get("text") or {}).get("text", "")))
    return found


def shown(view: dict[str, Any]) -> str:
    return "\n".join(block["text"]["text"] for block in view["blocks"] if "text" in block)


def link(ts: str, *, reply: str | None = None, channel: str = CHANNEL) -> str:
    """Slack's Copy link: a reply's names its thread."""
    if reply is None:
        return f"https://folio-test.slack.com/archives/{channel}/p{ts.replace('.', '')}"
    return f"https://folio-test.slack.com/archives/{channel}/p{reply.replace('.', '')}?thread_ts={ts}&cid={channel}"


async def test_an_admins_home_tab_lists_the_latest_answers_and_opens_their_trace(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_model.respond_with(answering)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY, prefix="folio") as app:
        first = await app.mention("What protection is there against balance billing?")
        await app.settle()
        second = await app.mention("Is balance billing allowed?", user=BOB)
        await app.settle()
        await app.message("Balance billing?", channel="D0ALICE001", channel_type="im")  # a DM: never listed
        await app.settle()
        home = await open_home(app, ADMIN)
        listed = [
            (action, json.loads(value), line) for action, value, line in buttons(home) if action != "folio_why_link"
        ]
        await click_home(app, user=ADMIN, action_id=listed[1][0], value=json.dumps(listed[1][1]), view=home)

    assert ("folio_why_link", "link", "") in buttons(home) and "Why this answer?" in json.dumps(home)
    newest = [(value["channel"], value["thread_ts"]) for _, value, _ in listed[:2]]
    assert newest == [(CHANNEL, second), (CHANNEL, first)]  # the DM, asked last, is not listed (other tests' answers
    # in the shared "folio" keyspace are older)
    assert f"<#{CHANNEL}> · <@{BOB}> · <!date^" in listed[0][2] and " · answered" in listed[0][2]
    assert listed[0][2].endswith("\n> Is balance billing allowed?")
    assert listed[1][2].endswith("\n> What protection is there against balance billing?")
    [view] = slack.modals
    assert view["title"]["text"] == "Why this answer?"
    text = shown(view)
    assert text.startswith("*Turn 1*\nturn at ") and f"by {ALICE} in {CHANNEL}: answered" in text
    assert "- search: Searching: balance billing protection" in text
    assert "S1 " in text and ".pdf p. " in text and " score " in text and "[benefits]" in text
    assert "removed citations: [S9]: named no source the model was shown" in text
    assert "tokens 120 in (0 cached) / 30 out" in text
    assert "question: What protection is there against balance billing?" in text  # the channel saw it anyway

    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("FOLIO_SAMPLE_CORPUS", "false")
    assert await asyncio.to_thread(main, ["trace", link(first)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("== turn 1\n") and "- search: Searching: balance billing protection" in printed
    assert "named no source the model was shown" in printed


async def test_an_admin_opens_the_trace_of_an_answers_link_in_their_workspace_only(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY) as app:
        ts = await app.mention("What protection is there against balance billing?")
        await app.settle()
        [answer] = slack.thread(CHANNEL, ts)
        elsewhere = ThreadKey(team="T0OTHER01", channel="C0ELSEWHR1", thread_ts="1700000999.000100")
        [kept] = await app.folio.ledger.traces.all(app.thread_key(ts))
        await app.folio.ledger.traces.add(elsewhere, kept)  # the same Redis serving another workspace
        home = await open_home(app, ADMIN)
        await click_home(app, user=ADMIN, action_id="folio_why_link", value="link", view=home)
        by_reply_link = await submit_link(app, link(ts, reply=answer.ts), user=ADMIN)
        by_ts = await submit_link(app, f"  {ts} ", user=ADMIN)
        not_a_link = await submit_link(app, "yesterday's thread", user=ADMIN)
        no_trace = await submit_link(app, link("1700000555.000100"), user=ADMIN)
        other_workspace = await submit_link(app, link(elsewhere.thread_ts, channel=elsewhere.channel), user=ADMIN)
        other_by_ts = await submit_link(app, elsewhere.thread_ts, user=ADMIN)

    [asked] = slack.modals
    assert asked["callback_id"] == "folio_why_link_form" and asked["submit"]["text"] == "Show"
    assert [block["block_id"] for block in asked["blocks"]] == ["why_link"]
    for answered in (by_reply_link, by_ts):
        assert answered["response_action"] == "update" and answered["view"]["title"]["text"] == "Why this answer?"
        text = shown(answered["view"])
        assert "- search: Searching: balance billing protection" in text and " score " in text
        assert "removed citations: [S9]: named no source the model was shown" in text
    assert not_a_link == {
        "response_action": "errors",
        "errors": {"why_link": "This is neither a Slack message link nor a thread ts such as 1700000000.123456."},
    }
    gone = {
        "response_action": "errors",
        "errors": {
            "why_link": "No trace is kept of that thread in this workspace: traces last 30 days, with FOLIO_TRACES on."
        },
    }
    assert no_trace == gone and other_workspace == gone and other_by_ts == gone


async def test_a_non_admins_home_tab_holds_no_trace_entry_and_their_forged_payloads_are_refused(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY) as app:
        ts = await app.mention("What protection is there against balance billing?")
        await app.settle()
        [answer] = slack.thread(CHANNEL, ts)
        home = await open_home(app, BOB)
        admins_home = await open_home(app, ADMIN)  # what Bob forges his clicks from
        thread = json.dumps({"channel": CHANNEL, "thread_ts": ts})
        await click_home(app, user=BOB, action_id="folio_why_thread", value=thread, view=admins_home)
        await click_home(app, user=BOB, action_id="folio_why_link", value="link", view=admins_home)
        submitted = await submit_link(app, link(ts), user=BOB)
        await choose_why(app, user=BOB, thread_ts=ts, message_ts=answer.ts)  # an old answer's menu item

    assert home == {**home, "type": "home", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": HOW_TO}}]}
    assert offers_why(home["blocks"]) == [] and offers_why(slack.homes[BOB]["blocks"]) == []
    assert [shown(view) for view in slack.modals] == [REFUSED, REFUSED]
    assert submitted == {
        "response_action": "update",
        "view": {
            "type": "modal",
            "title": {"type": "plain_text", "text": "Why this answer?"},
            "close": {"type": "plain_text", "text": "Close"},
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": REFUSED}}],
        },
    }
    assert app.ephemeral(BOB) == [REFUSED]
    assert [call["user_id"] for call in slack.calls_of("views.publish")] == [BOB, ADMIN, BOB, BOB]


async def test_an_admin_removed_from_the_user_group_loses_the_entry_and_is_refused(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    slack.add_usergroup("S0ADMINS01", "it-admins", [BOB])
    async with running_app(
        slack, fake_model, redis_url, corpus_index, policy={**POLICY, "admins": ["it-admins"]}
    ) as app:
        ts = await app.mention("Balance billing?")
        await app.settle()
        before = await open_home(app, BOB)
        [(action, value, _)] = [each for each in buttons(before) if each[0] == "folio_why_thread"]
        await click_home(app, user=BOB, action_id=action, value=value, view=before)
        slack.usergroups["S0ADMINS01"].users.remove(BOB)
        await app.event(
            {
                "type": "subteam_members_changed",
                "subteam_id": "S0ADMINS01",
                "team_id": TEAM,
                "added_users": [],
                "removed_users": [BOB],
                "ts": user_ts(),
            }
        )
        await app.settle()
        await click_home(app, user=BOB, action_id=action, value=value, view=before)  # a tab not published again yet
        after = dict(slack.homes[BOB])
        reopened = await open_home(app, BOB)

    assert "Why this answer?" in json.dumps(before) and json.loads(value)["thread_ts"] == ts
    traced, refused = slack.modals
    assert "- search: Searching: balance billing protection" in shown(traced) and shown(refused) == REFUSED
    assert offers_why(after["blocks"]) == [] and offers_why(reopened["blocks"]) == []


async def test_a_direct_message_trace_keeps_the_searches_but_not_the_words(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY) as app:
        ts = await app.message("Balance billing?", channel="D0ALICE001", channel_type="im")
        await app.settle()
        traces = await app.folio.ledger.traces.all(app.thread_key(ts, channel="D0ALICE001"))

    [trace] = [json.loads(text) for text in traces]
    assert trace["question"] is None and trace["answer"] is None
    assert any(step["title"] == "Searching: balance billing protection" for step in trace["steps"])


async def test_deleting_the_conversation_deletes_its_traces(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY) as app:
        ts = await app.mention("Balance billing?")
        await app.settle()
        thread, [answer] = app.thread_key(ts), slack.thread(CHANNEL, ts)
        kept = await app.folio.ledger.traces.all(thread)
        listed = await open_home(app, ADMIN)
        await app.click(ACTION_DELETE, thread_ts=ts, message_ts=answer.ts)
        await app.settle()
        after = await open_home(app, ADMIN)

        assert len(kept) == 1 and await app.folio.ledger.traces.all(thread) == []
    assert [each[0] for each in buttons(listed)] == ["folio_why_link", "folio_why_thread"]
    assert [each[0] for each in buttons(after)] == ["folio_why_link"]
    assert "No answer in a channel has a trace yet." in shown(after)


async def test_an_old_answers_menu_item_still_opens_the_trace_for_an_admin_and_refuses_anyone_else(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    slack.add_usergroup("S0ADMINS01", "it-admins", [BOB])
    async with running_app(
        slack, fake_model, redis_url, corpus_index, policy={**POLICY, "admins": ["it-admins"]}
    ) as app:
        ts = await app.mention("Balance billing?")
        await app.settle()
        [answer] = slack.thread(CHANNEL, ts)
        await choose_why(app, user=ALICE, thread_ts=ts, message_ts=answer.ts)  # answers posted before carry it
        await choose_why(app, user=BOB, thread_ts=ts, message_ts=answer.ts)

    [view] = slack.modals
    assert "- search: Searching: balance billing protection" in shown(view)
    assert app.ephemeral(ALICE) == [REFUSED] and app.ephemeral(BOB) == []


async def test_with_traces_off_an_admins_home_tab_says_so_and_offers_nothing_to_open(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path
) -> None:
    fake_model.respond_with(answering)
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=ADMINS_POLICY, folio_traces=False) as app:
        await app.mention("Balance billing?")
        await app.settle()
        home = await open_home(app, ADMIN)

    assert buttons(home) == []
    assert "\nTraces are off (FOLIO_TRACES=false): answers keep no trace to show.\n" in shown(home)  # flagged after


def thread_value(channel: str, ts: str) -> str:
    """A "Why?" button's value."""
    return json.dumps({"channel": channel, "thread_ts": ts})


def lines_of(home: dict[str, Any]) -> dict[str, str]:
    """The Home tab's listed answers: thread ts -> the line beside its "Why?"."""
    return {json.loads(value)["thread_ts"]: line for action, value, line in buttons(home) if action != "folio_why_link"}


def governance_shown(text: str) -> bool:
    """A modal's searches, sources, scores, removed citations and tokens: shown whoever asked where."""
    return all(
        each in text
        for each in (
            "- search: Searching: balance billing protection",
            "S1 ",
            ".pdf p. ",
            " score ",
            "[benefits]",
            "removed citations: [S9]: named no source the model was shown",
            "tokens 120 in (0 cached) / 30 out",
        )
    )


async def test_an_admin_sees_a_private_channels_words_only_as_a_member_and_its_searches_always(
    slack: FakeSlack,
    fake_model: FakeResponses,
    redis_url: str,
    corpus_index: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The old menu reached only people who saw the message; the Home tab reaches every channel's answers."""
    fake_model.respond_with(answering)
    slack.private_channels.add(PRIVATE)
    slack.channel_members[PRIVATE] = [ALICE]  # the public channel has no member list to ask: it needs none
    clock = Clock()
    async with running_app(
        slack, fake_model, redis_url, corpus_index, policy=PRIVATE_POLICY, clock=clock, prefix="folio"
    ) as app:
        public = await app.mention("Is balance billing allowed?", user=BOB)
        await app.settle()
        private = await app.mention(SECRET, channel=PRIVATE)
        await app.settle()
        before = await open_home(app, ADMIN)
        await click_home(
            app, user=ADMIN, action_id="folio_why_thread", value=thread_value(PRIVATE, private), view=before
        )
        await click_home(
            app, user=ADMIN, action_id="folio_why_thread", value=thread_value(CHANNEL, public), view=before
        )
        by_link = await submit_link(app, link(private, channel=PRIVATE), user=ADMIN)
        slack.channel_members[PRIVATE].append(ADMIN)
        clock.now += 301  # past FOLIO_ACCESS_TTL: "not a member" is asked of Slack again
        after = await open_home(app, ADMIN)
        await click_home(
            app, user=ADMIN, action_id="folio_why_thread", value=thread_value(PRIVATE, private), view=after
        )

    listed = lines_of(before)
    assert listed[private].startswith(f"<#{PRIVATE}> · <@{ALICE}> · ")
    assert listed[private].endswith(" · answered\n" + HOME_HIDDEN) and "payroll" not in json.dumps(before)
    assert listed[public].endswith("\n> Is balance billing allowed?")  # a public channel: anyone there could read it
    hidden, shown_public, member = slack.modals
    for view in (hidden, by_link["view"]):
        text = shown(view)
        assert text.startswith("*Turn 1*\n" + WHY_HIDDEN + "\nturn at ") and governance_shown(text)
        assert "question:" not in text and "answer:" not in text
        assert "payroll" not in json.dumps(view) and "You are protected" not in json.dumps(view)
    public_text = shown(shown_public)
    assert governance_shown(public_text) and "question: Is balance billing allowed?" in public_text
    assert "answer: You are protected" in public_text
    assert lines_of(after)[private].endswith("\n> " + SECRET)
    assert f"question: {SECRET}" in shown(member) and "answer: You are protected" in shown(member)
    assert WHY_HIDDEN not in shown(member) and governance_shown(shown(member))

    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("FOLIO_SAMPLE_CORPUS", "false")
    assert await asyncio.to_thread(main, ["trace", link(private, channel=PRIVATE)]) == 0
    assert f"question: {SECRET}" in capsys.readouterr().out  # the operator's terminal is unchanged


@pytest.mark.parametrize(
    "broken",
    [
        lambda slack: slack.fail("conversations.members", times=20),
        lambda slack: slack.fail("conversations.info", times=20),
        lambda slack: slack.hostile.update(
            {"conversations.members": lambda params, answer: {**answer, "members": ALICE}}
        ),
    ],
    ids=["members fails", "info fails", "members not a list"],
)
async def test_when_slack_cannot_say_whether_an_admin_sees_a_conversation_its_words_are_hidden_and_the_modal_says_so(
    slack: FakeSlack, fake_model: FakeResponses, redis_url: str, corpus_index: Path, broken: Any
) -> None:
    fake_model.respond_with(answering)
    slack.private_channels.add(PRIVATE)
    slack.channel_members[PRIVATE] = [ALICE, ADMIN]  # a member: only Slack's failure hides the words
    async with running_app(slack, fake_model, redis_url, corpus_index, policy=PRIVATE_POLICY) as app:
        private = await app.mention(SECRET, channel=PRIVATE)
        await app.settle()
        broken(slack)
        home = await open_home(app, ADMIN)
        await click_home(app, user=ADMIN, action_id="folio_why_thread", value=thread_value(PRIVATE, private), view=home)

    assert lines_of(home)[private].endswith(" · answered\n" + HOME_UNKNOWN) and "payroll" not in json.dumps(home)
    [view] = slack.modals
    text = shown(view)
    assert text.startswith("*Turn 1*\n" + WHY_UNKNOWN + "\nturn at ") and governance_shown(text)
    assert "question:" not in text and "payroll" not in json.dumps(view) and "You are protected" not in text
