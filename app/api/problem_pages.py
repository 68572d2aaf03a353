"""``/problems/{slug}``: the page a problem's ``type`` leads to, explaining the error and what to do.

HTML for people (a self-contained page: no script, nothing from another host), JSON for programs that
ask for it with ``Accept: application/json``. Public, like the API documentation; an unknown slug is a
404 problem. Not part of the OpenAPI document (it documents the API, as /docs does).
"""

from __future__ import annotations

from html import escape

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.api.problem_types import PROBLEM_TYPES, ProblemType
from app.errors import PROBLEMS_PATH, NotFound

router = APIRouter(include_in_schema=False)
JSON_TYPES = ("application/json", "application/problem+json")
STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;"
    "line-height:1.5;color:#222}code{background:#f2f2f2;padding:0 .2rem}h2{font-size:1.1rem}"
)


@router.get(PROBLEMS_PATH + "/{slug}")
async def problem_page(slug: str, request: Request) -> Response:
    problem = PROBLEM_TYPES.get(slug)
    if problem is None:
        raise NotFound("No such problem type; every type this service answers with is under /problems/.")
    if _wants_json(request.headers.get("accept", "")):
        return JSONResponse(_json(problem))
    return HTMLResponse(_html(problem))


def _wants_json(accept: str) -> bool:
    """JSON when the client names a JSON type before (or without) text/html."""
    for media_range in accept.split(","):
        kind = media_range.split(";", 1)[0].strip().lower()
        if kind == "text/html":
            return False
        if kind in JSON_TYPES:
            return True
    return False


def _json(problem: ProblemType) -> dict[str, object]:
    return {
        "type": problem.url,
        "status": problem.status,
        "title": problem.title,
        "meaning": problem.meaning,
        "what_to_do": problem.remedy,
    }


def _html(problem: ProblemType) -> str:
    title = escape(problem.title)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - kafka-purge</title>
<style>{STYLE}</style>
</head>
<body>
<p>kafka-purge problem type <code>{escape(problem.url)}</code> (HTTP {problem.status})</p>
<h1>{title}</h1>
<h2>What it means</h2>
<p>{escape(problem.meaning)}</p>
<h2>What to do</h2>
<p>{escape(problem.remedy)}</p>
<p>Every error of this service is an RFC 9457 problem (<code>application/problem+json</code>): its
<code>detail</code> says what happened to this request, and its <code>request_id</code> finds it in the
service's log. The API is described at <a href="../docs">/docs</a>.</p>
</body>
</html>
"""
