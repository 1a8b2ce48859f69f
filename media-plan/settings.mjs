// @ts-check
// The values a project's encoding settings may take (docs/encoding.md#encoding-settings), kept here once: the
// encoder validates jobs with them and the Worker validates settings patches with them.

/** The resolutions a project may enable, lowest first; the number is the rendition's shorter side. */
export const RESOLUTIONS = /** @type {const} */ (["240p", "360p", "480p", "720p", "1080p", "1440p", "2160p"]);
/** Where a watermark may sit. */
export const POSITIONS = /** @type {const} */ (["top-left", "top-right", "bottom-left", "bottom-right", "center"]);

/** @typedef {(typeof RESOLUTIONS)[number]} Resolution */
/** @typedef {(typeof POSITIONS)[number]} Position */
