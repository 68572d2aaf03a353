"""The security suite (issue 17), run by ``make test`` with the rest of ``tests/``.

- ``test_token_corpus``: a generated corpus of forged and malformed bearer tokens (alg none in every
  casing, HS*/RS confusion, foreign keys, kid injection, jku/x5u/jwk/x5c, crit, JWE, claim variants,
  bit flips, truncations, bad base64) presented over HTTP to the app configured with a production
  issuer whose JWKS a test IdP serves over loopback HTTP: none may be accepted, the control token is.
- ``test_token_fuzz``: hypothesis mutations of a valid token against the validator itself.
- ``test_authorization_matrix``: every route of ``create_app()`` against anonymous, a stranger, the
  owner of the resources, an operator with CLUSTER bindings and a super user, through HTTP, the real
  databases (SQLite and PostgreSQL) and the Kafka emulator; a route without a row in the matrix, or
  missing from the README's Authorization table, fails.
- ``test_schemathesis``: the whole OpenAPI document, every operation, as a super user and as a
  stranger: no 5xx, documented statuses, media types and schemas only.

About 65 s on two cores: schemathesis ~45 s, the matrix ~10 s, the token corpus ~5 s.
"""
