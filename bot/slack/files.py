"""Files shared with Folio in Slack: the ids a message carries -> the files' bytes (`SlackFiles`, a FileSource).

Only the file's id is taken from the event. `files.info` says what the file is (name, size, who shared it, from which
organisation, where it lies), and its private download URL is fetched with the bot token in the Authorization header,
as Slack requires (`files:read`). Without a token Slack answers its sign-in page with status 200, not an error: an
HTML answer to a file that is no web page is refused, never read as the document. The URL must be one of Slack's
file hosts (or the Web API's own host, for a Slack served elsewhere): a URL elsewhere is never fetched, whatever
files.info says. The size is checked before the download and again while it streams.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import messages
from bot.ingest import kinds
from bot.store import ThreadKey
from bot.turns.boundary import Boundary
from bot.turns.request import SharedFile
from bot.turns.thread_files import FetchedFile, FileRefused

FILE_HOSTS = frozenset({"files.slack.com", "files.slack-gov.com"})
DOWNLOAD_SECONDS = 120.0
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class SlackFiles:
    """Fetches files shared in Slack threads, refusing those of people of another organisation."""

    client: AsyncWebClient
    organisation: Boundary

    async def fetch(self, shared: SharedFile, *, thread: ThreadKey, max_bytes: int) -> FetchedFile:
        info = await self._info(shared)
        name = str(info.get("name") or info.get("title") or shared.name)
        if info.get("mode") in {"external", "tombstone"} or info.get("is_external"):
            raise FileRefused(messages.thread_file_gone(name, "a link to a file stored elsewhere, not the file"))
        user = str(info.get("user") or "")
        if user and await self.organisation.is_outsider(thread.team, user, user_team=_text(info.get("user_team"))):
            raise FileRefused(messages.thread_file_outsider(name))
        size = _count(info.get("size"))
        if size > max_bytes:
            raise FileRefused(messages.thread_file_too_big(name, size, max_bytes))
        url = str(info.get("url_private_download") or info.get("url_private") or "")
        if not self._slack_host(url):
            raise FileRefused(messages.thread_file_gone(name, "Slack gave no download address of its own"))
        return FetchedFile(name=name, data=await self._download(url, name, max_bytes))

    async def _info(self, shared: SharedFile) -> dict[str, object]:
        try:
            answer = await self.client.files_info(file=shared.id)
        except SlackApiError as error:
            raise FileRefused(messages.thread_file_gone(shared.name, str(error.response.get("error")))) from error
        file = answer.get("file")
        if not isinstance(file, dict):
            raise FileRefused(messages.thread_file_gone(shared.name, "files.info said nothing of it"))
        return file

    def _slack_host(self, url: str) -> bool:
        parts, api = urlsplit(url), urlsplit(self.client.base_url)
        if parts.scheme != "https" and not (parts.scheme == api.scheme == "http" and parts.hostname == api.hostname):
            return False  # plain http only where the Web API itself is (a local Slack in tests)
        return parts.hostname in FILE_HOSTS or (parts.hostname == api.hostname and parts.port == api.port)

    async def _download(self, url: str, name: str, max_bytes: int) -> bytes:
        headers = {"Authorization": f"Bearer {self.client.token}"}
        timeout = aiohttp.ClientTimeout(total=DOWNLOAD_SECONDS)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.get(url, headers=headers, allow_redirects=False) as response,
            ):
                if response.status != 200:
                    raise FileRefused(messages.thread_file_gone(name, f"HTTP {response.status}"))
                if response.content_type == "text/html" and kinds.suffix(name) not in kinds.WEB:
                    raise FileRefused(messages.thread_file_gone(name, "Slack answered its sign-in page"))
                data = bytearray()
                async for piece in response.content.iter_chunked(_CHUNK):
                    data += piece
                    if len(data) > max_bytes:
                        raise FileRefused(messages.thread_file_too_big(name, None, max_bytes))
                return bytes(data)
        except (aiohttp.ClientError, TimeoutError) as error:
            raise FileRefused(messages.thread_file_gone(name, type(error).__name__)) from error


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: object) -> int:
    """A whole number files.info gives (a size), 0 for anything else."""
    text = str(value or 0)
    return int(text) if text.isdigit() else 0
