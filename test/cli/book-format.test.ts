/**
 * The book CLI's window line (src/cli/commands/book/format.ts): the live path's last reading
 * is shown with when it was taken, so an operator can tell a stale one; a window without one reads
 * as before.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeWindow } from '../../src/cli/commands/book/format.js';

void describe('the book CLI window line', () => {
  void it('shows the live path with the time it was read', () => {
    const line = describeWindow({ size: 14, floor: 2, ceiling: 50, liveWaitMs: 120, liveWaiting: 3, liveReadAt: '2026-11-29T23:00:00.000Z' });
    assert.equal(line, '14 (floor 2, ceiling 50; live path read at 2026-11-29T23:00:00.000Z: 3 waiting, the oldest 120 ms)');
  });

  void it('says nothing of the live path where the server gave no reading', () => {
    assert.equal(describeWindow({ size: 4, floor: 1, ceiling: 8, pinned: 4 }), '4 (floor 1, ceiling 8; pinned at 4)');
  });
});
