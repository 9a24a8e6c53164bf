"""What a turn is asked: `TurnRequest`, the same value whichever surface (Slack, the terminal, an eval) asks it; and
`TurnScope`, what one turn searches (resolved once per turn: bot.turns.scope)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.models import Profile, Scope, Tag
from bot.store import ThreadKey


@dataclass(frozen=True)
class TurnScope:
    """The scope of one turn, and why when the asker rather than the channel decided it (said in the footer)."""

    scope: Scope
    basis: str | None = None

    def to_json(self) -> dict[str, object]:
        """The scope as plain JSON (in a request's durable record)."""
        return {"scope": self.scope.model_dump(mode="json"), "basis": self.basis}

    @classmethod
    def from_json(cls, data: Any) -> TurnScope:
        """The scope `to_json` wrote (validated again, as every Scope is)."""
        basis = data["basis"]
        return cls(Scope.model_validate(data["scope"]), basis if isinstance(basis, str) else None)


@dataclass(frozen=True, kw_only=True)
class SharedFile:
    """A file shared with a question, as the event names it: only its id is trusted (the surface asks its service
    for the file itself), the name only says which one it was when it cannot be fetched."""

    id: str
    name: str


@dataclass(frozen=True, kw_only=True)
class TurnRequest:
    """A question to answer in a thread. `tags` and `root_is_ours` matter only when the thread is new."""

    thread: ThreadKey
    question: str
    user: str
    is_dm: bool = False
    tags: tuple[Tag, ...] = ()
    profile: Profile | None = None
    root_is_ours: bool = False  # the thread root is Folio's `/ask` restatement, deleted with the conversation
    delivery: str | None = None  # the delivery's identity (Slack's event or trigger): the dedupe key end to end
    asker_team: str | None = None  # the asker's workspace as the event named it (Slack's `user_team`), if it did
    files: tuple[SharedFile, ...] = ()  # files shared with the question (Slack: the message's `files`)
    surface: str = "slack"  # where the question came from: slack, mcp (an agent), terminal; counted in usage
    private_from: str | None = None  # a private answer: the channel whose scope the asker's own access widens
    trigger: str | None = None  # a watch note's re-answer: the change that triggered it, as Folio kept it (trace)
    # The scope `open_turn` resolved before the thread existed (an `/ask`, restated publicly with it): the turn
    # searches exactly that and resolves it no more. Set only by the surface that ran `open_turn` for this request.
    opened: TurnScope | None = None

    def to_json(self) -> str:
        """The request as plain JSON (for a durable record of an accepted delivery)."""
        thread = self.thread
        return json.dumps(
            {
                "thread": [thread.team, thread.channel, thread.thread_ts],
                "question": self.question,
                "user": self.user,
                "is_dm": self.is_dm,
                "tags": [str(tag) for tag in self.tags],
                "profile": self.profile,
                "root_is_ours": self.root_is_ours,
                "delivery": self.delivery,
                "asker_team": self.asker_team,
                "surface": self.surface,
                **({"files": [[file.id, file.name] for file in self.files]} if self.files else {}),
                "private_from": self.private_from,
                **({"trigger": self.trigger} if self.trigger else {}),
                **({"opened": self.opened.to_json()} if self.opened is not None else {}),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> TurnRequest:
        """The request `to_json` wrote."""
        data = json.loads(text)
        team, channel, thread_ts = data["thread"]
        return cls(
            thread=ThreadKey(team=team, channel=channel, thread_ts=thread_ts),
            question=data["question"],
            user=data["user"],
            is_dm=data["is_dm"],
            tags=tuple(Tag.parse(tag) for tag in data["tags"]),
            profile=data["profile"],
            root_is_ours=data["root_is_ours"],
            delivery=data["delivery"],
            asker_team=data.get("asker_team"),
            surface=data.get("surface", "slack"),
            files=tuple(SharedFile(id=str(id_), name=str(name)) for id_, name in data.get("files", ())),
            private_from=data.get("private_from"),
            trigger=data.get("trigger"),
            opened=TurnScope.from_json(data["opened"]) if "opened" in data else None,
        )
