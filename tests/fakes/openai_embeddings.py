"""A fake OpenAI embeddings endpoint on 127.0.0.1, for the real `openai.AsyncOpenAI` client (`OpenAIEmbedder`).

    with FakeEmbeddings() as fake:
        embedder = OpenAIEmbedder(fake.client(), model="text-embedding-3-small", dimensions=32)
        fake.requests[0]["input"]                 # every request body, as sent
        fake.fail = True                          # the next requests answer HTTP 500
        fake.width = 384                          # answer vectors of this width whatever `dimensions` asks (e5)

POST `/v1/embeddings`: the body is checked against `CreateEmbeddingRequest` from `../shared/specs/openai/openapi.json`
(a violation, or an empty string input, is HTTP 400 and recorded in `problems`); the answer is a hashed bag of words
(`fake_embedding`, the same vectors the fake Azure AI Search vectorizer makes), as float lists or, when the request
asks for `encoding_format: base64` (the SDK's default), as base64 little-endian float32, the way the service sends
them. The data come back in reverse order: the API does not promise order, so the client must sort by `index`.
"""

from __future__ import annotations

import base64
import json
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np
from openai import AsyncOpenAI

from tests.fakes import Loopback
from tests.fakes.azure_search import fake_embedding
from tests.fakes.openai_spec import problems as schema_problems

API_KEY = "sk-embeddings-test"
DEFAULT_DIMENSIONS = 1536


class FakeEmbeddings:
    """The embeddings endpoint in OpenAI's wire format."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.fail = False
        self.width: int | None = None
        self._loopback = Loopback(self._handler())

    @property
    def base_url(self) -> str:
        return f"{self._loopback.url}/v1"

    def client(self) -> AsyncOpenAI:
        return AsyncOpenAI(api_key=API_KEY, base_url=self.base_url, max_retries=0)

    def __enter__(self) -> FakeEmbeddings:
        self._loopback.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loopback.stop()

    def answer(self, path: str, authorization: str | None, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if authorization != f"Bearer {API_KEY}":
            return 401, _error("Incorrect API key provided.", "invalid_request_error")
        if path != "/v1/embeddings":
            return 404, _error(f"Unknown request URL: POST {path}.", "invalid_request_error")
        self.requests.append(body)
        if self.fail:
            return 500, _error("The server had an error while processing your request.", "server_error")
        found = schema_problems(body, "CreateEmbeddingRequest")
        texts = [body.get("input")] if isinstance(body.get("input"), str) else list(body.get("input") or [])
        if any(text == "" for text in texts):
            found.append("CreateEmbeddingRequest input: an input cannot be an empty string")
        if found:
            self.problems.extend(found)
            return 400, _error("; ".join(found), "invalid_request_error")
        dimensions = self.width or int(body.get("dimensions") or DEFAULT_DIMENSIONS)
        base64_wanted = body.get("encoding_format") == "base64"
        data = [
            {"object": "embedding", "index": i, "embedding": _encoded(fake_embedding(text, dimensions), base64_wanted)}
            for i, text in enumerate(texts)
        ]
        data.reverse()
        usage = {"prompt_tokens": sum(len(text.split()) for text in texts), "total_tokens": 0}
        usage["total_tokens"] = usage["prompt_tokens"]
        return 200, {"object": "list", "data": data, "model": body["model"], "usage": usage}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    status, payload = 400, _error("We could not parse the JSON body of your request.", "invalid_json")
                else:
                    status, payload = fake.answer(self.path, self.headers.get("Authorization"), body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _encoded(vector: list[float], base64_wanted: bool) -> list[float] | str:
    if not base64_wanted:
        return vector
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
