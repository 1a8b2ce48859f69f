import { crc32 } from "../../src/images/crc32.ts";

/**
 * A valid PNG of exactly `size` bytes: `png` with an ancillary (skippable) chunk of padding
 * inserted after IHDR, its CRC computed as any encoder would.
 */
export function paddedPng(png: Uint8Array, size: number): Uint8Array {
  const ihdrEnd = 8 + 12 + 13;
  const dataLength = size - png.length - 12;
  if (dataLength < 0) throw new Error("size smaller than the image");
  const out = new Uint8Array(size);
  out.set(png.subarray(0, ihdrEnd), 0);
  const view = new DataView(out.buffer);
  view.setUint32(ihdrEnd, dataLength);
  out.set([0x7a, 0x7a, 0x50, 0x64], ihdrEnd + 4); // "zzPd": ancillary, private, safe to copy
  view.setUint32(ihdrEnd + 8 + dataLength, crc32(out, ihdrEnd + 4, ihdrEnd + 8 + dataLength));
  out.set(png.subarray(ihdrEnd), ihdrEnd + 12 + dataLength);
  return out;
}

/** Deflates bytes in the zlib format PNG image data uses. */
export async function zlib(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes.slice()]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(
    Array.from(type, (char) => char.charCodeAt(0)),
    4,
  );
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out, 4, 8 + data.length));
  return out;
}

/**
 * A PNG (8-bit grey, not interlaced) whose IHDR says `width`×`height` and whose IDAT holds `zlibData`
 * as it is: valid chunks and CRCs whatever the image data holds, as a careful forger would make.
 */
export function greyPng(width: number, height: number, zlibData: Uint8Array): Uint8Array {
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 0, 0, 0, 0], 8);
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", zlibData),
    chunk("IEND", new Uint8Array(0)),
  ];
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The image data of a `width`×`height` 8-bit grey picture: each row its filter byte (none), then its pixels. */
export function greyRows(width: number, height: number): Uint8Array {
  const rows = new Uint8Array(height * (width + 1));
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) rows[y * (width + 1) + 1 + x] = (x * 7 + y) & 0xff;
  return rows;
}
