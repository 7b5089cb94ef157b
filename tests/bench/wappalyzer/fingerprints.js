'use strict'
// The fingerprint data both engines use: the MIT snapshot of Wappalyzer's
// technologies and categories in host/domain-analysis/data/wappalyzer/,
// the files the Rust crate embeds.

const fs = require('fs')
const path = require('path')

const DATA = path.resolve(
  __dirname,
  '../../../host/domain-analysis/data/wappalyzer'
)

function loadFingerprints() {
  const categories = JSON.parse(
    fs.readFileSync(path.join(DATA, 'categories.json'), 'utf8')
  )
  const technologies = {}
  const files = fs
    .readdirSync(path.join(DATA, 'technologies'))
    .filter((f) => f.endsWith('.json'))
    .sort()
  for (const file of files) {
    Object.assign(
      technologies,
      JSON.parse(fs.readFileSync(path.join(DATA, 'technologies', file), 'utf8'))
    )
  }
  return { categories, technologies, files }
}

module.exports = { DATA, loadFingerprints }
