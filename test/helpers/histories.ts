/**
 * Recorded workflow histories, kept as gzipped binary protobuf (temporal.api.history.v1.History):
 * exact, compact, and decoded by the same proto package the SDK uses.
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import proto from '@temporalio/proto';

const { History } = proto.temporal.api.history.v1;
type History = proto.temporal.api.history.v1.IHistory;

export const HISTORIES_DIR = fileURLToPath(new URL('../workflows/histories/', import.meta.url));

/**
 * The workflow id each recorded history was made with, which history itself does not hold: a replay
 * runs under it, because payloads are sealed for their workflow (the id is in the encryption's
 * associated data) and a book refresh names its children and its night after it. A history recorded
 * before either (none listed) replays under its name.
 */
const WORKFLOW_IDS_FILE = join(HISTORIES_DIR, 'workflow-ids.json');

async function recordedWorkflowIds(): Promise<Record<string, string>> {
  return JSON.parse(await readFile(WORKFLOW_IDS_FILE, 'utf8').catch(() => '{}')) as Record<string, string>;
}

export async function recordHistory(name: string, history: History, workflowId: string): Promise<void> {
  await mkdir(HISTORIES_DIR, { recursive: true });
  await writeFile(join(HISTORIES_DIR, `${name}.pb.gz`), gzipSync(History.encode(history).finish()));
  const ids = { ...(await recordedWorkflowIds()), [name]: workflowId };
  await writeFile(WORKFLOW_IDS_FILE, `${JSON.stringify(Object.fromEntries(Object.entries(ids).sort()), null, 2)}\n`);
}

/** Every recorded history, with the workflow id it replays under. */
export async function recordedHistories(): Promise<{ name: string; workflowId: string; history: History }[]> {
  const files = (await readdir(HISTORIES_DIR).catch(() => [] as string[])).filter((file) => file.endsWith('.pb.gz')).sort();
  const ids = await recordedWorkflowIds();
  return Promise.all(
    files.map(async (file) => {
      const name = file.replace(/\.pb\.gz$/, '');
      return { name, workflowId: ids[name] ?? name, history: History.decode(gunzipSync(await readFile(join(HISTORIES_DIR, file)))) };
    }),
  );
}
