"""The sources file: where Folio's documents live, declared once and synced by `folio sync`.

    sources:
      - name: team-drive                     # letters, digits, - and _: names the source in logs and metrics
        from: "sharepoint:Team/Policies"     # an rclone remote and path, or a local folder
        container: team                      # the container its documents go into
        tags: {department: ops}              # on every document of this source
        tags_from_path: [region]             # the first folder level below `from` becomes tag region=<folder>
        exclude: ["Archive/**", "*.tmp"]     # rclone filter patterns, also for local folders
        rclone_options: ["--drive-export-formats", "docx,xlsx,pptx"]   # a few listing/fetching options, allowed

Credentials never live here: a remote is a name from rclone's own config (`rclone config`, RCLONE_CONFIG_* variables
or a mounted rclone.conf). An inline remote (`:s3,access_key_id=...:bucket`) is refused, so a key written into this
file is an error, not a secret that leaks into logs. A local folder is a path without a `remote:` prefix; a relative
one is read from the sources file's own folder. Errors name the file and the line, as channels.yaml's do.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bot.config.channels import read_yaml_file, validation_problem
from bot.errors import ConfigurationError
from bot.models import CONTAINER_NAME, TAG_KEY, Tag

SOURCE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_REMOTE = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_. -]*):(.*)$")  # rclone's config section names: `name:path`
# Options a source may give rclone: how Google Docs export, which drive, how listing walks. None carries a secret.
RCLONE_OPTIONS = frozenset(
    {
        "--drive-export-formats",
        "--drive-shared-with-me",
        "--drive-team-drive",
        "--drive-skip-shortcuts",
        "--drive-acknowledge-abuse",
        "--onedrive-drive-id",
        "--fast-list",
        "--max-depth",
        "--s3-versions",
    }
)
_FLAGS_WITHOUT_VALUE = frozenset(
    {"--drive-shared-with-me", "--drive-skip-shortcuts", "--drive-acknowledge-abuse", "--fast-list", "--s3-versions"}
)


class SourceSpec(BaseModel):
    """One source as the file declares it."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str
    from_: str = Field(alias="from", min_length=1)
    container: str
    tags: tuple[Tag, ...] = ()
    tags_from_path: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    rclone_options: tuple[str, ...] = ()

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not SOURCE_NAME.match(value):
            raise ValueError(f"{value!r} is not a source name: lower-case letters, digits, - and _ (team-drive)")
        return value

    @field_validator("container")
    @classmethod
    def _container(cls, value: str) -> str:
        if not CONTAINER_NAME.fullmatch(value.strip()):
            raise ValueError(f"{value!r} is not a container name: letters, digits, -, _ and . (for example team)")
        return value.strip()

    @field_validator("from_")
    @classmethod
    def _from(cls, value: str) -> str:
        value = value.strip()
        if value.startswith(":") or re.match(r"^[^/:]*,[^/]*:", value):
            raise ValueError(
                "an inline rclone remote (':backend,key=value:') may carry credentials; name a remote from rclone's "
                "own config instead (rclone config create NAME TYPE ...)"
            )
        return value

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        if value is None:
            return ()
        if not isinstance(value, dict):
            raise ValueError("tags must be a mapping such as {department: ops, year: 2026}")
        tags = []
        for key, tag_value in value.items():
            if not TAG_KEY.match(str(key)):
                raise ValueError(f"tag key {key!r} must be lower-case letters, digits or _ (for example department)")
            if tag_value is None or not str(tag_value).strip():
                raise ValueError(f"tag {key!r} needs a value")
            tags.append(Tag(key=str(key), value=str(tag_value).strip()))
        return tuple(tags)

    @field_validator("tags_from_path")
    @classmethod
    def _path_keys(cls, keys: tuple[str, ...]) -> tuple[str, ...]:
        for key in keys:
            if not TAG_KEY.match(key):
                raise ValueError(f"tag key {key!r} must be lower-case letters, digits or _ (for example region)")
        return keys

    @field_validator("rclone_options")
    @classmethod
    def _options(cls, options: tuple[str, ...]) -> tuple[str, ...]:
        expecting_value = False
        for option in options:
            if expecting_value:
                if option.startswith("-"):
                    raise ValueError(f"{option!r} is not a value (an option needs one after it)")
                expecting_value = False
                continue
            flag = option.split("=", 1)[0]
            if flag not in RCLONE_OPTIONS:
                raise ValueError(
                    f"{flag!r} is not an rclone option a source may set (allowed: {sorted(RCLONE_OPTIONS)})"
                )
            expecting_value = "=" not in option and flag not in _FLAGS_WITHOUT_VALUE
        if expecting_value:
            raise ValueError(f"{options[-1]!r} needs a value after it")
        return options

    @model_validator(mode="after")
    def _keys_differ(self) -> SourceSpec:
        clash = {tag.key for tag in self.tags} & set(self.tags_from_path)
        if clash:
            raise ValueError(f"tag key {sorted(clash)[0]!r} is both in tags and in tags_from_path; keep one")
        return self

    @property
    def remote(self) -> str | None:
        """The rclone remote and path (`sharepoint:Team/Policies`), or None for a local folder."""
        match = _REMOTE.match(self.from_)
        return self.from_ if match and len(match.group(1)) > 1 else None  # `C:` stays a folder name

    def folder(self, base: Path) -> Path:
        """The local folder this source reads, a relative one taken from `base` (the sources file's folder)."""
        path = Path(self.from_).expanduser()
        return path if path.is_absolute() else base / path

    def tags_for(self, relative: str) -> tuple[Tag, ...]:
        """Every tag of the file at `relative` (a path below `from`): the source's, then one per folder level."""
        folders = relative.split("/")[:-1]
        by_path = tuple(Tag(key=key, value=folder) for key, folder in zip(self.tags_from_path, folders))
        return self.tags + by_path


class SourcesFile(BaseModel):
    """The validated sources file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sources: tuple[SourceSpec, ...] = ()

    @field_validator("sources")
    @classmethod
    def _unique(cls, sources: tuple[SourceSpec, ...]) -> tuple[SourceSpec, ...]:
        names = [source.name for source in sources]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"source name {name!r} appears twice; give each source its own name")
        return sources

    def named(self, names: list[str]) -> tuple[SourceSpec, ...]:
        """The sources `names` names (all when empty); ConfigurationError for a name the file does not hold."""
        known = {source.name: source for source in self.sources}
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ConfigurationError(f"no source named {unknown[0]!r}; the sources file names {sorted(known)}")
        return tuple(known[name] for name in names) if names else self.sources


def load_sources(path: Path) -> SourcesFile:
    """Read and validate the sources file; every error names the file and the line."""
    if not path.exists():
        raise ConfigurationError(
            f"Sources file {path} does not exist. Write one (see docs/sources.md) or set FOLIO_SOURCES to its path."
        )
    data, lines = read_yaml_file(path, what="Sources file")
    if data is None:
        return SourcesFile()
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path} line 1: expected a mapping with a `sources:` list")
    try:
        return SourcesFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigurationError(validation_problem(path, exc, _with_from(lines))) from exc


def _with_from(lines: dict[tuple[str, ...], int]) -> dict[tuple[str, ...], int]:
    """pydantic names the `from` key by its field name `from_`: give that name the key's line too."""
    extra = {(*key[:-1], "from_"): line for key, line in lines.items() if key and key[-1] == "from"}
    return {**lines, **extra}
