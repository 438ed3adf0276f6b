/**
 * docs/sandbox.md's scenario table says what the catalogue (sandbox/scenarios.ts) does: every
 * username it names resolves to a scenario at the institution of its row, every fixed scenario is in
 * the table (the Authorize error codes by their row), and every scenario's password is the one the page
 * gives. A tester who connects by the page reaches the scenario, not INVALID_LOGIN.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { INSTITUTIONS, SANDBOX_PASSWORD, SCENARIOS, resolveScenario } from '../../sandbox/scenarios.js';

const PAGE = fileURLToPath(new URL('../../docs/sandbox.md', import.meta.url));

interface Row {
  readonly usernames: readonly string[];
  readonly institution: string;
  readonly text: string;
}

/** The rows of the table under "## Scenarios: the username decides": the code spans of its first two cells. */
function scenarioRows(markdown: string): Row[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Scenarios: the username decides'));
  assert.ok(section, 'docs/sandbox.md has a "## Scenarios: the username decides" section');
  const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Usernames') && !line.startsWith('|---'))
    .map((line) => {
      const [usernames = '', institution = ''] = line.split(' | ');
      return { usernames: spans(usernames), institution: spans(institution)[0] ?? '', text: line };
    });
}

describe("the sandbox page's scenarios", () => {
  const page = readFileSync(PAGE, 'utf8');
  const rows = scenarioRows(page);

  it('name each username with the institution it banks at', () => {
    assert.ok(rows.length >= 10, `the table has its rows (${rows.length})`);
    let checked = 0;
    for (const row of rows) {
      assert.ok(Object.hasOwn(INSTITUTIONS, row.institution), `${row.text}: ${row.institution} is a sandbox institution`);
      // Patterns (`<code>_<n>`) are not usernames; everything else named in the first cell must resolve.
      for (const username of row.usernames.filter((name) => !name.includes('<'))) {
        const scenario = resolveScenario(username);
        assert.ok(scenario, `${username} (${row.text}) is a scenario of sandbox/scenarios.ts`);
        assert.equal(scenario.institution, row.institution, `${username} banks at ${scenario.institution}, not ${row.institution}`);
        checked += 1;
      }
    }
    assert.ok(checked >= 20, `the usernames were checked (${checked})`);
  });

  it('leave no fixed scenario out, and give the one password', () => {
    const named = new Set(rows.flatMap((row) => row.usernames));
    const errorRow = rows.find((row) => row.text.includes('one per Authorize error code'));
    for (const scenario of SCENARIOS) {
      if (scenario.kind === 'authorize-error') assert.equal(errorRow?.institution, scenario.institution, `${scenario.username}: the error codes' row`);
      else assert.ok(named.has(scenario.username), `${scenario.username} (${scenario.institution}) is in the table`);
      assert.equal(scenario.password, SANDBOX_PASSWORD);
    }
    assert.ok(page.includes(`\`${SANDBOX_PASSWORD}\``), `the page gives the password ${SANDBOX_PASSWORD}`);
  });
});
