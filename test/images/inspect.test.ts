import { describe, expect, it } from "vitest";
import { crc32 } from "../../src/images/crc32";
import { IMAGE_TYPES, type ImageType, inspectImage } from "../../src/images/inspect";
import { IMAGES } from "../fixtures/images";

function problem(bytes: Uint8Array, type: ImageType): string | null {
  const result = inspectImage(bytes, type);
  return result.ok ? null : result.problem;
}

/** Sets a byte; XORs it with `mask` when asked to. */
function poke(b: Uint8Array, at: number, value: number, mask = false): void {
  b[at] = mask ? (b[at] ?? 0) ^ value : value;
}

function edited(bytes: Uint8Array, edit: (copy: Uint8Array) => void): Uint8Array {
  const copy = bytes.slice();
  edit(copy);
  return copy;
}

describe("real images", () => {
  it.each([
    ["rgbPng", "image/png", 16, 12],
    ["rgbaPng", "image/png", 16, 12],
    ["grayPng", "image/png", 16, 12],
    ["palettePng", "image/png", 16, 12],
    ["baselineJpg", "image/jpeg", 16, 12],
    ["progressiveJpg", "image/jpeg", 16, 12],
    ["restartJpg", "image/jpeg", 64, 48],
    ["lossyWebp", "image/webp", 16, 12],
    ["losslessWebp", "image/webp", 16, 12],
    ["alphaWebp", "image/webp", 16, 12],
  ] as const)("accepts %s as %s, %ix%i", (name, type, width, height) => {
    expect(inspectImage(IMAGES[name], type)).toEqual({ ok: true, image: { type, width, height, animated: false } });
  });

  it.each([
    ["tooWidePng", "image/png"],
    ["tooWideJpg", "image/jpeg"],
  ] as const)("refuses %s: over 8192 pixels wide", (name, type) => {
    expect(problem(IMAGES[name], type)).toBe("dimensions too large");
  });

  it.each([
    ["rgbPng", "image/jpeg"],
    ["rgbPng", "image/webp"],
    ["baselineJpg", "image/png"],
    ["baselineJpg", "image/webp"],
    ["lossyWebp", "image/png"],
    ["lossyWebp", "image/jpeg"],
  ] as const)("refuses %s declared as %s", (name, type) => {
    expect(problem(IMAGES[name], type)).not.toBeNull();
  });

  it.each(IMAGE_TYPES)("refuses empty bytes as %s", (type) => {
    expect(problem(new Uint8Array(0), type)).not.toBeNull();
  });
});

describe("animations", () => {
  it.each([
    ["animatedPng", "image/png"],
    ["animatedWebp", "image/webp"],
  ] as const)("tells %s is animated", (name, type) => {
    const inspection = inspectImage(IMAGES[name], type);
    expect(inspection).toEqual({ ok: true, image: { type, width: 16, height: 12, animated: true } });
  });
});

describe("corrupted PNG", () => {
  const png = IMAGES.rgbPng;
  it("computes the CRC-32 PNG uses", () => {
    // The IHDR chunk's stored CRC covers its type and data.
    const stored = new DataView(png.buffer, png.byteOffset).getUint32(8 + 8 + 13);
    expect(crc32(png, 12, 12 + 4 + 13)).toBe(stored);
  });

  it.each([
    ["a changed signature byte", (b: Uint8Array) => poke(b, 1, 0x51), "no PNG signature"],
    ["a flipped data byte", (b: Uint8Array) => poke(b, b.length - 20, 0xff, true), "bad CRC"],
    ["a changed width", (b: Uint8Array) => poke(b, 19, 1, true), "bad CRC in IHDR"],
    ["an overlong chunk length", (b: Uint8Array) => poke(b, 8, 0x7f), "chunk overruns the file"],
  ])("refuses %s", (_, edit, reason) => {
    expect(problem(edited(png, edit), "image/png")).toContain(reason);
  });

  it("refuses a file cut short, without IEND, or with bytes after it", () => {
    expect(problem(png.slice(0, png.length - 12), "image/png")).not.toBeNull();
    expect(problem(png.slice(0, 40), "image/png")).not.toBeNull();
    const trailing = new Uint8Array([...png, 0]);
    expect(problem(trailing, "image/png")).toBe("data after IEND");
  });

  it("refuses zero dimensions even with a valid CRC", () => {
    const zero = edited(png, (b) => {
      b.fill(0, 16, 20);
      new DataView(b.buffer).setUint32(29, crc32(b, 12, 29));
    });
    expect(problem(zero, "image/png")).toBe("zero dimension");
  });
});

describe("corrupted JPEG", () => {
  const jpg = IMAGES.baselineJpg;
  it("refuses a missing SOI, a missing EOI and a truncated file", () => {
    expect(
      problem(
        edited(jpg, (b) => poke(b, 1, 0xd9)),
        "image/jpeg",
      ),
    ).toBe("no SOI");
    expect(problem(jpg.slice(0, jpg.length - 2), "image/jpeg")).toBe("no EOI");
    expect(problem(jpg.slice(0, 30), "image/jpeg")).not.toBeNull();
  });

  it("refuses a segment length past the end of the file", () => {
    // The first segment after SOI is APP0 at offset 2; its length follows the marker.
    expect(
      problem(
        edited(jpg, (b) => b.fill(0xff, 4, 6)),
        "image/jpeg",
      ),
    ).toBe("segment overruns the file");
  });

  it("refuses a frame of zero height", () => {
    const sof = jpg.findIndex((byte, i) => byte === 0xff && (jpg[i + 1] === 0xc0 || jpg[i + 1] === 0xc2));
    expect(sof).toBeGreaterThan(0);
    expect(
      problem(
        edited(jpg, (b) => b.fill(0, sof + 5, sof + 7)),
        "image/jpeg",
      ),
    ).toBe("zero dimension");
  });

  it("refuses a scan before any frame", () => {
    expect(problem(new Uint8Array([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 0x00, 0xff, 0xd9]), "image/jpeg")).toBe(
      "scan before frame",
    );
  });
});

describe("corrupted WebP", () => {
  it.each([
    [
      "lossyWebp",
      "a RIFF size that does not match",
      (b: Uint8Array) => poke(b, 4, (b[4] ?? 0) + 2),
      "RIFF size does not match",
    ],
    ["lossyWebp", "a broken VP8 start code", (b: Uint8Array) => poke(b, 23, 0), "bad VP8 header"],
    ["losslessWebp", "a broken VP8L signature", (b: Uint8Array) => poke(b, 20, 0), "bad VP8L header"],
    [
      "alphaWebp",
      "an unknown first chunk",
      (b: Uint8Array) => poke(b, 15, 0x41),
      "first chunk is not VP8, VP8L or VP8X",
    ],
    ["lossyWebp", "a chunk longer than the file", (b: Uint8Array) => poke(b, 17, 0x7f), "chunk overruns the file"],
  ] as const)("refuses %s with %s", (name, _, edit, reason) => {
    expect(problem(edited(IMAGES[name], edit), "image/webp")).toBe(reason);
  });

  it("refuses a file cut short", () => {
    expect(problem(IMAGES.alphaWebp.slice(0, 20), "image/webp")).not.toBeNull();
  });
});
