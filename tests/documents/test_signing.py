"""Signed document links: only Folio can make one, it names one file, and it stops working when it expires."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from bot.app.builders import link_signing_key as build_link_key
from bot.config import Settings
from bot.documents import DocumentStore, check_link, document_path, link_key, signature, signed_path

KEY = b"k" * 32
NOW = 1_800_000_000.0


def query_of(path: str) -> dict[str, str]:
    query = path.split("?", 1)[1].split("#", 1)[0]
    return dict(part.split("=", 1) for part in query.split("&"))


def test_a_signed_link_opens_its_file_at_the_page_until_it_expires() -> None:
    path = signed_path(KEY, "hr", "hand book.pdf", expires=int(NOW) + 60, page=12)
    assert path.startswith("/documents/hr/hand%20book.pdf?expires=1800000060&signature=")
    assert path.endswith("#page=12")
    query = query_of(path)
    assert check_link(KEY, "hr", "hand book.pdf", expires=query["expires"], given=query["signature"], now=NOW).ok
    late = check_link(KEY, "hr", "hand book.pdf", expires=query["expires"], given=query["signature"], now=NOW + 61)
    assert (late.ok, late.reason) == (False, "expired")


@pytest.mark.parametrize(
    ("container", "file", "expires", "reason"),
    [
        ("hr", "other.pdf", "1800000060", "bad signature"),  # the signature of one file does not open another
        ("finance", "hand book.pdf", "1800000060", "bad signature"),
        ("hr", "hand book.pdf", "1900000000", "bad signature"),  # a stretched expiry
        ("hr", "hand book.pdf", "-1", "bad expiry"),
        ("hr", "hand book.pdf", "", "bad expiry"),
    ],
)
def test_a_tampered_link_is_refused(container: str, file: str, expires: str, reason: str) -> None:
    given = signature(KEY, "hr", "hand book.pdf", 1_800_000_060)
    verdict = check_link(KEY, container, file, expires=expires, given=given, now=NOW)
    assert (verdict.ok, verdict.reason) == (False, reason)


def test_a_changed_signature_or_key_is_refused() -> None:
    given = signature(KEY, "hr", "a.pdf", 1_800_000_060)
    flipped = given[:-1] + ("0" if given[-1] != "0" else "1")
    assert not check_link(KEY, "hr", "a.pdf", expires="1800000060", given=flipped, now=NOW).ok
    assert not check_link(b"other key", "hr", "a.pdf", expires="1800000060", given=given, now=NOW).ok
    assert not check_link(KEY, "hr", "a.pdf", expires="1800000060", given="é" * 64, now=NOW).ok


@pytest.mark.parametrize(
    ("container", "file"),
    [
        ("..", "link.key"),
        ("hr", ".."),
        ("hr", "../link.key"),
        ("hr/..", "a.pdf"),
        ("hr", "a\\..\\b.pdf"),
        ("hr", "a\0.pdf"),
        (".", "a.pdf"),
        ("", "a.pdf"),
        ("hr", ""),
    ],
)
def test_names_that_could_leave_the_folder_are_refused_even_when_signed(container: str, file: str) -> None:
    given = signature(KEY, container, file, 1_800_000_060)  # as if the key had signed them
    verdict = check_link(KEY, container, file, expires="1800000060", given=given, now=NOW)
    assert (verdict.ok, verdict.reason) == (False, "bad name")
    assert DocumentStore(Path("documents")).path_for(container, file) is None


def test_a_symlink_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.pdf").write_bytes(b"%PDF secret")
    store = DocumentStore(tmp_path / "documents")
    store.folder.mkdir()
    (store.folder / "hr").symlink_to(outside, target_is_directory=True)
    assert store.stored("hr", "secret.pdf") is None


def test_path_names_are_encoded_so_a_slash_cannot_add_a_segment() -> None:
    assert document_path("a b", "x/y#z?.pdf") == "/documents/a%20b/x%2Fy%23z%3F.pdf"


def test_the_key_comes_from_folio_link_secret_else_the_slack_secret(tmp_path: Path) -> None:
    own = Settings(folio_link_secret="link-secret", slack_signing_secret="slack", folio_data_dir=tmp_path)
    assert build_link_key(own) == b"link-secret"
    derived = build_link_key(Settings(slack_signing_secret="slack", folio_data_dir=tmp_path))
    assert derived != b"slack" and len(derived) == 32
    assert derived == build_link_key(Settings(slack_signing_secret="slack", folio_data_dir=tmp_path / "other"))
    assert not (tmp_path / "link.key").exists()


def test_without_secrets_a_random_key_is_kept_private_in_the_data_folder(tmp_path: Path) -> None:
    first = link_key(tmp_path / "data", link_secret=None, slack_signing_secret=None)
    again = link_key(tmp_path / "data", link_secret=None, slack_signing_secret=None)
    assert first == again and len(first) == 32
    assert stat.S_IMODE(os.stat(tmp_path / "data" / "link.key").st_mode) == 0o600
    assert link_key(tmp_path / "elsewhere", link_secret=None, slack_signing_secret=None) != first
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["link.key"]  # no temporary file left behind
