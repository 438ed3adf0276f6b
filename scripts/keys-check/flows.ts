/**
 * What keys-check keeps in flight across the rotation and the restarts: connections awaiting an
 * operator's answer (answered only after the rotation), connections polling pending data every 10 s
 * (live and cached), and connections that complete early and leave their login's retention timer
 * waiting (the workers run with a retention policy). Each is a chaos Flow, so the chaos driver
 * drives it and the chaos checks judge it.
 */
import { connectionKey } from '../../src/client/index.js';
import type { AnswerChannel, ConnectionPlan, Flow } from '../chaos/flows.js';

const ACCOUNTS = { accountsDetail: { WithTransactions: true } } as const;

export const KEYS_CHECK_FLOWS: readonly Flow[] = [
  {
    name: 'security_question, answered after the rotation',
    group: 'challenge',
    username: 'security_question',
    session: 'live',
    products: ACCOUNTS,
    answers: 'correct',
    expect: { status: 'Completed', products: ['accountsDetail'] },
  },
  {
    name: 'pending_polls_4, 10-s polls',
    group: 'pending',
    username: 'pending_polls_4',
    session: 'live',
    products: ACCOUNTS,
    answers: 'correct',
    expect: { status: 'Completed', products: ['accountsDetail'] },
  },
  {
    name: 'no_mfa, then its retention timer',
    group: 'no-mfa',
    username: 'no_mfa',
    session: 'live',
    products: ACCOUNTS,
    answers: 'correct',
    expect: { status: 'Completed', products: ['accountsDetail'] },
  },
  {
    name: 'triple_question + investments, answered after the rotation',
    group: 'challenge',
    username: 'triple_question',
    session: 'live',
    products: { ...ACCOUNTS, investments: true },
    answers: 'correct',
    expect: { status: 'Completed', products: ['accountsDetail', 'investments'] },
  },
  {
    name: 'cached pending_polls_3, 10-s polls',
    group: 'cached',
    username: 'pending_polls_3',
    session: 'cached',
    products: { investments: true },
    answers: 'correct',
    expect: { status: 'Completed', products: ['investments'] },
  },
  {
    name: 'token_code, answered after the rotation',
    group: 'challenge',
    username: 'token_code',
    session: 'live',
    products: ACCOUNTS,
    answers: 'correct',
    expect: { status: 'Completed', products: ['accountsDetail'] },
  },
];

/** Polls of pending data every 10 s, as the spec's default: the polls span the rotation and the restarts. */
export const POLL_INTERVAL_MS = 10_000;
/** Connections start this far apart. */
const START_STEP_MS = 150;

/** N connections over the flows, each its own tenant; answering ones alternate between update and signal. */
export function planKeysCheck(count: number, runTag: string): ConnectionPlan[] {
  let answering = 0;
  return Array.from({ length: count }, (_, index) => {
    const flow = KEYS_CHECK_FLOWS[index % KEYS_CHECK_FLOWS.length] as Flow;
    const channel: AnswerChannel = flow.group === 'challenge' && answering++ % 2 === 1 ? 'signal' : 'update';
    const customerId = `keys-${runTag}-${index}`;
    return { index, flow, channel, customerId, key: connectionKey(customerId, `app-${index}`), startAtMs: index * START_STEP_MS };
  });
}
