#!/usr/bin/env python3
"""Helper of tests/bench/audiences.sh (see its header): generates the pool,
times previews against a plain COUNT(*), creates audiences and alert rules,
and times the evaluation worker against a plain claim of the same events.

Subcommands (each prints one JSON object of figures on stdout):

  generate URL ROWS           synthetic enriched records into domains and
                              pool_facets, straight into the database
  preview URL BASE KEYS ROUNDS
                              50 seeded filter sets through the server,
                              each followed by the same WHERE as a COUNT(*)
  rules BASE KEYS AUDIENCES ALERTS
                              active audiences and alert rules via the API
                              (prints their filters too)
  evaluate URL RULES EVENTS   pool events into pool_events while the
                              server runs, and the reference claim

URL is sqlite:///path/outreach.db or postgres://... (psycopg 3).
"""

import http.client
import json
import random
import statistics
import sys
import time
import urllib.parse

# host/domain-analysis/src/classify.rs TAXONOMY, with a skew.
INDUSTRIES = [
    ("Software", 18), ("IT Services", 12), ("Retail", 11), ("Professional Services", 9),
    ("Marketing & Advertising", 8), ("Manufacturing", 7), ("Financial Services", 6),
    ("Healthcare", 6), ("Real Estate & Construction", 5), ("Education", 4),
    ("Hospitality & Travel", 4), ("Transportation & Logistics", 3),
    ("Media & Entertainment", 3), ("Energy & Utilities", 2), ("Non-profit", 1.5),
    ("Government", 0.5), (None, 5),
]
# 40 countries, Zipf-like (rank^-1.1); a few records have none.
COUNTRY_CODES = (
    "US GB DE FR CA AU NL IN ES IT BR SE CH PL BE JP IE DK NO AT FI NZ SG MX PT CZ IL ZA "
    "AR KR TR RO HU GR CL CO AE UA HK SK"
).split()
COUNTRIES = [(c, 1 / (i + 1) ** 1.1) for i, c in enumerate(COUNTRY_CODES)] + [(None, 0.08)]
# host/domain-analysis/src/classify.rs BUSINESS_TYPES.
BUSINESS = [("B2B", 45), ("B2C", 25), ("B2B2C", 8), ("marketplace", 4), ("non-profit", 3),
            ("government", 2), ("unknown", 13)]
# host/domain-analysis/src/signals.rs AUDIENCE_SIGNALS (bits 0-20), with frequencies.
AUDIENCE = [
    ("has_analytics", .72), ("has_crm", .22), ("has_ecommerce", .18),
    ("has_marketing_automation", .12), ("has_live_chat", .20), ("has_helpdesk", .10),
    ("has_cdn", .55), ("has_ssl", .96), ("has_blog", .42), ("has_social_media", .65),
    ("has_payment", .15), ("has_advertising", .25), ("has_newsletter", .30),
    ("has_video", .20), ("has_podcast", .03), ("has_forum", .04), ("has_job_board", .08),
    ("has_login", .30), ("has_api", .10), ("has_mobile_app", .07), ("has_saas", .09),
]
AUDIENCE_NAMES = [n for n, _ in AUDIENCE]
# ALERT_SIGNALS (bits 21-34): most follow an audience signal, three are their own.
ALERT = [
    ("has_analytics", "has_analytics"), ("has_crm", "has_crm"),
    ("has_ecommerce", "has_ecommerce"), ("has_chat_widget", "has_live_chat"),
    ("has_email_marketing", "has_newsletter"), ("has_payments", "has_payment"),
    ("has_helpdesk", "has_helpdesk"), ("has_cdn", "has_cdn"), ("has_ssl", "has_ssl"),
    ("has_forms", .50), ("has_ads", "has_advertising"), ("has_seo_tools", .15),
    ("has_ab_testing", .05), ("has_api", "has_api"),
]
ALERT_NAMES = [n for n, _ in ALERT]
SHIFT = len(AUDIENCE)
LEVELS = ((80, "hot"), (50, "warm"), (20, "neutral"), (0, "cold"))
DAY = 86_400_000


def level(score):
    return next(name for floor, name in LEVELS if score >= floor)


def cum(pairs):
    values, total, out = [], 0.0, []
    for v, w in pairs:
        total += w
        values.append(v)
        out.append(total)
    return values, out


# ---------------------------------------------------------------- database

class Db:
    """sqlite3 or psycopg behind one `?`-placeholder interface."""

    def __init__(self, url):
        self.pg = url.startswith("postgres")
        if self.pg:
            import psycopg
            self.conn = psycopg.connect(url, autocommit=True)
        else:
            import sqlite3
            path = urllib.parse.urlparse(url).path
            self.conn = sqlite3.connect(path, isolation_level=None, timeout=30)
            # As the server's connections (host/core/src/store/mod.rs).
            self.conn.execute("PRAGMA busy_timeout=30000")
            self.conn.execute("PRAGMA synchronous=NORMAL")

    def sql(self, q):
        return q.replace("?", "%s") if self.pg else q

    def execute(self, q, params=()):
        return self.conn.execute(self.sql(q), params)

    def all(self, q, params=()):
        return self.execute(q, params).fetchall()

    def one(self, q, params=()):
        return self.execute(q, params).fetchone()

    def many(self, q, rows):
        if self.pg:
            with self.conn.cursor() as cur:
                cur.executemany(self.sql(q), rows)
        else:
            self.conn.executemany(q, rows)


# ---------------------------------------------------------------- generate

def signal_bits(rnd):
    bits = 0
    for i, (_, p) in enumerate(AUDIENCE):
        if rnd() < p:
            bits |= 1 << i
    for j, (_, src) in enumerate(ALERT):
        if isinstance(src, str):
            on = bits >> AUDIENCE_NAMES.index(src) & 1
            if src == "has_newsletter":
                on |= bits >> AUDIENCE_NAMES.index("has_marketing_automation") & 1
        else:
            on = rnd() < src
        if on:
            bits |= 1 << (SHIFT + j)
    return bits


def names_of(bits, names, shift):
    return [n for i, n in enumerate(names) if bits >> (shift + i) & 1]


def generate(url, rows):
    rng = random.Random(20261126)
    rnd = rng.random
    ind_v, ind_c = cum(INDUSTRIES)
    cty_v, cty_c = cum(COUNTRIES)
    bus_v, bus_c = cum(BUSINESS)
    now = int(time.time() * 1000)
    db = Db(url)
    start = (db.one("SELECT COALESCE(MAX(id), 0) FROM domains")[0] or 0) + 1
    t0 = time.perf_counter()
    domains, facets = [], []
    json_cache = {}
    for k in range(rows):
        i = start + k
        industry = rng.choices(ind_v, cum_weights=ind_c)[0]
        country = rng.choices(cty_v, cum_weights=cty_c)[0]
        business = rng.choices(bus_v, cum_weights=bus_c)[0]
        conf = min(100, int(rng.betavariate(4, 2) * 101))
        intent = min(100, int(rng.triangular(0, 100, 25)))
        bits = signal_bits(rnd)
        created = now - int(rnd() * 730 * DAY)
        enriched = created + int(rnd() * (now - created))
        lists = json_cache.get(bits)
        if lists is None:
            lists = (json.dumps(names_of(bits, AUDIENCE_NAMES, 0)),
                     json.dumps(names_of(bits, ALERT_NAMES, SHIFT)))
            if len(json_cache) < 200_000:
                json_cache[bits] = lists
        domains.append((
            i, f"company-{i:07d}.example.com", "enriched", f"Company {i}", industry, business,
            conf / 100 + 0.004, intent, level(intent), lists[1], lists[0], country, "import",
            created, enriched, enriched + 90 * DAY, enriched, 1,
        ))
        facets.append((i, industry.lower() if industry else None, country, business, conf,
                       intent, bits, enriched))
    t_gen = time.perf_counter() - t0
    dcols = ("id, domain, status, company_name, industry, business_type, confidence, "
             "intent_score, intent_level, alert_signals, audience_signals, registrant_country, "
             "source, created_at, enriched_at, refresh_at, updated_at, revision")
    fcols = ("domain_id, industry, country, business_type, confidence, intent_score, "
             "signal_bits, seen_at")
    t1 = time.perf_counter()
    if db.pg:
        with db.conn.transaction():
            with db.conn.cursor() as cur:
                with cur.copy(f"COPY domains ({dcols}) FROM STDIN") as cp:
                    for r in domains:
                        cp.write_row(r)
                with cur.copy(f"COPY pool_facets ({fcols}) FROM STDIN") as cp:
                    for r in facets:
                        cp.write_row(r)
            db.execute("SELECT setval(pg_get_serial_sequence('domains', 'id'), "
                       "(SELECT MAX(id) FROM domains))")
        # What autovacuum does soon after such a load (statistics, and the
        # visibility map that lets counts read the covering indexes alone).
        db.execute("VACUUM ANALYZE domains")
        db.execute("VACUUM ANALYZE pool_facets")
    else:
        # The server is not running yet: one big transaction without the WAL.
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("PRAGMA cache_size=-262144")
        db.execute("BEGIN")
        db.many(f"INSERT INTO domains ({dcols}) VALUES ({', '.join('?' * 18)})", domains)
        db.many(f"INSERT INTO pool_facets ({fcols}) VALUES ({', '.join('?' * 8)})", facets)
        db.execute("COMMIT")
        db.execute("PRAGMA journal_mode=WAL")
    t_load = time.perf_counter() - t1
    print(json.dumps({"rows": rows, "generate_s": t_gen, "load_s": t_load,
                      "total_s": t_gen + t_load}))


# ---------------------------------------------------------------- filters

def random_filters(rng, broad):
    """A spec/2 audience filter of a realistic mix; `broad` ones test little."""
    ind = [n for n, _ in INDUSTRIES if n]
    ind_w = [w for n, w in INDUSTRIES if n]
    cty = COUNTRY_CODES
    cty_w = [w for c, w in COUNTRIES if c]
    f = {}
    if broad:
        kind = rng.randrange(5)
        if kind == 0:
            return {}
        if kind == 1:
            return {"min_confidence": rng.choice([50, 60, 70])}
        if kind == 2:
            return {"business_types": ["B2B"]}
        if kind == 3:
            return {"required_signals": ["has_ssl"], "min_intent_score": 20}
        return {"countries": ["US"]}

    def pick(values, weights, k):
        out = []
        while len(out) < k:
            v = rng.choices(values, weights=weights)[0]
            if v not in out:
                out.append(v)
        return out

    n = rng.choices([0, 1, 2, 3], weights=[25, 40, 25, 10])[0]
    if n:
        f["industries"] = pick(ind, ind_w, n)
    n = rng.choices([0, 1, 2, 3], weights=[30, 40, 20, 10])[0]
    if n:
        f["countries"] = pick(cty, cty_w, n)
    if rng.random() < 0.6:
        f["min_confidence"] = rng.choice([40, 50, 60, 70, 80, 90])
    freq = [p for _, p in AUDIENCE]
    n = rng.choices([0, 1, 2], weights=[35, 40, 25])[0]
    if n:
        f["required_signals"] = pick(AUDIENCE_NAMES, freq, n)
    if rng.random() < 0.3:
        ex = [s for s in AUDIENCE_NAMES if s not in f.get("required_signals", [])]
        f["excluded_signals"] = [rng.choice(ex)]
    if rng.random() < 0.4:
        f["business_types"] = pick([b for b, _ in BUSINESS], [w for _, w in BUSINESS],
                                   rng.choice([1, 1, 2]))
    if rng.random() < 0.5:
        f["min_intent_score"] = rng.choice([20, 30, 40, 50, 60, 70, 80])
    return f


def compile_filter(f):
    """audiences::model::AudienceFilters::compile, as a dict."""
    bits = lambda names: sum(1 << AUDIENCE_NAMES.index(n) for n in names)
    return {
        "industries": [i.lower() for i in f.get("industries", [])],
        "countries": f.get("countries", []),
        "business_types": f.get("business_types", []),
        "min_confidence": f.get("min_confidence", 0),
        "min_intent_score": f.get("min_intent_score", 0),
        "required_bits": bits(f.get("required_signals", [])),
        "excluded_bits": bits(f.get("excluded_signals", [])),
    }


def where_sql(c):
    """FacetFilter::where_sql (host/leads/src/domains/facet_filter.rs)."""
    clauses, args = ["1 = 1"], []
    for col in ("industry", "country", "business_type"):
        vals = c[{"industry": "industries", "country": "countries",
                  "business_type": "business_types"}[col]]
        if vals:
            clauses.append(f"f.{col} IN ({', '.join('?' * len(vals))})")
            args += vals
    if c["min_confidence"] > 0:
        clauses.append("f.confidence >= ?")
        args.append(c["min_confidence"])
    if c["min_intent_score"] > 0:
        clauses.append("f.intent_score >= ?")
        args.append(c["min_intent_score"])
    if c["required_bits"]:
        clauses.append("(f.signal_bits & ?) = ?")
        args += [c["required_bits"], c["required_bits"]]
    if c["excluded_bits"]:
        clauses.append("(f.signal_bits & ?) = 0")
        args.append(c["excluded_bits"])
    return " AND ".join(clauses), args


def matches(c, facets):
    """FacetFilter::matches over a Facets dict (None: no facts)."""
    if facets is None:
        return False
    return ((not c["industries"] or facets["industry"] in c["industries"])
            and (not c["countries"] or facets["country"] in c["countries"])
            and facets["confidence"] >= c["min_confidence"]
            and facets["intent_score"] >= c["min_intent_score"]
            and facets["signal_bits"] & c["required_bits"] == c["required_bits"]
            and facets["signal_bits"] & c["excluded_bits"] == 0
            and (not c["business_types"] or facets["business_type"] in c["business_types"]))


# ---------------------------------------------------------------- HTTP

class Api:
    def __init__(self, base, keys_file):
        u = urllib.parse.urlparse(base)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
        self.keys = [k.strip() for k in open(keys_file) if k.strip()]
        self.i = 0

    def call(self, method, path, body=None):
        self.i += 1
        headers = {"content-type": "application/json",
                   "authorization": "Bearer " + self.keys[self.i % len(self.keys)]}
        self.conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        r = self.conn.getresponse()
        data = r.read()
        if r.status >= 300:
            sys.exit(f"{method} {path}: {r.status} {data[:500]!r}")
        return json.loads(data) if data else None


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]


def summary(ms):
    return {"p50_ms": statistics.median(ms), "p99_ms": pct(ms, 99), "n": len(ms)}


# ---------------------------------------------------------------- preview

SAMPLE_SQL = ("SELECT d.domain, d.industry, d.confidence, f.country AS facet_country "
              "FROM pool_facets f JOIN domains d ON d.id = f.domain_id WHERE {w} "
              "ORDER BY f.seen_at DESC, f.domain_id DESC LIMIT 10")


def preview(url, base, keys, rounds):
    rng = random.Random(7)
    filters = [random_filters(rng, broad=i < 5) for i in range(50)]
    api = Api(base, keys)
    db = Db(url)
    # Warm-up: one pass of both, untimed (page cache, prepared plans).
    for f in filters:
        api.call("POST", "/v1/audiences/preview", {"filters": f})
    pre, ref, sample, per = [], [], [], {}
    for r in range(rounds):
        order = list(range(len(filters)))
        random.Random(r).shuffle(order)
        for i in order:
            f = filters[i]
            t = time.perf_counter()
            body = api.call("POST", "/v1/audiences/preview", {"filters": f})
            p_ms = (time.perf_counter() - t) * 1000
            w, args = where_sql(compile_filter(f))
            t = time.perf_counter()
            count = db.one(f"SELECT COUNT(*) FROM pool_facets f WHERE {w}", args)[0]
            r_ms = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            db.all(SAMPLE_SQL.format(w=w), args)
            s_ms = (time.perf_counter() - t) * 1000
            if count != body["match_count"]:
                sys.exit(f"count mismatch for {f}: server {body['match_count']}, sql {count}")
            pre.append(p_ms)
            ref.append(r_ms)
            sample.append(s_ms)
            per.setdefault(i, []).append((p_ms, r_ms, s_ms, count))
    slow = sorted(per.items(), key=lambda kv: -statistics.median(x[0] for x in kv[1]))[:5]
    out = {
        "preview": summary(pre), "reference": summary(ref), "sample_sql": summary(sample),
        "slowest": [{"filters": filters[i],
                     "preview_ms": statistics.median(x[0] for x in v),
                     "count_ms": statistics.median(x[1] for x in v),
                     "sample_ms": statistics.median(x[2] for x in v),
                     "match_count": v[0][3]} for i, v in slow],
        "match_counts": sorted(v[0][3] for v in per.values()),
    }
    print(json.dumps(out))


# ---------------------------------------------------------------- rules

def random_alert(rng):
    ind = [n for n, _ in INDUSTRIES if n]
    f = {"min_intent_score": rng.choice([30, 50, 50, 60, 70, 80])}
    if rng.random() < 0.7:
        f["industry"] = rng.choices(ind, weights=[w for n, w in INDUSTRIES if n])[0]
    if rng.random() < 0.5:
        f["country"] = rng.choices(COUNTRY_CODES, weights=[w for c, w in COUNTRIES if c])[0]
    n = rng.choices([0, 1, 2], weights=[40, 40, 20])[0]
    f["required_signals"] = rng.sample(ALERT_NAMES[:9], n)
    return f


def alert_compile(f):
    return {
        "industries": [f["industry"].lower()] if f.get("industry") else [],
        "countries": [f["country"]] if f.get("country") else [],
        "business_types": [], "min_confidence": 0,
        "min_intent_score": f["min_intent_score"],
        "required_bits": sum(1 << (SHIFT + ALERT_NAMES.index(s)) for s in f["required_signals"]),
        "excluded_bits": 0,
    }


def rules(base, keys, n_aud, n_alert):
    rng = random.Random(11)
    api = Api(base, keys)
    aud, alerts, create_ms = [], [], []
    for i in range(n_aud):
        f = random_filters(rng, broad=i < 3)
        t = time.perf_counter()
        api.call("POST", "/v1/audiences", {"name": f"bench audience {i}", "filters": f})
        create_ms.append((time.perf_counter() - t) * 1000)
        aud.append(f)
    for i in range(n_alert):
        f = random_alert(rng)
        api.call("POST", "/v1/alerts", {
            "name": f"bench alert {i}", "filters": f,
            "delivery_channels": {"email": False, "slack": False, "in_app": True}})
        alerts.append(f)
    print(json.dumps({"audiences": aud, "alerts": alerts,
                      "audience_create": summary(create_ms)}))


# ---------------------------------------------------------------- evaluate

def facets_dict(row):
    keys = ("industry", "country", "business_type", "confidence", "intent_score",
            "signal_bits", "seen_at")
    return dict(zip(keys, row))


def make_events(db, n, rng):
    """N pool changes of existing records: rising intent, new signals,
    confidence moves, industry changes, and a few records new to the pool."""
    max_id = db.one("SELECT MAX(domain_id) FROM pool_facets")[0]
    ids = rng.sample(range(1, max_id + 1), n)
    found = {}
    for k in range(0, n, 500):
        chunk = ids[k:k + 500]
        rows = db.all(
            "SELECT f.domain_id, d.domain, f.industry, f.country, f.business_type, f.confidence, "
            "f.intent_score, f.signal_bits, f.seen_at, d.industry FROM pool_facets f "
            f"JOIN domains d ON d.id = f.domain_id WHERE f.domain_id IN ({', '.join('?' * len(chunk))})",
            chunk)
        for r in rows:
            found[r[0]] = r
    now = int(time.time() * 1000)
    ind = [n for n, _ in INDUSTRIES if n]
    events = []
    for i in ids:
        r = found[i]
        before = facets_dict(r[2:9])
        after = dict(before)
        kind = rng.random()
        if kind < 0.45:
            after["intent_score"] = min(100, before["intent_score"] + rng.randint(5, 45))
        elif kind < 0.75:
            for _ in range(rng.randint(1, 2)):
                after["signal_bits"] |= 1 << rng.randrange(SHIFT + len(ALERT))
        elif kind < 0.85:
            after["confidence"] = max(0, min(100, before["confidence"] + rng.randint(-20, 30)))
        elif kind < 0.93:
            after["industry"] = rng.choice(ind).lower()
        else:
            before = None
        after["seen_at"] = now
        display = next((x for x in ind if x.lower() == after["industry"]), None)
        change = {
            "domain": r[1], "revision": 2, "before": before, "after": after,
            "monitored": {"industry": display, "sub_industry": None, "website_email": None,
                          "summary": None, "is_trusted": "false",
                          "confidence": f"{after['confidence'] / 100:.2f}"},
            "level": level(after["intent_score"]),
            "likely_buys": ["crm"] if after["intent_score"] >= 50 else [],
            "alert_signals": names_of(after["signal_bits"], ALERT_NAMES, SHIFT),
        }
        events.append((i, change))
    return events, now


def reference_claim(db, rows):
    # Reference: the worker's claim pattern (one transaction per 200 rows:
    # DELETE ... RETURNING the oldest 200, commit) on a copy of the rows in a
    # table of the same shape that the server does not read.
    db.execute("DROP TABLE IF EXISTS bench_pool_events")
    key = "BIGINT PRIMARY KEY" if db.pg else "INTEGER PRIMARY KEY"
    db.execute(f"CREATE TABLE bench_pool_events (id {key}, domain_id BIGINT NOT NULL, "
               "data TEXT NOT NULL, created_at BIGINT NOT NULL)")
    db.execute("BEGIN")
    db.many("INSERT INTO bench_pool_events (id, domain_id, data, created_at) VALUES (?, ?, ?, ?)",
            [(k + 1,) + r for k, r in enumerate(rows)])
    db.execute("COMMIT")
    lock = " FOR UPDATE SKIP LOCKED" if db.pg else ""
    claim = db.sql("DELETE FROM bench_pool_events WHERE id IN (SELECT id FROM bench_pool_events "
                   f"ORDER BY id LIMIT ?{lock}) RETURNING id, domain_id, data")
    t = time.perf_counter()
    taken = 0
    while True:
        db.execute("BEGIN")
        got = db.conn.execute(claim, (200,)).fetchall()
        db.execute("COMMIT")
        if not got:
            break
        taken += len(got)
    ref_s = time.perf_counter() - t
    db.execute("DROP TABLE bench_pool_events")
    return ref_s, taken


def evaluate(url, rules_file, n):
    rng = random.Random(23)
    spec = json.load(open(rules_file))
    auds = [compile_filter(f) for f in spec["audiences"]]
    alerts = [alert_compile(f) for f in spec["alerts"]]
    db = Db(url)
    events, now = make_events(db, n, rng)
    starts_aud = starts_alert = touching = 0
    for _, c in events:
        a = sum(1 for f in auds if matches(f, c["after"]) and not matches(f, c["before"]))
        b = sum(1 for f in alerts if matches(f, c["after"]) and not matches(f, c["before"]))
        starts_aud += a
        starts_alert += b
        touching += (a + b) > 0
    rows = [(i, json.dumps(c, separators=(",", ":")), now) for i, c in events]
    db.execute("DELETE FROM pool_events")

    ref_s, taken = reference_claim(db, rows)

    # The server: all events commit at once; the worker (napping a second
    # when idle) drains them. Timed from the first poll that sees it started
    # to the poll that sees the table empty; polls every 20 ms.
    t = time.perf_counter()
    db.execute("BEGIN")
    db.many("INSERT INTO pool_events (domain_id, data, created_at) VALUES (?, ?, ?)", rows)
    db.execute("COMMIT")
    insert_s = time.perf_counter() - t
    t_commit = time.perf_counter()
    first = None
    while True:
        left = db.one("SELECT COUNT(*) FROM pool_events")[0]
        tnow = time.perf_counter()
        if first is None and left < n:
            first = (tnow, left)
        if left == 0:
            break
        if tnow - t_commit > 1800:
            sys.exit("evaluation did not drain in 30 minutes")
        time.sleep(0.02)
    t_end = time.perf_counter()
    eval_s = t_end - first[0]
    history = db.one("SELECT COUNT(*) FROM alert_history")[0]
    print(json.dumps({
        "events": n, "insert_s": insert_s,
        "start_lag_s": first[0] - t_commit, "timed_events": first[1], "eval_s": eval_s,
        "events_per_s": first[1] / eval_s if eval_s > 0 else None,
        "total_s": t_end - t_commit, "reference_s": ref_s, "reference_rows": taken,
        "reference_per_s": taken / ref_s,
        "events_starting_a_match": touching, "audience_match_starts": starts_aud,
        "alert_match_starts": starts_alert, "alert_history_rows": history,
    }))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "generate":
        generate(args[0], int(args[1]))
    elif cmd == "preview":
        preview(args[0], args[1], args[2], int(args[3]))
    elif cmd == "rules":
        rules(args[0], args[1], int(args[2]), int(args[3]))
    elif cmd == "evaluate":
        evaluate(args[0], args[1], int(args[2]))
    else:
        sys.exit(f"unknown command {cmd}")
