"""The channel policy file: which documents each Slack channel (and DMs) may search.

    tag_keys: [department, year, doc_type]     # the only keys a filter may use
    channels:
      C0123ABCD:                               # a Slack channel ID
        container: finance                     # required, never chosen by the model or the user
        tags: [department:finance]             # optional default tags, /ask can narrow them
        external: allow                        # optional: answer here though the channel is shared with another
                                               # organisation (Slack Connect), people of it included
        daily_tokens: 200000                   # optional: this channel's daily token budget
    dm:                                        # optional: what direct messages may search
      container: handbook
    default:                                   # optional: channels not listed above
      container: handbook
    access:                                    # optional: what each person may search in DMs (replaces dm:)
      groups:                                  # Slack user group handle or ID -> containers
        finance-team: [finance]
      users:                                   # Slack user ID -> containers, added to their groups'
        U0CFO0001: [board]
      default: [handbook]                      # everyone; omit to give others nothing in DMs
    admins: [U0ADMIN01, it-admins]             # optional: user IDs or user groups who see "Why this answer?"
    prompts:                                   # optional: suggested prompts in the assistant, per container
      finance:
        - {title: Payment terms, message: What are the payment terms with Acme?}

A channel that is not listed, with no `default`, is not connected to any documents. So are DMs without `dm` or
`access` (which `bot.access` reads).
Errors name the file and line, e.g. `channels.yaml line 7: channels.C0123ABCD.container: field required`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from bot import messages
from bot.errors import ConfigurationError, InvalidInput, NotConnected
from bot.models import TAG_KEY, Scope, Tag

_CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{2,}$")
_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,}$")
_GROUP_ID = re.compile(r"^S[A-Z0-9]{2,}$")
_GROUP_HANDLE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")  # Slack keeps handles lower-case, without spaces or @
_SCALARS = yaml.constructor.SafeConstructor()  # turns one scalar node into str / int / bool / None


class ChannelRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    container: str
    tags: tuple[Tag, ...] = ()
    external: Literal["allow", "refuse"] = "refuse"  # Slack Connect: see bot.turns.boundary
    daily_tokens: int | None = Field(None, ge=1)  # the channel's daily token budget (else the setting's)
    watch: bool = True  # threads here are told when a document their answer cited changes or goes

    @field_validator("container")
    @classmethod
    def _container(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("container must not be empty")
        return value.strip()

    @field_validator("tags", mode="before")
    @classmethod
    def _parse_tags(cls, value: Any) -> Any:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise ValueError("tags must be a list such as [department:finance, year:2025]")
        return tuple(Tag.parse(item) if isinstance(item, str) else item for item in value)

    def scope(self) -> Scope:
        return Scope(containers=(self.container,), tags=self.tags)


def _containers(value: Any) -> tuple[str, ...]:
    """A non-empty list of container names, as written (`[finance, legal]`)."""
    if not isinstance(value, list | tuple) or not value:
        raise ValueError("expected a list of one or more containers, such as [finance, legal]")
    names = []
    for name in value:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{name!r} is not a container name")
        names.append(name.strip())
    return tuple(dict.fromkeys(names))


Containers = Annotated[tuple[str, ...], BeforeValidator(_containers)]


def _group_key(key: str) -> str:
    if _GROUP_ID.match(key) or _GROUP_HANDLE.match(key):
        return key
    raise ValueError(f"{key!r} is not a Slack user group handle (finance-team) or ID (S0123ABCD)")


def is_user_id(text: str) -> bool:
    """Whether `text` has the form of a Slack user ID (U0123ABCD, or W0123ABCD on Enterprise Grid)."""
    return bool(_USER_ID.match(text))


def _user_key(key: str) -> str:
    if is_user_id(key):
        return key
    raise ValueError(f"{key!r} is not a Slack user ID (it looks like U0123ABCD)")


def _admin_key(key: str) -> str:
    return key if is_user_id(key) else _group_key(key)


class AccessRules(BaseModel):
    """Who may search what in direct messages and the assistant: a person's containers are the union of their
    groups', their own and the default. Group membership comes from Slack (see `bot.access.membership`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    groups: dict[Annotated[str, AfterValidator(_group_key)], Containers] = Field(default_factory=dict)
    users: dict[Annotated[str, AfterValidator(_user_key)], Containers] = Field(default_factory=dict)
    default: Containers = ()


class Prompt(BaseModel):
    """One suggested prompt in Slack's assistant: the button's title and the message it sends."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: str = Field(min_length=1)
    message: str = Field(min_length=1)


class ChannelPolicy(BaseModel):
    """The validated policy file. `scope_for(...)` is the only way a Scope gets its container."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tag_keys: tuple[str, ...] = ()
    channels: dict[str, ChannelRule] = Field(default_factory=dict)
    dm: ChannelRule | None = None
    default: ChannelRule | None = None
    access: AccessRules | None = None
    prompts: dict[str, tuple[Prompt, ...]] = Field(default_factory=dict)
    admins: tuple[Annotated[str, AfterValidator(_admin_key)], ...] = ()  # user IDs or user groups: see turn traces

    @field_validator("tag_keys")
    @classmethod
    def _keys(cls, keys: tuple[str, ...]) -> tuple[str, ...]:
        for key in keys:
            if not TAG_KEY.match(key):
                raise ValueError(f"tag key {key!r} must be lower-case letters, digits or _ (for example department)")
        return keys

    @field_validator("channels")
    @classmethod
    def _channel_ids(cls, channels: dict[str, ChannelRule]) -> dict[str, ChannelRule]:
        for channel_id in channels:
            if not _CHANNEL_ID.match(channel_id):
                raise ValueError(f"{channel_id!r} is not a Slack channel ID (it looks like C0123ABCD)")
        return channels

    @field_validator("access")
    @classmethod
    def _one_dm_rule(cls, access: AccessRules | None, info: ValidationInfo) -> AccessRules | None:
        if access is not None and info.data.get("dm") is not None:
            raise ValueError("access decides what each person searches in direct messages; remove the dm entry")
        return access

    @model_validator(mode="after")
    def _known_tag_keys(self) -> ChannelPolicy:
        rules = [("dm", self.dm), ("default", self.default), *(("channels." + k, r) for k, r in self.channels.items())]
        for where, rule in rules:
            for tag in rule.tags if rule else ():
                if tag.key not in self.tag_keys:
                    raise ValueError(f"{where}: tag key {tag.key!r} is not listed in tag_keys {list(self.tag_keys)}")
        return self

    def rule_for(self, channel_id: str, *, is_dm: bool = False) -> ChannelRule:
        """The rule for a channel, or NotConnected saying how an admin connects it."""
        rule = self.dm if is_dm else self.channels.get(channel_id, self.default)
        if rule is None:
            raise NotConnected(messages.DM_NOT_CONNECTED if is_dm else messages.channel_not_connected(channel_id))
        return rule

    def scope_for(self, channel_id: str, *, is_dm: bool = False, tags: tuple[Tag, ...] = ()) -> Scope:
        """The channel's container and default tags, narrowed by `tags` (from /ask)."""
        rule = self.rule_for(channel_id, is_dm=is_dm)
        return narrow(rule.scope(), tags, allowed_keys=self.tag_keys)


def narrow(scope: Scope, tags: tuple[Tag, ...], *, allowed_keys: tuple[str, ...]) -> Scope:
    """Add filter tags to a scope without widening it.

    A key the scope already restricts can only be narrowed to values it allows; an unknown key is refused.
    """
    defaults = scope.tags_by_key()
    for tag in tags:
        if tag.key not in allowed_keys:
            raise InvalidInput(messages.unknown_filter(tag.key, allowed_keys))
        if tag.key in defaults and tag.value not in defaults[tag.key]:
            limits = [f"{tag.key}:{value}" for value in defaults[tag.key]]
            raise InvalidInput(messages.filter_outside_channel(str(tag), limits))
    if not tags:
        return scope
    narrowed_keys = {tag.key for tag in tags}
    kept = tuple(tag for tag in scope.tags if tag.key not in narrowed_keys)
    return Scope(containers=scope.containers, tags=kept + tuple(dict.fromkeys(tags)))


def load_policy(path: Path) -> ChannelPolicy:
    """Read and validate the channel policy file; every error names the file and the line."""
    if not path.exists():
        raise ConfigurationError(
            f"Channel policy file {path} does not exist. Copy channels.example.yaml to {path} "
            "or set FOLIO_CHANNELS_FILE to its path."
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # a folder, no permission, not text: one line, not a traceback
        why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise ConfigurationError(
            f"Channel policy file {path} cannot be read ({why or exc}). Point FOLIO_CHANNELS_FILE at a YAML file "
            "Folio may read (see channels.example.yaml)."
        ) from exc
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise ConfigurationError(_yaml_problem(path, exc)) from exc
    except Exception as exc:  # whatever else the parser raises is still the file's fault: file, line, what
        raise ConfigurationError(f"{path}: not valid YAML ({type(exc).__name__}: {str(exc)[:200]}).") from exc
    if node is None:
        return ChannelPolicy()
    lines: dict[tuple[str, ...], int] = {}
    data = _to_python(node, (), lines, path, _Aliases())
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path} line 1: expected a mapping with tag_keys, channels, dm, default and access")
    try:
        return ChannelPolicy.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(str(part) for part in error["loc"] if part != "[key]")  # a bad key: its own line
        line = _nearest_line(loc, lines)
        where = ".".join(loc) or "file"
        raise ConfigurationError(f"{path} line {line}: {where}: {error['msg']}") from exc


MAX_DEPTH = 50  # levels of nesting a policy may have (it needs about five): deeper, the parser would recurse away


class _Loader(yaml.SafeLoader):
    """The safe loader, refusing nesting past MAX_DEPTH with the line where it happens (unchecked, 3,000 levels of
    `[[[...]]]` in 6 KB raise RecursionError in the composer)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _Aliases:
    """Counts nodes built a second time (through YAML aliases), so nested aliases cannot expand a small file into
    billions of entries ("billion laughs"); a policy that reuses a list a few times stays far below the limit."""

    LIMIT = 10_000

    def __init__(self) -> None:
        self._seen: set[int] = set()
        self._repeats = 0

    def visit(self, node: yaml.Node, file: Path) -> None:
        if id(node) not in self._seen:
            self._seen.add(id(node))
            return
        self._repeats += 1
        if self._repeats > self.LIMIT:
            raise ConfigurationError(
                f"{file} line {node.start_mark.line + 1}: YAML aliases (*name) expand this file into more than "
                f"{self.LIMIT} repeated entries; write the lists out instead."
            )


def _yaml_problem(path: Path, exc: yaml.YAMLError) -> str:
    """One line for a YAML syntax error: the file, the line and what the parser found (its own text spans lines)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f" line {mark.line + 1}" if mark is not None else ""
    return f"{path}{where}: not valid YAML ({problem})."


def _to_python(
    node: yaml.Node, path: tuple[str, ...], lines: dict[tuple[str, ...], int], file: Path, aliases: _Aliases
) -> Any:
    """Build plain data from YAML nodes, recording each key's line and refusing duplicate keys."""
    aliases.visit(node, file)
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in result:
                raise ConfigurationError(
                    f"{file} line {key_node.start_mark.line + 1}: {'.'.join((*path, key))} appears twice; "
                    "keep one entry per key."
                )
            result[key] = _to_python(value_node, (*path, key), lines, file, aliases)
            lines[(*path, key)] = key_node.start_mark.line + 1
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, (*path, str(i)), lines, file, aliases) for i, item in enumerate(node.value)]
    try:
        return _SCALARS.construct_object(node)
    except (yaml.YAMLError, ValueError, KeyError) as exc:  # a tag the safe loader cannot build (!secret, !!int abc)
        where, tag = ".".join(path) or "file", node.tag.replace("tag:yaml.org,2002:", "!!")
        raise ConfigurationError(
            f"{file} line {node.start_mark.line + 1}: {where}: cannot read {node.value!r} as {tag}"
        ) from exc


def _nearest_line(loc: tuple[str, ...], lines: dict[tuple[str, ...], int]) -> int:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1


def read_yaml_file(path: Path, *, what: str) -> tuple[Any, dict[tuple[str, ...], int]]:
    """Another YAML file read the way the policy is (`what` names it in errors: "Sources file"): its data and the
    line of every key; a missing, unreadable or malformed file is a ConfigurationError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise ConfigurationError(f"{what} {path} cannot be read ({why or exc}).") from exc
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise ConfigurationError(_yaml_problem(path, exc)) from exc
    except Exception as exc:  # whatever else the parser raises is still the file's fault
        raise ConfigurationError(f"{path}: not valid YAML ({type(exc).__name__}: {str(exc)[:200]}).") from exc
    lines: dict[tuple[str, ...], int] = {}
    data = None if node is None else _to_python(node, (), lines, path, _Aliases())
    return data, lines


def validation_problem(path: Path, exc: ValidationError, lines: dict[tuple[str, ...], int]) -> str:
    """`path line N: where: what` for the first error pydantic found in data read by `read_yaml_file`."""
    error = exc.errors()[0]
    loc = tuple(str(part) for part in error["loc"] if part != "[key]")
    where = ".".join(loc) or "file"
    return f"{path} line {_nearest_line(loc, lines)}: {where}: {error['msg']}"
