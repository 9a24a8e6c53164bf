"""OpenAIEmbedder through the real `openai` client against a small embeddings server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from bot.errors import SearchUnavailable
from bot.models import Scope
from bot.retrieval.embedders import OpenAIEmbedder
from bot.retrieval.local import LocalRetriever
from tests.fakes.azure_search import fake_embedding
from tests.retrieval.helpers import chunk


class EmbeddingsServer:
    """POST /v1/embeddings in OpenAI's wire format (hashed bag of words); `fail = True` answers HTTP 500."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                if server.fail or self.path != "/v1/embeddings":
                    payload, status = {"error": {"message": "boom", "type": "server_error"}}, 500
                else:
                    data = [
                        {"object": "embedding", "index": i, "embedding": fake_embedding(text, body["dimensions"])}
                        for i, text in enumerate(body["input"])
                    ]
                    data.reverse()  # the API does not promise order; the client must sort by index
                    usage = {"prompt_tokens": 1, "total_tokens": 1}
                    payload, status = {"object": "list", "data": data, "model": body["model"], "usage": usage}, 200
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[EmbeddingsServer]:
    fake = EmbeddingsServer()
    yield fake
    fake.http.shutdown()
    fake.http.server_close()


def embedder(server: EmbeddingsServer) -> OpenAIEmbedder:
    client = AsyncOpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0)
    return OpenAIEmbedder(client, model="text-embedding-3-small", dimensions=32, batch_size=2)


async def test_hybrid_local_search_with_openai_embeddings(server: EmbeddingsServer, tmp_path: Path) -> None:
    index = LocalRetriever(tmp_path / "index.sqlite", embedder=embedder(server), score_gap=0.0)
    texts = ["dental cleaning twice a year", "vision exam every two years", "hearing aids every three years"]
    await index.replace_file("c", "plan.pdf", "v1", [chunk("c", "plan.pdf", t, page=n) for n, t in enumerate(texts, 1)])
    assert [len(request["input"]) for request in server.requests] == [2, 1]  # batches of batch_size
    assert server.requests[0]["model"] == "text-embedding-3-small" and server.requests[0]["dimensions"] == 32
    results = await index.search("hearing aids", Scope(container="c"), top=3)
    await index.close()
    assert results[0].page == 3
    assert server.requests[-1]["input"] == ["hearing aids"]


async def test_an_embedding_failure_is_search_unavailable(server: EmbeddingsServer) -> None:
    server.fail = True
    with pytest.raises(SearchUnavailable, match="FOLIO_EMBEDDING_MODEL"):
        await embedder(server).embed(["anything"])
