/**
 * Every `patched()` the workflows call, in one register: what it tells apart, since when, and when it
 * can go. A workflow calls `patched(PATCHES.<name>.id)` and nothing else (test/workflows/patches.test.ts
 * reads the sources); the operations page says how one is retired. Import-free: workflow code.
 *
 * Why so few: connections and a book refresh's runs are Pinned (Worker Deployment Versioning), so a
 * change to their steps needs no patch; only workflows that move to the current build while running
 * (AutoUpgrade: forgets, retention timers, tenant throttles) and connections begun before versioning
 * replay under code other than their own.
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
  versionedSteps: {
    id: 'versioned-steps',
    workflow: 'connectionWorkflow',
    since: '2026-11-25',
    why: 'connections started on a versioned build record this one marker for the decisions of the three patches before it, and adopt their input in one upsert instead of two',
    removableWhen: 'never while connections are Pinned: it is the last patch a connection needs (removing it would send every connection down the old branches)',
  },
  retentionNoticeAtStart: {
    id: 'retention-notice-at-start',
    workflow: 'connectionWorkflow',
    since: '2026-11-22',
    why: 'connections begun before it decided the retention notice at the end of retrieval (retention-notice), a place a query can move to another workflow task',
    removableWhen: 'no connection begun on an unversioned worker (before 2026-11-25) is open; with it go retentionNoticeAtEnd and serviceCallsAsActivities',
  },
  retentionNoticeAtEnd: {
    id: 'retention-notice',
    workflow: 'connectionWorkflow',
    since: '2026-11-22',
    why: 'connections begun before the retention notice existed end without noting their retrieval',
    removableWhen: 'no connection begun on an unversioned worker (before 2026-11-25) is open',
  },
  serviceCallsAsActivities: {
    id: 'service-calls-as-activities',
    workflow: 'connectionWorkflow',
    since: '2026-11-25',
    why: 'connections begun before it made their data requests and polls as local activities',
    removableWhen: 'no connection begun on an unversioned worker (before 2026-11-25) is open',
  },
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
  { id: 'book-fleet-share', workflow: 'bookRefreshWorkflow', since: '2026-11-26', retired: '2026-11-28', why: 'runs begun before books shared the fleet; the refresh has been Pinned per page since 2026-11-26, and no run of before is open' },
  { id: 'book-crowding-expiry', workflow: 'bookRefreshWorkflow', since: '2026-11-27', retired: '2026-11-28', why: 'landed after the refresh became Pinned, so its old branch never replayed on a build other than its own' },
  { id: 'book-steady-clock', workflow: 'bookRefreshWorkflow', since: '2026-11-27', retired: '2026-11-28', why: 'landed after the refresh became Pinned, so its old branch never replayed on a build other than its own' },
];
