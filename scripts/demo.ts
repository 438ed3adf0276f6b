/**
 * `npm run demo` (with `npm start` running): the whole flow in about a minute, through the same
 * pipeline client a lender would use. A live connection whose institution asks two rounds of
 * challenges (answered from the sandbox's own scenario listing, as an operator would), then a
 * cached connection on the saved LoginId that fetches accounts, investments and lending attributes.
 *
 * Env (loadClientConfig in src/settings/client.ts, loadDemoConfig in scripts/demo-settings.ts): TEMPORAL_ADDRESS etc.; the sandbox at SANDBOX_URL,
 * else where `npm start` runs it (http://127.0.0.1:SANDBOX_PORT, default 4010); DEMO_SCENARIO
 * (default two_step_code; any challenge username of GET /sandbox/scenarios).
 */
import { randomUUID } from 'node:crypto';
import { ConnectionsClient, connectionKey, loadClientConfig } from '../src/client/index.js';
import { loadDemoConfig, type DemoConfig } from './demo-settings.js';
import type { ConnectionResult } from '../src/contract/connection/connection-definitions.js';
import type { ScenarioListing } from '../sandbox/scenarios.js';

const say = (line = '') => process.stdout.write(`${line}\n`);

async function scenario({ sandboxUrl, scenario: scenarioName }: DemoConfig): Promise<ScenarioListing> {
  const response = await fetch(`${sandboxUrl}/sandbox/scenarios`).catch((error: unknown) => {
    throw new Error(`the sandbox does not answer at ${sandboxUrl} (is \`npm start\` running?): ${String(error)}`);
  });
  const { scenarios } = (await response.json()) as { scenarios: ScenarioListing[] };
  const found = scenarios.find((entry) => entry.username === scenarioName);
  if (!found) throw new Error(`DEMO_SCENARIO=${scenarioName} is not a sandbox scenario; see ${sandboxUrl}/sandbox/scenarios`);
  return found;
}

function summarize(result: ConnectionResult): string {
  const parts = [`LoginId ${result.loginId}`, `${result.totalPolls} poll(s)`];
  if (result.accountsDetail) {
    const transactions = result.accountsDetail.Accounts.reduce((sum, account) => sum + (account.Transactions?.length ?? 0), 0);
    parts.push(`${result.accountsDetail.Accounts.length} accounts with ${transactions} transactions`);
  }
  if (result.investments) parts.push(`investments worth ${result.investments.Value?.toFixed(2) ?? 'unknown'}`);
  if (result.attributes) {
    for (const [group, values] of Object.entries(result.attributes.Groups)) {
      const shown = Object.entries(values)
        .filter(([name]) => name !== 'Id' && name !== 'AttributesDetail')
        .slice(0, 4);
      parts.push(`${group}: ${shown.map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(', ')}…`);
    }
  }
  return parts.join('\n    ');
}

async function main(): Promise<void> {
  const config = loadClientConfig();
  const listing = await scenario(loadDemoConfig());
  const connections = await ConnectionsClient.connect(config);
  const started = Date.now();
  try {
    const liveKey = connectionKey(config.customerId, `demo-live-${randomUUID().slice(0, 8)}`);
    say(`1. Live connection ${liveKey}: ${listing.institution}, user ${listing.username} (${listing.description})`);
    const first = await connections.startAndAwaitFirstStep(liveKey, {
      customerId: config.customerId,
      session: { kind: 'live', institution: listing.institution, username: listing.username, password: listing.password, save: true },
      products: { accountsDetail: { WithTransactions: true } },
      timing: { pollIntervalMs: 2_000 },
    });
    if (first.step !== 'challenge') throw new Error(`expected a challenge, the connection answered ${first.step}`);
    let set = first.challengeSet;
    for (const round of listing.challengeSequence) {
      say(`   challenge set ${set.id}: ${set.challenges.map((challenge) => `${challenge.Type} "${challenge.Prompt}"`).join('; ')}`);
      const outcome = await connections.answer(liveKey, { challengeSetId: set.id, responses: round.answer });
      say(`   answered -> ${outcome.outcome}${outcome.outcome === 'accepted' ? `, now ${outcome.status}` : ''}`);
      if (outcome.outcome !== 'accepted') throw new Error(`the answer was not accepted: ${JSON.stringify(outcome)}`);
      if (!outcome.nextChallengeSet) break;
      set = outcome.nextChallengeSet;
    }
    say('   retrieving accounts (polling every 2 s while the service answers 202)…');
    const live = await connections.result(liveKey);
    say(`   completed:\n    ${summarize(live)}`);

    const cachedKey = connectionKey(config.customerId, `demo-cached-${randomUUID().slice(0, 8)}`);
    say(`2. Cached connection ${cachedKey} on the saved LoginId: accounts, investments, lending attributes`);
    await connections.start(cachedKey, {
      customerId: config.customerId,
      session: { kind: 'cached', loginId: live.loginId },
      products: { accountsDetail: { DaysOfTransactions: 'Days365' }, investments: true, attributes: { package: 'GetLendingAttributes' } },
      timing: { pollIntervalMs: 2_000 },
    });
    const cached = await connections.result(cachedKey);
    say(`   completed:\n    ${summarize(cached)}`);
    say(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s. Both connections are in the Web UI (search: WorkflowType = "connectionWorkflow").`);
  } finally {
    await connections.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
