"""Test harness only: a proxy in front of llama-cpp-python's OpenAI-compatible server that helps a tiny model
start its extraction answers in the record format.

Extraction calls (X-LightRAG-Operation extract or extract_retry, record format) are sent as raw completions:
the conversation rendered with the model's chat template, then the assistant turn pre-started with
`entity<|#|>`; the answer returned is that prefix plus what the model wrote. Every other call is passed on
unchanged. The product never does this; it shows what the pipeline does with a small model's real records.
"""

from __future__ import annotations

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

PREFIX = "entity<|#|>"
PREFILLED = {"extract", "extract_retry"}


def render(messages: list[dict], template: str) -> tuple[str, list[str]]:
    """The prompt of a chat in `template` ("chatml" or "gemma") ending in an open assistant turn, and its stops."""
    if template == "gemma":  # no system role: the instructions open the first user turn
        turns: list[tuple[str, str]] = []
        pending = ""
        for m in messages:
            if m["role"] == "system":
                pending += m["content"] + "\n\n"
                continue
            turns.append(("model" if m["role"] == "assistant" else "user", pending + m["content"]))
            pending = ""
        body = "".join(f"<start_of_turn>{role}\n{text}<end_of_turn>\n" for role, text in turns)
        return body + "<start_of_turn>model\n", ["<end_of_turn>"]
    body = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return body + "<|im_start|>assistant\n", ["<|im_end|>"]


def prefill_proxy(upstream: str, template: str) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream.rstrip("/"), timeout=3600)

    async def chat(request: Request) -> Response:
        body = await request.json()
        operation = request.headers.get("x-lightrag-operation", "")
        if operation not in PREFILLED or body.get("response_format") or body.get("stream"):
            upstream_response = await client.post("/chat/completions", json=body)
            return Response(upstream_response.content, upstream_response.status_code, media_type="application/json")
        prompt, stops = render(body["messages"], template)
        completion = {
            "prompt": prompt + PREFIX,
            "max_tokens": body.get("max_tokens") or 1024,
            "stop": stops,
            "temperature": body.get("temperature", 0.2),
        }
        upstream_response = await client.post("/completions", json=completion)
        if upstream_response.status_code != 200:
            return Response(upstream_response.content, upstream_response.status_code, media_type="application/json")
        data = upstream_response.json()
        choice = data["choices"][0]
        return JSONResponse(
            {
                "id": data.get("id", "cmpl"),
                "object": "chat.completion",
                "created": data.get("created", 0),
                "model": body.get("model"),
                "usage": data.get("usage"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": choice.get("finish_reason"),
                        "message": {"role": "assistant", "content": PREFIX + choice["text"]},
                    }
                ],
            }
        )

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
