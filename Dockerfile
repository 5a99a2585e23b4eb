# agentcore mcp --http for one mounted workspace (see docs/deploy.md).
#
#   docker build -t agentcore .
#   docker run --rm -p 8080:8080 -v "$PWD:/workspace" \
#     -e AGENTCORE_MCP_TOKEN="$(openssl rand -hex 32)" agentcore
#
# The server listens on 0.0.0.0:8080 inside the container, so it refuses
# to start without a token: AGENTCORE_MCP_TOKEN, or --token-file FILE (a
# mounted secret). Readiness: GET /healthz. The MCP endpoint: /mcp.

# ---- build ---------------------------------------------------------------
FROM rust:1.88-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin agentcore \
 && strip target/release/agentcore

# ---- run -----------------------------------------------------------------
FROM debian:bookworm-slim AS run
# bash runs the model's commands; git and the usual tools are what coding
# agents expect to find. ca-certificates for commands that fetch.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates git procps \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 agentcore \
 && useradd --uid 10001 --gid 10001 --home-dir /home/agentcore --create-home \
      --shell /usr/sbin/nologin agentcore \
 && mkdir /workspace && chown agentcore:agentcore /workspace
COPY --from=build /src/target/release/agentcore /usr/local/bin/agentcore
USER 10001:10001
WORKDIR /workspace
ENV HOME=/home/agentcore
EXPOSE 8080
# SIGTERM ends every session (background jobs killed) before the exit.
STOPSIGNAL SIGTERM
ENTRYPOINT ["agentcore", "mcp", "--http", "0.0.0.0:8080", "--root", "/workspace"]
# Extra options (--mode, --policy FILE, --token-file FILE, --idle-timeout,
# --max-sessions, --allow-origin) go after the image name.
CMD []
