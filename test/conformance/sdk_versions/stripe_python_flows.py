# The flows of an integration on stripe-python 5.0.0 (Debian's python3-stripe), against the
# sandbox at SANDBANK_BASE with the key SANDBANK_KEY: every base URL the library knows points
# there, so nothing leaves the machine. Each step runs on its own and reports what it read or the
# exception it raised; the jest test (python.test.ts) says what each must be. Prints one JSON
# object: {"library", "calls" (requests made), "steps": {name: {"value"} | {"error": {"class", "message", "status"}}}}.
import json
import os
import sys

import stripe

base = os.environ["SANDBANK_BASE"]
stripe.api_key = os.environ["SANDBANK_KEY"]
stripe.api_base = base
stripe.upload_api_base = base
stripe.connect_api_base = base

steps = {}
found = {}
calls = 0


def step(name, run, call=True):
    """A step; `call=False`: it reads what an earlier step answered, with no request."""
    global calls
    calls += 1 if call else 0
    try:
        steps[name] = {"value": run()}
    except Exception as e:  # noqa: BLE001 - each step reports what it raised
        steps[name] = {"error": {"class": type(e).__module__ + "." + type(e).__name__, "message": str(e), "status": getattr(e, "http_status", None)}}


def keep(name, value):
    found[name] = value
    return value


step("customer", lambda: keep("customer", stripe.Customer.create(name="Jenny Rosen", email="jenny@example.com")).id)
step("attach pm_card_visa", lambda: keep("pm", stripe.PaymentMethod.attach("pm_card_visa", customer=found["customer"].id)).customer)
step(
    "default payment method",
    lambda: stripe.Customer.modify(found["customer"].id, invoice_settings={"default_payment_method": found["pm"].id}).invoice_settings.default_payment_method,
)
step("product", lambda: keep("product", stripe.Product.create(name="Gold")).name)
step("price", lambda: keep("price", stripe.Price.create(product=found["product"].id, currency="usd", unit_amount=1000, recurring={"interval": "month"})).unit_amount)
step("subscription", lambda: keep("subscription", stripe.Subscription.create(customer=found["customer"].id, items=[{"price": found["price"].id}])).status)
step("subscription.current_period_end", lambda: found["subscription"].current_period_end, call=False)
step("subscription.current_period_start", lambda: found["subscription"].current_period_start, call=False)
step("subscription.items.data[0].price.id", lambda: found["subscription"]["items"].data[0].price.id, call=False)
step("invoices", lambda: len(keep("invoices", stripe.Invoice.list(customer=found["customer"].id, limit=3)).data))
step("invoice.subscription", lambda: found["invoices"].data[0].subscription, call=False)
step("invoice.paid", lambda: found["invoices"].data[0].paid, call=False)
step("invoice.lines.data[0].price.id", lambda: found["invoices"].data[0].lines.data[0].price.id, call=False)
step("account", lambda: stripe.Account.create(type="express", business_type="individual").type)
step("webhook endpoint", lambda: stripe.WebhookEndpoint.create(url=os.environ["WEBHOOK_URL"], enabled_events=["customer.created"]).secret[:6])
step("identity verification session", lambda: stripe.identity.VerificationSession.create(type="document").status)


def missing_customer():
    stripe.Customer.retrieve("cus_nope")


step("retrieve a missing customer", missing_customer)

json.dump({"library": stripe.version.VERSION, "calls": calls, "steps": steps}, sys.stdout, default=str)
