"""What a person does in Swagger UI, as Playwright steps: open the Authorize dialog, try an operation."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Locator, Page, Response, expect

CREATE_DELETION = "operations-deletions-create_deletion_v1_deletions_post"


def open_docs(page: Page, base: str) -> None:
    """Loads /docs and waits until Swagger UI has rendered the API from /openapi.json."""
    page.goto(f"{base}/docs")
    expect(page.locator(".information-container .title")).to_contain_text("kafka-purge")
    expect(page.locator(f"#{CREATE_DELETION}")).to_be_visible()


def authorize_dialog(page: Page) -> Locator:
    page.locator(".auth-wrapper button.authorize").click()
    dialog = page.locator(".modal-ux")
    expect(dialog).to_be_visible()
    return dialog


def expect_authorized(dialog: Locator) -> None:
    """Swagger UI offers to log out once it holds a token; then the dialog is closed."""
    expect(dialog.get_by_role("button", name="Remove authorization")).to_be_visible()
    dialog.locator("button.btn-done").click()
    expect(dialog).to_be_hidden()


def try_it_out(page: Page, operation_id: str, body: dict[str, Any]) -> tuple[Response, Locator]:
    """Expands the operation, edits its request body, presses Execute: the HTTP response Swagger UI got,
    and the operation's block (where it shows that response)."""
    operation = page.locator(f"#{operation_id}")
    if not operation.locator(".opblock-body").count():
        operation.locator(".opblock-summary").click()
    # The expanded block renders after the click: wait until it shows either "Try it out" or, on a
    # second try (the block stays in its editing state), "Cancel".
    start = operation.get_by_role("button", name="Try it out")
    cancel = operation.get_by_role("button", name="Cancel")
    expect(start.or_(cancel)).to_be_visible()
    if start.is_visible():
        start.click()
    operation.locator("textarea.body-param__text").fill(json.dumps(body))
    with page.expect_response(lambda r: r.request.method != "OPTIONS" and "/v1/" in r.url) as answer:
        operation.get_by_role("button", name="Execute").click()
    return answer.value, operation


def shown_status(operation: Locator) -> Locator:
    """The status code of the live response Swagger UI displays."""
    return operation.locator(".live-responses-table .response .response-col_status").first


def operation_ids(page: Page, method: str) -> list[str]:
    """The element ids of every operation block of ``method`` (``post``) Swagger UI shows."""
    ids: list[str] = page.eval_on_selector_all(f".opblock-{method}[id]", "blocks => blocks.map(b => b.id)")
    return ids


def execute(
    page: Page,
    operation_id: str,
    *,
    params: dict[str, str] | None = None,
    body: dict[str, Any] | None = None,
    form: dict[str, str] | None = None,
) -> tuple[Response, Locator]:
    """Expands the operation, presses "Try it out", types in ``params`` (path or query parameters by
    name), ``body`` (replacing the example) and ``form`` fields (by name) if given, and presses
    Execute: what Swagger UI sends otherwise is the operation's default example."""
    operation = page.locator(f'[id="{operation_id}"]')
    if not operation.locator(".opblock-body").count():
        operation.locator(".opblock-summary").click()
    # One button, "Try it out" or (already trying) "Cancel"; an operation may be named Cancel too.
    toggle = operation.locator("button.try-out__btn")
    expect(toggle).to_be_visible()
    if "Try it out" in toggle.inner_text():
        toggle.click()
    for name, value in (params or {}).items():
        operation.locator(f'tr[data-param-name="{name}"] input').fill(value)
    if body is not None:
        operation.locator("textarea.body-param__text").fill(json.dumps(body))
    for name, value in (form or {}).items():
        operation.locator(f'input[placeholder="{name}"]').fill(value)
    with page.expect_response(lambda r: r.request.method not in ("GET", "OPTIONS")) as answer:
        operation.get_by_role("button", name="Execute").click()
    return answer.value, operation


def collapse(operation: Locator) -> None:
    """Closes an expanded operation block. Swagger UI renders every open block again on each change of
    its state: with each operation left open, every later click and keystroke costs more."""
    operation.locator(".opblock-summary").click()
    expect(operation.locator(".opblock-body")).to_have_count(0)
