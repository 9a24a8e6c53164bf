"""A fake Azure AI Search service on 127.0.0.1, for the real `azure-search-documents` async clients.

    with FakeAzureSearch(api_key="k") as fake:
        retriever = AzureSearchRetriever(endpoint=fake.endpoint, index_name="folio", credential=AzureKeyCredential("k"))
        ...
        fake.requests[-1].body["filter"]          # every request, as sent
        fake.indexes["folio"]                    # the index definition the client created

Routes (as the SDK calls them, `?api-version=` required): PUT/GET/DELETE `/indexes('NAME')`,
POST `/indexes('NAME')/docs/search.index` (upload, merge, mergeOrUpload, delete) and
POST `/indexes('NAME')/docs/search.post.search`. Searches apply the OData filter (tests/fakes/odata.py) before
ranking, as the service does with its default pre-filter mode. Scores follow the service's shapes: BM25-like for text,
cosine-derived for vectors, reciprocal rank fusion (about 0.016-0.033) for hybrid, and `@search.rerankerScore` 0-4
from the "semantic ranker" (the share of query words in the content, times 4). `facets: ["field,count:N"]` answers
`@search.facets` counted over every matching document.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes import Loopback
from tests.fakes.odata import FilterError, compile_filter

Json = dict[str, Any]
_ROUTE = re.compile(r"^/indexes(?:\('(?P<name>[^']+)'\))?(?P<rest>/docs/search\.(?:index|post\.search))?$")
_KEY = re.compile(r"^[A-Za-z0-9_\-=]+$")
_WORD = re.compile(r"\w+")
PAGE_LIMIT = 1000  # the service returns at most this many results per request, then nextPageParameters
RRF_K = 60


def fake_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector: hashed bag of words, so texts sharing words are close (what the fake
    'Azure OpenAI vectorizer' uses, and what a test embedder may use to stay consistent with it)."""
    vector = [0.0] * dimensions
    for word in _words(text):
        slot = int(hashlib.md5(word.encode()).hexdigest(), 16) % dimensions
        vector[slot] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def _words(text: str) -> list[str]:
    # A crude English analyzer: lower case, plural "s" dropped, so "aids" finds "aid".
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in (t.lower() for t in _WORD.findall(text or ""))]


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Json


class FakeAzureSearch:
    """An in-memory Azure AI Search service speaking the REST wire format."""

    def __init__(self, *, api_key: str = "test-key", service: str = "fake") -> None:
        self.api_key = api_key
        self.service = service
        self.indexes: dict[str, Json] = {}
        self.documents: dict[str, dict[str, Json]] = {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._loopback = Loopback(self._handler())

    @property
    def endpoint(self) -> str:
        return self._loopback.url

    def __enter__(self) -> FakeAzureSearch:
        self._loopback.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loopback.stop()

    def searches(self) -> list[Request]:
        return [r for r in self.requests if r.path.endswith("search.post.search")]

    # --- dispatch ------------------------------------------------------------------------------------------------
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def _serve(self) -> None:
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else {}
                request = Request(self.command, url.path, parse_qs(url.query), body)
                with fake._lock:
                    fake.requests.append(request)
                    status, payload = fake.handle(request, self.headers.get("api-key"))
                data = json.dumps(payload).encode() if payload is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json; odata.metadata=minimal")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = _serve

        return Handler

    def handle(self, request: Request, api_key: str | None) -> tuple[int, Json | None]:
        if api_key != self.api_key:
            return 403, _error("Forbidden", "Authentication failed: the api-key header is missing or wrong.")
        if not request.query.get("api-version"):
            return 400, _error("MissingRequiredParameter", "The request is invalid: api-version is missing.")
        route = _ROUTE.match(request.path.replace("%27", "'").replace("%28", "(").replace("%29", ")"))
        if not route:
            return 404, _error("NotFound", f"No route for {request.method} {request.path}.")
        name, rest = route.group("name"), route.group("rest")
        if rest is None:
            return self._index_route(request, name)
        if name not in self.indexes:
            return 404, _error("IndexNotFound", f"The index '{name}' for service '{self.service}' was not found.")
        if rest.endswith("search.index"):
            return self._index_documents(name, request.body)
        try:
            return 200, self._search(name, request.body)
        except FilterError as exc:
            return 400, _error("InvalidRequestParameter", str(exc))
        except ValueError as exc:
            return 400, _error("InvalidRequestParameter", str(exc))

    # --- index definitions ---------------------------------------------------------------------------------------
    def _index_route(self, request: Request, name: str | None) -> tuple[int, Json | None]:
        if request.method == "POST" and name is None:
            name = request.body.get("name")
        if name is None:
            return 400, _error("InvalidRequest", "An index name is required.")
        if request.method == "GET":
            return (200, self.indexes[name]) if name in self.indexes else (404, _error("NotFound", f"No index {name}."))
        if request.method == "DELETE":
            self.indexes.pop(name, None)
            self.documents.pop(name, None)
            return 204, None
        problem = _check_definition(request.body)
        if problem:
            return 400, _error("InvalidRequestParameter", problem)
        created = name not in self.indexes
        self.indexes[name] = {**request.body, "@odata.etag": f'"0x{len(self.requests):x}"'}
        self.documents.setdefault(name, {})
        return (201 if created else 200), self.indexes[name]

    # --- documents -----------------------------------------------------------------------------------------------
    def _index_documents(self, name: str, body: Json) -> tuple[int, Json]:
        fields = {field["name"]: field for field in self.indexes[name]["fields"]}
        key = next(field["name"] for field in fields.values() if field.get("key"))
        results, store = [], self.documents[name]
        for action in body.get("value", []):
            unknown = set(action) - set(fields) - {"@search.action"}
            if unknown:
                return 400, _error("InvalidRequestParameter", f"The property '{sorted(unknown)[0]}' does not exist.")
            kind, doc_key = action.get("@search.action", "upload"), str(action.get(key, ""))
            if not _KEY.match(doc_key):
                results.append(_result(doc_key, 400, "Invalid document key: letters, digits, _, - and = only."))
                continue
            document = {k: v for k, v in action.items() if k != "@search.action"}
            if kind == "delete":
                store.pop(doc_key, None)
            elif kind == "merge" and doc_key not in store:
                results.append(_result(doc_key, 404, "Document not found."))
                continue
            elif kind in ("merge", "mergeOrUpload"):
                store[doc_key] = {**store.get(doc_key, {}), **document}
            else:
                store[doc_key] = document
            results.append(_result(doc_key, 201 if kind == "upload" else 200, None))
        failed = any(not result["status"] for result in results)
        return (207 if failed else 200), {"value": results}

    # --- search --------------------------------------------------------------------------------------------------
    def _search(self, name: str, body: Json) -> Json:
        index = self.indexes[name]
        fields = {field["name"]: field for field in index["fields"]}
        keep = compile_filter(body.get("filter"), fields)
        candidates = [doc for doc in self.documents[name].values() if keep(doc)]
        text = (body.get("search") or "*").strip()
        rankings = []
        if text != "*" or not body.get("vectorQueries"):
            rankings.append(self._text_ranking(text, candidates, fields))
        for query in body.get("vectorQueries") or []:
            rankings.append(self._vector_ranking(query, candidates, index))
        scored = _fuse(rankings) if len(rankings) > 1 else rankings[0]
        hits = [{"@search.score": score, **doc} for doc, score in scored]
        if body.get("queryType") == "semantic":
            hits = self._rerank(text, hits, index, body.get("semanticConfiguration"))
        result = self._page(hits, body, fields)
        if body.get("facets"):
            result["@search.facets"] = _facets(body["facets"], hits, fields)
        return result

    def _text_ranking(self, text: str, docs: list[Json], fields: dict[str, Json]) -> list[tuple[Json, float]]:
        if text == "*":
            return [(doc, 1.0) for doc in docs]
        searchable = [n for n, f in fields.items() if f.get("searchable") and f["type"] == "Edm.String"]
        terms = set(_words(text))
        frequency = {t: sum(1 for d in docs if t in _doc_words(d, searchable)) for t in terms}
        scored = []
        for doc in docs:
            words = _doc_words(doc, searchable)
            score = sum(
                math.log(1 + len(docs) / frequency[t]) * words.count(t) / (words.count(t) + 1.2)
                for t in terms
                if t in words
            )
            if score > 0:
                scored.append((doc, round(score, 6)))
        return sorted(scored, key=lambda pair: -pair[1])

    def _vector_ranking(self, query: Json, docs: list[Json], index: Json) -> list[tuple[Json, float]]:
        field = {f["name"]: f for f in index["fields"]}.get(query.get("fields", ""))
        if field is None or field.get("type") != "Collection(Edm.Single)":
            raise ValueError(f"The vector field '{query.get('fields')}' does not exist.")
        if "k" not in query:
            raise ValueError("A vector query needs 'k' (k_nearest_neighbors).")
        if query.get("kind") == "text":
            if not _vectorizer_of(index, field):
                raise ValueError(f"No vectorizer is configured for the vector field '{field['name']}'.")
            vector = fake_embedding(query["text"], field["dimensions"])
        elif query.get("kind") == "vector":
            vector = query["vector"]
            if len(vector) != field["dimensions"]:
                raise ValueError(f"The vector has {len(vector)} dimensions; the field expects {field['dimensions']}.")
        else:
            raise ValueError(f"Unknown vector query kind '{query.get('kind')}'.")
        scored = []
        for doc in docs:
            stored = doc.get(field["name"])
            if stored:
                cosine = sum(a * b for a, b in zip(vector, stored))
                scored.append((doc, round(1 / (2 - cosine), 6)))  # the service's cosine score: 1 / (1 + distance)
        return sorted(scored, key=lambda pair: -pair[1])[: int(query["k"])]

    def _rerank(self, text: str, hits: list[Json], index: Json, config: str | None) -> list[Json]:
        semantic = index.get("semantic") or {}
        names = {c["name"] for c in semantic.get("configurations") or []}
        config = config or semantic.get("defaultConfiguration")
        if config not in names:
            raise ValueError(f"The semantic configuration '{config}' does not exist in this index.")
        terms = set(_words(text)) or {""}
        top, rest = hits[:50], hits[50:]
        for hit in top:
            present = set(_words(hit.get("content", "")))
            hit["@search.rerankerScore"] = round(4.0 * len(terms & present) / len(terms), 4)
        top.sort(key=lambda hit: -hit["@search.rerankerScore"])
        return top + rest

    def _page(self, hits: list[Json], body: Json, fields: dict[str, Json]) -> Json:
        skip, top = int(body.get("skip") or 0), body.get("top")
        wanted = 50 if top is None else int(top)
        page = hits[skip : skip + min(wanted, PAGE_LIMIT)]
        selected = [s.strip() for s in body["select"].split(",")] if body.get("select") else None
        shown = [_project(hit, selected, fields) for hit in page]
        result: Json = {"value": shown}
        if body.get("count"):
            result["@odata.count"] = len(hits)
        if wanted > PAGE_LIMIT and skip + len(page) < len(hits):
            result["@search.nextPageParameters"] = {**body, "skip": skip + len(page), "top": wanted - len(page)}
        return result


def _facets(requested: list[str], hits: list[Json], fields: dict[str, Json]) -> Json:
    """`"field,count:N"` -> the N most frequent values of a facetable field over every matching document, as the
    service counts them (each value of a collection counts once per document), most frequent first."""
    facets: Json = {}
    for spec in requested:
        name, *options = [part.strip() for part in spec.split(",")]
        settings = dict(option.split(":", 1) for option in options)
        field = fields.get(name)
        if field is None or not field.get("facetable"):
            raise ValueError(f"The field '{name}' is not facetable.")
        counts: dict[Any, int] = {}
        for hit in hits:
            value = hit.get(name)
            for item in set(value or ()) if field["type"].startswith("Collection(") else [value]:
                if item is not None:
                    counts[item] = counts.get(item, 0) + 1
        ranked = sorted(counts.items(), key=lambda pair: (-pair[1], str(pair[0])))
        facets[name] = [{"count": count, "value": value} for value, count in ranked[: int(settings.get("count", 10))]]
    return facets


def _doc_words(doc: Json, searchable: list[str]) -> list[str]:
    return _words(" ".join(str(doc.get(name) or "") for name in searchable))


def _fuse(rankings: list[list[tuple[Json, float]]]) -> list[tuple[Json, float]]:
    scores: dict[int, float] = {}
    docs: dict[int, Json] = {}
    for ranking in rankings:
        for rank, (doc, _) in enumerate(ranking, start=1):
            scores[id(doc)] = scores.get(id(doc), 0.0) + 1.0 / (RRF_K + rank)
            docs[id(doc)] = doc
    return sorted(((docs[key], round(score, 6)) for key, score in scores.items()), key=lambda pair: -pair[1])


def _project(hit: Json, selected: list[str] | None, fields: dict[str, Json]) -> Json:
    meta = {k: v for k, v in hit.items() if k.startswith("@search.")}
    names = selected or [n for n, f in fields.items() if f.get("retrievable", True)]
    unknown = [n for n in names if n not in fields]
    if unknown:
        raise ValueError(f"Invalid $select: could not find a property named '{unknown[0]}'.")
    return {**meta, **{n: hit.get(n) for n in names if fields[n].get("retrievable", True)}}


def _vectorizer_of(index: Json, field: Json) -> Json | None:
    search = index.get("vectorSearch") or {}
    profile = next((p for p in search.get("profiles") or [] if p["name"] == field.get("vectorSearchProfile")), None)
    name = (profile or {}).get("vectorizer")
    return next((v for v in search.get("vectorizers") or [] if v["name"] == name), None)


def _check_definition(body: Json) -> str | None:
    fields = body.get("fields") or []
    if sum(1 for f in fields if f.get("key")) != 1:
        return "An index needs exactly one key field."
    search = body.get("vectorSearch") or {}
    profiles = {p["name"]: p for p in search.get("profiles") or []}
    algorithms = {a["name"] for a in search.get("algorithms") or []}
    vectorizers = {v["name"] for v in search.get("vectorizers") or []}
    for field in fields:
        if field["type"] == "Collection(Edm.Single)":
            profile = profiles.get(field.get("vectorSearchProfile"))
            if not profile or not field.get("dimensions"):
                return f"The vector field '{field['name']}' needs dimensions and an existing vectorSearchProfile."
            vectorizer = profile.get("vectorizer")
            if profile["algorithm"] not in algorithms or (vectorizer and vectorizer not in vectorizers):
                return f"The profile '{profile['name']}' names a missing algorithm or vectorizer."
    return None


def _result(key: str, status: int, message: str | None) -> Json:
    return {"key": key, "status": status < 300, "errorMessage": message, "statusCode": status}


def _error(code: str, message: str) -> Json:
    return {"error": {"code": code, "message": message}}
