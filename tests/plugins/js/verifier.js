// An email-verifier plugin in JavaScript (componentize-js), built from the
// same WIT as the Rust and Python ones. Exports are named after the WIT
// interface (`verifier`); a thrown `{ tag, val }` becomes the result's error.
import { send } from 'outreach:plugin/http@0.1.0';

const DEFAULT_BASE = 'https://api.verifier.example';

function base(ctx) {
  return (ctx.baseUrl ?? DEFAULT_BASE).replace(/\/+$/, '');
}

function get(ctx, url) {
  let resp;
  try {
    resp = send({ method: 'get', url, headers: [['authorization', `Bearer ${ctx.apiKey}`]], body: undefined, timeoutMs: undefined });
  } catch (e) {
    throw { tag: 'transient', val: `network: ${JSON.stringify(e.payload ?? e)}` };
  }
  if (resp.status === 429) throw { tag: 'rate-limited', val: { retryAfterMs: undefined, message: '429' } };
  if (resp.status === 401 || resp.status === 403) throw { tag: 'auth', val: 'key refused' };
  if (resp.status >= 500) throw { tag: 'transient', val: `HTTP ${resp.status}` };
  if (resp.status >= 400) throw { tag: 'invalid-input', val: `HTTP ${resp.status}` };
  return JSON.parse(new TextDecoder().decode(resp.body));
}

export const verifier = {
  metadata() {
    return { identifier: 'js-verifier', displayName: 'JavaScript verifier', listRateUsd: 0.001, fallbackRank: 51 };
  },
  validateKey(ctx) {
    const body = get(ctx, `${base(ctx)}/v1/credits`);
    return { creditsRemaining: body.credits === undefined ? undefined : BigInt(body.credits) };
  },
  verify(ctx, email) {
    const at = email.indexOf('@');
    if (at < 0) throw { tag: 'invalid-input', val: 'not an email address' };
    let ok;
    let raw;
    if (ctx.baseUrl === undefined) {
      ok = email.slice(at + 1).includes('.');
      raw = 'local';
    } else {
      const body = get(ctx, `${base(ctx)}/v1/verify?email=${encodeURIComponent(email)}`);
      ok = body.result === 'deliverable';
      raw = body.result ?? 'unknown';
    }
    return {
      email,
      provider: 'js-verifier',
      status: ok ? 'valid' : 'invalid',
      deliverability: ok ? 'deliverable' : 'undeliverable',
      isDisposable: false,
      isRole: ['info', 'sales', 'admin'].includes(email.slice(0, at)),
      isCatchAll: undefined,
      confidence: undefined,
      rawStatus: raw,
    };
  },
};
