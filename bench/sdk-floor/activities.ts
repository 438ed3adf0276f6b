import { Context } from '@temporalio/activity';

/** The floor's activities: they do no work of their own. */
export const floorActivities = {
  /** Returns what it is given. */
  echo(value: string): Promise<string> {
    return Promise.resolve(value);
  },
  /** The heartbeat strategy's loop with a no-op poll: heartbeat, sleep, `polls` times. */
  async heartbeatPolls(polls: number, intervalMs: number): Promise<number> {
    const context = Context.current();
    for (let poll = 0; poll < polls; poll += 1) {
      context.heartbeat({ pollCount: poll, code: 'pending' });
      await context.sleep(intervalMs);
    }
    return polls;
  },
};
export type FloorActivities = typeof floorActivities;
