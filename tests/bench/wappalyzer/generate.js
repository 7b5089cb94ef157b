'use strict'
// Writes the page corpus for the side-by-side comparison: N.html and N.json
// ({url, headers: {name: value}, cookies: {name: value}, planted: [...]})
// for N = 1..pages. Deterministic for a seed.
//
// Pages are 20-150 KB of ordinary company-site markup (navigation, hero,
// sections of paragraphs, cards, a contact form, a footer, a menu script).
// Every tenth page carries no technology marks; the others carry the marks
// of 3-15 technologies drawn from the fingerprint data itself: for each one,
// one of its html / scripts / scriptSrc / meta / headers / cookies / url
// patterns is taken and a string is built from the regular expression (its
// literal parts kept, classes and repetitions filled with plausible
// characters, version-like groups with versions) and planted where that
// field is read: a <script src>, an inline <script>, a <meta>, markup in
// the body, a response header, a cookie or the page URL. A technology that
// `requires` another gets that one planted too (and one of the category it
// requires), except one time in four (`withoutRequired` in the plan).
// Every planted string is checked against its pattern (as a JavaScript
// RegExp, case-insensitive, which is how the data is written), and again
// on the finished page, and listed in N.json's `planted`; the comparison
// itself is between the two engines, not against this plan.
//
// node generate.js [--out DIR] [--pages 500] [--seed 20261125]

const fs = require('fs')
const os = require('os')
const path = require('path')
const { parse } = require('regjsparser')
const { loadFingerprints } = require('./fingerprints')

const args = process.argv.slice(2)
function arg(name, fallback) {
  const i = args.indexOf(name)
  return i === -1 ? fallback : args[i + 1]
}
const OUT = arg(
  '--out',
  path.join(os.homedir(), '.cache', 'outreach-wappalyzer-pages')
)
const PAGES = parseInt(arg('--pages', '500'), 10)
const SEED = parseInt(arg('--seed', '20261125'), 10)

// ---------------------------------------------------------------- random

function mulberry32(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
let rng = mulberry32(SEED)
const rand = () => rng()
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)) // inclusive
const pick = (list) => list[Math.floor(rand() * list.length)]
function shuffle(list) {
  const a = list.slice()
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    ;[a[i], a[j]] = [a[j], a[i]]
  }
  return a
}

// ------------------------------------------------- strings from patterns

const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('')
const LETTERS = 'abcdefghijklmnopqrstuvwxyz'.split('')
const PATHISH = 'abcdefghijklmnopqrstuvwxyz0123456789-_/.'.split('')

function classTester(node) {
  if (!node._tester) {
    node._tester = new RegExp(`^${node.raw}$`, 'i')
  }
  return node._tester
}

// The characters a class or escape accepts, preferring letters and digits.
function candidates(node) {
  if (!node._candidates) {
    const tester = classTester(node)
    const all = PRINTABLE.filter((c) => tester.test(c))
    const nice = all.filter((c) => ALNUM.includes(c.toLowerCase()))
    const path = all.filter((c) => PATHISH.includes(c))
    node._candidates = { all, nice, path, space: all.includes(' ') }
  }
  return node._candidates
}

function isFree(node) {
  return (
    node.type === 'dot' ||
    node.type === 'characterClass' ||
    node.type === 'characterClassEscape'
  )
}

// `[\d.]`-like: a version number fits.
function isVersionClass(node) {
  if (node.type !== 'characterClass' || node.negative) return false
  const c = candidates(node)
  return c.all.includes('1') && c.all.includes('.') && !c.all.includes('a')
}

function version(min, max) {
  const parts = [int(1, 12), int(0, 20), int(0, 9)].slice(0, int(1, 3))
  let v = parts.join('.')
  while (v.length < min) v += String(int(0, 9))
  if (max !== undefined && v.length > max) v = v.slice(0, max).replace(/\.$/, '1')
  return v
}

function oneChar(node) {
  if (node.type === 'dot') return pick(ALNUM)
  const c = candidates(node)
  if (c.nice.length && rand() < 0.8) return pick(c.nice)
  if (c.all.length) return pick(c.all)
  return 'x'
}

// Counts capture groups in source order, as JavaScript numbers them.
function numberGroups(node, counter = { n: 0 }) {
  if (!node || typeof node !== 'object') return
  if (Array.isArray(node)) {
    node.forEach((n) => numberGroups(n, counter))
    return
  }
  if (node.type === 'group' && node.behavior === 'normal') {
    node._index = ++counter.n
  }
  if (node.body) numberGroups(node.body, counter)
}

const inTag = (out) => /<[a-z][a-z0-9-]*(?:\s+[a-z-]+(?:="[^"]*")?)*$/i.test(out)
const inAttribute = (out) => /<[a-z][a-z0-9-]*(?:\s+[a-z-]+(?:="[^"]*")?)*\s+[a-z-]+="[^"]*$/i.test(out)

const TAG_FILLS = [
  ' ', ' ', ' ', ' href="https://', ' src="https://', ' rel="stylesheet" href="https://',
  ' class="', ' id="', ' type="text/javascript" src="', ' data-id="4" ', ' async src="https://',
]

function gen(node, ctx) {
  switch (node.type) {
    case 'alternative':
      return node.body.map((n) => gen(n, ctx)).join('')
    case 'disjunction':
      return gen(pick(node.body), ctx)
    case 'group': {
      if (node.behavior !== 'normal' && node.behavior !== 'ignore') return ''
      const s = node.body.map((n) => gen(n, ctx)).join('')
      if (node._index) ctx.groups[node._index] = s
      return s
    }
    case 'quantifier':
      return quantified(node, ctx)
    case 'value':
      return String.fromCodePoint(node.codePoint)
    case 'dot':
    case 'characterClass':
    case 'characterClassEscape':
      if (node.type !== 'dot' && candidates(node).space && inTag(ctx.out())) return ' '
      return oneChar(node)
    case 'anchor':
      return ''
    case 'reference':
      return ctx.groups[node.matchIndex] || ''
    default:
      throw new Error(`unsupported regex node ${node.type}`)
  }
}

function quantified(node, ctx) {
  const { min, max } = node
  const body = node.body[0]
  const upper = max === undefined ? min + 3 : Math.min(max, min + 3)
  if (body && isVersionClass(body) && (max === undefined || max >= 3)) {
    return version(Math.max(min, 1), max)
  }
  if (body && isFree(body)) {
    // A free run: empty where allowed, a space after a tag or word where
    // the class allows one (`<link[^>]+href=`), else a short path-like or
    // alphanumeric filler.
    const out = ctx.out()
    const prev = out.slice(-1)
    const accepts = (text) => text.split('').every((c) => (body.type === 'dot' ? c !== '\n' : classTester(body).test(c)))
    const fits = (list) => list.filter((f) => f.length >= min && (max === undefined || f.length <= max) && accepts(f))
    // Markup: after `<`, a tag name; inside a tag, after its name or an
    // attribute, an attribute or two; inside an attribute value, its end.
    if (/<!--$/.test(out)) {
      const fills = fits([' ', ' Page ', ' This site '])
      if (fills.length) return pick(fills)
    }
    if (/<$/.test(out)) {
      const fills = fits(['div ', 'a ', 'span ', 'section ', 'link ', 'img '])
      if (fills.length) return pick(fills)
    }
    if (inTag(out)) {
      const fills = fits(TAG_FILLS)
      if (fills.length) return pick(fills)
    }
    if (inAttribute(out) && rand() < 0.7) {
      const fills = fits(['" ', '"', '/" ', '" class="'])
      if (fills.length) return pick(fills)
    }
    if (min === 0 && rand() < 0.45) return ''
    const space = body.type !== 'dot' && candidates(body).space
    if (space && /[a-z0-9"']/i.test(prev) && rand() < 0.8) {
      return ' '.repeat(Math.max(min, 1))
    }
    const n = Math.max(min, int(min === 0 ? 1 : min, Math.max(upper, 1)))
    let s = ''
    for (let i = 0; i < n; i++) {
      if (body.type !== 'dot' && rand() < 0.15) {
        const c = candidates(body).path
        s += c.length ? pick(c) : oneChar(body)
      } else {
        s += oneChar(body)
      }
    }
    return s
  }
  let n
  if (max === 1 && min === 0) n = rand() < 0.5 ? 1 : 0
  else n = int(min, upper)
  let s = ''
  for (let i = 0; i < n; i++) {
    // Later repetitions see what came before (for spaces and groups).
    const before = ctx.parts.length
    ctx.parts.push(s)
    const piece = node.body.map((b) => gen(b, ctx)).join('')
    ctx.parts.length = before
    s += piece
  }
  return s
}

// Generates a string for `source`; `null` when the pattern cannot be
// parsed or no attempt matches it.
const parsed = new Map()
function generate(source, accept = () => true) {
  if (source === '') {
    // A key's presence (or a pattern that matches anything): any value.
    return pick(['1', 'true', 'HIT', 'on', `${int(10000, 99999)}`])
  }
  let ast = parsed.get(source)
  if (ast === undefined) {
    try {
      ast = parse(source, '', {
        lookbehind: true,
        namedGroups: true,
        unicodePropertyEscape: false,
      })
      numberGroups(ast)
    } catch (error) {
      ast = null
    }
    parsed.set(source, ast)
  }
  if (!ast) return null
  let regex
  try {
    regex = new RegExp(source, 'i')
  } catch (error) {
    return null
  }
  for (let attempt = 0; attempt < 12; attempt++) {
    const ctx = { groups: [], parts: [] }
    // What has been generated so far, for context-sensitive fills; the
    // top-level alternative pushes into `parts` as it goes.
    ctx.out = () => ctx.parts.join('')
    let s
    try {
      s = genTop(ast, ctx)
    } catch (error) {
      return null
    }
    if (regex.test(s) && accept(s)) return s
  }
  return null
}

function genTop(ast, ctx) {
  if (ast.type !== 'alternative') return gen(ast, ctx)
  for (const node of ast.body) {
    ctx.parts.push(gen(node, ctx))
  }
  return ctx.parts.join('')
}

// ------------------------------------------------ what can be planted

function patternsOf(value) {
  if (value === undefined || value === null) return []
  return (Array.isArray(value) ? value : [value]).map(String)
}

function split(raw) {
  return raw.split('\\;')[0]
}

const TEXT_FIELDS = ['html', 'scripts', 'scriptSrc', 'url']
const KEYED_FIELDS = ['headers', 'meta', 'cookies']

// Every (field, key, pattern) of a technology that this generator plants.
function plantables(technology) {
  const list = []
  for (const field of TEXT_FIELDS) {
    for (const raw of patternsOf(technology[field])) {
      list.push({ field, key: null, raw, source: split(raw) })
    }
  }
  for (const field of KEYED_FIELDS) {
    const keyed = technology[field]
    if (!keyed || typeof keyed !== 'object') continue
    for (const key of Object.keys(keyed)) {
      const raws = patternsOf(keyed[key])
      for (const raw of raws.length ? raws : ['']) {
        list.push({ field, key, raw, source: split(raw) })
      }
    }
  }
  return list
}

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/
const RAW_TEXT = [
  'script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed',
  'noframes', 'noscript', 'template', 'svg', 'math', 'select', 'object',
  'video', 'audio', 'table', 'form', 'a', 'button', 'label', 'option',
]

// Markup for an html pattern's string: unterminated tags and comments
// closed, and elements whose content would swallow the page ended, so the
// rest of the page parses as written.
function closeMarkup(s) {
  let out = s
  const lastOpen = out.lastIndexOf('<')
  const comment = out.lastIndexOf('<!--')
  if (comment !== -1 && out.indexOf('-->', comment) === -1) {
    return `${out} -->`
  }
  if (lastOpen !== -1 && out.indexOf('>', lastOpen) === -1) {
    const tail = out.slice(lastOpen)
    if ((tail.match(/"/g) || []).length % 2) out += '"'
    else if ((tail.match(/'/g) || []).length % 2) out += "'"
    out += '>'
  }
  const opened = []
  const re = /<(\/?)([a-z][a-z0-9-]*)/gi
  let m
  while ((m = re.exec(out))) {
    const name = m[2].toLowerCase()
    if (!RAW_TEXT.includes(name)) continue
    if (m[1]) {
      const at = opened.lastIndexOf(name)
      if (at !== -1) opened.splice(at, 1)
    } else {
      opened.push(name)
    }
  }
  for (const name of opened.reverse()) out += `</${name}>`
  return out
}

function attr(value) {
  return value
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
}

// The script URL a page would carry for a pattern's string: the string
// itself when it is one, else the string inside a plausible URL.
function scriptUrls(raw) {
  const file = pick(['main.js', 'loader.js', 'widget.js', 'embed.js', 'sdk.js', 'app.min.js'])
  const query = pick(['', '', `?ver=${int(1, 6)}.${int(0, 9)}.${int(0, 9)}`, `?v=${int(1000, 9999)}`])
  const urls = []
  const host = /^[a-z0-9][a-z0-9.-]*\.(?!(?:js|css|php|html?|json|aspx?)(?:\/|$))[a-z]{2,}(?=\/|$)/i
  if (/^https?:\/\//i.test(raw)) urls.push(/^https?:\/\/[^/]+$/i.test(raw) ? `${raw}/${file}` : raw + query)
  else if (raw.startsWith('//')) urls.push(`https:${raw}`)
  else if (raw.startsWith('/')) urls.push(`${raw.endsWith('/') ? raw + file : raw}${query}`)
  else if (raw.startsWith('.')) {
    const path = raw.includes('/') ? '' : `/${file}`
    urls.push(`https://${pick(['cdn', 'www', 'static', 'js'])}${raw}${raw.endsWith('/') ? file : path}${query}`)
  } else if (host.test(raw)) {
    urls.push(`https://${raw}${raw.includes('/') ? (raw.endsWith('/') ? file : '') : `/${file}`}${query}`)
  } else {
    urls.push(`/assets/js/${raw}${query}`, `https://cdn.jsdelivr.net/npm/${raw}`)
  }
  urls.push(`https://${raw}`, `/${raw}`, raw)
  return urls
}

// Builds what a pattern needs on a page; `null` if it cannot be planted.
function plant(tech, p, page) {
  const { field, key, source } = p
  const name = key && key.toLowerCase()
  if (field === 'headers' || field === 'cookies') {
    const taken = field === 'headers' ? page.headers : page.cookies
    if (Object.keys(taken).some((k) => k.toLowerCase() === name)) return null
  }
  if (field === 'url' && page.urlPlanted) return null
  switch (field) {
    case 'scriptSrc': {
      const raw = generate(source, (s) => s.trim() === s && s && !/\s/.test(s) && !CONTROL.test(s))
      if (!raw) return null
      const regex = new RegExp(source, 'i')
      const value = scriptUrls(raw).find((url) => regex.test(url)) || raw
      return { value, markup: `<script src="${attr(value)}"></script>` }
    }
    case 'scripts': {
      const value = generate(
        source,
        (s) => s && !/<\/script|<!--|<script/i.test(s) && !CONTROL.test(s) && !/\r/.test(s)
      )
      return value && { value, markup: `<script>${value}</script>` }
    }
    case 'html': {
      // Patterns anchored to the start or end of the document cannot be
      // planted in the middle of one.
      if (/(^|[^\\])[\^$]/.test(source.replace(/\[[^\]]*\]/g, ''))) return null
      const value = generate(source, (s) => s && !CONTROL.test(s) && !/\r/.test(s))
      return value && { value, markup: closeMarkup(value) }
    }
    case 'meta': {
      const value = generate(source, (s) => s.trim() === s && s && !CONTROL.test(s) && !/[\r\n]/.test(s))
      if (!value || !key.trim() || key.includes('*')) return null
      const kind = /^(og|fb|article|product|book|profile|music|video):/i.test(key) ? 'property' : 'name'
      return { value, markup: `<meta ${kind}="${attr(key)}" content="${attr(value)}">` }
    }
    case 'headers': {
      const value = generate(source, (s) => s.trim() === s && !/[\r\n]/.test(s) && !CONTROL.test(s))
      return value !== null ? { value } : null
    }
    case 'cookies': {
      const value = generate(source, (s) => !/[;\s,"\\]/.test(s) && !CONTROL.test(s))
      return value !== null ? { value } : null
    }
    case 'url': {
      const value = generate(source, (s) => !/\s/.test(s) && !CONTROL.test(s))
      if (value === null) return null
      const regex = new RegExp(source, 'i')
      for (const url of [value, `https://${value.replace(/^\/+/, '')}`, `https://www.${page.domain}/${value.replace(/^\/+/, '')}`]) {
        try {
          const parsedUrl = new URL(url)
          if (/^https?:$/.test(parsedUrl.protocol) && parsedUrl.hostname && regex.test(url) && !/\s/.test(url)) {
            return { value: url }
          }
        } catch (error) {
          // Try the next shape.
        }
      }
      return null
    }
    default:
      return null
  }
}

// ---------------------------------------------------------- the markup

const WORDS = (
  'we help teams across europe ship packaging lines with service contracts spare parts and training ' +
  'for operators our engineers design install and maintain systems that keep production running ' +
  'customers in food pharma logistics and retail trust us with their most demanding projects ' +
  'quality safety delivery support sustainable efficient reliable modern flexible custom solution ' +
  'platform product process partner network growth market industry experience expertise value ' +
  'data insight report strategy planning analysis consulting management operations finance people ' +
  'culture careers office region global local community innovation research development results'
).split(' ')
const PLACES = ['Berlin', 'Munich', 'Hamburg', 'Vienna', 'Zurich', 'Lyon', 'Milan', 'Leeds', 'Austin', 'Denver', 'Porto', 'Ghent']
const STREETS = ['Hauptstrasse', 'Market Street', 'Rue de la Paix', 'Kings Road', 'Via Roma', 'Main Street', 'Industrieweg']
const NAMES = ['Acme', 'Nordlicht', 'Bluepeak', 'Vektor', 'Solaris', 'Hansa', 'Ironbridge', 'Cobalt', 'Meridian', 'Alpenglow', 'Riverstone', 'Fjord']
const SUFFIX = ['Systems', 'Logistics', 'Packaging', 'Consulting', 'Labs', 'Industries', 'Digital', 'Foods', 'Engineering', 'Partners']
const TLDS = ['com', 'de', 'co.uk', 'io', 'fr', 'it', 'nl', 'at', 'ch', 'es']
const SECTIONS = ['About', 'Services', 'Products', 'Industries', 'Case studies', 'Careers', 'Blog', 'Contact', 'Pricing', 'Support', 'Partners', 'News']

function sentence() {
  const n = int(8, 22)
  const words = Array.from({ length: n }, () => pick(WORDS))
  const s = words.join(' ')
  return `${s[0].toUpperCase()}${s.slice(1)}.`
}
function paragraph() {
  return Array.from({ length: int(2, 6) }, sentence).join(' ')
}
function slug(s) {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
}

function navigation(company) {
  const links = SECTIONS.map((s) => `      <li class="nav-item"><a class="nav-link" href="/${slug(s)}/">${s}</a></li>`)
  const sub = Array.from({ length: int(10, 40) }, (_, k) => `        <li><a href="/${slug(pick(SECTIONS))}/${slug(pick(WORDS))}-${k}">${pick(WORDS)} ${pick(WORDS)}</a></li>`)
  return `  <header class="site-header">
    <div class="container">
      <a class="brand" href="/"><img src="/assets/img/logo.svg" alt="${company}" width="160" height="40"></a>
      <button class="menu-toggle" aria-controls="primary-menu" aria-expanded="false">Menu</button>
      <nav id="primary-menu" class="main-navigation" aria-label="Main">
    <ul class="nav">
${links.join('\n')}
      <li class="nav-item dropdown"><a href="#">More</a>
      <ul class="dropdown-menu">
${sub.join('\n')}
      </ul></li>
    </ul>
      </nav>
    </div>
  </header>`
}

function hero(company) {
  return `  <section class="hero">
    <div class="container">
      <h1>${company}: ${pick(WORDS)} ${pick(WORDS)} for ${pick(WORDS)}</h1>
      <p class="lead">${paragraph()}</p>
      <a class="btn btn-primary" href="/contact/">Get in touch</a>
      <a class="btn btn-outline" href="/case-studies/">See our work</a>
    </div>
  </section>`
}

function section() {
  const title = `${pick(WORDS)} ${pick(WORDS)}`
  const kind = int(0, 3)
  if (kind === 0) {
    const cards = Array.from({ length: int(3, 6) }, (_, k) => `      <article class="card">
        <img src="/assets/img/card-${int(1, 99)}.jpg" alt="" loading="lazy">
        <h3><a href="/${slug(pick(SECTIONS))}/${slug(pick(WORDS))}-${k}">${pick(WORDS)} ${pick(WORDS)}</a></h3>
        <p>${paragraph()}</p>
      </article>`)
    return `  <section class="cards">
    <div class="container">
      <h2>${title}</h2>
      <div class="grid">
${cards.join('\n')}
      </div>
    </div>
  </section>`
  }
  if (kind === 1) {
    const rows = Array.from({ length: int(3, 8) }, () => `        <tr><td>${pick(WORDS)}</td><td>${int(1, 999)}</td><td>${pick(WORDS)} ${pick(WORDS)}</td></tr>`)
    return `  <section class="table-section">
    <div class="container">
      <h2>${title}</h2>
      <p>${paragraph()}</p>
      <table class="table"><thead><tr><th>Item</th><th>Qty</th><th>Notes</th></tr></thead><tbody>
${rows.join('\n')}
      </tbody></table>
    </div>
  </section>`
  }
  if (kind === 2) {
    return `  <section class="testimonial">
    <blockquote><p>&ldquo;${sentence()} ${sentence()}&rdquo;</p>
      <footer>${pick(NAMES)} ${pick(SUFFIX)}, ${pick(PLACES)}</footer></blockquote>
  </section>`
  }
  const paras = Array.from({ length: int(2, 5) }, () => `      <p>${paragraph()}</p>`)
  return `  <section class="content">
    <div class="container">
      <h2>${title}</h2>
${paras.join('\n')}
      <ul>
${Array.from({ length: int(2, 6) }, () => `        <li>${sentence()}</li>`).join('\n')}
      </ul>
    </div>
  </section>`
}

function contactForm() {
  return `  <section class="contact">
    <div class="container">
      <h2>Contact us</h2>
      <form class="contact-form" action="/contact/send" method="post">
        <label for="name">Name</label><input id="name" name="name" type="text" required>
        <label for="email">Email</label><input id="email" name="email" type="email" required>
        <label for="company">Company</label><input id="company" name="company" type="text">
        <label for="message">Message</label><textarea id="message" name="message" rows="5"></textarea>
        <label><input type="checkbox" name="newsletter" value="1"> Send me the newsletter</label>
        <button type="submit" class="btn btn-primary">Send</button>
      </form>
    </div>
  </section>`
}

function footer(company, domain) {
  const cols = Array.from({ length: 4 }, () => `      <div class="col"><h4>${pick(SECTIONS)}</h4><ul>
${Array.from({ length: int(3, 7) }, () => `        <li><a href="/${slug(pick(SECTIONS))}/">${pick(WORDS)} ${pick(WORDS)}</a></li>`).join('\n')}
      </ul></div>`)
  return `  <footer class="site-footer">
    <div class="container">
${cols.join('\n')}
      <address>${company}<br>${pick(STREETS)} ${int(1, 120)}<br>${int(10000, 99999)} ${pick(PLACES)}<br>
        <a href="mailto:info@${domain}">info@${domain}</a> &middot; <a href="tel:+4930${int(1000000, 9999999)}">+49 30 ${int(100000, 999999)}</a></address>
      <p class="legal">&copy; 2026 ${company}. <a href="/imprint/">Imprint</a> &middot; <a href="/privacy/">Privacy</a></p>
    </div>
  </footer>`
}

const MENU_SCRIPT = `<script>
  (function () {
    var toggle = document.querySelector('.menu-toggle');
    var menu = document.getElementById('primary-menu');
    if (toggle && menu) {
      toggle.addEventListener('click', function () {
        var open = toggle.getAttribute('aria-expanded') === 'true';
        toggle.setAttribute('aria-expanded', String(!open));
        menu.classList.toggle('is-open', !open);
      });
    }
  })();
</script>`

// ---------------------------------------------------------------- pages

function main() {
  const { technologies } = loadFingerprints()
  const names = Object.keys(technologies).sort()
  const byCategory = new Map()
  for (const name of names) {
    for (const c of technologies[name].cats || []) {
      if (!byCategory.has(c)) byCategory.set(c, [])
      byCategory.get(c).push(name)
    }
  }
  const plantable = names.filter((n) => plantables(technologies[n]).length)

  fs.mkdirSync(OUT, { recursive: true })
  for (const f of fs.readdirSync(OUT)) {
    if (/^\d+\.(html|json)$/.test(f)) fs.unlinkSync(path.join(OUT, f))
  }

  const stats = { planted: 0, technologies: new Set(), fields: {}, empty: 0, bytes: [] }
  for (let n = 1; n <= PAGES; n++) {
    rng = mulberry32(SEED * 1000003 + n)
    const company = `${pick(NAMES)} ${pick(SUFFIX)}`
    const domain = `${slug(company)}.${pick(TLDS)}`
    const page = {
      domain,
      url: `https://www.${domain}/`,
      urlPlanted: false,
      headers: {
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': pick(['max-age=0, must-revalidate', 'no-cache', 'public, max-age=600']),
        Date: 'Wed, 25 Nov 2026 10:00:00 GMT',
        Vary: 'Accept-Encoding',
      },
      cookies: {},
      head: [],
      body: [],
      scripts: [],
      planted: [],
    }

    const marked = n % 10 !== 0
    if (marked) {
      const wanted = int(3, 15)
      const chosen = new Set()
      const plantTech = (name, depth = 0) => {
        if (chosen.has(name) || depth > 3) return chosen.has(name)
        const tech = technologies[name]
        if (!tech) return false
        // What it needs first: the technologies it requires, or one of
        // the category it requires; but one time in four not (a plugin's
        // mark on a site whose platform shows no mark of its own).
        const needs = tech.requires || tech.requiresCategory
        const orphan = needs && depth === 0 && rand() < 0.25
        for (const required of orphan ? [] : patternsOf(tech.requires)) {
          if (!plantTech(required, depth + 1)) return false
        }
        for (const cat of orphan ? [] : patternsOf(tech.requiresCategory)) {
          const present = [...chosen].some((c) => (technologies[c].cats || []).map(String).includes(String(cat)))
          if (present) continue
          const options = shuffle((byCategory.get(Number(cat)) || []).filter((c) => !technologies[c].requires && !technologies[c].requiresCategory))
          if (!options.slice(0, 10).some((c) => plantTech(c, depth + 1))) return false
        }
        for (const p of shuffle(plantables(tech))) {
          const planted = plant(tech, p, page)
          if (!planted) continue
          const entry = { technology: name, field: p.field, key: p.key, pattern: p.raw, value: planted.value }
          if (orphan) entry.withoutRequired = patternsOf(tech.requires || tech.requiresCategory)
          if (p.field === 'headers') page.headers[p.key.includes('*') ? p.key.replace('*', 'X1') : p.key] = planted.value
          else if (p.field === 'cookies') {
            const cookie = p.key.endsWith('*') ? `${p.key.slice(0, -1)}${Array.from({ length: 10 }, () => pick('ABCDEFGHJKLMNPQRSTUVWXYZ0123456789'.split(''))).join('')}` : p.key
            page.cookies[cookie] = planted.value
            entry.key = cookie
          } else if (p.field === 'url') {
            page.url = planted.value
            page.urlPlanted = true
          } else if (p.field === 'meta') page.head.push(planted.markup)
          else if (p.field === 'scriptSrc') (rand() < 0.5 ? page.head : page.scripts).push(planted.markup)
          else if (p.field === 'scripts') (rand() < 0.5 ? page.head : page.scripts).push(planted.markup)
          else page.body.push(planted.markup)
          page.planted.push(entry)
          chosen.add(name)
          return true
        }
        return false
      }
      let tries = 0
      while (chosen.size < wanted && tries++ < 200) {
        plantTech(pick(plantable))
      }
    }

    // Assemble.
    const target = int(21, 146) * 1024
    const lang = pick(['en', 'de', 'en-GB', 'fr', 'nl'])
    const head = [
      '<!DOCTYPE html>',
      `<html lang="${lang}">`,
      '<head>',
      '  <meta charset="utf-8">',
      '  <meta name="viewport" content="width=device-width, initial-scale=1">',
      `  <title>${company} | ${pick(WORDS)} ${pick(WORDS)}</title>`,
      `  <meta name="description" content="${sentence()}">`,
      `  <meta property="og:site_name" content="${company}">`,
      `  <link rel="canonical" href="${attr(page.url)}">`,
      '  <link rel="stylesheet" href="/assets/css/site.css">',
      '  <link rel="icon" href="/favicon.ico">',
      ...page.head.map((m) => `  ${m}`),
      '</head>',
    ]
    const body = [`<body class="home page-${n}">`, navigation(company), '<main id="content">', hero(company)]
    const marks = shuffle(page.body)
    const tail = [contactForm(), '</main>', footer(company, domain), MENU_SCRIPT, ...page.scripts.map((s) => `  ${s}`), '</body>', '</html>', '']
    const fixed = head.join('\n').length + body.join('\n').length + tail.join('\n').length + marks.join('\n').length
    let size = fixed
    const sections = []
    while (size < target) {
      const s = section()
      sections.push(s)
      size += s.length + 1
    }
    // Marks go between sections, in random places.
    const embeds = marks.map((mark) => `  <div class="embed">${mark}</div>`)
    for (const embed of embeds) {
      sections.splice(int(0, sections.length), 0, embed)
    }
    // 20-150 KB: sections dropped or added at the edges.
    const assemble = () => [...head, ...body, ...sections, ...tail].join('\n')
    let html = assemble()
    while (Buffer.byteLength(html) > 150 * 1024) {
      const last = sections.findLastIndex((s) => !embeds.includes(s))
      if (last === -1) break
      sections.splice(last, 1)
      html = assemble()
    }
    while (Buffer.byteLength(html) < 20 * 1024) {
      sections.push(section())
      html = assemble()
    }

    // Check the plan on the finished page.
    for (const entry of page.planted) {
      const regex = new RegExp(split(entry.pattern) || '', 'i')
      let ok
      if (entry.field === 'html') ok = regex.test(html)
      else if (entry.field === 'scriptSrc') ok = html.includes(`<script src="${attr(entry.value)}">`) && regex.test(entry.value)
      else if (entry.field === 'scripts') ok = html.includes(`<script>${entry.value}</script>`) && regex.test(entry.value)
      else if (entry.field === 'meta') ok = html.includes(`content="${attr(entry.value)}"`) && regex.test(entry.value)
      else if (entry.field === 'headers') ok = Object.entries(page.headers).some(([k, v]) => k.toLowerCase() === entry.key.toLowerCase() && v === entry.value) && regex.test(entry.value)
      else if (entry.field === 'cookies') ok = page.cookies[entry.key] === entry.value && regex.test(entry.value)
      else if (entry.field === 'url') ok = page.url === entry.value && regex.test(page.url)
      if (!ok) throw new Error(`page ${n}: planted ${entry.technology} (${entry.field}) does not check: ${JSON.stringify(entry)}`)
      stats.planted++
      stats.technologies.add(entry.technology)
      stats.fields[entry.field] = (stats.fields[entry.field] || 0) + 1
    }
    if (!page.planted.length) stats.empty++
    stats.bytes.push(Buffer.byteLength(html))

    fs.writeFileSync(path.join(OUT, `${n}.html`), html)
    fs.writeFileSync(
      path.join(OUT, `${n}.json`),
      `${JSON.stringify({ url: page.url, headers: page.headers, cookies: page.cookies, planted: page.planted }, null, 1)}\n`
    )
  }
  const kb = stats.bytes.map((b) => b / 1024)
  console.log(
    `generated ${PAGES} pages in ${OUT} (seed ${SEED}): ${Math.round(Math.min(...kb))}-${Math.round(Math.max(...kb))} KB, ` +
      `${(kb.reduce((a, b) => a + b, 0) / 1024).toFixed(1)} MB in all; ${stats.empty} without marks; ` +
      `${stats.planted} marks of ${stats.technologies.size} technologies (${Object.entries(stats.fields).map(([f, c]) => `${f} ${c}`).join(', ')})`
  )
}

main()
