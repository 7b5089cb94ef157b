'use strict'
// The reference side of the comparison: Wappalyzer's own JavaScript engine
// (wappalyzer-core 6.10.54, MIT, the `wappalyzer.js` of the browser
// extension and of the npm driver) loaded with OUR fingerprint files, run
// over the saved pages.
//
// For each page it parses the HTML with htmlparser2 and collects what the
// Rust crate's page walk collects for the fingerprints (extract.js, after
// extract/scan.rs): `<script src>` values, the text of inline scripts other
// than JSON-LD, and `<meta>` tags keyed by `property` or else `name`
// (trimmed, ASCII lower case, empty content skipped), with the same caps;
// `--inputs` prints them so compare.js can check that both engines had the
// same. The HTML is given whole (the npm driver would cut it into lines of
// 2,000 characters, which splits patterns at line ends). Headers and cookies come
// from N.json, names lower-cased as the npm driver does (which also files a
// `_ga_XXXX` cookie under Wappalyzer's `_ga_*` key). Then it does what the
// npm driver (src/drivers/npm/driver.js, Site.onDetect) does with the
// engine: analyze(), drop duplicate detections, resolve() (implies,
// excludes), and for each technology or category that other technologies
// `require` and that was found, analyze those technologies too, until
// nothing new is required (the driver's passes for `requires` leave the
// headers out; here they see the same inputs as the first). A technology
// counts when its confidence is > 0.
//
// Prints one JSON line per page, `{"file", "technologies"}` (with
// `--inputs`, also the extracted inputs, for checking that both engines had
// the same), then one `{"timing": {...}}` line. The clock covers the parse
// and extraction, and the analysis with its resolution; reading files and
// printing are outside it.
//
// node reference.js DIR [--passes N] [--inputs]

const fs = require('fs')
const path = require('path')
const Wappalyzer = require('wappalyzer-core')
const { loadFingerprints } = require('./fingerprints')
const { extract } = require('./extract')

const args = process.argv.slice(2)
const passesAt = args.indexOf('--passes')
const PASSES = passesAt === -1 ? 1 : Math.max(1, parseInt(args[passesAt + 1], 10) || 1)
const WITH_INPUTS = args.includes('--inputs')
const DIR = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--passes')
if (!DIR) {
  console.error('usage: node reference.js DIR [--passes N] [--inputs]')
  process.exit(2)
}

// ----------------------------------------------------- the engine, driven

const { categories, technologies } = loadFingerprints()
const loadStarted = process.hrtime.bigint()
Wappalyzer.setCategories(categories)
Wappalyzer.setTechnologies(technologies)
const loadMs = Number(process.hrtime.bigint() - loadStarted) / 1e6

function dedupe(detections) {
  // Site.onDetect: one detection per technology, pattern and version.
  const seen = new Set()
  return detections.filter(({ technology: { name }, pattern: { regex }, version }) => {
    const key = `${name}\u0000${version}\u0000${regex ? regex.toString() : ''}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

function detect(items) {
  let detections = dedupe(Wappalyzer.analyze(items))
  const analyzedRequires = new Set()
  for (;;) {
    const resolved = Wappalyzer.resolve(detections)
    const requires = [
      ...Wappalyzer.requires.filter(({ name }) =>
        resolved.some(({ name: _name }) => _name === name)
      ),
      ...Wappalyzer.categoryRequires.filter(({ categoryId }) =>
        resolved.some(({ categories }) =>
          categories.some(({ id }) => id === categoryId)
        )
      ),
    ].filter(({ name, categoryId }) => {
      const id = categoryId ? `category:${categoryId}` : `technology:${name}`
      if (analyzedRequires.has(id)) return false
      analyzedRequires.add(id)
      return true
    })
    if (!requires.length) {
      return resolved
    }
    for (const { technologies } of requires) {
      detections = dedupe(detections.concat(Wappalyzer.analyze(items, technologies)))
    }
  }
}

function lowerKeys(pairs, cookies) {
  const out = {}
  for (const [name, value] of Object.entries(pairs || {})) {
    let key = name.toLowerCase()
    // The npm driver's rename of Google Analytics 4 cookies (it tests the
    // name before lower-casing, so only upper-case ids match).
    if (cookies && /_ga_[A-Z0-9]+/.test(name)) key = '_ga_*'
    out[key] = [...(out[key] || []), String(value)]
  }
  return out
}

// ----------------------------------------------------------------- run

const files = fs
  .readdirSync(DIR)
  .filter((f) => /^\d+\.html$/.test(f))
  .sort((a, b) => parseInt(a, 10) - parseInt(b, 10))
const pages = files.map((file) => {
  const saved = JSON.parse(fs.readFileSync(path.join(DIR, file.replace(/\.html$/, '.json')), 'utf8'))
  return {
    file,
    html: fs.readFileSync(path.join(DIR, file), 'utf8'),
    url: saved.url,
    headers: lowerKeys(saved.headers, false),
    cookies: lowerKeys(saved.cookies, true),
  }
})

const runs = []
const found = []
const inputs = []
for (let pass = 0; pass < PASSES; pass++) {
  let parseNs = 0n
  let detectNs = 0n
  for (const page of pages) {
    const t0 = process.hrtime.bigint()
    const { scriptSrc, scripts, meta } = extract(page.html)
    const metas = {}
    for (const [key, value] of meta) {
      ;(metas[key] = metas[key] || []).push(value)
    }
    const t1 = process.hrtime.bigint()
    const resolved = detect({
      url: page.url,
      html: page.html,
      scriptSrc,
      scripts,
      meta: metas,
      headers: page.headers,
      cookies: page.cookies,
    })
    const t2 = process.hrtime.bigint()
    parseNs += t1 - t0
    detectNs += t2 - t1
    if (pass === 0) {
      found.push(
        [...new Set(resolved.filter(({ confidence }) => confidence > 0).map(({ name }) => name))].sort()
      )
      if (WITH_INPUTS) {
        inputs.push({ scriptSrc, scripts, meta, htmlBytes: Buffer.byteLength(page.html) })
      }
    }
  }
  runs.push({ parse: Number(parseNs) / 1e9, detect: Number(detectNs) / 1e9 })
}

const out = []
pages.forEach((page, i) => {
  const line = { file: page.file, technologies: found[i] }
  if (WITH_INPUTS) line.inputs = inputs[i]
  out.push(JSON.stringify(line))
})
const total = (r) => r.parse + r.detect
const first = runs[0]
const best = runs.reduce((a, b) => (total(b) < total(a) ? b : a))
const n = pages.length
out.push(
  JSON.stringify({
    timing: {
      engine: `wappalyzer-core ${require('wappalyzer-core/package.json').version} + htmlparser2 ${require('./node_modules/htmlparser2/package.json').version}, node ${process.version}`,
      pages: n,
      passes: PASSES,
      load_ms: loadMs,
      first: {
        seconds: total(first),
        parse_seconds: first.parse,
        detect_seconds: first.detect,
        pages_per_s: n / total(first),
      },
      best: {
        seconds: total(best),
        parse_seconds: best.parse,
        detect_seconds: best.detect,
        pages_per_s: n / total(best),
        detect_pages_per_s: n / best.detect,
      },
    },
  })
)
process.stdout.write(`${out.join('\n')}\n`)
