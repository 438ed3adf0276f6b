/**
 * The patch register (src/workflows/patches.ts) is the only source of `patched()` ids: every call in
 * the workflows names an entry, every entry is called, no retired id comes back, and the operations
 * page lists them all with how to retire one.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PATCHES, RETIRED_PATCHES } from '../../src/workflows/patches.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function sourcesUnder(dir: string): { file: string; text: string }[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => {
      const file = join(entry.parentPath, entry.name);
      return { file: file.slice(ROOT.length), text: readFileSync(file, 'utf8') };
    });
}

/** Every call of patched() or deprecatePatch() in src/'s code (comments left out), with the text of its argument. */
function patchCalls(): { file: string; argument: string }[] {
  return sourcesUnder('src').flatMap(({ file, text }) => {
    const code = text
      .split('\n')
      .filter((line) => !/^\s*(\*|\/\*|\/\/)/.test(line))
      .join('\n');
    return [...code.matchAll(/\b(?:patched|deprecatePatch)\(([^)]*)\)/g)].map((match) => ({ file, argument: (match[1] ?? '').trim() }));
  });
}

void describe('the patch register', () => {
  const names = Object.keys(PATCHES);
  const calls = patchCalls();

  void it('is where every patched() call takes its id', () => {
    assert.ok(calls.length >= names.length, `found ${calls.length} calls`);
    for (const { file, argument } of calls) {
      const name = /^PATCHES\.(\w+)\.id$/.exec(argument)?.[1];
      assert.ok(name !== undefined, `${file}: patched(${argument}) does not take its id from the register (PATCHES.<name>.id)`);
      assert.ok(names.includes(name), `${file}: PATCHES.${name} is not in the register`);
    }
  });

  void it('holds no entry nothing calls, and each entry says why, since when and when it can go', () => {
    for (const [name, entry] of Object.entries(PATCHES)) {
      assert.ok(
        calls.some((call) => call.argument === `PATCHES.${name}.id`),
        `PATCHES.${name} is called nowhere: retire it (move it to RETIRED_PATCHES)`,
      );
      assert.match(entry.since, /^\d{4}-\d{2}-\d{2}$/, `${name}.since`);
      assert.ok(entry.why.length > 20 && entry.removableWhen.length > 10, `${name}: why and removableWhen must say something`);
    }
  });

  void it('never reuses an id, a retired one included', () => {
    const ids = [...Object.values(PATCHES).map((entry) => entry.id), ...RETIRED_PATCHES.map((entry) => entry.id)];
    assert.equal(new Set(ids).size, ids.length, `an id twice: ${ids.join(', ')}`);
    for (const { file, text } of sourcesUnder('src/workflows').filter(({ file }) => !file.endsWith('patches.ts'))) {
      for (const { id } of RETIRED_PATCHES) assert.ok(!text.includes(`'${id}'`), `${file} names the retired patch ${id}`);
    }
  });

  void it('is on the operations page, every id, with how to retire one', () => {
    const page = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    for (const { id } of [...Object.values(PATCHES), ...RETIRED_PATCHES])
      assert.ok(page.includes(`\`${id}\``), `docs/operations.md does not name the patch ${id}`);
    assert.match(page, /### Retiring a patch/);
  });
});
