/**
 * The screenshots of the docs (docs/images/), taken by the browser tests at the moment that shows the
 * product. Only `npm run docs:screenshots` (DOCS_SCREENSHOTS=1) writes them into docs/images/; any
 * other run takes the same screenshot into a temporary folder, checks it is a PNG and removes it, so
 * `npm test` leaves the tree clean and the code path stays exercised.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';

export const DOCS_SCREENSHOTS = loadTestConfig().docsScreenshots;
const DOCS_IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
/** The size of the docs' images: the page's viewport is set to it for the screenshot. */
export const DOCS_VIEWPORT = { width: 1280, height: 800 };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Screenshots the page's viewport (1280x800) as docs/images/<name>.png, or into a temporary folder; returns where. */
export async function docsScreenshot(page: Page, name: 'console' | 'books' | 'web-ui'): Promise<string> {
  const dir = DOCS_SCREENSHOTS ? DOCS_IMAGES : await mkdtemp(join(tmpdir(), 'docs-screenshot-'));
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  const viewport = page.viewportSize();
  await page.setViewportSize(DOCS_VIEWPORT);
  try {
    await page.screenshot({ path });
  } finally {
    if (viewport) await page.setViewportSize(viewport);
  }
  const png = await readFile(path);
  assert.ok(png.length > PNG_SIGNATURE.length && png.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE), `${path} is a PNG`);
  // IHDR: width and height, big-endian, right after the signature and the chunk's length and type.
  assert.deepEqual({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }, DOCS_VIEWPORT, `${path} is ${DOCS_VIEWPORT.width}x${DOCS_VIEWPORT.height}`);
  if (!DOCS_SCREENSHOTS) await rm(dir, { recursive: true, force: true });
  return path;
}
