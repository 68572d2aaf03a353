"""Authentication: bearer JWT validation, the caller's principal, and the development token issuer.

Routers take ``principal: PrincipalDep``; ``create_app`` calls ``install(app, settings)`` once.
"""

from app.auth.principals import BearerChallenge, Principal, PrincipalDep, current_principal
from app.auth.setup import AuthComponents, build_auth, install

__all__ = [
    "AuthComponents",
    "BearerChallenge",
    "Principal",
    "PrincipalDep",
    "build_auth",
    "current_principal",
    "install",
]
