'use strict'
// Which of a technology's patterns a page's inputs match, as the fingerprint
// data writes them (a JavaScript RegExp, case-insensitive) and as
// wappalyzer-core 6.10.54 rewrites them before matching (its parsePattern:
// every `/` escaped, so a `\/` in the data becomes `\\/`, a literal
// backslash; every `+` and `*` bounded to {1,250} and {0,250}, escaped `\*`
// and `*` inside classes included). Used by compare.js to say where each
// disagreement comes from, and by explain.js.

const Wappalyzer = require('wappalyzer-core')

const list = (v) => (v === undefined || v === null ? [] : (Array.isArray(v) ? v : [v]).map(String))
const lowerKeys = (o) =>
  Object.fromEntries(Object.entries(o || {}).map(([k, v]) => [k.toLowerCase(), [String(v)]]))

// The inputs of one page: `extracted` is {scriptSrc, scripts, meta: [[k, v]]}
// (what both engines were given), `saved` is N.json.
function pageInputs(html, extracted, saved) {
  const meta = {}
  for (const [k, v] of extracted.meta) (meta[k] = meta[k] || []).push(v)
  return {
    html: [html],
    url: [saved.url],
    scriptSrc: extracted.scriptSrc,
    // The reference matches `scripts` against the array as one string
    // (joined with commas); ours matches each script.
    scriptsJoined: [extracted.scripts.join(',')],
    scriptsEach: extracted.scripts,
    meta,
    headers: lowerKeys(saved.headers),
    cookies: lowerKeys(saved.cookies),
  }
}

const compiled = new Map()
function regexes(raw) {
  if (!compiled.has(raw)) {
    let written = null
    try {
      written = new RegExp(raw.split('\\;')[0], 'i')
    } catch (error) {
      // Not a JavaScript regex.
    }
    compiled.set(raw, { written, rewritten: Wappalyzer.parsePattern(raw).regex })
  }
  return compiled.get(raw)
}

// [{field, key, raw, value, written, rewritten}] for the patterns of
// `technology` that match some input either way.
function hits(technology, inputs) {
  const out = []
  const test = (field, key, raw, values) => {
    const { written, rewritten } = regexes(raw)
    for (const value of values) {
      const w = written ? written.test(value) : false
      const r = rewritten.test(value)
      if (w || r) out.push({ field, key, raw, value, written: w, rewritten: r })
    }
  }
  for (const field of ['html', 'scriptSrc', 'url']) {
    for (const raw of list(technology[field])) test(field, null, raw, inputs[field])
  }
  for (const raw of list(technology.scripts)) {
    const joined = regexes(raw).rewritten.test(inputs.scriptsJoined[0])
    const each = inputs.scriptsEach.some((s) => regexes(raw).written && regexes(raw).written.test(s))
    if (joined || each) out.push({ field: 'scripts', key: null, raw, value: '', written: each, rewritten: joined })
  }
  for (const field of ['headers', 'meta', 'cookies']) {
    for (const [key, value] of Object.entries(technology[field] || {})) {
      const k = key.toLowerCase()
      const values = Object.entries(inputs[field])
        .filter(([name]) => name === k || (k.endsWith('*') && name.startsWith(k.slice(0, -1))))
        .flatMap(([, v]) => v)
      for (const raw of list(value).length ? list(value) : ['']) test(field, key, raw, values)
    }
  }
  return out
}

// The technologies that imply `name`, directly or through others.
function impliers(technologies, name) {
  const byImplied = new Map()
  for (const [other, t] of Object.entries(technologies)) {
    for (const implied of list(t.implies)) {
      const target = implied.split('\\;')[0]
      if (!byImplied.has(target)) byImplied.set(target, [])
      byImplied.get(target).push(other)
    }
  }
  const seen = new Set()
  const queue = [name]
  while (queue.length) {
    for (const parent of byImplied.get(queue.pop()) || []) {
      if (!seen.has(parent)) {
        seen.add(parent)
        queue.push(parent)
      }
    }
  }
  seen.delete(name)
  return [...seen]
}

function why(raw) {
  const source = raw.split('\\;')[0]
  const reasons = []
  if (source.includes('\\/')) reasons.push('`\\/` rewritten to `\\\\/`')
  if (source.includes('\\*')) reasons.push('`\\*` rewritten to `\\{0,250}`')
  if (/\[[^\]]*[+*]/.test(source)) reasons.push('`+`/`*` inside a class rewritten')
  if (!reasons.length) reasons.push('`+`/`*` bounded to 250')
  return reasons.join(', ')
}

// Why a technology (found by one side only on a page) was found or not:
// the pattern, of it or of a technology implying it, that matches one way
// and not the other.
function cause(technologies, name, inputs, ours) {
  for (const candidate of [name, ...impliers(technologies, name)]) {
    const t = technologies[candidate]
    if (!t) continue
    for (const hit of hits(t, inputs)) {
      const via = candidate === name ? '' : ` (implies it)`
      if (ours && hit.written && !hit.rewritten) {
        return `${candidate}${via}: ${hit.field}${hit.key ? `[${hit.key}]` : ''} \`${hit.raw}\` matches as written, not after wappalyzer-core's rewrite: ${why(hit.raw)}`
      }
      if (!ours && hit.rewritten) {
        const source = hit.raw.split('\\;')[0]
        const lookaround = /\(\?<?[=!]/.test(source) || /\\[1-9]/.test(source)
        const escape = /\\[a-zA-Z]/.test(source.replace(/\\[dDwWsSbBfnrtvcxuk]/g, ''))
        return `${candidate}${via}: ${hit.field}${hit.key ? `[${hit.key}]` : ''} \`${hit.raw}\` matches in the reference${lookaround ? '; look-around or back-reference' : ''}${escape ? '; JavaScript identity escape' : ''}`
      }
    }
  }
  return null
}

module.exports = { pageInputs, hits, impliers, cause, list }
