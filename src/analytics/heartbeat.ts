/**
 * How often a playing view reports itself (a `heartbeat` beacon): the embed page's player sends one
 * this often (player/beacons.ts), and a view's first beacon is credited with at most this much
 * watch time, as if its previous beacon had come one heartbeat before (fold.ts). Plain, with no
 * import, so the player's bundle takes nothing else of the Worker.
 */
export const HEARTBEAT_MS = 10_000;
