// SPDX-License-Identifier: Apache-2.0
// t/conformance/clients.mjs: what npm packages nobody here wrote read from a
// live mod_sitemap server, starting at its robots.txt.
//
//   node clients.mjs ROBOTS_URL ENCODING...      (ENCODING: gzip or identity)
//
// For each ENCODING (sent as Accept-Encoding), prints one JSON object:
//   robots:     robots-parser's getSitemaps() of the robots.txt;
//   sitemap:    the page URLs the `sitemap` package reads from those
//               sitemaps (XMLToSitemapIndexStream / XMLToSitemapItemStream
//               with ErrorLevel.THROW, every item through validateSMIOptions
//               with THROW), following indexes;
//   links:      the hreflang alternates the `sitemap` package reads, one
//               "url lang href" string each;
//   refused:    what its strict mode refused in a <urlset> that the
//               package then read again with ErrorLevel.WARN: only its
//               "unhandled attr: url xmlns:xhtml" (the strict parser knows
//               no attribute on <url>, a namespace declaration included),
//               every other error still ends the program;
//   sitemapper: the URLs sitemapper fetches from the same sitemap URLs;
//   encodings:  the Content-Encoding of every answer (robots.txt first).
// Any error ends the program with status 1 and the error on stderr.
import http from 'node:http';
import zlib from 'node:zlib';
import { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import Sitemapper from 'sitemapper';

const require = createRequire(import.meta.url);
const robotsParser = require('robots-parser');
const {
  XMLToSitemapItemStream, XMLToSitemapIndexStream, ErrorLevel, validateSMIOptions,
} = require('sitemap');

function get(url, encoding) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { 'Accept-Encoding': encoding } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        let body = Buffer.concat(chunks);
        const ce = res.headers['content-encoding'] || 'identity';
        if (res.statusCode !== 200) {
          reject(new Error(`${url}: HTTP ${res.statusCode}`));
          return;
        }
        if (ce === 'gzip') body = zlib.gunzipSync(body);
        else if (ce !== 'identity') {
          reject(new Error(`${url}: Content-Encoding ${ce}`));
          return;
        }
        resolve({ body, ce });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

function collect(stream, body) {
  return new Promise((resolve, reject) => {
    const items = [];
    stream.on('data', (item) => items.push(item));
    stream.on('end', () => resolve(items));
    stream.on('error', reject);
    Readable.from([body]).on('error', reject).pipe(stream);
  });
}

// The pages of one sitemap URL, following an index, strictly.
// The items of a <urlset>: strictly, or, when the strict parser refuses
// only the xhtml namespace declared on a <url>, read again with WARN.
async function urlset(body, refused) {
  try {
    return await collect(new XMLToSitemapItemStream(
      { level: ErrorLevel.THROW, logger: false }), body);
  } catch (e) {
    if (!/^unhandled attr: url xmlns:xhtml$/.test(e.message)) throw e;
    refused.push(e.message);
    return collect(new XMLToSitemapItemStream(
      { level: ErrorLevel.WARN, logger: false }), body);
  }
}

async function pages(url, encoding, encodings, links, refused) {
  const { body, ce } = await get(url, encoding);
  encodings.push(ce);
  const text = body.toString('utf8');
  const opts = { level: ErrorLevel.THROW, logger: false };
  if (/<sitemapindex[\s>]/.test(text)) {
    const entries = await collect(new XMLToSitemapIndexStream(opts), body);
    if (!entries.length) throw new Error(`${url}: an index of nothing`);
    const out = [];
    for (const e of entries) {
      out.push(...await pages(e.url, encoding, encodings, links, refused));
    }
    return out;
  }
  const items = await urlset(body, refused);
  if (!items.length) throw new Error(`${url}: a urlset of nothing`);
  return items.map((item) => {
    const valid = validateSMIOptions(item, ErrorLevel.THROW);
    for (const l of valid.links || []) links.push(`${valid.url} ${l.lang} ${l.url}`);
    return valid.url;
  });
}

async function run(robotsUrl, encoding) {
  const encodings = [];
  const robots = await get(robotsUrl, encoding);
  encodings.push(robots.ce);
  const sitemaps = robotsParser(robotsUrl, robots.body.toString('utf8')).getSitemaps();
  const byPackage = [];
  const bySitemapper = [];
  const links = [];
  const refused = [];
  for (const sm of sitemaps) {
    byPackage.push(...await pages(sm, encoding, encodings, links, refused));
    const mapper = new Sitemapper({
      url: sm, timeout: 15000, requestHeaders: { 'Accept-Encoding': encoding },
    });
    const got = await mapper.fetch();
    if (got.errors.length) throw new Error(`sitemapper ${sm}: ${JSON.stringify(got.errors)}`);
    bySitemapper.push(...got.sites);
  }
  return {
    robots: sitemaps, sitemap: byPackage, links, refused, sitemapper: bySitemapper,
    encodings,
  };
}

const [robotsUrl, ...encodings] = process.argv.slice(2);
const out = {};
try {
  for (const enc of encodings) out[enc] = await run(robotsUrl, enc);
} catch (e) {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
