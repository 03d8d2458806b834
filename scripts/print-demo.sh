#!/usr/bin/env bash
# Seeds a demo customer with a connected simulator instance and prints how to send a first message.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sim="http://127.0.0.1:${SIM_PORT:-18090}"
inbox="$sim/sim/inbox/demo-$(date +%s)"
# The demo's webhook goes to the simulator's inbox, a receiver on this machine. gatewayctl reads
# the local stack's settings (.run/local.env: the key file, loopback opened for webhooks) as it
# does when run by hand.
demo="$(npx --no-install gatewayctl demo --json --webhook-url "$inbox" 2>/dev/null)"
field() { node -e 'const d=JSON.parse(process.argv[1]); process.stdout.write(String(d[process.argv[2]] ?? ""))' "$demo" "$1"; }
base="$(field base_url)"
if [[ -z "$base" ]]; then
  echo "Could not seed the demo account: $demo" >&2
  exit 1
fi
cat <<MSG

The gateway is running.
  Dashboard           $base/  (create an account: $base/sign-up)
  API base URL        $base
  OpenAPI contract    $base/openapi.json
  API metrics         $base/metrics
  Policy consumer     http://127.0.0.1:${POLICY_PORT:-18010}/metrics
  Delivery consumer   http://127.0.0.1:${DELIVERY_PORT:-18020}/metrics
  Instance events     http://127.0.0.1:${INSTANCE_EVENTS_PORT:-18030}/metrics
  Webhooks            http://127.0.0.1:${WEBHOOKS_PORT:-18040}/metrics
  Mail catcher        http://127.0.0.1:${MAIL_WEB_PORT:-1080}  (every mail the dashboard sends: verification and reset links, notices)
  Instance simulator  http://127.0.0.1:${SIM_PORT:-18090}  (ledger: /sim/ledger, apikey: ${SIM_GLOBAL_API_KEY:-sim-global-key})
  Schema registry     http://127.0.0.1:${REGISTRY_PORT:-18081}/apis/ccompat/v7

Demo customer  $(field customer_id)
Demo instance  $(field instance_name) ($(field instance_id)), connected
Demo API key   $(field api_key)
               (shown once; create more with: npx gatewayctl api-key create --customer $(field customer_id))

Send a first message:

curl -sS -X POST '$base/api/send-message' \\
  -H 'Authorization: Bearer $(field api_key)' \\
  -H 'Content-Type: application/json' \\
  -H "Idempotency-Key: first-send-\$(date +%s)" \\
  -d '{"instance_id":"$(field instance_id)","phone":"+14155552671","message":"Your order 1001 has shipped.","message_purpose":"transactional"}'

PBX integration $(field pbx_integration_id) (secret, shown once: $(field pbx_secret)):

curl -sS -X POST '$base/integrations/pbx/webhook/$(field pbx_integration_id)' \\
  -H 'X-Chat-Gateway-PBX-Secret: $(field pbx_secret)' \\
  -H 'Content-Type: application/json' \\
  -d '{"event_type":"missed_call","customer_phone":"+14155552672","call_time":"14:05"}'

Customer webhook (recommended events) posts to $inbox
  signing secret, shown once: $(field webhook_signing_secret)
  see what arrived:  curl -s $inbox
  attempts log:      npx gatewayctl webhook deliveries --instance $(field instance_id)

Compliance: npx gatewayctl policy-log show 1   |   npx gatewayctl policy-log verify

Stop everything with: ${STOP_COMMAND:-make stop}
MSG
