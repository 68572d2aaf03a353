# The kafka-purge service image (API + executor), used by docker-compose.yml.
# The build stage makes the same wheel tests/e2e/test_installed_wheel.py installs (from the same inputs,
# tests/wheel_build.py BUILD_INPUTS); the image installs that wheel and nothing from the source tree.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY kafka_emulator ./kafka_emulator
RUN pip wheel --no-deps --wheel-dir /dist .

FROM python:3.11-slim
COPY --from=build /dist /dist
RUN pip install --no-cache-dir /dist/kafka_purge-*.whl \
    && rm -rf /dist \
    && useradd --system --uid 10001 --home-dir /var/lib/kafka-purge --create-home purge
USER purge
WORKDIR /var/lib/kafka-purge
EXPOSE 8080
# Liveness: the process answers HTTP. (Readiness, with the database and each cluster, is GET /readyz.)
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
CMD ["kafka-purge", "serve", "--host", "0.0.0.0", "--port", "8080"]
