"""A problem's ``type`` is a page the service serves: every type it answers with has one, public, as HTML
or JSON; an unknown one is a 404 problem."""

from __future__ import annotations

import httpx
import pytest
from helpers.api import PROBLEM, assert_problem

import app.main  # noqa: F401 - every module defining an error class is imported with the app
from app.api.middleware import TIMEOUT_SLUG, TIMEOUT_TITLE
from app.api.problem_types import PROBLEM_TYPES
from app.errors import PurgeError


@pytest.fixture
def run_executor() -> bool:
    return False


def _error_classes(base: type[PurgeError]) -> list[type[PurgeError]]:
    found = [base]
    for sub in base.__subclasses__():
        found.extend(_error_classes(sub))
    return found


def test_every_error_class_has_a_page_with_its_status_and_title() -> None:
    for error in _error_classes(PurgeError):
        page = PROBLEM_TYPES.get(error.slug)
        assert page is not None, f"{error.__name__}: no page for {error.slug}"
        assert (page.status, page.title) == (error.status, error.title), error.__name__


def test_the_request_timeout_written_by_the_body_deadline_has_a_page() -> None:
    page = PROBLEM_TYPES[TIMEOUT_SLUG]
    assert (page.status, page.title) == (408, TIMEOUT_TITLE)


async def test_the_type_of_an_answer_leads_to_its_page(
    app_client: httpx.AsyncClient, alice: dict[str, str]
) -> None:
    problems = [
        assert_problem(await app_client.get("/v1/nothing-here", headers=alice), 404),
        assert_problem(await app_client.delete("/v1/deletions", headers=alice), 405),
        assert_problem(await app_client.get("/v1/deletions"), 401),
        assert_problem(await app_client.post("/v1/deletions", json={}, headers=alice), 422),
    ]
    for problem in problems:
        page = await app_client.get(problem["type"])  # public: no token
        assert page.status_code == 200, problem["type"]
        assert page.headers["content-type"].startswith("text/html")
        assert f"<h1>{problem['title']}</h1>" in page.text
        assert "What to do" in page.text
        assert "<script" not in page.text


async def test_json_for_programs_that_ask_for_it(app_client: httpx.AsyncClient) -> None:
    page = await app_client.get("/problems/forbidden", headers={"Accept": "application/json"})
    assert page.status_code == 200
    assert page.json() == {
        "type": "/problems/forbidden",
        "status": 403,
        "title": "Not allowed",
        "meaning": PROBLEM_TYPES["forbidden"].meaning,
        "what_to_do": PROBLEM_TYPES["forbidden"].remedy,
    }
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    html = await app_client.get("/problems/forbidden", headers={"Accept": browser})
    assert html.headers["content-type"].startswith("text/html")


async def test_an_unknown_slug_is_a_404_problem(app_client: httpx.AsyncClient) -> None:
    for slug in ("no-such-problem", "FORBIDDEN", "forbidden.html"):
        response = await app_client.get(f"/problems/{slug}")
        problem = assert_problem(response, 404)
        assert response.headers["content-type"] == PROBLEM
        assert problem["type"] == "/problems/not-found"
