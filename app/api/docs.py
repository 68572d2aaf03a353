"""The API documentation, served by the service itself: the OpenAPI document, Swagger UI and ReDoc.

Their scripts, stylesheet and icon come from the ``fastapi-offline`` package (Swagger UI and ReDoc's
standalone bundles) and are served under ``/docs/assets/``, so the pages load nothing from outside the
service: they work on a network without Internet access. Every route here is public, like the document.

With a UI client id configured (``PURGE_AUTH_UI_CLIENT_ID``) the document's security scheme becomes the
issuer's authorization-code flow with PKCE (``app.auth.browser_login``); the issuer's endpoints are
discovered when a document is asked for, so start-up never waits for the identity provider.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from app.auth import AuthComponents, current_principal

OPENAPI_PATH = "/openapi.json"
DOCS_PATH = "/docs"
OAUTH2_REDIRECT_PATH = "/docs/oauth2-redirect"
REDOC_PATH = "/redoc"
ASSETS_PATH = "/docs/assets"
ASSETS_PACKAGE = "fastapi_offline"
# Swagger UI would ask an online validator about the document; nothing leaves the page.
SWAGGER_UI_PARAMETERS = {"validatorUrl": None}
# ReDoc's sidebar shows Redocly's logo from Redocly's CDN (hidden again when it fails to load): its page
# keeps images to the service, so the browser never asks the Internet for it.
REDOC_POLICY = {"Content-Security-Policy": "img-src 'self' data:"}

router = APIRouter(include_in_schema=False)
# Starlette's static files (ETag and Last-Modified, 304s, no path leaving the folder) behind a route of
# ours, so the assets have a route template like every other path (metrics, authorization matrix).
assets = StaticFiles(directory=str(files(ASSETS_PACKAGE).joinpath("static")))


def install_docs(app: FastAPI) -> None:
    """Adds the documentation routes (create the app with FastAPI's own turned off)."""
    app.include_router(router)


def with_scheme(document: dict[str, Any], name: str, scheme: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` whose security scheme ``name`` is ``scheme`` (the cached one is untouched)."""
    components = document.get("components", {})
    schemes = {**components.get("securitySchemes", {}), name: scheme}
    return {**document, "components": {**components, "securitySchemes": schemes}}


@router.get(OPENAPI_PATH)
async def openapi_document(request: Request) -> JSONResponse:
    document: dict[str, Any] = request.app.openapi()
    auth: AuthComponents = request.app.state.auth
    if auth.browser_login is not None:
        scheme = await auth.browser_login.security_scheme()
        if scheme is not None:
            document = with_scheme(document, current_principal.scheme_name, scheme)
    return JSONResponse(document)


def _root(request: Request) -> str:
    """The path the service is mounted under behind a proxy (ASGI ``root_path``), usually empty."""
    return str(request.scope.get("root_path", "")).rstrip("/")


@router.get(DOCS_PATH)
async def swagger_ui(request: Request) -> HTMLResponse:
    app: FastAPI = request.app
    root = _root(request)
    return get_swagger_ui_html(
        openapi_url=root + OPENAPI_PATH,
        title=f"{app.title} - Swagger UI",
        swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
        swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
        swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
        oauth2_redirect_url=root + OAUTH2_REDIRECT_PATH,
        init_oauth=app.swagger_ui_init_oauth,
        swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
    )


@router.get(OAUTH2_REDIRECT_PATH)
async def swagger_ui_oauth2_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


@router.get(ASSETS_PATH + "/{path}")
async def asset(path: str, request: Request) -> Response:
    return await assets.get_response(path, request.scope)


@router.get(REDOC_PATH)
async def redoc(request: Request) -> HTMLResponse:
    root = _root(request)
    page = get_redoc_html(
        openapi_url=root + OPENAPI_PATH,
        title=f"{request.app.title} - ReDoc",
        redoc_js_url=f"{root}{ASSETS_PATH}/redoc.standalone.js",
        redoc_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
        with_google_fonts=False,
    )
    page.headers.update(REDOC_POLICY)
    return page
