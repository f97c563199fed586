#!/usr/bin/env bash
# Build /app/payments-api whose history leaks credentials.
set -euo pipefail
t=1704103200
who() {  # who NAME EMAIL TZ [COMMITTER_NAME COMMITTER_EMAIL DELAY]
  t=$((t + 7200))
  export GIT_AUTHOR_NAME="$1" GIT_AUTHOR_EMAIL="$2" GIT_AUTHOR_DATE="@$t $3"
  export GIT_COMMITTER_NAME="${4:-$1}" GIT_COMMITTER_EMAIL="${5:-$2}"
  export GIT_COMMITTER_DATE="@$((t + ${6:-0})) $3"
}
sam() { who "Sam Okafor" "sam@payments.example" "+0100" "$@"; }
lea() { who "Lea Brandt" "lea@payments.example" "-0500" "$@"; }
commit() { git add -A; git commit -q -m "$1"; }

mkdir -p /app/payments-api && cd /app/payments-api
git init -q -b main
git config user.name "Sam Okafor"; git config user.email "sam@payments.example"
mkdir -p config payments deploy scripts

cat > README.md <<'T'
# payments-api

Charges, refunds and webhooks for the shop.
T
cat > app.py <<'T'
from payments.client import Client

client = Client()
T
cat > config/settings.py <<'T'
import os

ENV = os.environ.get("APP_ENV", "dev")
T
sam; commit "Initial project layout"

cat > payments/__init__.py <<'T'
T
cat > payments/client.py <<'T'
from config import settings


class Client:
    def __init__(self, key=None):
        self.key = key or getattr(settings, "STRIPE_KEY", "")

    def charge(self, cents):
        return {"amount": cents, "auth": bool(self.key)}
T
lea; commit "Add payment client"

cat >> config/settings.py <<'T'

STRIPE_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_REGION = "eu-central-1"
T
cat > deploy/prod.env <<'T'
STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc
AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
DB_PASSWORD=correct-horse-battery-staple
T
sam; commit "Configure Stripe and AWS"

cat > payments/refunds.py <<'T'
def refund(charge, cents=None):
    return {"refunded": cents if cents is not None else charge["amount"]}
T
lea; commit "Add refunds"
git tag v1.0

sed -i 's/^DB_PASSWORD=.*/DB_PASSWORD=tr0ub4dor-and-3/' deploy/prod.env
sam; commit "Rotate prod credentials"

cat > payments/webhooks.py <<'T'
import hmac


def verify(payload, signature, secret):
    digest = hmac.new(secret.encode(), payload, "sha256").hexdigest()
    return hmac.compare_digest(digest, signature)
T
lea; git add -A
git commit -q -m "Add webhook handler" -m "Tested locally against sk_live_4eC39HqLyjWDarjtT1zdp7dc; see AKIAIOSFODNN7EXAMPLE in the AWS console."
git branch release/1.x

# --- main continues --------------------------------------------------------
cat > config/settings.py <<'T'
import os

ENV = os.environ.get("APP_ENV", "dev")

STRIPE_KEY = os.environ.get("STRIPE_KEY", "")
AWS_ACCESS_KEY_ID = os.environ.get("AWS_ACCESS_KEY_ID", "")
AWS_REGION = "eu-central-1"
T
git rm -q deploy/prod.env
sam; commit "Read credentials from environment"

cat > payments/retry.py <<'T'
import time


def with_retry(fn, attempts=3, delay=0.5):
    for attempt in range(attempts):
        try:
            return fn()
        except ConnectionError:
            if attempt == attempts - 1:
                raise
            time.sleep(delay * 2 ** attempt)
T
lea; commit "Add retry policy"
sam; git tag -a v2.0 -m "Payments API 2.0"

cat >> README.md <<'T'

## Configuration

Set `STRIPE_KEY` and `AWS_ACCESS_KEY_ID` in the environment.
T
lea; commit "Document configuration"

# --- release/1.x -----------------------------------------------------------
git checkout -q release/1.x
cat > payments/refunds.py <<'T'
def refund(charge, cents=None):
    amount = charge["amount"] if cents is None else min(cents, charge["amount"])
    return {"refunded": amount}
T
lea "Sam Okafor" sam@payments.example 3600; commit "Backport refund cap"
cat > scripts/smoke.sh <<'T'
#!/bin/sh
# Smoke test against the live API.
curl -fsS -u sk_live_51HqLyjWDarjtT1zdp7dcXyZw: https://api.stripe.example/v1/charges?limit=1
curl -fsS -u sk_live_4eC39HqLyjWDarjtT1zdp7dc: https://api.stripe.example/v1/balance
T
chmod +x scripts/smoke.sh
sam; commit "Add smoke test script"
echo 1.1.0 > VERSION
lea; commit "Release 1.1"
git tag -a v1.1 -m "Payments API 1.1 (maintenance)"
git checkout -q main
