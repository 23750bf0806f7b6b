#!/usr/bin/env bash
# End-to-end demo against a running Herald (see scripts/run-local.sh):
# creates app "demo", gives it the provider sandbox's FCM and APNs credentials,
# registers device "phone-1", sends it a push, waits until the message is "sent",
# and shows that the sandbox (standing in for FCM) received it. Then registers an
# MQTT device "sensor-1", connects it with mosquitto_sub to the connection manager,
# sends it a push and shows it received and the message "delivered" (the device's
# PUBACK is the receipt).
#
# Idempotent: if the app already exists, a new API key is issued for it instead.
#
# Environment (all optional):
#   ADMIN_TOKEN            admin bearer token (default: contents of .run/admin-token)
#   HERALD_DISPATCHER_URL  default http://127.0.0.1:8080
#   HERALD_SANDBOX_URL     default http://127.0.0.1:9090
#   HERALD_MQTT_HOST/PORT  the connection manager, default 127.0.0.1:1883
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

DISPATCHER="${HERALD_DISPATCHER_URL:-http://127.0.0.1:8080}"
SANDBOX="${HERALD_SANDBOX_URL:-http://127.0.0.1:9090}"
APP=demo
DEVICE=phone-1
TOKEN=demo-token-1
TOPIC=news

if [[ -z "${ADMIN_TOKEN:-}" ]]; then
  [[ -s "${HERALD_RUN_DIR}/admin-token" ]] ||
    die "no admin token: set ADMIN_TOKEN or start Herald with scripts/run-local.sh (writes .run/admin-token)"
  ADMIN_TOKEN="$(<"${HERALD_RUN_DIR}/admin-token")"
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
BODY="${TMP}/body" # response body of the last request

# Bearer tokens go to curl in header files (-H @file), not on its command line.
bearer_file() {
  local file="$1" token="$2"
  (
    umask 077
    printf 'Authorization: Bearer %s\n' "$token" >"$file"
  )
}
bearer_file "${TMP}/admin.hdr" "$ADMIN_TOKEN"
: >"${TMP}/none.hdr"

# http METHOD URL AUTH [DATA]: sends a request and prints the HTTP status code; the
# response body is left in $BODY. AUTH is admin, app or none; DATA is JSON text,
# or @file like curl's --data-binary.
http() {
  local method="$1" url="$2" auth="$3" data="${4:-}"
  local args=(-sS --max-time 10 -o "$BODY" -w '%{http_code}' -X "$method"
    -H 'Accept: application/json' -H "@${TMP}/${auth}.hdr")
  if [[ -n "$data" ]]; then
    args+=(-H 'Content-Type: application/json' --data-binary "$data")
  fi
  curl "${args[@]}" "$url" || true # on a connection error curl prints 000 itself
}

# expect STATUS WHAT ALLOWED...: fails with the response if STATUS is not allowed.
expect() {
  local status="$1" what="$2" ok
  shift 2
  for ok in "$@"; do
    [[ "$status" == "$ok" ]] && return 0
  done
  echo "--- response (HTTP ${status}):" >&2
  cat "$BODY" >&2 2>/dev/null || true
  echo >&2
  die "${what}: expected HTTP $*, got ${status}"
}

# json FILE PATH: prints the value at a dotted PATH (e.g. apiKey.key) of a JSON file;
# strings raw, anything else as JSON. Fails if the path is absent.
json() {
  python3 - "$1" "$2" <<'PY'
import json, sys
value = json.load(open(sys.argv[1]))
for part in sys.argv[2].split("."):
    value = value[int(part)] if isinstance(value, list) else value[part]
print(value if isinstance(value, str) else json.dumps(value))
PY
}

show() { python3 -m json.tool "$BODY" 2>/dev/null | sed 's/^/    /' || cat "$BODY"; }

# --------------------------------------------------------------------------
status="$(http GET "${DISPATCHER}/actuator/health/readiness" none)"
expect "$status" "dispatcher readiness at ${DISPATCHER} (is Herald running? scripts/run-local.sh)" 200

log "creating app '${APP}'"
status="$(http POST "${DISPATCHER}/v1/apps" admin "{\"id\":\"${APP}\",\"name\":\"Demo app\"}")"
if [[ "$status" == 409 ]]; then
  log "app '${APP}' exists already: issuing a new API key for it"
  status="$(http POST "${DISPATCHER}/v1/apps/${APP}/keys" admin)"
  expect "$status" "POST /v1/apps/${APP}/keys" 201
  api_key="$(json "$BODY" key 2>/dev/null || json "$BODY" apiKey.key)"
else
  expect "$status" "POST /v1/apps" 201
  api_key="$(json "$BODY" apiKey.key)"
fi
bearer_file "${TMP}/app.hdr" "$api_key"
if [[ -d "$HERALD_RUN_DIR" ]]; then
  (
    umask 077
    printf '%s\n' "$api_key" >"${HERALD_RUN_DIR}/demo-api-key"
  )
fi

log "fetching the provider sandbox's demo credentials"
status="$(http GET "${SANDBOX}/sandbox/demo-credentials" none)"
expect "$status" "GET ${SANDBOX}/sandbox/demo-credentials" 200
cp "$BODY" "${TMP}/credentials.json"
python3 - "${TMP}/credentials.json" "${TMP}/fcm.json" "${TMP}/apns.json" <<'PY'
import json, sys
credentials = json.load(open(sys.argv[1]))
json.dump({"serviceAccount": credentials["fcm"]["serviceAccount"]}, open(sys.argv[2], "w"))
json.dump(credentials["apns"], open(sys.argv[3], "w"))
PY

log "setting the app's FCM and APNs credentials"
status="$(http PUT "${DISPATCHER}/v1/apps/${APP}/credentials/fcm" admin "@${TMP}/fcm.json")"
expect "$status" "PUT /v1/apps/${APP}/credentials/fcm" 204 200
status="$(http PUT "${DISPATCHER}/v1/apps/${APP}/credentials/apns" admin "@${TMP}/apns.json")"
expect "$status" "PUT /v1/apps/${APP}/credentials/apns" 204 200

log "registering device '${DEVICE}' (fcm, token ${TOKEN}, topic ${TOPIC})"
status="$(http PUT "${DISPATCHER}/v1/apps/${APP}/devices/${DEVICE}" app \
  "{\"channel\":\"fcm\",\"token\":\"${TOKEN}\",\"topics\":[\"${TOPIC}\"]}")"
expect "$status" "PUT /v1/apps/${APP}/devices/${DEVICE}" 200 201
show

# What the sandbox had received for this token before (the demo may run repeatedly).
received_fcm() {
  local status
  status="$(http GET "${SANDBOX}/sandbox/received?token=${TOKEN}" none)"
  expect "$status" "GET ${SANDBOX}/sandbox/received" 200
  json "$BODY" fcm
}
before="$(received_fcm)"

log "sending a push to device '${DEVICE}'"
status="$(http POST "${DISPATCHER}/v1/apps/${APP}/messages" app \
  "{\"to\":{\"devices\":[\"${DEVICE}\"]},\"title\":\"Hello from Herald\",\"body\":\"Your first push, delivered through the provider sandbox\",\"data\":{\"source\":\"demo\"}}")"
expect "$status" "POST /v1/apps/${APP}/messages" 202
message_id="$(json "$BODY" id)"
show

log "waiting for message ${message_id} to be sent (at most 30 s)"
deadline=$((SECONDS + 30))
while :; do
  status="$(http GET "${DISPATCHER}/v1/apps/${APP}/messages/${message_id}" app)"
  expect "$status" "GET /v1/apps/${APP}/messages/${message_id}" 200
  state="$(json "$BODY" state)"
  case "$state" in
    sent) break ;;
    failed | expired)
      show
      die "message ${message_id} ended in state '${state}'"
      ;;
  esac
  if ((SECONDS >= deadline)); then
    show
    die "message ${message_id} still '${state}' after 30 s"
  fi
  sleep 0.5
done
show

log "the provider sandbox received it:"
after="$(received_fcm)"
show
((after > before)) || die "sandbox FCM count for ${TOKEN} did not grow (before ${before}, after ${after})"

# --------------------------------------------------------------------------
MQTT_DEVICE=sensor-1
log "registering MQTT device '${MQTT_DEVICE}' (no provider token: it connects to Herald)"
status="$(http PUT "${DISPATCHER}/v1/apps/${APP}/devices/${MQTT_DEVICE}" app '{"channel":"mqtt","topics":["news"]}')"
expect "$status" "PUT /v1/apps/${APP}/devices/${MQTT_DEVICE}" 200 201
cp "$BODY" "${TMP}/mqtt-device.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["mqtt"]["password"]="(secret)"; print(json.dumps(d, indent=4))' \
  "${TMP}/mqtt-device.json" | sed 's/^/    /'

log "connecting it with mosquitto_sub (MQTT 5, QoS 1) and sending it a push"
# The password goes on mosquitto_sub's command line: fine for this local demo device only.
mosquitto_sub -V mqttv5 -q 1 -C 1 -W 30 -h "${HERALD_MQTT_HOST:-127.0.0.1}" -p "${HERALD_MQTT_PORT:-1883}" \
  -i "$(json "${TMP}/mqtt-device.json" mqtt.clientId)" -u "$(json "${TMP}/mqtt-device.json" mqtt.username)" \
  -P "$(json "${TMP}/mqtt-device.json" mqtt.password)" -t "$(json "${TMP}/mqtt-device.json" mqtt.topic)" \
  >"${TMP}/mqtt-received" 2>&1 &
sub_pid=$!
status="$(http POST "${DISPATCHER}/v1/apps/${APP}/messages" app \
  "{\"to\":{\"devices\":[\"${MQTT_DEVICE}\"]},\"title\":\"Hello over MQTT\",\"body\":\"Confirmed by the device itself\",\"data\":{\"source\":\"demo\"}}")"
expect "$status" "POST /v1/apps/${APP}/messages" 202
mqtt_message_id="$(json "$BODY" id)"
wait "$sub_pid" || die "mosquitto_sub received nothing: $(cat "${TMP}/mqtt-received")"
log "the device received:"
sed 's/^/    /' "${TMP}/mqtt-received"

log "waiting for message ${mqtt_message_id} to be delivered (at most 30 s)"
deadline=$((SECONDS + 30))
while :; do
  status="$(http GET "${DISPATCHER}/v1/apps/${APP}/messages/${mqtt_message_id}" app)"
  expect "$status" "GET /v1/apps/${APP}/messages/${mqtt_message_id}" 200
  state="$(json "$BODY" state)"
  [[ "$state" == delivered ]] && break
  if ((SECONDS >= deadline)); then
    show
    die "message ${mqtt_message_id} still '${state}' after 30 s"
  fi
  sleep 0.5
done
show

cat <<EOF

Demo OK: message ${message_id} reached the sandbox's FCM endpoint (token ${TOKEN}: ${before} -> ${after}),
and message ${mqtt_message_id} was delivered to MQTT device ${MQTT_DEVICE} (PUBACK received).
The app's API key is in .run/demo-api-key, e.g.:
  curl -H "Authorization: Bearer \$(cat .run/demo-api-key)" ${DISPATCHER}/v1/apps/${APP}/stats
EOF
