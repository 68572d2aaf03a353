# The kafka-purge service image (API + executor). Used by docker-compose.yml.
FROM python:3.11-slim
WORKDIR /srv/kafka-purge
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY migrations ./migrations
COPY kafka_emulator ./kafka_emulator
RUN pip install --no-cache-dir . && useradd --system --uid 10001 purge
USER purge
EXPOSE 8080
CMD ["kafka-purge", "serve", "--host", "0.0.0.0", "--port", "8080"]
