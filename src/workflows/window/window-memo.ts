/**
 * What a window publishes of itself for the others sharing the fleet (a book's refresh, a tenant's
 * admission): the memo `fleetWindows` reads. Each upsert is an event in history, so a change of
 * crowding alone is told at most as often as the others read it. Deterministic code only.
 */
import { upsertMemo } from '@temporalio/workflow';
import { BOOK_REFRESH_MEMO, type PublishedWindow } from '../../contract/window/window-definitions.js';
import type { WindowController } from './window-controller.js';

export class WindowMemo {
  private published: PublishedWindow | undefined;
  private publishedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly fleetCheckMs: number) {}

  /** `holding`: whether the window holds room now (a paused or cancelling refresh publishes 0, so its weight leaves the shares). */
  publish(window: WindowController, weight: number, holding: boolean, now: number): void {
    const crowding = window.crowding;
    const crowdingUntil = window.crowdingUntil;
    const next: PublishedWindow = {
      size: holding ? window.size : 0,
      weight,
      ...(crowding === undefined ? {} : { crowding: Math.round(crowding * 10) / 10 }),
      ...(crowding === undefined || crowdingUntil === undefined ? {} : { crowdingUntil }),
    };
    const published = this.published;
    if (published?.size === next.size && published.weight === next.weight) {
      const same = published.crowding === next.crowding && published.crowdingUntil === next.crowdingUntil;
      if (same || now - this.publishedAt < this.fleetCheckMs) return;
    }
    this.published = next;
    this.publishedAt = now;
    upsertMemo({ [BOOK_REFRESH_MEMO.window]: next });
  }
}
