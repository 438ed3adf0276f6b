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

export async function recordHistory(name: string, history: History): Promise<void> {
  await mkdir(HISTORIES_DIR, { recursive: true });
  await writeFile(join(HISTORIES_DIR, `${name}.pb.gz`), gzipSync(History.encode(history).finish()));
}

export async function recordedHistories(): Promise<{ name: string; history: History }[]> {
  const files = (await readdir(HISTORIES_DIR).catch(() => [] as string[])).filter((file) => file.endsWith('.pb.gz')).sort();
  return Promise.all(
    files.map(async (file) => ({
      name: file.replace(/\.pb\.gz$/, ''),
      history: History.decode(gunzipSync(await readFile(join(HISTORIES_DIR, file)))),
    })),
  );
}
