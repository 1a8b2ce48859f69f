/**
 * Safe webhook targets (contract §10): which URLs the service may POST to. The check works on the
 * URL as parsed, so every spelling of an address (`2852039166`, `0xa9fea9fe`, `[::ffff:a9fe:a9fe]`)
 * is judged as the address it is. It runs on create, on update and again before every delivery.
 */

export type TargetRules = { allowHttp: boolean };

type Range = { bits: bigint; prefix: number };

function v4(text: string): bigint {
  return text.split(".").reduce((value, octet) => (value << 8n) | BigInt(Number(octet)), 0n);
}

const v4Range = (cidr: string): Range => {
  const [address = "", prefix = "32"] = cidr.split("/");
  return { bits: v4(address), prefix: Number(prefix) };
};

/** Never a target: private, shared, link-local, unspecified, multicast, reserved and broadcast. */
const BLOCKED_V4 = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "224.0.0.0/4",
  "240.0.0.0/4",
].map(v4Range);
const LOOPBACK_V4 = v4Range("127.0.0.0/8");

function inRange(address: bigint, range: Range, width: number): boolean {
  const shift = BigInt(width - range.prefix);
  return address >> shift === range.bits >> shift;
}

/** The 128 bits of an IPv6 address as the WHATWG URL parser writes it (compressed, hex groups). */
function v6(text: string): bigint | null {
  const [head = "", tail] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  const all = [...left, ...Array<string>(missing).fill("0"), ...right];
  let value = 0n;
  for (const group of all) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return null;
    value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  }
  return value;
}

const v6Range = (hex: string, prefix: number): Range => ({ bits: v6(hex) ?? 0n, prefix });
const BLOCKED_V6 = [v6Range("fc00::", 7), v6Range("fe80::", 10), v6Range("ff00::", 8)];
const MAPPED_V4 = v6Range("::ffff:0:0", 96);
const LOOPBACK_V6 = 1n;

type Verdict = "public" | "loopback" | "blocked";

function judgeV4(address: bigint): Verdict {
  if (inRange(address, LOOPBACK_V4, 32)) return "loopback";
  return BLOCKED_V4.some((range) => inRange(address, range, 32)) ? "blocked" : "public";
}

function judgeV6(address: bigint): Verdict {
  if (address === 0n) return "blocked";
  if (address === LOOPBACK_V6) return "loopback";
  if (inRange(address, MAPPED_V4, 128)) return judgeV4(address & 0xffffffffn);
  return BLOCKED_V6.some((range) => inRange(address, range, 128)) ? "blocked" : "public";
}

function judgeHost(hostname: string): Verdict {
  if (hostname.startsWith("[")) {
    const address = v6(hostname.slice(1, -1));
    return address === null ? "blocked" : judgeV6(address);
  }
  // The URL parser has already turned every IPv4 spelling into dotted decimal.
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(hostname)) return judgeV4(v4(hostname));
  const name = hostname.replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback";
  if (name.endsWith(".local") || name.endsWith(".internal") || !name.includes(".")) return "blocked";
  return "public";
}

/**
 * Why `text` may not be a webhook target, or null when it may. Loopback and `http://` are for local
 * development only (`ALLOW_HTTP_WEBHOOKS`).
 */
export function targetProblem(text: string, rules: TargetRules): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute URL";
  }
  const scheme = rules.allowHttp ? "https:// or http://" : "https://";
  const schemeAllowed = url.protocol === "https:" || (url.protocol === "http:" && rules.allowHttp);
  if (!schemeAllowed || url.username || url.password) return `must be a ${scheme} URL without credentials`;
  const verdict = judgeHost(url.hostname);
  if (verdict === "blocked" || (verdict === "loopback" && !rules.allowHttp)) {
    return "must be a public address: private, link-local, loopback and internal hosts are not allowed";
  }
  return null;
}
