"""The client openapi-python-client generated from /openapi.json, against a
running server (tests/openapi/run.sh sets it up).

Environment: OUTREACH_BASE (the server's URL), OUTREACH_API_KEY (a key of an
Enterprise account), OUTREACH_ENCRYPTION_KEY (the server's master key, to
sign an open-pixel token the way a sent message's pixel URL is signed).
"""

import base64
import hashlib
import hmac
import os
import unittest
from http import HTTPStatus

from outreach_client import AuthenticatedClient, Client
from outreach_client.api.account import get_account
from outreach_client.api.lists import create_lead_list, export_lead_list_funnel, get_lead_list
from outreach_client.api.tracking import track_open
from outreach_client.models import AccountView, ErrorBody, LeadList, LeadListDetail, NewLeadList
from outreach_client.types import File

BASE = os.environ["OUTREACH_BASE"]
API_KEY = os.environ["OUTREACH_API_KEY"]


def open_token(message: int) -> str:
    """An open-pixel token (host/outbound/src/tracking/token.rs): version and
    kind, the message id as LEB128, then HMAC-SHA256 truncated to 16 bytes
    under the key derived from the master key for `tracking`."""
    master = base64.b64decode(os.environ["OUTREACH_ENCRYPTION_KEY"])
    key = hmac.new(master, b"tracking", hashlib.sha256).digest()
    payload = bytearray([1 << 4 | 1])
    while True:
        byte = message & 0x7F
        message >>= 7
        if message:
            payload.append(byte | 0x80)
        else:
            payload.append(byte)
            break
    tag = hmac.new(key, bytes(payload), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(bytes(payload) + tag).rstrip(b"=").decode()


class GeneratedClient(unittest.TestCase):
    def setUp(self):
        self.client = AuthenticatedClient(base_url=BASE, token=API_KEY, raise_on_unexpected_status=True)
        self.anonymous = Client(base_url=BASE, raise_on_unexpected_status=True)

    def test_the_account_of_the_key(self):
        account = get_account.sync(client=self.client)
        self.assertIsInstance(account, AccountView)
        self.assertEqual(account.plan, "enterprise")

    def test_a_list_created_then_read(self):
        created = create_lead_list.sync(
            client=self.client,
            body=NewLeadList(name="From the generated client", description="openapi-python-client"),
        )
        self.assertIsInstance(created, LeadList)
        self.assertEqual(created.name, "From the generated client")
        detail = get_lead_list.sync(list_id=created.id, client=self.client)
        self.assertIsInstance(detail, LeadListDetail)
        self.assertEqual(detail.id, created.id)
        self.assertEqual(detail.items, [])
        # A CSV download is text: the client answers a str.
        csv = export_lead_list_funnel.sync(list_id=created.id, client=self.client)
        self.assertIsInstance(csv, str)
        self.assertTrue(csv.startswith("Domain,Status,Notes"), csv)

    def test_an_error_reads_as_the_detail_body(self):
        answer = get_lead_list.sync_detailed(list_id=999_999_999, client=self.client)
        self.assertEqual(answer.status_code, HTTPStatus.NOT_FOUND)
        self.assertIsInstance(answer.parsed, ErrorBody)
        self.assertTrue(answer.parsed.detail)

    def test_a_bad_key_reads_as_the_detail_body(self):
        stranger = AuthenticatedClient(base_url=BASE, token="nope_0000", raise_on_unexpected_status=True)
        answer = get_account.sync_detailed(client=stranger)
        self.assertEqual(answer.status_code, HTTPStatus.UNAUTHORIZED)
        self.assertIsInstance(answer.parsed, ErrorBody)

    def test_the_open_pixel_is_bytes(self):
        # No message 1 exists; the pixel is served whatever the recording does.
        answer = track_open.sync_detailed(token=open_token(1), client=self.anonymous)
        self.assertEqual(answer.status_code, HTTPStatus.OK)
        self.assertEqual(answer.headers["content-type"], "image/gif")
        self.assertIsInstance(answer.parsed, File)
        gif = answer.parsed.payload.read()
        self.assertTrue(gif.startswith(b"GIF89a"), gif)
        self.assertEqual(gif, answer.content)

    def test_a_tampered_pixel_token_reads_as_the_detail_body(self):
        token = open_token(1)
        tampered = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
        answer = track_open.sync_detailed(token=tampered, client=self.anonymous)
        self.assertEqual(answer.status_code, HTTPStatus.NOT_FOUND)
        self.assertIsInstance(answer.parsed, ErrorBody)


if __name__ == "__main__":
    unittest.main(verbosity=2)
