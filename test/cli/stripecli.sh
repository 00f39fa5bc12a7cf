#!/bin/bash
# Runs inside `unshare -n` (test/cli/stripecli.test.ts): only loopback exists, so the CLI's call to
# GitHub fails at once. Starts its own PostgreSQL, Redis and Sandbank, then the real CLI.
set -euo pipefail
ip link set lo up
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STRIPE="$ROOT/node_modules/@stripe/cli-linux-x64/bin/stripe"
TMP=$(mktemp -d); chown postgres "$TMP"
PGPORT=55432 REDISPORT=56379 APIPORT=12111 HOOKPORT=4242
cleanup() { kill $(jobs -p) 2>/dev/null || true; runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$TMP/pg" stop -m immediate >/dev/null 2>&1 || true; rm -rf "$TMP"; }
trap cleanup EXIT
runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb -D "$TMP/pg" -U postgres -A trust >/dev/null
runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$TMP/pg" -o "-p $PGPORT -k $TMP -c listen_addresses=127.0.0.1" -l "$TMP/pg.log" start >/dev/null
redis-server --port $REDISPORT --save '' --appendonly no >/dev/null &
export DATABASE_URL="postgresql://postgres@127.0.0.1:$PGPORT/sandbank" REDIS_URL="redis://127.0.0.1:$REDISPORT" PORT=$APIPORT HOST=127.0.0.1
export PUBLIC_URL="http://127.0.0.1:$APIPORT" STRIPE_CLI_TELEMETRY_OPTOUT=1 HOME="$TMP" XDG_CONFIG_HOME="$TMP"
cd "$ROOT"
node scripts/build.js --if-stale >/dev/null
node dist/src/cli/migrate.js >"$TMP/migrate.log" 2>&1 || { cat "$TMP/migrate.log"; exit 1; }
node dist/src/main.js >"$TMP/api.log" 2>&1 &
for i in $(seq 100); do curl -sf "http://127.0.0.1:$APIPORT/healthz" >/dev/null && break; sleep 0.2; done
KEY="sk_test_$(head -c 18 /dev/urandom | base64 | tr -dc A-Za-z0-9 | head -c 24)"
BASE="--api-base http://127.0.0.1:$APIPORT --api-key $KEY"
# The receiver: verifies each webhook with the secret `stripe listen` printed.
SECRET=$("$STRIPE" listen $BASE --print-secret 2>"$TMP/secret.err")
echo "secret:${SECRET:0:6}"
node "$ROOT/test/cli/receiver.js" "$HOOKPORT" "$SECRET" >"$TMP/received.jsonl" &
"$STRIPE" listen $BASE --forward-to "http://127.0.0.1:$HOOKPORT/webhook" --events customer.created,payment_intent.succeeded >"$TMP/listen.out" 2>&1 &
for i in $(seq 100); do grep -q "Ready!" "$TMP/listen.out" && break; sleep 0.2; done
grep -q "Ready!" "$TMP/listen.out" || { echo "listen not ready:"; cat "$TMP/listen.out"; exit 1; }
"$STRIPE" customers create $BASE --email cli@example.com >"$TMP/customer.json"
echo "customer:$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).id)' "$TMP/customer.json")"
"$STRIPE" trigger payment_intent.succeeded $BASE >"$TMP/trigger.out" 2>&1 && echo "trigger:ok" || { echo "trigger:failed"; cat "$TMP/trigger.out"; }
# TRIGGER_ALL=1: every trigger the CLI lists, counted (the figure the README quotes).
if [ "${TRIGGER_ALL:-}" = 1 ]; then
  pass=0; total=0
  for ev in $("$STRIPE" trigger --help | sed -n '/Supported events/,/^$/p' | tail -n +2); do
    total=$((total+1))
    if timeout 30 "$STRIPE" trigger "$ev" $BASE >"$TMP/t.out" 2>&1; then pass=$((pass+1)); echo "pass:$ev"; else echo "fail:$ev"; fi
  done
  echo "triggers:$pass/$total"
fi
sleep 3
echo "received:"; cat "$TMP/received.jsonl"
echo "listen:"; cat "$TMP/listen.out"
