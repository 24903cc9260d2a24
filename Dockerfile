# memquill-mcp over streamable HTTP in a container (docs/adapters/mcp.md, "In a container").
#
#   docker build -t memquill-mcp .
#
# Built from this source tree and its uv.lock: the server and the core, nothing else. The image
# holds no secret: the bearer token comes at run time from $MEMQUILL_MCP_TOKEN or a mounted
# file (--token-file), and the server refuses to start without one. The workspace is the
# /workspace volume; the record key lives in /data (keep it with the workspace).

FROM python:3.11-slim-bookworm AS build
RUN pip install --no-cache-dir --disable-pip-version-check uv==0.13.8
ENV UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/opt/memquill
WORKDIR /src
COPY pyproject.toml uv.lock ./
COPY packages ./packages
# memquill-mcp and memquill as the lock pins them, installed (not linked to /src).
RUN uv sync --locked --no-dev --no-editable --package memquill-mcp

FROM python:3.11-slim-bookworm
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/memquill memquill \
    && install -d -o memquill -g memquill -m 0700 /workspace \
    && install -d -o memquill -g memquill -m 0755 /data
COPY --from=build /opt/memquill /opt/memquill
# The index is a cache, rebuilt from the notes: /tmp suits any user the container runs as.
ENV PATH=/opt/memquill/bin:$PATH XDG_DATA_HOME=/data XDG_CACHE_HOME=/tmp/cache \
    PYTHONUNBUFFERED=1
USER memquill
VOLUME ["/workspace", "/data"]
EXPOSE 8765
# Every address in the container, so a published port reaches it: only with a token. Clients
# on the container host use localhost or 127.0.0.1; add the names others use (--allowed-host).
ENTRYPOINT ["memquill-mcp", "--workspace", "/workspace", "--transport", "http", \
    "--host", "0.0.0.0", "--port", "8765", "--allow-remote", \
    "--allowed-host", "localhost:*", "--allowed-host", "127.0.0.1:*"]
