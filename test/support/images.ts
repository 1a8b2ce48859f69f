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
