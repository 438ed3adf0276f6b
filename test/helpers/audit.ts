/** A real audit trail for a test's console: a file store (src/audit/file-audit-store.ts) in a directory of its own. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditTrail } from '../../src/audit/audit-trail.js';
import { FileAuditStore } from '../../src/audit/file-audit-store.js';

export function tempAuditFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'audit-')), 'audit.jsonl');
}

export function tempAuditTrail(path = tempAuditFile()): AuditTrail {
  return new AuditTrail(new FileAuditStore(path));
}
