"""Schemathesis hooks for Outreach.

Authentication: /auth/* dashboard routes get a dashboard JWT, every other
route an API key. API keys rotate over several keys of one Enterprise account
so the per-key limit (1000/min, bursts to 2x) is not what the run measures;
the JWT belongs to a different account, so fuzzed DELETE /auth/api-keys/{id}
calls can never revoke the keys the run depends on.
"""

import itertools
import os
import threading

import schemathesis

_KEYS = itertools.cycle(os.environ["OUTREACH_ST_KEYS"].split(","))
_JWT = os.environ["OUTREACH_ST_JWT"]
_LOCK = threading.Lock()


@schemathesis.auth()
class OutreachAuth:
    def get(self, case, ctx):
        # The tokens are fixed for the run; set() picks one per request.
        return "static"

    def set(self, case, data, ctx):
        if case.path.startswith("/auth/"):
            token = _JWT
        else:
            with _LOCK:
                token = next(_KEYS)
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {token}"
