import type { ImageType } from "./inspect";

/**
 * Removes the metadata a stored image must not keep, by the file's structure rather than by
 * re-encoding: EXIF (all but its Orientation, which decides how the pixels are shown), XMP, JPEG
 * comments, PNG text and `eXIf` chunks, WebP `EXIF` and `XMP ` chunks. Every other segment or
 * chunk (JFIF, ICC profiles, unknown or private ones, the pixels) is copied byte for byte, so
 * nothing a viewer needs changes. Pure; only for bytes `inspectImage` accepted as `type`, whose
 * walk it repeats without re-checking what that walk already refused.
 */

/** Bytes [start, end) of the input are dropped and `insert`, if any, put in their place. */
type Edit = { start: number; end: number; insert?: Uint8Array };

function u16be(b: Uint8Array, at: number): number {
  return ((b[at] as number) << 8) | (b[at + 1] as number);
}

function u32be(b: Uint8Array, at: number): number {
  return new DataView(b.buffer, b.byteOffset).getUint32(at);
}

function u32le(b: Uint8Array, at: number): number {
  return new DataView(b.buffer, b.byteOffset).getUint32(at, true);
}

function ascii(b: Uint8Array, at: number, length: number): string {
  return String.fromCharCode(...b.subarray(at, at + length));
}

function startsWith(b: Uint8Array, prefix: string): boolean {
  return b.length >= prefix.length && ascii(b, 0, prefix.length) === prefix;
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The input with `edits` (in order, not overlapping) applied; the input itself when there are none. */
function splice(b: Uint8Array, edits: Edit[]): Uint8Array {
  if (edits.length === 0) return b;
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const edit of edits) {
    parts.push(b.subarray(from, edit.start));
    if (edit.insert) parts.push(edit.insert);
    from = edit.end;
  }
  parts.push(b.subarray(from));
  return concat(...parts);
}

const ORIENTATION_TAG = 0x0112;
const TIFF_SHORT = 3;

type Orientation = { littleEndian: boolean; value: number };

/**
 * The Orientation entry of IFD0 in a TIFF-structured EXIF block, when it is the single SHORT
 * from 1 to 8 that EXIF defines. The block is the uploader's, not checked by `inspectImage`, so
 * anything that does not parse means no orientation: the block is dropped whole either way.
 */
function readOrientation(tiff: Uint8Array): Orientation | undefined {
  if (tiff.length < 8) return undefined;
  const order = ascii(tiff, 0, 2);
  if (order !== "II" && order !== "MM") return undefined;
  const littleEndian = order === "II";
  const view = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  if (view.getUint16(2, littleEndian) !== 42) return undefined;
  const ifd = view.getUint32(4, littleEndian);
  if (ifd < 8 || ifd + 2 > tiff.length) return undefined;
  const count = view.getUint16(ifd, littleEndian);
  for (let entry = ifd + 2; entry < ifd + 2 + 12 * count; entry += 12) {
    if (entry + 12 > tiff.length) return undefined;
    if (view.getUint16(entry, littleEndian) !== ORIENTATION_TAG) continue;
    const type = view.getUint16(entry + 2, littleEndian);
    const values = view.getUint32(entry + 4, littleEndian);
    const value = view.getUint16(entry + 8, littleEndian); // a lone SHORT sits at the start of the field
    return type === TIFF_SHORT && values === 1 && value >= 1 && value <= 8 ? { littleEndian, value } : undefined;
  }
  return undefined;
}

/**
 * The smallest valid EXIF TIFF block holding only `orientation`: header, IFD0 with its one entry,
 * no next IFD. It keeps the original's byte order, so an already minimal block comes out the same.
 */
function orientationOnly({ littleEndian, value }: Orientation): Uint8Array {
  const tiff = new Uint8Array(8 + 2 + 12 + 4);
  const view = new DataView(tiff.buffer);
  tiff.set(littleEndian ? [0x49, 0x49] : [0x4d, 0x4d]);
  view.setUint16(2, 42, littleEndian);
  view.setUint32(4, 8, littleEndian); // IFD0 right after the header
  view.setUint16(8, 1, littleEndian);
  view.setUint16(10, ORIENTATION_TAG, littleEndian);
  view.setUint16(12, TIFF_SHORT, littleEndian);
  view.setUint32(14, 1, littleEndian);
  view.setUint16(18, value, littleEndian);
  return tiff; // the rest of the value field and the next-IFD offset stay zero
}

const EXIF_HEADER = new Uint8Array([0x45, 0x78, 0x69, 0x66, 0, 0]); // "Exif\0\0"
const XMP_NAMESPACES = ["http://ns.adobe.com/xap/1.0/\0", "http://ns.adobe.com/xmp/extension/\0"];
const APP1 = 0xe1;
const COM = 0xfe;
const SOS = 0xda;
const EOI = 0xd9;

function jpegSegment(marker: number, payload: Uint8Array): Uint8Array {
  return concat(new Uint8Array([0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 0xff]), payload);
}

/** Where the entropy-coded data that starts at `at` ends: at the first marker that is not a stuffed 00 or a restart. */
function scanEnd(b: Uint8Array, at: number): number {
  for (; ; at++) {
    if (b[at] !== 0xff) continue;
    const next = b[at + 1] as number;
    if (next !== 0x00 && next !== 0xff && !(next >= 0xd0 && next <= 0xd7)) return at;
  }
}

function stripJpeg(b: Uint8Array): Edit[] {
  const edits: Edit[] = [];
  let sawExif = false;
  let at = 2;
  for (;;) {
    const start = at; // fill bytes before a marker go with its segment (after a scan, scanEnd left them in it)
    while (b[at] === 0xff) at++;
    const marker = b[at++] as number;
    // Bytes after EOI are not part of the image; they are kept as they are.
    if (marker === EOI) return edits;
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue; // no length
    const end = at + u16be(b, at);
    const payload = b.subarray(at + 2, end);
    if (marker === COM || (marker === APP1 && XMP_NAMESPACES.some((ns) => startsWith(payload, ns)))) {
      edits.push({ start, end });
    } else if (marker === APP1 && startsWith(payload, "Exif\0")) {
      // Only the first EXIF block is the one readers take the orientation from; later ones just go.
      const orientation = sawExif ? undefined : readOrientation(payload.subarray(EXIF_HEADER.length));
      sawExif = true;
      const insert = orientation && jpegSegment(APP1, concat(EXIF_HEADER, orientationOnly(orientation)));
      if (!insert || !equal(insert, b.subarray(start, end))) edits.push({ start, end, insert });
    }
    at = marker === SOS ? scanEnd(b, end) : end;
  }
}

const PNG_METADATA = new Set(["tEXt", "zTXt", "iTXt", "eXIf"]);

function stripPng(b: Uint8Array): Edit[] {
  const edits: Edit[] = [];
  for (let at = 8; at < b.length; ) {
    const end = at + 12 + u32be(b, at); // length, type, data, CRC: a chunk goes whole, its CRC with it
    if (PNG_METADATA.has(ascii(b, at + 4, 4))) edits.push({ start: at, end });
    at = end;
  }
  return edits;
}

// VP8X flag bits announcing EXIF and XMP chunks; they must match the chunks the file holds.
const VP8X_EXIF = 0x08;
const VP8X_XMP = 0x04;
const VP8X_FLAGS_AT = 20;

function webpChunk(type: string, data: Uint8Array): Uint8Array {
  const chunk = new Uint8Array(8 + data.length + (data.length % 2)); // padded to even length
  chunk.set(Array.from(type, (char) => char.charCodeAt(0)));
  new DataView(chunk.buffer).setUint32(4, data.length, true);
  chunk.set(data, 8);
  return chunk;
}

function stripWebp(b: Uint8Array): Uint8Array {
  // Only an extended file can announce an EXIF chunk; in a simple one (against the format, but
  // `inspectImage` lets chunks follow the image) metadata chunks are dropped with nothing put back.
  const extended = ascii(b, 12, 4) === "VP8X";
  const edits: Edit[] = [];
  let sawExif = false;
  let keptExif = false;
  for (let at = 12; at < b.length; ) {
    const type = ascii(b, at, 4);
    const length = u32le(b, at + 4);
    const end = at + 8 + length + (length % 2);
    if (type === "XMP ") edits.push({ start: at, end });
    else if (type === "EXIF") {
      // The chunk holds the TIFF block itself, though some writers put JPEG's "Exif\0\0" first;
      // the minimal block keeps whichever form the upload used.
      const data = b.subarray(at + 8, at + 8 + length);
      const header = startsWith(data, "Exif\0") ? data.subarray(0, EXIF_HEADER.length) : new Uint8Array(0);
      const orientation = extended && !sawExif ? readOrientation(data.subarray(header.length)) : undefined;
      sawExif = true;
      const insert = orientation && webpChunk("EXIF", concat(header, orientationOnly(orientation)));
      if (insert) keptExif = true;
      if (!insert || !equal(insert, b.subarray(at, end))) edits.push({ start: at, end, insert });
    }
    at = end;
  }
  if (edits.length === 0) return b;
  const out = splice(b, edits);
  new DataView(out.buffer).setUint32(4, out.length - 8, true);
  if (extended) {
    const flags = (out[VP8X_FLAGS_AT] as number) & ~(VP8X_EXIF | VP8X_XMP);
    out[VP8X_FLAGS_AT] = keptExif ? flags | VP8X_EXIF : flags;
  }
  return out;
}

const STRIPPERS: Record<ImageType, (bytes: Uint8Array) => Uint8Array> = {
  "image/jpeg": (b) => splice(b, stripJpeg(b)),
  "image/png": (b) => splice(b, stripPng(b)),
  "image/webp": stripWebp,
};

/**
 * `bytes` (an image `inspectImage` accepted as `type`) without its metadata; `bytes` itself, not
 * a copy, when there is nothing to remove. The result is again an image `inspectImage` accepts.
 */
export function stripMetadata(bytes: Uint8Array, type: ImageType): Uint8Array {
  return STRIPPERS[type](bytes);
}
