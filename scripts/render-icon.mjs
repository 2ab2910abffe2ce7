// `node scripts/render-icon.mjs`: renders media/icon.png (256×256, the marketplace icon) from the glyph of
// media/agent-host.svg — white strokes on the gallery banner's colour — in headless Chromium.
// The PNG is committed; run this again only when the SVG or the colour changes.
import * as fs from 'node:fs';
import { chromium } from 'playwright-core';

const BACKGROUND = '#1e3a5f'; // package.json galleryBanner.color
const SIZE = 256;

const glyph = fs.readFileSync('media/agent-host.svg', 'utf8');
const paths = [...glyph.matchAll(/<path d="([^"]+)"\/>/g)].map((m) => `<path d="${m[1]}"/>`).join('');
if (!paths) throw new Error('no <path d="…"/> in media/agent-host.svg');
// The glyph spans x 4–20, y 3–20 of its 24-unit box: scaled to 80 % and centred on a rounded square.
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 24 24">
  <rect width="24" height="24" rx="5" fill="${BACKGROUND}"/>
  <g transform="translate(2.4 2.8) scale(0.8)" fill="none" stroke="#ffffff" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round">${paths}</g>
</svg>`;

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE } });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator('svg').screenshot({ path: 'media/icon.png', omitBackground: true });
} finally {
  await browser.close();
}
console.log(`media/icon.png: ${SIZE}×${SIZE}, ${fs.statSync('media/icon.png').size} bytes`);
