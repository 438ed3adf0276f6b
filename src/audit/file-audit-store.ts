/**
 * The audit trail as a file of JSON lines (AUDIT_STORE=file:<path>), for a stack on one machine:
 * opened for appending only, mode 0600, each record one line written with one write and flushed to
 * disk before the action goes ahead. Processes on the same machine may share it (appends of whole
 * lines do not interleave). A line cut short by a crash (no newline at the end) is ignored on reading.
 */
import { createReadStream } from 'node:fs';
import { chmod, mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { AuditAttempt, AuditOutcomeRecord, entriesOf, matches, type AuditEntry, type AuditQuery } from './audit-entry.js';
import { AuditRecordInvalidError, AuditUnavailableError, type AuditStore } from './audit-store.js';

const Line = z.discriminatedUnion('kind', [AuditAttempt.extend({ kind: z.literal('attempt') }), AuditOutcomeRecord.extend({ kind: z.literal('outcome') })]);

export class FileAuditStore implements AuditStore {
  private file: FileHandle | undefined;
  /** Appends of this process, one after another. */
  private tail: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  get where(): string {
    return `file:${this.path}`;
  }

  private async handle(): Promise<FileHandle> {
    if (this.file) return this.file;
    try {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      const file = await open(this.path, 'a', 0o600);
      // A file made by hand with a wider mode is narrowed: it names who read whose data.
      if (((await file.stat()).mode & 0o077) !== 0) await chmod(this.path, 0o600);
      this.file = file;
      return file;
    } catch (error) {
      throw new AuditUnavailableError(this.where, (error as Error).message, { cause: error });
    }
  }

  private append(record: z.input<typeof Line>): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    const write = this.tail.then(async () => {
      const file = await this.handle();
      try {
        await file.write(line);
        await file.datasync();
      } catch (error) {
        throw new AuditUnavailableError(this.where, (error as Error).message, { cause: error });
      }
    });
    this.tail = write.catch(() => undefined);
    return write;
  }

  attempt(attempt: AuditAttempt): Promise<void> {
    return this.append({ kind: 'attempt', ...attempt });
  }

  outcome(outcome: AuditOutcomeRecord): Promise<void> {
    return this.append({ kind: 'outcome', ...outcome });
  }

  async query(query: AuditQuery): Promise<AuditEntry[]> {
    await this.tail;
    try {
      await stat(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new AuditUnavailableError(this.where, (error as Error).message, { cause: error });
    }
    const attempts: AuditAttempt[] = [];
    const outcomes = new Map<string, AuditOutcomeRecord>();
    const lines = createInterface({ input: createReadStream(this.path, { encoding: 'utf8' }), crlfDelay: Infinity });
    let number = 0;
    let pending: string | undefined;
    const take = (text: string, at: number) => {
      let parsed: z.output<typeof Line>;
      try {
        parsed = Line.parse(JSON.parse(text));
      } catch (error) {
        throw new AuditRecordInvalidError(
          this.where,
          `line ${at}`,
          error instanceof z.ZodError ? z.prettifyError(error).replace(/\s+/g, ' ') : (error as Error).message,
        );
      }
      if (parsed.kind === 'outcome') {
        const { kind: _kind, ...outcome } = parsed;
        outcomes.set(outcome.id, outcome);
      } else {
        const { kind: _kind, ...attempt } = parsed;
        if (matches(attempt, query)) attempts.push(attempt);
      }
    };
    for await (const line of lines) {
      // Each line is taken once the next is seen: the last one may be a torn write.
      if (pending !== undefined) take(pending, number);
      number += 1;
      pending = line;
    }
    if (pending !== undefined && pending !== '' && (await this.endsWithNewline())) take(pending, number);
    return entriesOf(attempts.slice(0, query.limit), outcomes);
  }

  private async endsWithNewline(): Promise<boolean> {
    const file = await open(this.path, 'r');
    try {
      const { size } = await file.stat();
      if (size === 0) return false;
      const last = Buffer.alloc(1);
      await file.read(last, 0, 1, size - 1);
      return last[0] === 0x0a;
    } finally {
      await file.close();
    }
  }

  async close(): Promise<void> {
    await this.tail;
    await this.file?.close();
    this.file = undefined;
  }
}
