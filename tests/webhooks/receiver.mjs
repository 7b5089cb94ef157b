// A webhook receiver as our users run them: every delivery is verified with
// @octokit/webhooks-methods (the X-Service-Signature "sha256=" header) and
// with standardwebhooks (the webhook-id/-timestamp/-signature headers).
//
//   node receiver.mjs            prints "listening on <port>", then serves
//   POST /config {secret, fail_first}   the secret to verify with; answer 503
//                               to the first `fail_first` attempts of each delivery
//   GET  /stats                 what arrived and what verified
//   POST anything else          a delivery
import http from "node:http";
import { verify } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";

let secret = null;
let failFirst = 0;
const attempts = new Map(); // delivery id -> attempts seen
const stats = { received: 0, octokit_ok: 0, standard_ok: 0, bad: [], delivered: [] };

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const server = http.createServer(async (req, res) => {
  const body = await readBody(req);
  if (req.url === "/config") {
    const c = JSON.parse(body);
    secret = c.secret;
    failFirst = c.fail_first ?? 0;
    res.writeHead(204).end();
    return;
  }
  if (req.url === "/stats") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ...stats, unique: new Set(stats.delivered.map((d) => d.id)).size }));
    return;
  }
  stats.received += 1;
  const id = req.headers["x-service-delivery-id"];
  let octokitOk = false;
  let standardOk = false;
  try {
    octokitOk = await verify(secret, body, req.headers["x-service-signature"]);
  } catch (e) {
    octokitOk = false;
  }
  try {
    new Webhook(secret).verify(body, req.headers);
    standardOk = true;
  } catch (e) {
    standardOk = false;
  }
  if (octokitOk) stats.octokit_ok += 1;
  if (standardOk) stats.standard_ok += 1;
  if (!octokitOk || !standardOk) {
    stats.bad.push({ id, octokitOk, standardOk });
    res.writeHead(401).end("bad signature");
    return;
  }
  const seen = (attempts.get(id) ?? 0) + 1;
  attempts.set(id, seen);
  if (seen <= failFirst) {
    res.writeHead(503).end("down");
    return;
  }
  const envelope = JSON.parse(body);
  stats.delivered.push({ id, event: envelope.event, data: envelope.data });
  res.writeHead(200).end("ok");
});

server.keepAliveTimeout = 30000;
server.listen(0, "127.0.0.1", () => {
  console.log(`listening on ${server.address().port}`);
});
