/** The sandbox's own listing of the correct answers, per scenario and challenge step. */
import type { SecurityChallenge, SecurityResponses } from '../../src/aggregator/schemas.js';

export interface ScenarioSteps {
  readonly username: string;
  readonly institution: string;
  readonly challengeSequence: ReadonlyArray<{ readonly challenges: readonly SecurityChallenge[]; readonly answer: SecurityResponses }>;
}

export async function scenarioSteps(sandboxUrl: string, username: string): Promise<ScenarioSteps> {
  const response = await fetch(`${sandboxUrl}/sandbox/scenarios`);
  if (!response.ok) throw new Error(`the sandbox refused its scenario listing: ${response.status}`);
  const body = (await response.json()) as { scenarios: ScenarioSteps[] };
  const found = body.scenarios.find((scenario) => scenario.username === username);
  if (!found) throw new Error(`the sandbox lists no scenario ${username}`);
  return found;
}

/** The correct answer of step `index` (0-based) of a scenario. */
export async function correctAnswer(sandboxUrl: string, username: string, index: number): Promise<SecurityResponses> {
  const step = (await scenarioSteps(sandboxUrl, username)).challengeSequence[index];
  if (!step) throw new Error(`scenario ${username} has no challenge step ${index + 1}`);
  return step.answer;
}
