import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

// Evolution renders the Baileys QR string with the `qrcode` package (toDataURL, margin 3,
// scale 4, error correction H) and posts the PNG data URI as `base64`. The simulator does
// the same when `qrcode` is installed; without it, it draws a look-alike PNG (finder
// patterns + hash noise) that is a valid image but not a scannable code.

interface BitMatrix {
  size: number;
  get(row: number, col: number): number | boolean;
}

interface QrLib {
  create(text: string, options: { errorCorrectionLevel: 'H' | 'M' | 'L' | 'Q' }): { modules: BitMatrix };
}

async function loadQrLib(): Promise<QrLib | null> {
  // A variable specifier keeps tsc from requiring the (optional) package and its types.
  const specifier = 'qrcode';
  try {
    const mod = (await import(specifier)) as { default?: QrLib } & Partial<QrLib>;
    const lib = typeof mod.create === 'function' ? (mod as QrLib) : mod.default;
    return lib && typeof lib.create === 'function' ? lib : null;
  } catch {
    return null;
  }
}

const qrLib = await loadQrLib();

/** True when QR images are real, scannable codes (the `qrcode` package is installed). */
export const QR_SCANNABLE = qrLib !== null;

const MARGIN = 3;
const SCALE = 4;

/** The PNG data URI for a QR string, like Evolution's `qrcode.toDataURL`. */
export function qrDataUri(text: string): string {
  const matrix = qrLib ? qrLib.create(text, { errorCorrectionLevel: 'H' }).modules : lookAlikeMatrix(text);
  return 'data:image/png;base64,' + renderPng(matrix).toString('base64');
}

function renderPng(matrix: BitMatrix): Buffer {
  const side = (matrix.size + 2 * MARGIN) * SCALE;
  const rowLength = side + 1; // filter byte + one grey byte per pixel
  const raw = Buffer.alloc(rowLength * side, 0xff);
  for (let y = 0; y < side; y += 1) {
    raw[y * rowLength] = 0; // filter: none
    const row = Math.floor(y / SCALE) - MARGIN;
    if (row < 0 || row >= matrix.size) continue;
    for (let x = 0; x < side; x += 1) {
      const col = Math.floor(x / SCALE) - MARGIN;
      if (col >= 0 && col < matrix.size && matrix.get(row, col)) raw[y * rowLength + 1 + x] = 0x00;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length, 0);
  const typeAndData = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData), 0);
  return Buffer.concat([length, typeAndData, crc]);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** 41×41 (version 6 size): three finder patterns and noise derived from the text. */
function lookAlikeMatrix(text: string): BitMatrix {
  const size = 41;
  const bits: boolean[] = [];
  let block = createHash('sha256').update(text).digest();
  while (bits.length < size * size) {
    for (const byte of block) for (let i = 0; i < 8; i += 1) bits.push(((byte >> i) & 1) === 1);
    block = createHash('sha256').update(block).digest();
  }
  const finder = (row: number, col: number, top: number, left: number): boolean | undefined => {
    const r = row - top;
    const c = col - left;
    if (r < -1 || r > 7 || c < -1 || c > 7) return undefined;
    if (r === -1 || r === 7 || c === -1 || c === 7) return false; // separator
    const ring = Math.min(r, c, 6 - r, 6 - c);
    return ring !== 1;
  };
  return {
    size,
    get(row, col) {
      return (
        finder(row, col, 0, 0) ??
        finder(row, col, 0, size - 7) ??
        finder(row, col, size - 7, 0) ??
        (bits[row * size + col] as boolean)
      );
    },
  };
}
