import jpegDecoderWasm from "@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm";
import decodeJpegPixels, { init as initJpegDecoder } from "@jsquash/jpeg/decode";
import webpDecoderWasm from "@jsquash/webp/codec/dec/webp_dec.wasm";
import decodeWebpPixels, { init as initWebpDecoder } from "@jsquash/webp/decode";
import { decode as decodePngPixels } from "fast-png";
import { Unzlib } from "fflate";
import type { ImageInfo } from "./inspect";

/**
 * Decodes an image's pixels, to refuse one whose pixel data is corrupt or truncated, or whose frame
 * header promises more than its data holds (docs/images.md), which its structure alone
 * (`inspectImage`) cannot tell. Each format by a well-kept decoder that runs in a Worker:
 * - PNG: fast-png (pure JavaScript; fflate inflates), plus a check that the image data inflates to
 *   exactly the size IHDR implies: fast-png fills a missing part of the last row with zeros and
 *   ignores data past the end;
 * - JPEG: libjpeg (mozjpeg, jSquash's WebAssembly build), with any warning it emits counting as a
 *   failure: libjpeg decodes past corrupt or missing scan data and only warns ("Corrupt JPEG data:
 *   premature end of data segment");
 * - WebP: libwebp (jSquash's WebAssembly build); of an animated WebP, its first frame.
 * Of an animation, the first picture is decoded (APNG: its default image), the others' structure
 * only checked: the picture a browser shows before the animation runs.
 * The WebAssembly decoders run one at a time, and a failed one is replaced by a new instance, so a
 * hostile image leaves neither a decoder in a bad state nor its memory behind.
 */

/**
 * The most pixels decoded (4 megapixels: 2560×1600, 2048×2048). Decoding holds the whole picture in
 * memory, at 8 to 11 bytes a pixel measured (docs/images.md), and a Worker isolate has
 * 128 MB for every request it serves: a larger thumbnail is refused rather than risking them all.
 */
export const MAX_DECODED_PIXELS = 4 * 1024 * 1024;

/** Why the pixels do not decode, or null when they do. */
export async function pixelProblem(bytes: Uint8Array, image: ImageInfo): Promise<string | null> {
  if (image.width * image.height > MAX_DECODED_PIXELS) {
    return `larger than ${MAX_DECODED_PIXELS.toLocaleString("en-US")} pixels (${image.width}×${image.height})`;
  }
  try {
    if (image.type === "image/png") return pngProblem(bytes);
    return await exclusive(() => (image.type === "image/jpeg" ? jpegProblem(bytes) : webpProblem(bytes)));
  } catch {
    return "the pixel data does not decode";
  }
}

function pngProblem(bytes: Uint8Array): string | null {
  decodePngPixels(bytes);
  const { expected, inflated } = pngDataLengths(bytes);
  return inflated === expected ? null : "the image data does not hold the rows its header declares";
}

/** Libjpeg's warnings during the decode running now (decodes run one at a time: `exclusive`). */
let jpegWarnings: string[] = [];
let jpegReady: Promise<void> | null = null;
let webpReady: Promise<void> | null = null;

/** A new instance of the decoder: its own memory, nothing left from an earlier decode. */
function startJpegDecoder(): Promise<void> {
  // The typings omit the compiled module the function takes first (jSquash's README, Workers).
  const init = initJpegDecoder as unknown as (module: WebAssembly.Module, options: object) => Promise<void>;
  return init(jpegDecoderWasm, {
    print: () => {},
    printErr: (line: string) => jpegWarnings.push(line),
  });
}

function startWebpDecoder(): Promise<void> {
  const init = initWebpDecoder as unknown as (module: WebAssembly.Module, options: object) => Promise<void>;
  return init(webpDecoderWasm, { print: () => {}, printErr: () => {} });
}

async function jpegProblem(bytes: Uint8Array): Promise<string | null> {
  jpegReady ??= startJpegDecoder();
  await jpegReady;
  jpegWarnings = [];
  try {
    await decodeJpegPixels(copyOf(bytes));
  } catch (error) {
    jpegReady = null;
    throw error;
  }
  if (jpegWarnings.length === 0) return null;
  jpegReady = null;
  return "the pixel data is corrupt or cut short";
}

async function webpProblem(bytes: Uint8Array): Promise<string | null> {
  webpReady ??= startWebpDecoder();
  await webpReady;
  try {
    await decodeWebpPixels(copyOf(firstWebpFrame(bytes)));
    return null;
  } catch (error) {
    webpReady = null;
    throw error;
  }
}

/**
 * An animated WebP's first frame as a still WebP of its own (libwebp's decoder takes no animation):
 * the frame's own chunks (ALPH, then VP8 or VP8L) behind a VP8X header of the frame's size. Any other
 * WebP as it is. Only for bytes `inspectImage` accepted as WebP.
 */
function firstWebpFrame(b: Uint8Array): Uint8Array {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let at = 12; at + 8 <= b.length; ) {
    const type = String.fromCharCode(...b.subarray(at, at + 4));
    const length = view.getUint32(at + 4, true);
    if (type === "ANMF" && length >= 16) {
      const frame = b.subarray(at + 8, at + 8 + length);
      const chunks = frame.subarray(16);
      const header = new Uint8Array(18);
      header.set([0x56, 0x50, 0x38, 0x58, 10, 0, 0, 0]); // "VP8X", 10 bytes
      const hasAlpha = String.fromCharCode(...chunks.subarray(0, 4)) === "ALPH";
      header[8] = hasAlpha ? 0x10 : 0;
      header.set(frame.subarray(6, 12), 12); // width - 1, height - 1: 24 bits each
      const out = new Uint8Array(12 + header.length + chunks.length);
      out.set([0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x57, 0x45, 0x42, 0x50]); // "RIFF", size, "WEBP"
      new DataView(out.buffer).setUint32(4, out.length - 8, true);
      out.set(header, 12);
      out.set(chunks, 12 + header.length);
      return out;
    }
    at += 8 + length + (length % 2);
  }
  return b;
}

/** The decoders take an ArrayBuffer of their own. */
function copyOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer;
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs WebAssembly decodes one at a time: a decoder's warnings and its replacement are per decode. */
function exclusive<T>(task: () => Promise<T>): Promise<T> {
  const run = queue.then(task, task);
  queue = run.catch(() => {});
  return run;
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
// Adam7's passes: the first column and row each starts at, and the step between them.
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/**
 * How many bytes a PNG's image data must inflate to (each row of each pass, its filter byte
 * first), and how many it does: inflated chunk by chunk and counted, never held. Only for bytes
 * `inspectImage` accepted as PNG.
 */
function pngDataLengths(b: Uint8Array): { expected: number; inflated: number } {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  const bits = (b[24] as number) * (CHANNELS[b[25] as number] ?? 0);
  const rows = (w: number, h: number) => (w > 0 && h > 0 ? h * (1 + Math.ceil((w * bits) / 8)) : 0);
  const expected =
    b[28] === 1
      ? ADAM7.reduce((sum, [x, y, dx, dy]) => sum + rows(Math.ceil((width - x) / dx), Math.ceil((height - y) / dy)), 0)
      : rows(width, height);
  let inflated = 0;
  const stream = new Unzlib((chunk) => {
    inflated += chunk.byteLength;
  });
  for (let at = 8; at < b.length; ) {
    const length = view.getUint32(at);
    if (String.fromCharCode(...b.subarray(at + 4, at + 8)) === "IDAT") stream.push(b.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  stream.push(new Uint8Array(0), true);
  return { expected, inflated };
}
