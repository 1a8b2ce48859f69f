import { describe, expect, it } from "vitest";
import { crc32 } from "../../src/images/crc32";
import { type ImageType, inspectImage } from "../../src/images/inspect";
import { stripMetadata } from "../../src/images/strip";
import { IMAGES } from "../fixtures/images";

// Test images are real fixtures with metadata spliced in by the small builders below, so each
// test states exactly which segments or chunks went in and which must come out.

const GPS_MARKER = "GPS-SECRET-52.3676N-4.9041E";

function bytes(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

function latin1(b: Uint8Array): string {
  return Array.from(b, (byte) => String.fromCharCode(byte)).join("");
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  parts.reduce((at, part) => {
    out.set(part, at);
    return at + part.length;
  }, 0);
  return out;
}

/** Strips `input`, checking that both it and the result are images `inspectImage` accepts. */
function strip(input: Uint8Array, type: ImageType): Uint8Array {
  expect(inspectImage(input, type).ok).toBe(true);
  const output = stripMetadata(input, type);
  expect(inspectImage(output, type)).toEqual(inspectImage(input, type));
  return output;
}

// --- EXIF (TIFF) blocks ---

/** An IFD entry: a number is one SHORT, a string an ASCII value (NUL added). */
type Entry = [tag: number, value: number | string];
const MAKE = 0x010f;
const ORIENTATION = 0x0112;
const GPS_INFO = 0x8825;
const GPS_LATITUDE_REF = 0x0001;
const GPS_MAP_DATUM = 0x0012;

/**
 * A TIFF block as EXIF stores it: header, IFD0 (with a GPSInfo pointer when `gps` has entries),
 * the GPS IFD, then the values too long to sit in their entry.
 */
function tiff(order: "II" | "MM", ifd0: Entry[], gps: Entry[] = []): Uint8Array {
  const le = order === "II";
  const ifdSize = (count: number) => 2 + 12 * count + 4;
  const ifd0Size = ifdSize(ifd0.length + (gps.length > 0 ? 1 : 0));
  const gpsAt = 8 + ifd0Size;
  const out = new Uint8Array(1024);
  const view = new DataView(out.buffer);
  out.set(bytes(order));
  view.setUint16(2, 42, le);
  view.setUint32(4, 8, le);
  let dataAt = gpsAt + (gps.length > 0 ? ifdSize(gps.length) : 0);
  const writeIfd = (at: number, entries: Entry[], pointer?: [number, number]) => {
    view.setUint16(at, entries.length + (pointer ? 1 : 0), le);
    let entry = at + 2;
    for (const [tag, value] of entries) {
      view.setUint16(entry, tag, le);
      if (typeof value === "number") {
        view.setUint16(entry + 2, 3, le);
        view.setUint32(entry + 4, 1, le);
        view.setUint16(entry + 8, value, le);
      } else {
        const text = bytes(`${value}\0`);
        view.setUint16(entry + 2, 2, le);
        view.setUint32(entry + 4, text.length, le);
        if (text.length <= 4) out.set(text, entry + 8);
        else {
          view.setUint32(entry + 8, dataAt, le);
          out.set(text, dataAt);
          dataAt += text.length + (text.length % 2);
        }
      }
      entry += 12;
    }
    if (pointer) {
      view.setUint16(entry, pointer[0], le);
      view.setUint16(entry + 2, 4, le);
      view.setUint32(entry + 4, 1, le);
      view.setUint32(entry + 8, pointer[1], le);
      entry += 12;
    }
    view.setUint32(entry, 0, le); // no next IFD
  };
  writeIfd(8, ifd0, gps.length > 0 ? [GPS_INFO, gpsAt] : undefined);
  if (gps.length > 0) writeIfd(gpsAt, gps);
  return out.slice(0, dataAt);
}

/** A camera's EXIF: a make, an optional orientation and a GPS position carrying GPS_MARKER. */
function cameraExif(order: "II" | "MM", orientation?: number): Uint8Array {
  const ifd0: Entry[] = [[MAKE, "TestCam"]];
  if (orientation !== undefined) ifd0.push([ORIENTATION, orientation]);
  return tiff(order, ifd0, [
    [GPS_LATITUDE_REF, "N"],
    [GPS_MAP_DATUM, GPS_MARKER],
  ]);
}

/** The Orientation in IFD0 of a TIFF block, read independently of the code under test. */
function tiffOrientation(block: Uint8Array): number | undefined {
  const le = block[0] === 0x49;
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  const ifd = view.getUint32(4, le);
  for (let i = 0; i < view.getUint16(ifd, le); i++) {
    const entry = ifd + 2 + 12 * i;
    if (view.getUint16(entry, le) === ORIENTATION && view.getUint16(entry + 2, le) === 3) {
      return view.getUint16(entry + 8, le);
    }
  }
  return undefined;
}

// --- JPEG ---

const EXIF_HEADER = "Exif\0\0";

function segment(marker: number, payload: Uint8Array): Uint8Array {
  return concat(new Uint8Array([0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 0xff]), payload);
}

const exifSegment = (block: Uint8Array) => segment(0xe1, concat(bytes(EXIF_HEADER), block));
const ICC = segment(
  0xe2,
  concat(
    bytes("ICC_PROFILE\0\x01\x01"),
    Uint8Array.from({ length: 40 }, (_, i) => i),
  ),
);
const XMP = segment(0xe1, bytes(`http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>${GPS_MARKER}</x:xmpmeta>`));
const XMP_EXTENSION = segment(0xe1, bytes(`http://ns.adobe.com/xmp/extension/\0${"0".repeat(40)}${GPS_MARKER}`));
const COMMENT = segment(0xfe, bytes(`shot at ${GPS_MARKER}`));
const PRIVATE_APP1 = segment(0xe1, bytes("Private\0kept as is"));
const APP11 = segment(0xeb, bytes("JP\0\0private"));

// The fixture is SOI, APP0 (JFIF, 16 bytes) and then tables, frame and scan: segments go in
// after JFIF, where encoders put EXIF and ICC.
const BASE_JPEG = IMAGES.baselineJpg;
const JFIF_END = 2 + 2 + 16;

function jpeg(...segments: Uint8Array[]): Uint8Array {
  return concat(BASE_JPEG.subarray(0, JFIF_END), ...segments, BASE_JPEG.subarray(JFIF_END));
}

/** The JPEG's first EXIF segment, or undefined. */
function jpegExif(file: Uint8Array): Uint8Array | undefined {
  for (let at = 2; file[at + 1] !== 0xda; ) {
    const end = at + 2 + (((file[at + 2] as number) << 8) | (file[at + 3] as number));
    const payload = file.subarray(at + 4, end);
    if (file[at + 1] === 0xe1 && latin1(payload.subarray(0, 6)) === EXIF_HEADER) return payload.subarray(6);
    at = end;
  }
  return undefined;
}

describe("JPEG", () => {
  it.each([
    ["II", 6],
    ["MM", 8],
  ] as const)("keeps only the orientation of an %s EXIF with GPS, and JFIF and ICC byte for byte", (order, value) => {
    const input = jpeg(exifSegment(cameraExif(order, value)), ICC, APP11);
    expect(latin1(input)).toContain(GPS_MARKER);
    const output = strip(input, "image/jpeg");
    expect(latin1(output)).not.toContain(GPS_MARKER);
    expect(latin1(output)).not.toContain("TestCam");
    const exif = jpegExif(output);
    expect(exif && latin1(exif.subarray(0, 2))).toBe(order);
    expect(exif && tiffOrientation(exif)).toBe(value);
    // The whole file: JFIF, ICC, the private APP11 and the image itself untouched, and in place of
    // the camera's EXIF one holding IFD0 with the single orientation entry and nothing after it.
    expect(output).toEqual(jpeg(exifSegment(tiff(order, [[ORIENTATION, value]])), ICC, APP11));
    expect(output.subarray(0, JFIF_END)).toEqual(BASE_JPEG.subarray(0, JFIF_END));
  });

  it.each(["II", "MM"] as const)("drops an %s EXIF without orientation altogether", (order) => {
    const output = strip(jpeg(exifSegment(cameraExif(order)), ICC), "image/jpeg");
    expect(latin1(output)).not.toContain("Exif");
    expect(output).toEqual(jpeg(ICC));
  });

  it.each([
    ["an orientation out of range", tiff("II", [[ORIENTATION, 9]])],
    ["an orientation that is not a SHORT", tiff("MM", [[ORIENTATION, "6"]])],
    ["an IFD0 past the end of the block", tiff("II", [[ORIENTATION, 6]]).subarray(0, 20)],
    ["no TIFF header", bytes("not a TIFF block")],
    ["nothing after its header", new Uint8Array(0)],
  ])("drops an EXIF with %s, keeping nothing of it", (_, block) => {
    expect(strip(jpeg(exifSegment(block), ICC), "image/jpeg")).toEqual(jpeg(ICC));
  });

  it("takes the orientation from the first EXIF only, dropping any later one", () => {
    const input = jpeg(exifSegment(cameraExif("II", 3)), ICC, exifSegment(cameraExif("MM", 5)));
    expect(strip(input, "image/jpeg")).toEqual(jpeg(exifSegment(tiff("II", [[ORIENTATION, 3]])), ICC));
  });

  it("removes XMP, extended XMP and comments, keeping other APP1 segments", () => {
    const input = jpeg(XMP, XMP_EXTENSION, ICC, COMMENT, PRIVATE_APP1);
    const output = strip(input, "image/jpeg");
    expect(latin1(output)).not.toContain(GPS_MARKER);
    expect(latin1(output)).not.toContain("ns.adobe.com");
    expect(output).toEqual(jpeg(ICC, PRIVATE_APP1));
  });

  it("removes a comment after the scan, keeping bytes after EOI", () => {
    const eoi = BASE_JPEG.length - 2;
    const trailer = bytes("trailer");
    const input = concat(BASE_JPEG.subarray(0, eoi), COMMENT, BASE_JPEG.subarray(eoi), trailer);
    expect(strip(input, "image/jpeg")).toEqual(concat(BASE_JPEG, trailer));
  });

  it("removes the fill bytes before a removed segment with it", () => {
    const filled = concat(new Uint8Array([0xff, 0xff]), COMMENT);
    expect(strip(jpeg(ICC, filled, exifSegment(cameraExif("II"))), "image/jpeg")).toEqual(jpeg(ICC));
  });

  it("removes metadata between the scans of a progressive JPEG", () => {
    const progressive = IMAGES.progressiveJpg;
    // The second scan's tables (DHT) or SOS follow the first scan's data: put a comment before them.
    const firstScan = progressive.findIndex((byte, i) => byte === 0xff && progressive[i + 1] === 0xda);
    const next = progressive.findIndex(
      (byte, i) => i > firstScan && byte === 0xff && (progressive[i + 1] === 0xc4 || progressive[i + 1] === 0xda),
    );
    expect(next).toBeGreaterThan(firstScan);
    const input = concat(progressive.subarray(0, next), COMMENT, progressive.subarray(next));
    expect(strip(input, "image/jpeg")).toEqual(progressive);
  });

  it.each(["baselineJpg", "progressiveJpg", "restartJpg"] as const)(
    "returns %s, with no metadata, as it is",
    (name) => {
      expect(strip(IMAGES[name], "image/jpeg")).toBe(IMAGES[name]);
    },
  );

  it("returns a JPEG whose EXIF already holds only its orientation as it is", () => {
    const input = jpeg(exifSegment(tiff("MM", [[ORIENTATION, 6]])), ICC);
    expect(strip(input, "image/jpeg")).toBe(input);
    const once = strip(jpeg(exifSegment(cameraExif("II", 7)), XMP), "image/jpeg");
    expect(strip(once, "image/jpeg")).toBe(once);
  });
});

// --- PNG ---

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const chunk = new Uint8Array(12 + data.length);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, data.length);
  chunk.set(bytes(type), 4);
  chunk.set(data, 8);
  view.setUint32(8 + data.length, crc32(chunk, 4, 8 + data.length));
  return chunk;
}

/** A PNG file's chunks, each whole (length, type, data, CRC). */
function pngChunks(file: Uint8Array): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let at = 8; at < file.length; ) {
    const end = at + 12 + new DataView(file.buffer, file.byteOffset).getUint32(at);
    chunks.push(file.subarray(at, end));
    at = end;
  }
  return chunks;
}

const chunkType = (chunk: Uint8Array) => latin1(chunk.subarray(4, 8));
const png = (chunks: Uint8Array[]) => concat(IMAGES.rgbPng.subarray(0, 8), ...chunks);

describe("PNG", () => {
  it("removes text and eXIf chunks, keeping every other chunk byte for byte", () => {
    // The fixture already holds ImageMagick's tEXt dates; add the other kinds and a private chunk.
    const [ihdr, ...rest] = pngChunks(IMAGES.rgbPng);
    if (!ihdr) throw new Error("no IHDR");
    const metadata = [
      pngChunk("eXIf", cameraExif("MM", 6)),
      pngChunk("zTXt", bytes("Comment\0\0compressed bytes")),
      pngChunk("iTXt", bytes(`XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta>${GPS_MARKER}</x:xmpmeta>`)),
      pngChunk("tEXt", bytes(`Location\0${GPS_MARKER}`)),
    ];
    const kept = [pngChunk("iCCP", bytes("profile\0\0zlib")), pngChunk("prVt", bytes("private ancillary"))];
    const input = png([ihdr, ...metadata, ...kept, ...rest]);
    expect(rest.map(chunkType)).toContain("tEXt");

    const output = strip(input, "image/png");
    expect(latin1(output)).not.toContain(GPS_MARKER);
    expect(latin1(output)).not.toContain("date:create");
    expect(pngChunks(output).map(chunkType)).toEqual([
      "IHDR",
      "iCCP",
      "prVt",
      "gAMA",
      "cHRM",
      "bKGD",
      "tIME",
      "IDAT",
      "IEND",
    ]);
    expect(output).toEqual(png([ihdr, ...kept, ...rest.filter((chunk) => chunkType(chunk) !== "tEXt")]));
  });

  it.each(["rgbPng", "rgbaPng", "grayPng", "palettePng"] as const)("removes the encoder's text from %s", (name) => {
    const output = strip(IMAGES[name], "image/png");
    expect(pngChunks(output)).toEqual(pngChunks(IMAGES[name]).filter((chunk) => chunkType(chunk) !== "tEXt"));
  });

  it("returns a PNG with no metadata as it is", () => {
    const input = png(pngChunks(IMAGES.palettePng).filter((chunk) => chunkType(chunk) !== "tEXt"));
    expect(strip(input, "image/png")).toBe(input);
  });
});

// --- WebP ---

function riffChunk(type: string, data: Uint8Array): Uint8Array {
  const chunk = new Uint8Array(8 + data.length + (data.length % 2));
  chunk.set(bytes(type));
  new DataView(chunk.buffer).setUint32(4, data.length, true);
  chunk.set(data, 8);
  return chunk;
}

function webp(chunks: Uint8Array[]): Uint8Array {
  const body = concat(bytes("WEBP"), ...chunks);
  const header = concat(bytes("RIFF"), new Uint8Array(4));
  new DataView(header.buffer).setUint32(4, body.length, true);
  return concat(header, body);
}

/** A WebP file's chunks, each whole (type, size, data, padding). */
function webpChunks(file: Uint8Array): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let at = 12; at < file.length; ) {
    const length = new DataView(file.buffer, file.byteOffset).getUint32(at + 4, true);
    const end = at + 8 + length + (length % 2);
    chunks.push(file.subarray(at, end));
    at = end;
  }
  return chunks;
}

const ICC_FLAG = 0x20;
const ALPHA_FLAG = 0x10;
const EXIF_FLAG = 0x08;
const XMP_FLAG = 0x04;

// alpha.webp is extended: VP8X (alpha flag), ALPH, VP8. Its VP8X is rebuilt with other flags.
const [VP8X, ...ALPHA_IMAGE] = webpChunks(IMAGES.alphaWebp);
function vp8x(flags: number): Uint8Array {
  if (!VP8X) throw new Error("no VP8X");
  const chunk = VP8X.slice();
  chunk[8] = flags;
  return chunk;
}

const ICCP = riffChunk(
  "ICCP",
  Uint8Array.from({ length: 31 }, (_, i) => i),
); // odd: padded
const WEBP_XMP = riffChunk("XMP ", bytes(`<x:xmpmeta>${GPS_MARKER}</x:xmpmeta>!`));

describe("WebP", () => {
  it.each([
    ["II", 6],
    ["MM", 3],
  ] as const)("drops XMP and all of an %s EXIF but its orientation, fixing flags and RIFF size", (order, value) => {
    const exif = riffChunk("EXIF", concat(cameraExif(order, value), bytes("!"))); // odd: padded
    const input = webp([vp8x(ICC_FLAG | ALPHA_FLAG | EXIF_FLAG | XMP_FLAG), ICCP, ...ALPHA_IMAGE, exif, WEBP_XMP]);
    expect(latin1(input)).toContain(GPS_MARKER);
    const output = strip(input, "image/webp");
    expect(latin1(output)).not.toContain(GPS_MARKER);
    const view = new DataView(output.buffer, output.byteOffset);
    expect(view.getUint32(4, true)).toBe(output.length - 8);
    expect(output[20]).toBe(ICC_FLAG | ALPHA_FLAG | EXIF_FLAG);
    const chunks = webpChunks(output);
    expect(chunks.map((chunk) => latin1(chunk.subarray(0, 4)))).toEqual(["VP8X", "ICCP", "ALPH", "VP8 ", "EXIF"]);
    expect(chunks[1]).toEqual(ICCP);
    const block = chunks[4]?.subarray(8);
    expect(block && tiffOrientation(block)).toBe(value);
    expect(output).toEqual(
      webp([
        vp8x(ICC_FLAG | ALPHA_FLAG | EXIF_FLAG),
        ICCP,
        ...ALPHA_IMAGE,
        riffChunk("EXIF", tiff(order, [[ORIENTATION, value]])),
      ]),
    );
  });

  it("drops an EXIF without orientation and clears its flag", () => {
    const input = webp([
      vp8x(ICC_FLAG | ALPHA_FLAG | EXIF_FLAG | XMP_FLAG),
      ICCP,
      ...ALPHA_IMAGE,
      riffChunk("EXIF", cameraExif("II")),
      WEBP_XMP,
    ]);
    expect(strip(input, "image/webp")).toEqual(webp([vp8x(ICC_FLAG | ALPHA_FLAG), ICCP, ...ALPHA_IMAGE]));
  });

  it("keeps the JPEG-style Exif header some writers put in the chunk", () => {
    const input = webp([
      vp8x(ALPHA_FLAG | EXIF_FLAG),
      ...ALPHA_IMAGE,
      riffChunk("EXIF", concat(bytes(EXIF_HEADER), cameraExif("MM", 8))),
    ]);
    const expected = webp([
      vp8x(ALPHA_FLAG | EXIF_FLAG),
      ...ALPHA_IMAGE,
      riffChunk("EXIF", concat(bytes(EXIF_HEADER), tiff("MM", [[ORIENTATION, 8]]))),
    ]);
    expect(strip(input, "image/webp")).toEqual(expected);
  });

  it("drops XMP alone, keeping an EXIF that holds only the orientation", () => {
    const exif = riffChunk("EXIF", tiff("II", [[ORIENTATION, 6]]));
    const input = webp([vp8x(ALPHA_FLAG | EXIF_FLAG | XMP_FLAG), ...ALPHA_IMAGE, exif, WEBP_XMP]);
    expect(strip(input, "image/webp")).toEqual(webp([vp8x(ALPHA_FLAG | EXIF_FLAG), ...ALPHA_IMAGE, exif]));
    const already = webp([vp8x(ALPHA_FLAG | EXIF_FLAG), ...ALPHA_IMAGE, exif]);
    expect(strip(already, "image/webp")).toBe(already);
  });

  it("drops metadata chunks a simple file should not have, with no orientation put back", () => {
    const input = webp([...webpChunks(IMAGES.lossyWebp), riffChunk("EXIF", cameraExif("II", 6)), WEBP_XMP]);
    expect(strip(input, "image/webp")).toEqual(IMAGES.lossyWebp);
  });

  it.each(["lossyWebp", "losslessWebp", "alphaWebp"] as const)("returns %s, with no metadata, as it is", (name) => {
    expect(strip(IMAGES[name], "image/webp")).toBe(IMAGES[name]);
  });
});
