// @ts-check
// The index at the start of the MP4 (docs/encoding.md#long-videos-playable-in-seconds: it opens at
// once at any length). The remux (ffmpeg-args.mjs `mp4Args`) writes a fragmented MP4 to a pipe:
// `ftyp`, a `moov` with no duration, then a `moof` + `mdat` per fragment. A player reading that
// must read every fragment before it knows the duration or where a time is. So the MP4 job remuxes
// twice: the first pass only measures (`FragmentScanner`: each fragment's size and each track's
// first time in it, nothing kept), and the second pass is streamed out with a header made from
// those measures (`indexedHeader`): the `moov` with the duration (`mvhd`, and `mehd` in `mvex`),
// then a `sidx` per track listing every fragment (its size, its duration in the track's time scale,
// starting with a keyframe), as ffmpeg's own `global_sidx` writes them, so a player seeks with one
// range request. One `sidx` per track, not one for the video alone: ffmpeg's MP4 reader (Chromium's
// too, for `<video src>`) looks a track without one up in the video's times as if they were its
// own, and a 10-minute MP4 then took 31 s to seek to 80% (94 MB read) instead of one request.
// The fragments' own bytes are unchanged: their offsets count from their `moof`
// (`default_base_moof`), so a header of another length moves nothing.

/** A fragment's size, and each track's first decode time in it (in `Scan.tracks`' order). */
/** @typedef {{ size: number, times: number[] }} Fragment */
/** @typedef {{ id: number, timescale: number, video: boolean }} Track */
/** @typedef {{ ftyp: Buffer, moov: Buffer, tracks: Track[], headerBytes: number, fragments: Fragment[] }} Scan */

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
 * (its handler is `vide`). Throws when there is no video track.
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
  if (!tracks.some((track) => track.video)) throw new Error("the MP4 has no video track");
  return tracks;
}

/**
 * The first decode time of track `trackId` in a `moof` (its `traf`'s `tfdt`), or null.
 * @param {Buffer} moof @param {number} trackId
 */
function fragmentTime(moof, trackId) {
  for (const traf of children(moof, 8, moof.length).filter((box) => box.type === "traf")) {
    const tfhd = find(moof, traf.at + 8, traf.at + traf.size, ["tfhd"]);
    if (!tfhd || moof.readUInt32BE(tfhd.at + 12) !== trackId) continue;
    const tfdt = find(moof, traf.at + 8, traf.at + traf.size, ["tfdt"]);
    if (!tfdt) return null;
    return moof[tfdt.at + 8] === 1 ? Number(moof.readBigUInt64BE(tfdt.at + 12)) : moof.readUInt32BE(tfdt.at + 12);
  }
  return null;
}

/**
 * Reads a fragmented MP4 as it streams by, keeping only its `ftyp` and `moov` and, for each
 * fragment (a `moof` and what follows it up to the next), its size and the first decode time of
 * its video. Memory: the header and one `moof` at a time.
 */
export class FragmentScanner {
  /** @type {Buffer[]} */ #pending = [];
  #pendingBytes = 0;
  /** Bytes of the current box still to skip (an `mdat`'s payload). */
  #skip = 0;
  /** @type {Buffer | null} */ #ftyp = null;
  /** @type {Buffer | null} */ #moov = null;
  /** @type {Track[] | null} */ #tracks = null;
  #headerBytes = 0;
  /** @type {Fragment[]} */ #fragments = [];
  #offset = 0;

  /** @param {Buffer} chunk */
  push(chunk) {
    let data = chunk;
    while (data.length > 0) {
      if (this.#skip > 0) {
        const skipped = Math.min(this.#skip, data.length);
        this.#skip -= skipped;
        this.#grow(skipped);
        data = data.subarray(skipped);
        continue;
      }
      this.#pending.push(data);
      this.#pendingBytes += data.length;
      data = Buffer.alloc(0);
      this.#boxes();
    }
  }

  /** @param {number} bytes the current fragment grows by */
  #grow(bytes) {
    const last = this.#fragments.at(-1);
    if (last) last.size += bytes;
    this.#offset += bytes;
  }

  #boxes() {
    for (;;) {
      if (this.#pendingBytes < 8) return;
      const head = this.#pending.length === 1 ? /** @type {Buffer} */ (this.#pending[0]) : Buffer.concat(this.#pending);
      this.#pending = [head];
      if (head.readUInt32BE(0) === 1 && head.length < 16) return;
      const box = boxAt(head, 0);
      if (box.size < 8) throw new Error("the remux wrote a box of no size");
      // An mdat (or any box not read) is skipped as it streams; the rest is read whole.
      const read = box.type === "ftyp" || box.type === "moov" || box.type === "moof";
      if (!read) {
        const have = Math.min(box.size, head.length);
        this.#grow(have);
        this.#skip = box.size - have;
        this.#take(head, have);
        if (this.#skip > 0) return;
        continue;
      }
      if (head.length < box.size) return;
      const whole = Buffer.from(head.subarray(0, box.size));
      this.#take(head, box.size);
      if (box.type === "ftyp") this.#ftyp = whole;
      else if (box.type === "moov") {
        this.#moov = whole;
        this.#tracks = tracksOf(whole);
      } else {
        if (!this.#tracks) throw new Error("a moof before the moov");
        if (this.#headerBytes === 0) this.#headerBytes = this.#offset;
        const previous = this.#fragments.at(-1);
        const times = this.#tracks.map((track, i) => {
          const time = fragmentTime(whole, track.id);
          if (time === null && track.video) throw new Error("a fragment without video");
          // A track with nothing in this fragment: it starts where it was (a reference of no time).
          return time ?? previous?.times[i] ?? 0;
        });
        this.#fragments.push({ size: 0, times });
      }
      if (box.type !== "moof") this.#offset += box.size;
      else this.#grow(box.size);
    }
  }

  /** @param {Buffer} head @param {number} bytes */
  #take(head, bytes) {
    const rest = head.subarray(bytes);
    this.#pending = rest.length > 0 ? [rest] : [];
    this.#pendingBytes = rest.length;
  }

  /** What the stream held, once it has ended. @returns {Scan} */
  result() {
    if (this.#pendingBytes > 0 || this.#skip > 0) throw new Error("the MP4 ended inside a box");
    if (!this.#ftyp || !this.#moov || !this.#tracks) throw new Error("the MP4 has no ftyp or moov");
    return {
      ftyp: this.#ftyp,
      moov: this.#moov,
      tracks: this.#tracks,
      headerBytes: this.#headerBytes,
      fragments: this.#fragments,
    };
  }
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
