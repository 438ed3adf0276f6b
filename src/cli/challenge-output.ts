/**
 * A challenge set printed for answering, as "show" and "start" print it: each challenge numbered as
 * "answer" expects, and the images of an ImageSelection saved as PNG files whose paths are printed.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChallengeSet } from '../contract/connection/connection-definitions.js';
import { presentChallengeSet } from './terminal-view.js';
import { imageBase64 } from '../presentation/images.js';
import type { CliIo } from './command.js';

/** `imagesDir` undefined: the images go to a new temporary directory. */
export async function printChallengeSet(io: CliIo, program: string, workflowId: string, set: ChallengeSet, imagesDir: string | undefined): Promise<void> {
  const imagePaths = await saveImages(set, imagesDir);
  const answerCommand = `${program} answer ${workflowId} --set ${set.id}`;
  for (const line of presentChallengeSet(set, { imagePaths, now: io.now(), answerCommand })) io.out(line);
}

/** Writes the images of each ImageSelection challenge as PNG files; returns their paths by challenge index. */
async function saveImages(set: ChallengeSet, dir: string | undefined): Promise<Map<number, string[]>> {
  const paths = new Map<number, string[]>();
  const indexes = set.challenges.flatMap((challenge, index) => (challenge.Type === 'ImageSelection' ? [index] : []));
  if (indexes.length === 0) return paths;
  const base = dir ?? (await mkdtemp(join(tmpdir(), `challenge-set-${set.id.replace(/[^A-Za-z0-9_-]/g, '_')}-`)));
  await mkdir(base, { recursive: true });
  for (const index of indexes) {
    const images = set.challenges[index]?.Iterables ?? [];
    const files: string[] = [];
    for (const [i, image] of images.entries()) {
      const file = join(base, `challenge-${index + 1}-image-${String(i + 1).padStart(2, '0')}.png`);
      await writeFile(file, Buffer.from(imageBase64(image), 'base64'));
      files.push(file);
    }
    paths.set(index, files);
  }
  return paths;
}
