"""Issue 33, the attacker's pass on listing: what a hostile server lists cannot lead Folio outside its staging
folder, rclone's complaints lose any password, and exclude patterns mean what rclone's do."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from bot.sources.listing import _said, glob_pattern, parse_line
from bot.sources.spec import SourceSpec


def _line(path: str, **more: object) -> str:
    return (
        json.dumps(
            {
                "Path": path,
                "Name": path.rsplit("/", 1)[-1],
                "Size": 3,
                "ModTime": "2026-12-01T10:00:00Z",
                "IsDir": False,
                **more,
            }
        )
        + ","
    )


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "a/../../b.pdf", "two\nlines.pdf", ""])
def test_a_listed_path_that_leaves_the_source_is_no_entry(path: str) -> None:
    assert parse_line(_line(path)) is None


def test_a_listed_file_keeps_its_hash_and_id() -> None:
    entry = parse_line(_line("Team/a.pdf", Hashes={"MD5": "abc", "SHA-1": "def"}, ID="01XYZ"))
    assert entry is not None and (entry.path, entry.hash, entry.identity) == ("Team/a.pdf", "sha1:def", "01XYZ")
    assert parse_line("[") is None and parse_line(_line("dir", IsDir=True)) is None


def test_rclone_complaints_hide_a_password_in_a_url() -> None:
    said = _said(b'2026/12/02 ERROR : cannot list: Get "https://svc:S3cret@dav.example/x": 401 Unauthorized\n')
    assert "S3cret" not in said and "https://***@dav.example/x" in said


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("Archive/**", ["Archive/a.pdf", "x/Archive/b/c.pdf"], ["Archived/a.pdf", "a.pdf"]),
        ("/Archive/**", ["Archive/a.pdf"], ["x/Archive/a.pdf"]),
        ("*.tmp", ["a.tmp", "x/y/b.tmp"], ["a.tmp.pdf"]),
        ("~$*", ["~$avel Policy 2026.docx", "x/~$a.docx"], ["a~$b.docx"]),
    ],
)
def test_exclude_patterns_mean_what_rclone_filters_do(pattern: str, matches: list[str], misses: list[str]) -> None:
    regex = glob_pattern(pattern)
    assert all(regex.match(path) for path in matches) and not any(regex.match(path) for path in misses)


def test_an_option_cannot_smuggle_another_as_its_value() -> None:
    with pytest.raises(ValidationError, match="is not a value"):
        SourceSpec.model_validate(
            {"name": "a", "from": "x:y", "container": "c", "rclone_options": ["--max-depth", "--config=/tmp/evil.conf"]}
        )


@pytest.mark.parametrize(
    "path",
    [
        "~$avel Policy 2026.docx",
        "Team/~$Q3.pptx",
        "Team/.~lock.Q3.pptx#",
        "a/Thumbs.db",
        ".DS_Store",
        "Team/.hidden.pdf",
        ".git/x/a.pdf",
    ],
)
def test_office_lock_files_and_system_files_are_not_listed(path: str) -> None:
    assert parse_line(_line(path)) is None
