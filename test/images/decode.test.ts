import { describe, expect, it } from "vitest";
import { MAX_DECODED_PIXELS, pixelProblem } from "../../src/images/decode";
import { type ImageType, inspectImage } from "../../src/images/inspect";
import { IMAGES } from "../fixtures/images";
import { greyPng, greyRows, zlib } from "../support/images";

/** What the pixel decode says of bytes whose structure is well-formed (inspectImage accepts them). */
async function problemOf(bytes: Uint8Array, type: ImageType): Promise<string | null> {
  const inspection = inspectImage(bytes, type);
  if (!inspection.ok) throw new Error(`not well-formed as a structure: ${inspection.problem}`);
  return pixelProblem(bytes, inspection.image);
}

const marker = (b: Uint8Array, code: number) => b.findIndex((v, i) => v === 0xff && b[i + 1] === code);

/**
 * A JPEG's first scan: from after its SOS header to the next marker (a progressive file's later
 * scans may be missing and still be a picture, so that scan is the one cut), and where its EOI is.
 */
function scanOf(jpeg: Uint8Array): { start: number; scanEnd: number; end: number } {
  const sos = marker(jpeg, 0xda);
  const start = sos + 2 + (((jpeg[sos + 2] as number) << 8) | (jpeg[sos + 3] as number));
  let scanEnd = start;
  while (
    !(
      jpeg[scanEnd] === 0xff &&
      ![0x00, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7].includes(jpeg[scanEnd + 1] as number)
    )
  )
    scanEnd++;
  return { start, scanEnd, end: jpeg.length - 2 };
}

describe("pixel decoding", () => {
  it.each([
    ["rgbPng", "image/png"],
    ["rgbaPng", "image/png"],
    ["grayPng", "image/png"],
    ["palettePng", "image/png"],
    ["animatedPng", "image/png"],
    ["baselineJpg", "image/jpeg"],
    ["progressiveJpg", "image/jpeg"],
    ["restartJpg", "image/jpeg"],
    ["lossyWebp", "image/webp"],
    ["losslessWebp", "image/webp"],
    ["alphaWebp", "image/webp"],
    ["animatedWebp", "image/webp"],
  ] as const)("decodes %s", async (name, type) => {
    expect(await problemOf(IMAGES[name], type)).toBeNull();
  });

  it("refuses PNG image data that does not inflate, or holds fewer or more rows than IHDR declares", async () => {
    const rows = greyRows(40, 30);
    expect(await problemOf(greyPng(40, 30, await zlib(rows)), "image/png")).toBeNull();
    const garbled = await zlib(rows);
    for (let i = 10; i < Math.min(60, garbled.length - 4); i++) garbled[i] = (garbled[i] as number) ^ 0x5a;
    expect(await problemOf(greyPng(40, 30, garbled), "image/png")).not.toBeNull();
    // A frame header larger than its data: a whole row missing, part of the last row missing.
    expect(await problemOf(greyPng(40, 31, await zlib(rows)), "image/png")).not.toBeNull();
    expect(await problemOf(greyPng(40, 30, await zlib(rows.subarray(0, rows.length - 3))), "image/png")).not.toBeNull();
    // A zlib stream cut short, and image data past the last row.
    const whole = await zlib(rows);
    expect(await problemOf(greyPng(40, 30, whole.subarray(0, whole.length >> 1)), "image/png")).not.toBeNull();
    const longer = await zlib(new Uint8Array([...rows, 0, 1, 2, 3]));
    expect(await problemOf(greyPng(40, 30, longer), "image/png")).not.toBeNull();
    // A filter type PNG does not define.
    const badFilter = rows.slice();
    badFilter[41] = 9;
    expect(await problemOf(greyPng(40, 30, await zlib(badFilter)), "image/png")).not.toBeNull();
  });

  it.each(["baselineJpg", "progressiveJpg", "restartJpg"] as const)(
    "refuses %s with its scan cut short, garbled, or a frame header taller than its data",
    async (name) => {
      const jpeg = IMAGES[name];
      const { start, scanEnd, end } = scanOf(jpeg);
      const cut = new Uint8Array([...jpeg.subarray(0, start + ((scanEnd - start) >> 1)), 0xff, 0xd9]);
      expect(await problemOf(cut, "image/jpeg")).not.toBeNull();
      const taller = jpeg.slice();
      const sof = [0xc0, 0xc1, 0xc2].map((code) => marker(jpeg, code)).find((at) => at >= 0) as number;
      taller[sof + 5] = 0x04; // height + 1024 rows
      expect(await problemOf(taller, "image/jpeg")).not.toBeNull();
      const extra = new Uint8Array([...jpeg.subarray(0, end), ...new Array(64).fill(0x12), 0xff, 0xd9]);
      expect(await problemOf(extra, "image/jpeg")).not.toBeNull();
      // A failed decode leaves nothing behind: the next image decodes.
      expect(await problemOf(jpeg, "image/jpeg")).toBeNull();
    },
  );

  it("refuses a lossless WebP whose bitstream is garbled", async () => {
    const webp = IMAGES.losslessWebp.slice();
    for (let i = 40; i < webp.length - 2; i++) webp[i] = (webp[i] as number) ^ 0xa5;
    expect(await problemOf(webp, "image/webp")).not.toBeNull();
    expect(await problemOf(IMAGES.losslessWebp, "image/webp")).toBeNull();
  });

  it.each(["lossyWebp", "losslessWebp"] as const)(
    "refuses %s whose frame is cut short, its chunk and RIFF sizes made to agree",
    async (name) => {
      const webp = IMAGES[name];
      const view = new DataView(webp.buffer, webp.byteOffset, webp.byteLength);
      const length = view.getUint32(16, true);
      const kept = length >> 1;
      const cut = webp.slice(0, 20 + kept + (kept % 2));
      const cutView = new DataView(cut.buffer);
      cutView.setUint32(16, kept, true);
      cutView.setUint32(4, cut.length - 8, true);
      expect(await problemOf(cut, "image/webp")).not.toBeNull();
    },
  );

  it("refuses to decode more than 4 megapixels, before decoding anything", async () => {
    expect(MAX_DECODED_PIXELS).toBe(2048 * 2048);
    const atLimit = greyPng(2048, 2048, await zlib(greyRows(2048, 2048)));
    expect(await problemOf(atLimit, "image/png")).toBeNull();
    const over = greyPng(2049, 2048, new Uint8Array([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]));
    expect(await problemOf(over, "image/png")).toMatch(/^larger than 4,194,304 pixels \(2049×2048\)$/);
  });
});
