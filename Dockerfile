# Production image: slim, non-root, with a health check. Needs DATABASE_URL (PostgreSQL + pgvector).
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOST=0.0.0.0 PORT=9621 \
    TIKTOKEN_CACHE_DIR=/home/app/.cache/tiktoken
RUN useradd --create-home --uid 10001 app
COPY --from=build /install /usr/local
WORKDIR /srv
COPY alembic.ini ./
COPY migrations ./migrations
COPY app ./app
USER app
EXPOSE 9621
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9621/health', timeout=4).status == 200 else 1)"
CMD ["python", "-m", "app"]
