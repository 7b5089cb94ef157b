'use strict'
// Compares the two engines' JSON lines (detect_pages and reference.js):
// agreement on technologies (|ours ∩ theirs| / |theirs|, counted per page),
// the extras (ours minus theirs) and misses (theirs minus ours) per
// technology, whether both had the same inputs, pages per second each and
// the ratio. Also, for information, how many of the planted marks (N.json's
// `planted`) each engine found.
//
// node compare.js OURS.jsonl THEIRS.jsonl PAGES_DIR

const fs = require('fs')
const path = require('path')
const { loadFingerprints } = require('./fingerprints')
const { pageInputs, cause } = require('./patterns')

const { technologies } = loadFingerprints()

const [oursFile, theirsFile, dir] = process.argv.slice(2)
if (!dir) {
  console.error('usage: node compare.js OURS.jsonl THEIRS.jsonl PAGES_DIR')
  process.exit(2)
}

function read(file) {
  const pages = new Map()
  let timing = null
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue
    const value = JSON.parse(line)
    if (value.timing) timing = value.timing
    else pages.set(value.file, value)
  }
  return { pages, timing }
}

const ours = read(oursFile)
const theirs = read(theirsFile)
const files = [...theirs.pages.keys()]
if (files.length !== ours.pages.size || files.some((f) => !ours.pages.has(f))) {
  throw new Error('the two runs did not read the same pages')
}

let theirTotal = 0
let ourTotal = 0
let both = 0
let identicalPages = 0
let sameInputs = 0
let checkedInputs = 0
const inputDiffs = []
const extras = new Map()
const misses = new Map()
const theirNames = new Set()
const ourNames = new Set()
let planted = 0
let marks = 0
let unmarked = 0
const plantedNames = new Set()
const plantedFields = {}
const sizes = []
let plantedByThem = 0
let plantedByUs = 0
const bump = (map, key, file, reason) => {
  const entry = map.get(key) || { count: 0, files: [], causes: new Map() }
  entry.count++
  if (entry.files.length < 3) entry.files.push(file)
  const label = reason || 'no pattern differs: how the set was settled (implies, excludes, requires)'
  entry.causes.set(label, (entry.causes.get(label) || 0) + 1)
  map.set(key, entry)
}

for (const file of files) {
  const t = new Set(theirs.pages.get(file).technologies)
  const o = new Set(ours.pages.get(file).technologies)
  const saved = JSON.parse(fs.readFileSync(path.join(dir, file.replace(/\.html$/, '.json')), 'utf8'))
  let inputs = null
  const explain = (name, isOurs) => {
    const extracted = (ours.pages.get(file).inputs || theirs.pages.get(file).inputs)
    if (!extracted) return null
    inputs = inputs || pageInputs(fs.readFileSync(path.join(dir, file), 'utf8'), extracted, saved)
    return cause(technologies, name, inputs, isOurs)
  }
  theirTotal += t.size
  ourTotal += o.size
  t.forEach((n) => theirNames.add(n))
  o.forEach((n) => ourNames.add(n))
  let same = t.size === o.size
  for (const name of t) {
    if (o.has(name)) both++
    else {
      bump(misses, name, file, explain(name, false))
      same = false
    }
  }
  for (const name of o) if (!t.has(name)) bump(extras, name, file, explain(name, true))
  if (same) identicalPages++

  const oi = ours.pages.get(file).inputs
  const ti = theirs.pages.get(file).inputs
  if (oi && ti) {
    checkedInputs++
    const fields = ['scriptSrc', 'scripts', 'meta', 'htmlBytes'].filter(
      (f) => JSON.stringify(oi[f]) !== JSON.stringify(ti[f])
    )
    if (!fields.length) sameInputs++
    else if (inputDiffs.length < 5) inputDiffs.push(`${file}: ${fields.join(', ')}`)
  }

  sizes.push(fs.statSync(path.join(dir, file)).size / 1024)
  marks += (saved.planted || []).length
  if (!(saved.planted || []).length) unmarked++
  for (const p of saved.planted || []) {
    plantedNames.add(p.technology)
    plantedFields[p.field] = (plantedFields[p.field] || 0) + 1
  }
  for (const name of new Set((saved.planted || []).map((p) => p.technology))) {
    planted++
    if (t.has(name)) plantedByThem++
    if (o.has(name)) plantedByUs++
  }
}

const pct = (a, b) => (b ? a / b : 1)
const fmt = (x, d = 1) => x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
const list = (map) =>
  [...map.entries()]
    .sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]))
    .flatMap(([name, { count, files, causes }]) => [
      `    ${String(count).padStart(4)}  ${name}  (${files.join(', ')}${count > files.length ? ', ...' : ''})`,
      ...[...causes.entries()].map(([label, n]) => `            ${causes.size > 1 ? `${n}x ` : ''}${label}`),
    ])

const agreement = pct(both, theirTotal)
const lines = []
lines.push(`pages: ${files.length} (${fmt(Math.min(...sizes), 0)}-${fmt(Math.max(...sizes), 0)} KB, ${fmt(sizes.reduce((a, b) => a + b, 0) / 1024)} MB; ${unmarked} without marks; ` +
  `${marks} planted marks of ${plantedNames.size} technologies: ${Object.entries(plantedFields).sort((a, b) => b[1] - a[1]).map(([f, c]) => `${f} ${c}`).join(', ')})`)
lines.push(`technologies found (page, technology pairs): reference ${theirTotal}, ours ${ourTotal}, both ${both}`)
lines.push(`distinct technologies: reference ${theirNames.size}, ours ${ourNames.size}`)
lines.push(`pages with the same set: ${identicalPages} of ${files.length}`)
if (checkedInputs) {
  lines.push(`same inputs (script sources, inline scripts, meta tags, HTML): ${sameInputs} of ${checkedInputs} pages${inputDiffs.length ? `; differing: ${inputDiffs.join('; ')}` : ''}`)
}
lines.push(`planted technologies found (information): reference ${plantedByThem} of ${planted} (${fmt(100 * pct(plantedByThem, planted))} %), ours ${plantedByUs} (${fmt(100 * pct(plantedByUs, planted))} %)`)
lines.push(`agreement |ours ∩ theirs| / |theirs|: ${fmt(agreement, 4)} (target at least 0.95: ${agreement >= 0.95 ? 'met' : 'NOT met'})`)
lines.push(`extras (ours, not the reference's): ${ourTotal - both} in ${extras.size} technologies`)
lines.push(...list(extras))
lines.push(`misses (the reference's, not ours): ${theirTotal - both} in ${misses.size} technologies`)
lines.push(...list(misses))

const speed = (label, t) => {
  if (!t) return
  lines.push(
    `${label}: ${fmt(t.best.pages_per_s)} pages/s (best of ${t.passes}; first pass ${fmt(t.first.pages_per_s)}); ` +
      `parse ${fmt((1000 * t.best.parse_seconds) / t.pages, 2)} ms + detect ${fmt((1000 * t.best.detect_seconds) / t.pages, 2)} ms a page; ` +
      `fingerprints loaded in ${fmt(t.load_ms, 0)} ms [${t.engine}]`
  )
}
speed('reference', theirs.timing)
speed('ours', ours.timing)
if (ours.timing && theirs.timing) {
  const ratio = ours.timing.best.pages_per_s / theirs.timing.best.pages_per_s
  const first = ours.timing.first.pages_per_s / theirs.timing.first.pages_per_s
  const detectOnly = ours.timing.best.detect_pages_per_s / theirs.timing.best.detect_pages_per_s
  lines.push(`ratio ours / reference: ${fmt(ratio)}x (first passes ${fmt(first)}x; detection alone, parses left out, ${fmt(detectOnly)}x) (target at least 20x: ${ratio >= 20 ? 'met' : 'NOT met'})`)
}
console.log(lines.join('\n'))
