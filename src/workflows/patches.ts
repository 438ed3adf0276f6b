/**
 * Every `patched()` the workflows call, in one register: what it tells apart, since when, and when it
 * can go. A workflow calls `patched(PATCHES.<name>.id)` and nothing else (test/workflows/patches.test.ts
 * reads the sources); the operations page says how one is retired. Import-free: workflow code.
 *
 * Why so few: connections and a book refresh's runs are Pinned (Worker Deployment Versioning), so a
 * change to their steps needs no patch; only workflows that move to the current build while running
 * (AutoUpgrade: forgets, retention timers, tenant throttles) replay under code other than their own.
 */
export interface PatchEntry {
  /** The marker's id in history: never changes while a history holding it may replay. */
  readonly id: string;
  /** The workflow type that calls it. */
  readonly workflow: string;
  /** The day it landed. */
  readonly since: string;
  /** What the histories recorded before it do differently. */
  readonly why: string;
  /** What must be true before the call (and the old branch) can go. */
  readonly removableWhen: string;
}

export const PATCHES = {
  leaveBook: {
    id: 'leave-book',
    workflow: 'forgetLoginWorkflow',
    since: '2026-11-26',
    why: 'a forget is AutoUpgrade: one begun before books existed replays without the step that takes the login out of its book',
    removableWhen: 'no forget begun before 2026-11-26 is open',
  },
} as const satisfies Record<string, PatchEntry>;

/**
 * Patches retired: never call them again (a new call with an old id would match old markers). Their
 * histories no longer replay on this code, and need not: the workflow is Pinned, so a run replays on
 * the build it began on.
 */
export const RETIRED_PATCHES: readonly (Pick<PatchEntry, 'id' | 'workflow' | 'since'> & { readonly retired: string; readonly why: string })[] = [
  {
    id: 'book-fleet-share',
    workflow: 'bookRefreshWorkflow',
    since: '2026-11-26',
    retired: '2026-11-28',
    why: 'runs begun before books shared the fleet; the refresh has been Pinned per page since 2026-11-26, and no run of before is open',
  },
  {
    id: 'book-crowding-expiry',
    workflow: 'bookRefreshWorkflow',
    since: '2026-11-27',
    retired: '2026-11-28',
    why: 'landed after the refresh became Pinned, so its old branch never replayed on a build other than its own',
  },
  {
    id: 'book-steady-clock',
    workflow: 'bookRefreshWorkflow',
    since: '2026-11-27',
    retired: '2026-11-28',
    why: 'landed after the refresh became Pinned, so its old branch never replayed on a build other than its own',
  },
  {
    id: 'versioned-steps',
    workflow: 'connectionWorkflow',
    since: '2026-11-25',
    retired: '2026-12-03',
    why: 'it told connections of versioned builds from those begun before; with the three below gone it told nothing (a Pinned connection replays on its own build), and a history holding its marker replays without the call',
  },
  {
    id: 'retention-notice-at-start',
    workflow: 'connectionWorkflow',
    since: '2026-11-22',
    retired: '2026-12-03',
    why: 'connections begun on an unversioned worker (before 2026-11-25) last under an hour: none is open',
  },
  {
    id: 'retention-notice',
    workflow: 'connectionWorkflow',
    since: '2026-11-22',
    retired: '2026-12-03',
    why: 'connections begun before the retention notice (2026-11-22): none is open',
  },
  {
    id: 'service-calls-as-activities',
    workflow: 'connectionWorkflow',
    since: '2026-11-25',
    retired: '2026-12-03',
    why: 'connections that made their data requests as local activities (before 2026-11-25): none is open',
  },
];
