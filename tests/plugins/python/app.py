"""An email-verifier plugin in Python (componentize-py 0.25).

It calls the vendor through the host's guarded HTTP import, exactly like the
Rust example-verifier: GET {base}/v1/verify?email=... with a bearer key.
"""

import json
from urllib.parse import quote

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import http, log, types

DEFAULT_BASE = "https://api.verifier.example"


def _base(ctx: types.VendorContext) -> str:
    return (ctx.base_url or DEFAULT_BASE).rstrip("/")


def _get(ctx: types.VendorContext, url: str) -> dict:
    req = http.Request(
        method=http.Method.GET,
        url=url,
        headers=[("authorization", "Bearer " + ctx.api_key)],
        body=None,
        timeout_ms=None,
    )
    try:
        resp = http.send(req)
    except Err as e:
        raise Err(types.PluginError_Transient("network: " + str(e.value)))
    if resp.status == 429:
        raise Err(types.PluginError_RateLimited(types.RateLimit(retry_after_ms=None, message="429")))
    if resp.status in (401, 403):
        raise Err(types.PluginError_Auth("key refused"))
    if resp.status >= 500:
        raise Err(types.PluginError_Transient("HTTP %d" % resp.status))
    if resp.status >= 400:
        raise Err(types.PluginError_InvalidInput("HTTP %d" % resp.status))
    return json.loads(bytes(resp.body))


class Verifier(exports.Verifier):
    def metadata(self) -> types.VendorMetadata:
        return types.VendorMetadata(identifier="py-verifier", display_name="Python verifier", list_rate_usd=0.001, fallback_rank=50)

    def validate_key(self, ctx: types.VendorContext) -> types.KeyValidation:
        body = _get(ctx, _base(ctx) + "/v1/credits")
        return types.KeyValidation(credits_remaining=body.get("credits"))

    def verify(self, ctx: types.VendorContext, email: str) -> types.VerificationResult:
        if "@" not in email:
            raise Err(types.PluginError_InvalidInput("not an email address"))
        if ctx.base_url is None:
            # Pure-logic path, used to measure the per-call cost of a Python component.
            ok = "." in email.split("@", 1)[1]
            raw = "local"
        else:
            body = _get(ctx, _base(ctx) + "/v1/verify?email=" + quote(email, safe=""))
            ok = body.get("result") == "deliverable"
            raw = body.get("result", "unknown")
            log.log(log.Level.DEBUG, "verified " + email)
        return types.VerificationResult(
            email=email,
            provider="py-verifier",
            status=types.VerificationStatus.VALID if ok else types.VerificationStatus.INVALID,
            deliverability=types.Deliverability.DELIVERABLE if ok else types.Deliverability.UNDELIVERABLE,
            is_disposable=False,
            is_role=email.split("@", 1)[0] in ("info", "sales", "admin"),
            is_catch_all=None,
            confidence=None,
            raw_status=raw,
        )
