"""chat.postMessage's pace per channel (bot.app.slack_calls.ChannelPacer): Slack's documented figures by default,
a slot reserved per post, and channels forgotten once idle."""

from __future__ import annotations

from bot.app.slack_calls import ChannelPacer


def test_the_default_pace_is_a_burst_of_three_then_one_a_second_per_channel() -> None:
    pacer = ChannelPacer()

    waits = [pacer.reserve("C1", 100.0) for _ in range(6)]

    assert waits == [0.0, 0.0, 0.0, 1.0, 2.0, 3.0]
    assert pacer.reserve("C2", 100.0) == 0.0  # another channel has its own bucket
    assert pacer.reserve("C1", 104.0) == 0.0  # the queue has drained by then


def test_idle_channels_are_forgotten() -> None:
    pacer = ChannelPacer()
    for n in range(10_000):
        pacer.reserve(f"C{n}", 100.0)

    pacer.reserve("C-late", 110.0)  # every other bucket is full again by now

    assert pacer.channels() == 1
