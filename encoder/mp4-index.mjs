// @ts-check
// The index at the start of the MP4 and the M4A (docs/encoding.md#long-videos-playable-in-seconds:
// the MP4 opens at once at any length). Each file is fragmented (`ftyp`, a `moov` with no duration,
// then a `moof` + `mdat` per fragment) and put together part by part (files.mjs), each part's
// fragments from a remux of its own segments: `placeFragments` puts those fragments on the file's
// time line (each track's decode times continue where the part before left them; the fragments are
// numbered on) and lists them, and the first part begins with a header made from every part's list
// (`indexedHeader`): the `moov` with the duration (`mvhd`, and `mehd` in `mvex`), then a `sidx` per
// track listing every fragment (its size, its duration in the track's time scale, starting with a
// keyframe), as ffmpeg's own `global_sidx` writes them, so a player seeks with one range request.
// One `sidx` per track, not one for the video alone: ffmpeg's MP4 reader (Chromium's too, for
// `<video src>`) looks a track without one up in the video's times as if they were its own, and a
// 10-minute MP4 then took 31 s to seek to 80% (94 MB read) instead of one request. A part is padded
// to its size with a `free` box after its last fragment (counted in that fragment's size): players
// skip it. The fragments' own bytes are otherwise ffmpeg's: their offsets count from their `moof`
// (`default_base_moof`), so a header of another length moves nothing.

/** A fragment's size, and each track's first decode time in it (in `Scan.tracks`' order). */
/** @typedef {{ size: number, times: number[] }} Fragment */
/** @typedef {{ id: number, timescale: number, video: boolean }} Track */
/** @typedef {{ ftyp: Buffer, moov: Buffer, tracks: Track[], fragments: Fragment[] }} Scan */

/** @param {Buffer} data @param {number} at */
function boxAt(data, at) {
  let size = data.readUInt32BE(at);
  const type = data.toString("latin1", at + 4, at + 8);
  let header = 8;
  if (size === 1) {
    size = Number(data.readBigUInt64BE(at + 8));
    header = 16;
  }
  return { size, type, header };
}

/**
 * The children of a box's payload (`from` to `to` in `data`).
 * @param {Buffer} data @param {number} from @param {number} to
 */
function children(data, from, to) {
  /** @type {Box[]} */
  const boxes = [];
  for (let at = from; at + 8 <= to; ) {
    const box = boxAt(data, at);
    if (box.size < 8 || at + box.size > to) throw new Error(`a malformed ${box.type} box in the MP4`);
    boxes.push({ ...box, at });
    at += box.size;
  }
  return boxes;
}

/** @typedef {{ type: string, at: number, size: number, header: number }} Box */

/**
 * The first box at `path` under `from`–`to` of `data`, or null.
 * @param {Buffer} data @param {number} from @param {number} to @param {string[]} path
 * @returns {Box | null}
 */
function find(data, from, to, path) {
  const [first, ...rest] = path;
  for (const box of children(data, from, to)) {
    if (box.type !== first) continue;
    if (rest.length === 0) return box;
    const found = find(data, box.at + box.header, box.at + box.size, rest);
    if (found) return found;
  }
  return null;
}

/**
 * The tracks of a `moov`, in its order: each one's id, time scale, and whether it is the video
 * (its handler is `vide`).
 * @param {Buffer} moov
 * @returns {Track[]}
 */
export function tracksOf(moov) {
  /** @type {Track[]} */
  const tracks = [];
  for (const trak of children(moov, 8, moov.length).filter((box) => box.type === "trak")) {
    const end = trak.at + trak.size;
    const hdlr = find(moov, trak.at + 8, end, ["mdia", "hdlr"]);
    const tkhd = find(moov, trak.at + 8, end, ["tkhd"]);
    const mdhd = find(moov, trak.at + 8, end, ["mdia", "mdhd"]);
    if (!hdlr || !tkhd || !mdhd) throw new Error("a trak without its hdlr, tkhd or mdhd in the MP4");
    const tkhdV1 = moov[tkhd.at + 8] === 1;
    const mdhdV1 = moov[mdhd.at + 8] === 1;
    tracks.push({
      id: moov.readUInt32BE(tkhd.at + (tkhdV1 ? 28 : 20)),
      timescale: moov.readUInt32BE(mdhd.at + (mdhdV1 ? 28 : 20)),
      video: moov.toString("latin1", hdlr.at + 16, hdlr.at + 20) === "vide",
    });
  }
  return tracks;
}

/** The tracks of a file a remux wrote, held whole (its `moov`'s, `tracksOf`). @param {Buffer} file */
export function fileTracks(file) {
  const moov = children(file, 0, file.length).find((box) => box.type === "moov");
  if (!moov) throw new Error("the remux wrote no moov");
  return tracksOf(file.subarray(moov.at, moov.at + moov.size));
}

/**
 * A fragmented file a remux wrote, held whole (`file`: `ftyp`, `moov`, then a `moof` and what
 * follows it per fragment), put on the file's time line in place: the fragments numbered from
 * `sequence` (`mfhd`), and every track's decode times (`tfdt`) moved by `shift[i]` (track i of the
 * `moov`, in that track's time scale). ffmpeg writes a track's first sample at the remux's start
 * even when it comes later (the audio, which starts after the video's first decode time), and
 * lengthens that sample to reach the next: where `firsts[i]` (where track i's first sample falls
 * in the remux) is later than what was written, the sample is put back there, at its own length
 * (its fragment's `tfdt` moved on, its duration in the `trun` shortened alike). Returns the header
 * boxes, the tracks, the fragments' bytes (`body`, from the first `moof`) and each fragment's size
 * and tracks' first times (a track with nothing in a fragment keeps the time it had).
 * @param {Buffer} file @param {{ sequence: number, shift: number[], firsts: number[] }} place
 */
export function placeFragments(file, place) {
  const top = children(file, 0, file.length);
  const ftyp = top.find((box) => box.type === "ftyp");
  const moov = top.find((box) => box.type === "moov");
  const moofs = top.filter((box) => box.type === "moof");
  if (!ftyp || !moov || moofs.length === 0) throw new Error("the remux wrote no ftyp, moov or fragment");
  const moovBytes = Buffer.from(file.subarray(moov.at, moov.at + moov.size));
  const tracks = tracksOf(moovBytes);
  const seen = tracks.map(() => false);
  /** @type {Fragment[]} */
  const fragments = [];
  let sequence = place.sequence;
  for (const [i, moof] of moofs.entries()) {
    const mfhd = find(file, moof.at + 8, moof.at + moof.size, ["mfhd"]);
    if (!mfhd) throw new Error("a moof without its mfhd in the remux");
    file.writeUInt32BE(sequence++, mfhd.at + 12);
    const times = tracks.map((_, t) => fragments.at(-1)?.times[t] ?? 0);
    for (const traf of children(file, moof.at + 8, moof.at + moof.size).filter((box) => box.type === "traf")) {
      const end = traf.at + traf.size;
      const tfhd = find(file, traf.at + 8, end, ["tfhd"]);
      const tfdt = find(file, traf.at + 8, end, ["tfdt"]);
      const index = tfhd ? tracks.findIndex((track) => track.id === file.readUInt32BE(tfhd.at + 12)) : -1;
      if (index < 0 || !tfdt) throw new Error("a traf without its track or tfdt in the remux");
      const version = /** @type {number} */ (file[tfdt.at + 8]);
      let time = readTime(file, tfdt.at + 12, version);
      if (!seen[index]) {
        seen[index] = true;
        const late = /** @type {number} */ (place.firsts[index]) - time;
        if (late > 0) {
          shortenFirstSample(file, traf, late);
          time += late;
        }
      }
      time += /** @type {number} */ (place.shift[index]);
      writeTime(file, tfdt.at + 12, version, time);
      times[index] = time;
    }
    const next = moofs[i + 1]?.at ?? file.length;
    fragments.push({ size: next - moof.at, times });
  }
  return {
    ftyp: Buffer.from(file.subarray(ftyp.at, ftyp.at + ftyp.size)),
    moov: moovBytes,
    tracks,
    body: file.subarray(/** @type {Box} */ (moofs[0]).at),
    fragments,
  };
}

/**
 * Shortens the first sample of a `traf` by `by` (its `trun` must give each sample's duration).
 * @param {Buffer} file @param {Box} traf @param {number} by
 */
function shortenFirstSample(file, traf, by) {
  const trun = find(file, traf.at + 8, traf.at + traf.size, ["trun"]);
  if (!trun) throw new Error("a traf without its trun in the remux");
  const flags = file.readUInt32BE(trun.at + 8) & 0xffffff;
  if (!(flags & 0x100)) throw new Error("a trun without the samples' durations: its first sample cannot be moved");
  // After the version and flags and the sample count: the data offset and the first sample's
  // flags when present, then the first sample's duration.
  const at = trun.at + 16 + (flags & 0x1 ? 4 : 0) + (flags & 0x4 ? 4 : 0);
  const duration = file.readUInt32BE(at);
  if (duration <= by) throw new Error("a first sample shorter than its delay");
  file.writeUInt32BE(duration - by, at);
}

/** A tfdt's time at `at`: 64-bit in version 1, else 32-bit. @param {Buffer} data @param {number} at @param {number} version */
function readTime(data, at, version) {
  return version === 1 ? Number(data.readBigUInt64BE(at)) : data.readUInt32BE(at);
}

/** @param {Buffer} data @param {number} at @param {number} version @param {number} time */
function writeTime(data, at, version, time) {
  if (version === 1) data.writeBigUInt64BE(BigInt(time), at);
  else if (time <= 0xffffffff) data.writeUInt32BE(time, at);
  else throw new Error("a tfdt of version 0 cannot hold this time");
}

/** A `free` box of exactly `size` bytes (at least 8): what pads a part to its size. @param {number} size */
export function freeBox(size) {
  if (size < 8) throw new Error("a free box has at least 8 bytes");
  const padding = Buffer.alloc(size);
  padding.writeUInt32BE(size, 0);
  padding.write("free", 4, "latin1");
  return padding;
}

/** @param {string} type @param {Buffer[]} parts */
function box(type, ...parts) {
  const payload = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + payload.length, 0);
  head.write(type, 4, "latin1");
  return Buffer.concat([head, payload]);
}

/** @param {number} value */
function u64(value) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(value));
  return b;
}

/**
 * The `moov` with the video's duration: `mvhd`'s duration (version 1, 64-bit) and a `mehd` in
 * `mvex`, each in the movie's time scale; every other box as it was.
 * @param {Buffer} moov @param {number} seconds
 */
export function moovWithDuration(moov, seconds) {
  /** @type {Buffer[]} */
  const out = [];
  for (const child of children(moov, 8, moov.length)) {
    const bytes = moov.subarray(child.at, child.at + child.size);
    if (child.type === "mvhd") {
      const v1 = bytes[8] === 1;
      const timescale = bytes.readUInt32BE(v1 ? 28 : 20);
      const duration = Math.round(seconds * timescale);
      const copy = Buffer.from(bytes);
      if (v1) copy.writeBigUInt64BE(BigInt(duration), 32);
      else if (duration <= 0xffffffff) copy.writeUInt32BE(duration, 24);
      else throw new Error("an mvhd of version 0 cannot hold this duration");
      out.push(copy);
      continue;
    }
    if (child.type === "mvex") {
      const mvhd = find(moov, 8, moov.length, ["mvhd"]);
      const v1 = mvhd !== null && moov[mvhd.at + 8] === 1;
      const timescale = mvhd ? moov.readUInt32BE(mvhd.at + (v1 ? 28 : 20)) : 1000;
      const kept = children(moov, child.at + 8, child.at + child.size)
        .filter((box) => box.type !== "mehd")
        .map((box) => moov.subarray(box.at, box.at + box.size));
      const mehd = box("mehd", Buffer.from([1, 0, 0, 0]), u64(Math.round(seconds * timescale)));
      out.push(box("mvex", mehd, ...kept));
      continue;
    }
    out.push(bytes);
  }
  return box("moov", ...out);
}

/**
 * The `sidx` (ISO/IEC 14496-12 8.16.3, version 1) of track `index` of `tracks`: a reference per
 * fragment, its size and the track's duration in it, starting with a keyframe (each fragment does:
 * `frag_keyframe`). The first fragment starts `firstOffset` bytes after this box (past the `sidx`
 * boxes that follow it); the last lasts to `end` (in the track's time scale).
 * @param {Track[]} tracks @param {number} index @param {Fragment[]} fragments @param {number} end
 * @param {number} firstOffset
 */
export function sidx(tracks, index, fragments, end, firstOffset) {
  const track = /** @type {Track} */ (tracks[index]);
  if (fragments.length > 0xffff) throw new Error("more fragments than one sidx holds");
  const timeOf = (/** @type {Fragment | undefined} */ fragment) => fragment?.times[index];
  const head = Buffer.alloc(4 + 4 + 4 + 8 + 8 + 2 + 2);
  head.writeUInt32BE(0x01000000, 0); // version 1, flags 0
  head.writeUInt32BE(track.id, 4);
  head.writeUInt32BE(track.timescale, 8);
  head.writeBigUInt64BE(BigInt(timeOf(fragments[0]) ?? 0), 12);
  head.writeBigUInt64BE(BigInt(firstOffset), 20);
  head.writeUInt16BE(0, 28);
  head.writeUInt16BE(fragments.length, 30);
  const references = fragments.map((fragment, i) => {
    const time = timeOf(fragment) ?? 0;
    const next = timeOf(fragments[i + 1]) ?? Math.max(end, time);
    const reference = Buffer.alloc(12);
    if (fragment.size > 0x7fffffff) throw new Error("a fragment too large for a sidx reference");
    reference.writeUInt32BE(fragment.size, 0); // reference_type 0: media
    reference.writeUInt32BE(Math.max(0, next - time), 4);
    reference.writeUInt32BE(0x90000000, 8); // starts_with_SAP 1, SAP_type 1, delta 0
    return reference;
  });
  return box("sidx", head, ...references);
}

/**
 * The header the second pass writes in place of the `ftyp` and `moov` it makes: the `ftyp`, the
 * `moov` with the duration, and a `sidx` of every fragment per track, in the `moov`'s order.
 * @param {Scan} scan @param {number} seconds the video's duration
 */
export function indexedHeader(scan, seconds) {
  const { tracks, fragments } = scan;
  const ends = tracks.map((track) => Math.round(seconds * track.timescale));
  // Every sidx has the same size (its references are one per fragment); each one's first fragment
  // is past the ones after it.
  const size = sidx(tracks, 0, fragments, ends[0] ?? 0, 0).length;
  const boxes = tracks.map((_, i) => sidx(tracks, i, fragments, ends[i] ?? 0, (tracks.length - 1 - i) * size));
  return Buffer.concat([scan.ftyp, moovWithDuration(scan.moov, seconds), ...boxes]);
}
