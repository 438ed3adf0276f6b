/** What happened when during a chaos run (kills, restarts, phases), for the report. */

export interface TimelineEntry {
  /** Ms since the run began. */
  readonly atMs: number;
  readonly text: string;
}

export class Timeline {
  private readonly list: TimelineEntry[] = [];

  constructor(private readonly origin: number = Date.now()) {}

  /** Ms since the run began. */
  now(): number {
    return Date.now() - this.origin;
  }

  mark(text: string): void {
    this.list.push({ atMs: this.now(), text });
  }

  entries(): readonly TimelineEntry[] {
    return this.list;
  }
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
