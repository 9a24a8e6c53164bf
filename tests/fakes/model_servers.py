"""How servers other than OpenAI's answer the Responses API, for tests/fakes/openai_responses.py's `server=` modes.

llama.cpp's `llama-server` (tools/server: `convert_responses_to_chatcmpl`, `to_json_oaicompat_resp`) keeps no
responses: a request naming `previous_response_id` is refused with HTTP 400 "llama.cpp does not support
'previous_response_id'.", a tool that is not a function with "'type' of tool must be 'function'", and an input item
it cannot map to a chat message with "Cannot determine type of 'item'" (an assistant message must be
`{"type": "message", "content": [{"type": "output_text", ...}]}`). Its errors carry the HTTP status as `code` and
no `param`. It ignores what it does not know (`store`, `include`, `reasoning`, `truncation`); its response has only
id, object, created_at, completed_at, model, status, output and usage, and its function calls have no `id`. There is
no route to retrieve or delete a response: 404 "File Not Found".

Azure OpenAI's v1 endpoint (`https://NAME.openai.azure.com/openai/v1/responses`) takes the key as `api-key` or as a
bearer token, names models by deployment (404 DeploymentNotFound otherwise), keeps responses like OpenAI, and answers
any other path 404 "Resource not found".
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

LLAMA_NO_PREVIOUS = "llama.cpp does not support 'previous_response_id'."
LLAMA_TOOL_TYPE = "'type' of tool must be 'function'"
LLAMA_ITEM_TYPE = "Cannot determine type of 'item'"
LLAMA_NOT_FOUND = "File Not Found"
AZURE_DEPLOYMENT_MISSING = (
    "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, "
    "please wait a moment and try again."
)
AZURE_BAD_KEY = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an "
    "active subscription and use a correct regional API endpoint for your resource."
)


def llama_error(status: int, message: str) -> tuple[int, Json]:
    """llama.cpp's error body: the status repeated as `code`, a `type`, no `param`."""
    kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}.get(
        status, "server_error"
    )
    return status, {"error": {"code": status, "message": message, "type": kind}}


def azure_error(status: int, code: str, message: str) -> tuple[int, Json]:
    return status, {"error": {"code": code, "message": message}}


def llama_refusal(body: Json) -> tuple[int, Json] | None:
    """What llama-server refuses before running anything, in its order."""
    if "input" not in body:
        return llama_error(400, "'input' is required")
    if body.get("previous_response_id"):
        return llama_error(400, LLAMA_NO_PREVIOUS)
    given = body["input"]
    if isinstance(given, list):
        for item in given:
            problem = _item_problem(item)
            if problem:
                return llama_error(400, problem)
    for tool in body.get("tools") or []:
        if tool.get("type") != "function":
            return llama_error(400, LLAMA_TOOL_TYPE)
    return None


def _item_problem(item: Json) -> str | None:
    """Why llama-server cannot map one input item to a chat message (None when it can)."""
    content = item.get("content")
    if isinstance(content, str):
        content = [{"type": "input_text", "text": content}]
    role, kind = item.get("role"), item.get("type")
    if isinstance(content, list) and role in ("user", "system", "developer"):
        if any(part.get("type") not in ("input_text", "input_image") for part in content):
            return "'type' must be one of 'input_text', 'input_image', or 'input_file'"
        return None
    if isinstance(content, list) and role == "assistant" and kind == "message":
        if any(part.get("type") != "output_text" for part in content):
            return "'type' must be 'output_text'"
        return None
    if kind == "function_call" and all(isinstance(item.get(key), str) for key in ("arguments", "call_id", "name")):
        return None
    if kind == "function_call_output" and isinstance(item.get("call_id"), str):
        return None
    if kind == "reasoning" and isinstance(item.get("summary"), list) and item.get("content"):
        return None
    return LLAMA_ITEM_TYPE


def llama_response(response: Json) -> Json:
    """A response as llama-server writes it: the OpenAI one cut to the fields it sends, calls without `id`."""
    output = []
    for item in response["output"]:
        if item["type"] == "function_call":
            item = {key: value for key, value in item.items() if key != "id"}
            item["call_id"] = "fc_" + item["call_id"]
        elif item["type"] == "reasoning":  # the model's thinking as text; nothing encrypted
            item = {**item, "encrypted_content": ""}
        output.append(item)
    usage = response["usage"]
    return {
        "completed_at": response["completed_at"],
        "created_at": response["created_at"],
        "id": response["id"],
        "model": response["model"],
        "object": "response",
        "output": output,
        "status": "completed",
        "usage": {
            "input_tokens": usage["input_tokens"],
            "output_tokens": usage["output_tokens"],
            "total_tokens": usage["total_tokens"],
        },
    }


def route(server: str, path: str) -> tuple[str | None, str | None]:
    """("responses", id or None) for a path the server serves, (None, None) otherwise."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    prefix = {"azure": ["openai", "v1", "responses"], "llama.cpp": ["v1", "responses"]}.get(server, ["v1", "responses"])
    if server == "llama.cpp" and parts[:1] == ["responses"]:  # llama-server serves /responses and /v1/responses
        parts = ["v1", *parts]
    if parts[: len(prefix)] != prefix or len(parts) > len(prefix) + 1:
        return None, None
    return "responses", (parts[len(prefix)] if len(parts) == len(prefix) + 1 else None)


def not_found(server: str, path: str) -> tuple[int, Json]:
    if server == "llama.cpp":
        return llama_error(404, LLAMA_NOT_FOUND)
    if server == "azure":
        return azure_error(404, "404", "Resource not found")
    return 404, {
        "error": {"message": f"unknown path {path}", "type": "invalid_request_error", "param": None, "code": None}
    }
