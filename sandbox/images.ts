/**
 * Sixteen small, distinct, real PNG images for the ImageSelection challenge (the spec: 16 images,
 * each about 4,000 characters of base64). Drawn from code (colour + shape + seeded grain) with
 * node:zlib and a hand-written CRC, so no binary assets live in the repository.
 */
import { deflateSync } from 'node:zlib';
import { Prng } from './random.js';

const SIZE = 40;
const SHAPES = ['circle', 'square', 'triangle', 'cross', 'diamond', 'ring', 'stripes', 'dot-grid'] as const;
type ImageShape = (typeof SHAPES)[number];
// Declared before IMAGES, which is computed at load time.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** Names of the 16 images, index-aligned with IMAGES (e.g. "red circle"). */
export const IMAGE_NAMES: readonly string[] = Array.from({ length: 16 }, (_, i) => `${colourName(i)} ${SHAPES[i % SHAPES.length] ?? 'circle'}`);

/** The 16 images as base64 PNG, computed once at module load (about 1 ms). */
export const IMAGES: readonly string[] = Array.from({ length: 16 }, (_, i) => drawImage(i));

function colourName(i: number): string {
  return (
    ['red', 'orange', 'yellow', 'lime', 'green', 'teal', 'cyan', 'azure', 'blue', 'indigo', 'violet', 'purple', 'magenta', 'pink', 'brown', 'grey'][i] ?? 'grey'
  );
}

function hueToRgb(hue: number, saturation: number, lightness: number): [number, number, number] {
  const c = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const x = c * (1 - Math.abs(((hue / 60) % 2) - 1));
  const m = lightness - c / 2;
  const [r, g, b] = hue < 60 ? [c, x, 0] : hue < 120 ? [x, c, 0] : hue < 180 ? [0, c, x] : hue < 240 ? [0, x, c] : hue < 300 ? [x, 0, c] : [c, 0, x];
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}

function inShape(shape: ImageShape, x: number, y: number): boolean {
  const cx = x - SIZE / 2 + 0.5;
  const cy = y - SIZE / 2 + 0.5;
  const r = Math.hypot(cx, cy);
  switch (shape) {
    case 'circle':
      return r < 13;
    case 'square':
      return Math.abs(cx) < 11 && Math.abs(cy) < 11;
    case 'triangle':
      return cy > -12 && cy < 12 && Math.abs(cx) < (cy + 12) / 2;
    case 'cross':
      return (Math.abs(cx) < 4 && Math.abs(cy) < 14) || (Math.abs(cy) < 4 && Math.abs(cx) < 14);
    case 'diamond':
      return Math.abs(cx) + Math.abs(cy) < 14;
    case 'ring':
      return r < 14 && r > 8;
    case 'stripes':
      return Math.floor((x + y) / 5) % 2 === 0;
    case 'dot-grid':
      return (x % 8) - 4 < 2 && (x % 8) - 4 > -2 && (y % 8) - 4 < 2 && (y % 8) - 4 > -2;
  }
}

function drawImage(index: number): string {
  const shape = SHAPES[index % SHAPES.length] ?? 'circle';
  const hue = (index * 360) / 16;
  const background = hueToRgb(hue, 0.35, 0.85);
  const foreground = hueToRgb(hue, 0.9, index === 15 ? 0.3 : 0.45);
  const grain = new Prng(`image-${index}`);
  // Rows: filter byte 0, then RGB triples. The grain keeps the images from compressing to nothing.
  const raw = Buffer.alloc(SIZE * (1 + SIZE * 3));
  let offset = 0;
  for (let y = 0; y < SIZE; y++) {
    raw[offset++] = 0;
    for (let x = 0; x < SIZE; x++) {
      const colour = inShape(shape, x, y) ? foreground : background;
      for (const channel of colour) raw[offset++] = Math.max(0, Math.min(255, channel + grain.int(-4, 4)));
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIZE, 0);
  header.writeUInt32BE(SIZE, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type RGB
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return png.toString('base64');
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length, 0);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed), 0);
  return Buffer.concat([length, typed, crc]);
}

/** CRC-32 as PNG chunks require (ISO 3309). */
function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = (CRC_TABLE[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
