"""What CI can check of ``docker-compose.yml`` without a Docker engine: the file is valid Compose, every
service has a healthcheck (one-shots are waited for by exit code), every PURGE_* block is a configuration
the service starts with, the Kafka nodes authenticate to each other as super users, and the Keycloak
realm holds the clients, mappers, groups and users the service's settings expect."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

from app.auth.dev_issuer import check_dev_issuer
from app.settings import Settings
from app.settings.diagnostics import unknown_variable_warnings

ROOT = Path(__file__).resolve().parents[2]


def env(service: dict[str, Any]) -> dict[str, str]:
    return {key: str(value) for key, value in (service.get("environment") or {}).items()}


COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
REALM = json.loads((ROOT / "deploy" / "keycloak" / "realm.json").read_text(encoding="utf-8"))
PURGE_SERVICES = sorted(name for name, s in SERVICES.items() if any(k.startswith("PURGE_") for k in env(s)))
KAFKA_NODES = sorted(name for name, s in SERVICES.items() if "KAFKA_NODE_ID" in env(s))
INSTANCES = sorted(name for name in PURGE_SERVICES if "command" not in SERVICES[name])


def settings_of(service: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for name in [n for n in os.environ if n.startswith("PURGE_")]:
        monkeypatch.delenv(name)
    for name, value in env(SERVICES[service]).items():
        monkeypatch.setenv(name, value)
    return Settings()


def test_the_file_is_valid_compose() -> None:
    schema = json.loads((ROOT / "tests" / "deploy" / "compose-spec.json").read_text(encoding="utf-8"))
    # The schema says draft-07 (in a spelling of the URL jsonschema does not look up by itself).
    assert schema["$schema"].startswith("https://json-schema.org/draft-07/")
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.Draft7Validator(schema).validate(COMPOSE)


def test_every_service_has_a_healthcheck_or_is_a_one_shot_waited_for() -> None:
    waited_for = {
        name
        for service in SERVICES.values()
        for name, condition in (service.get("depends_on") or {}).items()
        if condition.get("condition") == "service_completed_successfully"
    }
    for name, service in SERVICES.items():
        check = service.get("healthcheck") or {}
        if check.get("disable"):
            assert name in waited_for, name
            assert service.get("restart") == "no", name
        else:
            assert check.get("test"), f"{name} has no healthcheck"


def test_every_dependency_waits_for_health_or_completion() -> None:
    for name, service in SERVICES.items():
        for dependency, condition in (service.get("depends_on") or {}).items():
            expected = "service_healthy"
            if SERVICES[dependency].get("healthcheck", {}).get("disable"):
                expected = "service_completed_successfully"
            assert condition == {"condition": expected}, (name, dependency)


@pytest.mark.parametrize("service", PURGE_SERVICES)
def test_each_purge_environment_is_a_configuration_the_service_starts_with(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert unknown_variable_warnings(env(SERVICES[service])) == []
    settings = settings_of(service, monkeypatch)
    assert not settings.auth.dev_issuer
    check_dev_issuer(settings.auth, "0.0.0.0")  # the image listens on every address
    assert urlsplit(settings.database.url).hostname in SERVICES
    assert urlsplit(settings.auth.jwks_url or "").hostname in SERVICES
    for cluster in settings.clusters.values():
        hosts = {address.rsplit(":", 1)[0] for address in cluster.bootstrap_servers.split(",")}
        assert hosts == set(KAFKA_NODES)


def test_two_instances_serve_and_migrate_runs_first() -> None:
    assert len(INSTANCES) == 2
    assert SERVICES["migrate"]["command"] == ["kafka-purge", "migrate"]
    for name in INSTANCES:
        assert SERVICES[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert SERVICES[name]["build"] == "."  # the Dockerfile's CMD: kafka-purge serve


def jaas_users(jaas: str) -> tuple[str, dict[str, str]]:
    """The login a node uses on a listener, and the users that listener accepts."""
    login = re.search(r'\busername="([^"]+)"', jaas)
    assert login is not None
    return login.group(1), dict(re.findall(r'\buser_([\w-]+)="([^"]*)"', jaas))


def test_kafka_nodes_authenticate_to_each_other_as_super_users() -> None:
    first = env(SERVICES[KAFKA_NODES[0]])
    assert len(KAFKA_NODES) == 3
    voters = {f"{n}@kafka-{n}:9093" for n in (1, 2, 3)}
    assert set(first["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(",")) == voters
    assert {env(SERVICES[n])["KAFKA_NODE_ID"] for n in KAFKA_NODES} == {"1", "2", "3"}
    assert len({env(SERVICES[n])["CLUSTER_ID"] for n in KAFKA_NODES}) == 1
    assert first["KAFKA_AUTHORIZER_CLASS_NAME"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    protocols = dict(item.split(":") for item in first["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    assert set(protocols.values()) == {"SASL_PLAINTEXT"}  # no PLAINTEXT listener, the controller's included
    super_users = set(first["KAFKA_SUPER_USERS"].split(";"))
    for listener in (first["KAFKA_CONTROLLER_LISTENER_NAMES"], first["KAFKA_INTER_BROKER_LISTENER_NAME"]):
        login, accepted = jaas_users(first[f"KAFKA_LISTENER_NAME_{listener}_PLAIN_SASL_JAAS_CONFIG"])
        assert f"User:{login}" in super_users, listener
        assert login in accepted, listener


def test_the_service_principal_is_a_kafka_user(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = settings_of(INSTANCES[0], monkeypatch).clusters["prod"]
    listener = env(SERVICES[KAFKA_NODES[0]])["KAFKA_INTER_BROKER_LISTENER_NAME"]
    _, accepted = jaas_users(
        env(SERVICES[KAFKA_NODES[0]])[f"KAFKA_LISTENER_NAME_{listener}_PLAIN_SASL_JAAS_CONFIG"]
    )
    assert cluster.sasl_password is not None
    assert accepted[cluster.sasl_username or ""] == cluster.sasl_password.get_secret_value()
    assert f"User:{cluster.sasl_username}" in SERVICES["kafka-setup"]["command"][0]


def client(client_id: str) -> dict[str, Any]:
    (found,) = [c for c in REALM["clients"] if c["clientId"] == client_id]
    return found


def mappers(found: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {m["protocolMapper"]: m["config"] for m in found["protocolMappers"]}


def test_the_realm_is_the_issuer_the_service_trusts(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_of(INSTANCES[0], monkeypatch)
    keycloak = env(SERVICES["keycloak"])
    assert settings.auth.issuer == f"{keycloak['KC_HOSTNAME']}/realms/{REALM['realm']}"
    assert (settings.auth.jwks_url or "").endswith(f"/realms/{REALM['realm']}/protocol/openid-connect/certs")
    assert any(
        v.endswith(":/opt/keycloak/data/import/kafka-purge-realm.json:ro")
        for v in SERVICES["keycloak"]["volumes"]
    )


@pytest.mark.parametrize("client_id", ["purge-automation", "kafka-purge-swagger"])
def test_each_client_puts_the_audience_and_groups_in_access_tokens(
    client_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = settings_of(INSTANCES[0], monkeypatch).auth
    found = mappers(client(client_id))
    audience, groups = found["oidc-audience-mapper"], found["oidc-group-membership-mapper"]
    assert audience["included.custom.audience"] == auth.audience
    assert audience["access.token.claim"] == "true"
    assert groups["claim.name"] == auth.groups_claim
    assert groups["full.path"] == "false"  # "orders-team", as Group:orders-team, not "/orders-team"
    assert groups["access.token.claim"] == "true"


def test_the_automation_client_is_confidential_with_a_service_account() -> None:
    automation = client("purge-automation")
    assert automation["publicClient"] is False
    assert automation["serviceAccountsEnabled"] is True
    assert automation["secret"]
    assert not automation["standardFlowEnabled"]


def test_the_swagger_client_is_public_with_pkce_and_the_instances_redirects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    swagger = client("kafka-purge-swagger")
    assert swagger["publicClient"] is True
    assert swagger["standardFlowEnabled"] is True
    assert not swagger["implicitFlowEnabled"]
    assert not swagger["directAccessGrantsEnabled"]
    assert swagger["attributes"]["pkce.code.challenge.method"] == "S256"
    public_urls = {settings_of(name, monkeypatch).public_url for name in INSTANCES}
    assert set(swagger["redirectUris"]) == {f"{url}/docs/oauth2-redirect" for url in public_urls}
    assert set(swagger["webOrigins"]) == public_urls


def test_the_instances_log_people_in_with_the_swagger_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """The instances read the discovery document inside the network; Keycloak writes every endpoint in
    it with the address browsers use (no dynamic back-channel URLs), so Swagger UI can reach them."""
    for name in INSTANCES:
        auth = settings_of(name, monkeypatch).auth
        assert auth.ui_client_id == "kafka-purge-swagger"
        realm_path = f"/realms/{REALM['realm']}/.well-known/openid-configuration"
        assert urlsplit(auth.discovery_url or "").path == realm_path
    assert env(SERVICES["keycloak"])["KC_HOSTNAME_BACKCHANNEL_DYNAMIC"] == "false"


def test_users_and_groups_exist_and_the_super_user_group_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    groups = {f"/{group['name']}" for group in REALM["groups"]}
    users = {user["username"]: user for user in REALM["users"]}
    for user in users.values():
        assert set(user["groups"]) <= groups, user["username"]
        assert user.get("serviceAccountClientId") or user["credentials"][0]["value"], user["username"]
    assert users["service-account-purge-automation"]["serviceAccountClientId"] == "purge-automation"
    super_users = settings_of(INSTANCES[0], monkeypatch).super_user_set()
    assert {f"/{name.removeprefix('Group:')}" for name in super_users} <= groups
    humans = [user for user in users.values() if "serviceAccountClientId" not in user]
    assert len(humans) >= 2
