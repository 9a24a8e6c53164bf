"""Hostile model output and over-long questions, as a Slack thread shows them (issue 9, item 7)."""

from __future__ import annotations

from tests.fakes.openai_responses import raw_call, reply, search, tools
from tests.slack.harness import Harness

QUESTION = "What protection is there against balance billing?"


async def test_links_the_model_writes_show_their_address_and_folios_posts_never_unfurl(harness: Harness) -> None:
    harness.model.script(
        tools(search("balance billing protection")),
        reply(
            "Protected [S1]. Sign in at [the benefits portal](https://evil.example/login) "
            "or <https://evil.example/x|the policy>."
        ),
    )

    ts = await harness.mention(QUESTION)
    await harness.settle()

    [answer] = harness.texts(ts)
    assert "the benefits portal (https://evil.example/login)" in answer
    assert "|the benefits portal>" not in answer and "<https://evil.example/x|" not in answer  # no label over a link
    assert "&lt;https://evil.example/x|the policy&gt;" in answer  # mrkdwn written by the model shows as text
    posts = harness.slack.calls_of("chat.postMessage")
    assert posts and all(post["unfurl_links"] is False and post["unfurl_media"] is False for post in posts)


async def test_citation_look_alikes_never_reach_the_thread(harness: Harness) -> None:
    looks_alike = "Protected [s1], also out of network ［S1］ and 【S9】, see [S1–S2]."
    harness.model.script(tools(search("balance billing protection")), reply(looks_alike), reply(looks_alike))

    ts = await harness.mention(QUESTION)
    await harness.settle()

    [answer] = harness.texts(ts)  # after the one correction round, S9 (never shown) is still cited: it is removed
    assert "S1" not in answer and "S9" not in answer and "S2" not in answer and "【" not in answer
    assert answer.startswith("Protected <https://docs.example/")


async def test_a_malformed_tool_call_is_answered_to_the_model_and_the_thread_gets_its_answer(harness: Harness) -> None:
    harness.model.script(
        tools(raw_call("search_documents", '{"query": ' + "[" * 100_000)),
        tools(search("balance billing protection")),
        reply("Protected [S1]."),
    )

    ts = await harness.mention(QUESTION)
    await harness.settle()

    assert harness.texts(ts)[0].startswith("Protected <https://docs.example/")


async def test_progress_shows_a_bounded_escaped_line_of_what_the_model_searches(harness: Harness) -> None:
    harness.slack.fail("assistant.threads.setStatus", "not_allowed_token_type")  # progress in a placeholder message
    query = "balance billing <!channel> <https://evil.example|click>\n" + "protection " * 60
    harness.model.script(tools(search(query)), reply("Protected [S1]."))

    await harness.mention(QUESTION)
    await harness.settle()

    [progress] = [c["text"] for c in harness.slack.calls_of("chat.update") if "Searching" in c["text"]]
    assert "<!channel>" not in progress and "&lt;!channel&gt;" in progress and "\n" not in progress
    assert len(progress) < 120 and progress.rstrip("_").endswith("…")


async def test_a_question_longer_than_the_cap_is_refused_with_a_clear_message(harness: Harness) -> None:
    long_question = "Please explain balance billing. " * 200  # 6,400 characters; the cap is 4,000

    ts = await harness.mention(long_question)
    status, body = await harness.command(long_question)
    await harness.settle()

    too_long = (
        "Your question is 6,399 characters long; I take questions of up to 4,000. Ask it more briefly, or in parts."
    )
    assert len(long_question.strip()) == 6399 and harness.texts(ts) == [too_long]
    assert status == 200 and body == ""  # the turn's first step refuses it, to the asker alone:
    assert harness.slack.calls_of("response_url") == [{"response_type": "ephemeral", "text": too_long}]
    assert harness.model.requests == [] and len(harness.slack.calls_of("chat.postMessage")) == 1  # nothing public
