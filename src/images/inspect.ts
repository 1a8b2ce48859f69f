import { crc32 } from "./crc32";

/**
 * Checks that bytes are a well-formed image of a given type, from the file's own structure: not
 * just the first bytes, but every chunk, segment or header the format defines up to its end.
 * Pure: no I/O, no decoding of pixels.
 */
export const IMAGE_TYPES = ["image/jpeg", "image/png", "image/webp"] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];
/** `animated`: an APNG (`acTL`) or an animated WebP (the VP8X animation flag, `ANIM`/`ANMF` chunks). */
export type ImageInfo = { type: ImageType; width: number; height: number; animated: boolean };
type Shape = Omit<ImageInfo, "type">;

/** The largest width or height accepted. */
export const MAX_DIMENSION = 8192;

class Malformed extends Error {}

function fail(reason: string): never {
  throw new Malformed(reason);
}

function u16be(b: Uint8Array, at: number): number {
  if (at + 2 > b.length) fail("truncated");
  return ((b[at] as number) << 8) | (b[at + 1] as number);
}

function u32be(b: Uint8Array, at: number): number {
  if (at + 4 > b.length) fail("truncated");
  return (
    (((b[at] as number) << 24) |
      ((b[at + 1] as number) << 16) |
      ((b[at + 2] as number) << 8) |
      (b[at + 3] as number)) >>>
    0
  );
}

function u24le(b: Uint8Array, at: number): number {
  if (at + 3 > b.length) fail("truncated");
  return (b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16);
}

function u32le(b: Uint8Array, at: number): number {
  return (u24le(b, at) | ((b[at + 3] ?? fail("truncated")) << 24)) >>> 0;
}

function ascii(b: Uint8Array, at: number, length: number): string {
  if (at + length > b.length) fail("truncated");
  return String.fromCharCode(...b.subarray(at, at + length));
}

function checkDimensions(width: number, height: number): void {
  if (width < 1 || height < 1) fail("zero dimension");
  if (width > MAX_DIMENSION || height > MAX_DIMENSION) fail("dimensions too large");
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
// Allowed bit depths per PNG colour type.
const PNG_DEPTHS: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

function inspectPng(b: Uint8Array): Shape {
  if (b.length < 8 || PNG_SIGNATURE.some((byte, i) => b[i] !== byte)) fail("no PNG signature");
  let at = 8;
  let header: { width: number; height: number } | undefined;
  let sawData = false;
  let animated = false;
  for (;;) {
    const length = u32be(b, at);
    if (length > 0x7fffffff || at + 12 + length > b.length) fail("chunk overruns the file");
    const type = ascii(b, at + 4, 4);
    if (!/^[A-Za-z]{4}$/.test(type)) fail("bad chunk type");
    if (crc32(b, at + 4, at + 8 + length) !== u32be(b, at + 8 + length)) fail(`bad CRC in ${type}`);
    const data = at + 8;
    if (!header && type !== "IHDR") fail("IHDR is not first");
    if (type === "IHDR") {
      if (header || length !== 13) fail("bad IHDR");
      header = { width: u32be(b, data), height: u32be(b, data + 4) };
      const depth = b[data + 8] as number;
      const colour = b[data + 9] as number;
      if (!PNG_DEPTHS[colour]?.includes(depth)) fail("bad bit depth or colour type");
      if (b[data + 10] !== 0 || b[data + 11] !== 0 || (b[data + 12] as number) > 1) fail("bad IHDR methods");
      checkDimensions(header.width, header.height);
    } else if (type === "IDAT") sawData = true;
    else if (type === "acTL") animated = true;
    at = data + length + 4;
    if (type === "IEND") {
      if (length !== 0) fail("bad IEND");
      if (!sawData) fail("no image data");
      if (at !== b.length) fail("data after IEND");
      return { ...(header as { width: number; height: number }), animated };
    }
  }
}

// Start-of-frame markers carry the dimensions; C4 (DHT), C8 (JPG) and CC (DAC) are not frames.
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function inspectJpeg(b: Uint8Array): Shape {
  if (b[0] !== 0xff || b[1] !== 0xd8) fail("no SOI");
  let at = 2;
  let frame: { width: number; height: number } | undefined;
  for (;;) {
    if (at >= b.length) fail("no EOI");
    if (b[at] !== 0xff) fail("expected a marker");
    while (b[at] === 0xff) at++; // fill bytes
    const marker = b[at++] ?? fail("truncated");
    if (marker === 0xd9) {
      if (!frame) fail("no frame before EOI");
      return { ...frame, animated: false };
    }
    if (marker === 0x00 || marker === 0xd8) fail("unexpected marker");
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue; // no length
    const length = u16be(b, at);
    if (length < 2 || at + length > b.length) fail("segment overruns the file");
    if (isStartOfFrame(marker)) {
      if (length < 8) fail("short frame header");
      frame = { height: u16be(b, at + 3), width: u16be(b, at + 5) };
      checkDimensions(frame.width, frame.height);
    }
    at += length;
    if (marker === 0xda) {
      if (!frame) fail("scan before frame");
      // Entropy-coded data runs to the next marker that is not a stuffed 00 or a restart.
      for (;;) {
        if (at + 1 >= b.length) fail("no EOI");
        if (b[at] === 0xff) {
          const next = b[at + 1] as number;
          if (next !== 0x00 && next !== 0xff && !(next >= 0xd0 && next <= 0xd7)) break;
        }
        at++;
      }
    }
  }
}

// The VP8X flag that announces an animation (ANIM and ANMF chunks).
const VP8X_ANIMATION = 0x02;

function inspectWebp(b: Uint8Array): Shape {
  if (ascii(b, 0, 4) !== "RIFF" || ascii(b, 8, 4) !== "WEBP") fail("no RIFF WEBP header");
  if (u32le(b, 4) + 8 !== b.length) fail("RIFF size does not match");
  let at = 12;
  let size: { width: number; height: number } | undefined;
  let animated = false;
  while (at < b.length) {
    const type = ascii(b, at, 4);
    const length = u32le(b, at + 4);
    const data = at + 8;
    if (data + length > b.length) fail("chunk overruns the file");
    if (at === 12) {
      if (type === "VP8 ") {
        if (length < 10 || b[data + 3] !== 0x9d || b[data + 4] !== 0x01 || b[data + 5] !== 0x2a) fail("bad VP8 header");
        size = { width: u16le(b, data + 6) & 0x3fff, height: u16le(b, data + 8) & 0x3fff };
      } else if (type === "VP8L") {
        if (length < 5 || b[data] !== 0x2f) fail("bad VP8L header");
        const bits = u32le(b, data + 1);
        size = { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
        if (bits >>> 29 !== 0) fail("bad VP8L version");
      } else if (type === "VP8X") {
        if (length < 10) fail("bad VP8X header");
        size = { width: u24le(b, data + 4) + 1, height: u24le(b, data + 7) + 1 };
        animated = ((b[data] as number) & VP8X_ANIMATION) !== 0;
      } else fail("first chunk is not VP8, VP8L or VP8X");
      checkDimensions(size.width, size.height);
    }
    if (type === "ANIM" || type === "ANMF") animated = true;
    at = data + length + (length % 2);
  }
  if (at !== b.length || !size) fail("bad chunk layout");
  return { ...size, animated };
}

function u16le(b: Uint8Array, at: number): number {
  if (at + 2 > b.length) fail("truncated");
  return (b[at] as number) | ((b[at + 1] as number) << 8);
}

const INSPECTORS: Record<ImageType, (bytes: Uint8Array) => Shape> = {
  "image/png": inspectPng,
  "image/jpeg": inspectJpeg,
  "image/webp": inspectWebp,
};

export type Inspection = { ok: true; image: ImageInfo } | { ok: false; problem: string };

/** Whether `bytes` are a well-formed image of `type`: its dimensions, or what is wrong. */
export function inspectImage(bytes: Uint8Array, type: ImageType): Inspection {
  try {
    return { ok: true, image: { type, ...INSPECTORS[type](bytes) } };
  } catch (error) {
    if (error instanceof Malformed) return { ok: false, problem: error.message };
    throw error;
  }
}
