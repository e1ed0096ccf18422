# Production image: slim, non-root, with a health check. Needs DATABASE_URL (PostgreSQL + pgvector): neither
# the embedded PostgreSQL (the `embedded` extra) nor the dev tools are installed. Dependencies come from the
# hash-checked lock requirements/base.txt (`make lock`).
FROM python:3.11.14-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN python -m venv /opt/venv
WORKDIR /src
COPY requirements/base.txt ./requirements/base.txt
RUN /opt/venv/bin/pip install --require-hashes -r requirements/base.txt
COPY pyproject.toml README.md ./
COPY app ./app
RUN /opt/venv/bin/pip install --no-deps .

FROM python:3.11.14-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/venv/bin:$PATH \
    HOST=0.0.0.0 PORT=9621 WORKER_PORT=9622 TIKTOKEN_CACHE_DIR=/home/app/.cache/tiktoken
RUN useradd --create-home --uid 10001 app
COPY --from=build /opt/venv /opt/venv
# The app runs from /srv (not site-packages): migrations are found next to the `app` folder.
WORKDIR /srv
COPY alembic.ini ./
COPY migrations ./migrations
COPY app ./app
USER app
EXPOSE 9621 9622
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9621/health', timeout=4).status == 200 else 1)"
CMD ["python", "-m", "app"]
