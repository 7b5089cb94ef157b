'use strict'
// Why the two engines disagree on a page: for each named technology, and
// each technology that implies it (directly or not), the patterns that the
// page's inputs match, as the fingerprint data writes them (a JavaScript
// RegExp, case-insensitive) and as wappalyzer-core 6.10.54 rewrites them
// before matching; then what the generator planted on the page.
//
// node explain.js PAGES_DIR N TECHNOLOGY [TECHNOLOGY...]

const fs = require('fs')
const path = require('path')
const { loadFingerprints } = require('./fingerprints')
const { extract } = require('./extract')
const { pageInputs, hits, impliers, list } = require('./patterns')

const [dir, n, ...names] = process.argv.slice(2)
if (!names.length) {
  console.error('usage: node explain.js PAGES_DIR N TECHNOLOGY [TECHNOLOGY...]')
  process.exit(2)
}
const { technologies } = loadFingerprints()
const html = fs.readFileSync(path.join(dir, `${n}.html`), 'utf8')
const saved = JSON.parse(fs.readFileSync(path.join(dir, `${n}.json`), 'utf8'))
const inputs = pageInputs(html, extract(html), saved)
const show = (s) => JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}...` : s)

for (const name of names) {
  for (const candidate of [name, ...impliers(technologies, name)]) {
    const t = technologies[candidate]
    if (!t) {
      console.log(`${candidate}: not in the data`)
      continue
    }
    const found = hits(t, inputs)
    if (!found.length && candidate !== name) continue
    console.log(`\n${candidate}${candidate === name ? '' : ` (implies ${name})`}: implies ${JSON.stringify(list(t.implies))}, excludes ${JSON.stringify(list(t.excludes))}, requires ${JSON.stringify([...list(t.requires), ...list(t.requiresCategory)])}`)
    if (!found.length) console.log('  no pattern matches')
    for (const h of found) {
      console.log(`  ${h.field}${h.key ? `[${h.key}]` : ''} \`${h.raw}\`: as written ${h.written}, as wappalyzer-core runs it ${h.rewritten}${h.value ? `; value ${show(h.value)}` : ''}`)
    }
  }
}
console.log('\nplanted on this page:')
for (const p of saved.planted || []) {
  console.log(`  ${p.technology}: ${p.field}${p.key ? `[${p.key}]` : ''} \`${p.pattern}\` -> ${show(p.value)}${p.withoutRequired ? ` (without ${p.withoutRequired.join(', ')})` : ''}`)
}
