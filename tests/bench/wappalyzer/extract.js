'use strict'
// What the fingerprints are matched against besides the HTML, collected as
// the Rust crate's page walk collects it (host/domain-analysis/src/extract/
// scan.rs): `<script src>` values (at most 200, each cut at 2,000 bytes),
// the text of inline scripts other than JSON-LD (1 MB in all), and `<meta>`
// tags keyed by `property` or else `name`, trimmed and lower-cased (ASCII),
// those without content skipped (at most 200). Parsed with htmlparser2's
// streaming parser (no DOM is built).

const { Parser } = require('htmlparser2')

const MAX_SCRIPT_SRCS = 200
const MAX_METAS = 200
const MAX_SCRIPT_BYTES = 1024 * 1024

// Cuts a string to at most `max` UTF-8 bytes at a character boundary.
function capBytes(s, max) {
  if (Buffer.byteLength(s) <= max) return s
  let bytes = 0
  let end = 0
  for (const ch of s) {
    const n = Buffer.byteLength(ch)
    if (bytes + n > max) break
    bytes += n
    end += ch.length
  }
  return s.slice(0, end)
}
const asciiLower = (s) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase())
// Rust's str::trim: Unicode White_Space.
const trim = (s) => s.replace(/^[\s\u0085]+|[\s\u0085]+$/g, '')

function extract(html) {
  const scriptSrc = []
  const scripts = []
  const meta = []
  let scriptBytes = 0
  let inline = null
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'meta') {
          const key = trim(
            'property' in attribs ? attribs.property : attribs.name || ''
          )
          const lowered = asciiLower(key)
          const content = 'content' in attribs ? trim(attribs.content) : ''
          if (content && lowered && meta.length < MAX_METAS) {
            meta.push([capBytes(lowered, 200), capBytes(content, 2000)])
          }
        } else if (name === 'script') {
          const type = asciiLower(attribs.type || '')
          if (type.includes('ld+json')) {
            inline = null
          } else if ('src' in attribs) {
            if (scriptSrc.length < MAX_SCRIPT_SRCS) {
              scriptSrc.push(capBytes(attribs.src, 2000))
            }
            inline = null
          } else {
            inline = ''
          }
        }
      },
      ontext(text) {
        if (inline !== null) inline += text
      },
      onclosetag(name) {
        if (name === 'script' && inline !== null) {
          const kept = capBytes(inline, Math.max(0, MAX_SCRIPT_BYTES - scriptBytes))
          if (kept) {
            scripts.push(kept)
            scriptBytes += Buffer.byteLength(kept)
          }
          inline = null
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true }
  )
  parser.write(html)
  parser.end()
  return { scriptSrc, scripts, meta }
}

module.exports = { extract }
