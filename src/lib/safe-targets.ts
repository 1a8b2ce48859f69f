/**
 * Safe targets (docs/webhooks.md#safe-targets, docs/imports.md): which URLs the service may POST a
 * webhook to, or fetch an imported video from. The check works on the URL as parsed, so every
 * spelling of an address (`2852039166`, `0xa9fea9fe`, `[::ffff:a9fe:a9fe]`) is judged as the
 * address it is. It runs on a webhook endpoint's create, update and before every delivery, and on
 * an import's URL and each of its redirects.
 *
 * Addresses are classified with ipaddr.js's `range()`, which names the IANA special-purpose blocks
 * (RFC 6890 and its updates). Its names were checked against both registries; what it lacks is added
 * below, and a name this file does not know (say, one a later version adds) is refused.
 */
import ipaddr from "ipaddr.js";

export type TargetRules = { allowHttp: boolean };

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;
type Verdict = "public" | "loopback" | "blocked";

/**
 * The IPv4 `range()` names a webhook may reach: ordinary unicast, and the registry's globally
 * reachable blocks AS112 (192.31.196/24, RFC 7535; 192.175.48/24, RFC 7534) and AMT (192.52.193/24,
 * RFC 7450). Every other name is a block that is not globally reachable: `unspecified` 0/8,
 * `private`, `carrierGradeNat`, `linkLocal`, `multicast`, `broadcast`, and `reserved` (192.0.0/24,
 * 192.0.2/24, 192.88.99/24, 198.18/15, 198.51.100/24, 203.0.113/24, 240/4). `reserved` holds
 * 192.0.0/24 whole: the registry marks 192.0.0.9/32 (PCP anycast) and 192.0.0.10/32 (TURN anycast)
 * globally reachable, but the rules (docs/webhooks.md#safe-targets) refuse 192.0.0/24 whole, so
 * they are refused with it.
 */
const PUBLIC_V4 = new Set<string>(["unicast", "as112", "amt"]);

function judgeV4(address: IPv4): Verdict {
  const range = address.range();
  if (range === "loopback") return "loopback";
  return PUBLIC_V4.has(range) ? "public" : "blocked";
}

const cidr = (text: string) => ipaddr.IPv6.parseCIDR(text);
/** Global unicast (RFC 4291): outside it only the IPv4-embedding forms may be targets. */
const GLOBAL_UNICAST = cidr("2000::/3");
/** IPv4-compatible (RFC 4291 §2.5.5.1, deprecated): not in the registry nor named by ipaddr.js. */
const IPV4_COMPATIBLE = cidr("::/96");
/** Local-use NAT64 (RFC 8215); ipaddr.js names it `rfc6052` together with 64:ff9b::/96. */
const NAT64_LOCAL = cidr("64:ff9b:1::/48");
/**
 * Globally reachable entries inside 2001::/23 (IETF Protocol Assignments, RFC 2928, not globally
 * reachable "unless allowed by a more specific allocation") that ipaddr.js folds into `reserved`:
 * PCP anycast (RFC 7723), TURN anycast (RFC 8155), DNS-SD SRP anycast (RFC 9665). The rules
 * (docs/webhooks.md#safe-targets) do not name 2001::/23 itself, so the registry's more specific
 * entries decide, as it says.
 */
const PUBLIC_IN_2001_23 = ["2001:1::1/128", "2001:1::2/128", "2001:1::3/128"].map(cidr);
/**
 * The IPv6 `range()` names a webhook may reach, inside 2000::/3 only: ordinary unicast and the
 * registry's globally reachable blocks AMT 2001:3::/32 (RFC 7450), AS112-v6 2001:4:112::/48
 * (RFC 7535) and 2620:4f:8000::/48 (RFC 7534), ORCHIDv2 2001:20::/28 (RFC 7343) and DETs
 * 2001:30::/28 (RFC 9374). Refused: `reserved` (the rest of 2001::/23, 2001:db8::/32, 3fff::/20),
 * `benchmarking` 2001:2::/48, `deprecatedOrchid` 2001:10::/28, and every name outside 2000::/3
 * (`uniqueLocal`, `linkLocal`, `deprecatedSiteLocal` fec0::/10, `multicast`, `unspecified`,
 * `discard` 100::/64, `segmentRouting` 5f00::/16, `rfc6145` ::ffff:0:0:0/96, and what ipaddr.js
 * calls `unicast` there, such as the dummy prefix 100:0:0:1::/64 of RFC 9780).
 */
const PUBLIC_V6 = new Set<string>(["unicast", "amt", "as112v6", "orchid2", "droneRemoteIdProtocolEntityTags"]);

/** The IPv4 address in two 16-bit groups of an IPv6 address. */
function embedded(high: number, low: number): IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * An IPv6 form that embeds IPv4 addresses is a target only if each of them is a public one; an
 * embedded loopback address is refused too (only `::ffff:127.x.x.x` counts as loopback).
 */
function judgeEmbedded(...addresses: IPv4[]): Verdict {
  return addresses.every((address) => judgeV4(address) === "public") ? "public" : "blocked";
}

function judgeV6(address: IPv6): Verdict {
  const range = address.range();
  const [, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = address.parts;
  switch (range) {
    case "loopback":
      return "loopback";
    case "ipv4Mapped": // ::ffff:0:0/96: judged as the IPv4 address itself, loopback included.
      return judgeV4(embedded(g6, g7));
    case "rfc6052":
      // 64:ff9b::/96 has the IPv4 address in its last 32 bits. Inside 64:ff9b:1::/48 a network may
      // choose any RFC 6052 prefix length, which moves the IPv4 address; only the /96 layout (bits
      // 48–95 zero) says where it is, so any other address there is refused.
      if (address.match(NAT64_LOCAL) && (g3 | g4 | g5) !== 0) return "blocked";
      return judgeEmbedded(embedded(g6, g7));
    case "6to4": // 2002::/16 (RFC 3056): the relay's IPv4 address in bits 16–47.
      return judgeEmbedded(embedded(g1, g2));
    case "teredo": // 2001::/32 (RFC 4380): the server in bits 32–63, the client inverted in bits 96–127.
      return judgeEmbedded(embedded(g2, g3), embedded(g6 ^ 0xffff, g7 ^ 0xffff));
  }
  // :: and ::1 are named `unspecified` and `loopback` above; the rest of ::/96 embeds an IPv4 address.
  if (range === "unicast" && address.match(IPV4_COMPATIBLE)) return judgeEmbedded(embedded(g6, g7));
  if (PUBLIC_IN_2001_23.some((block) => address.match(block))) return "public";
  return PUBLIC_V6.has(range) && address.match(GLOBAL_UNICAST) ? "public" : "blocked";
}

function judgeHost(hostname: string): Verdict {
  if (hostname.startsWith("[")) {
    const text = hostname.slice(1, -1);
    return ipaddr.IPv6.isValid(text) ? judgeV6(ipaddr.IPv6.parse(text)) : "blocked";
  }
  // The URL parser has already turned every IPv4 spelling into dotted decimal.
  if (ipaddr.IPv4.isValidFourPartDecimal(hostname)) return judgeV4(ipaddr.IPv4.parse(hostname));
  return judgeName(hostname);
}

/**
 * A host name. One trailing dot is the DNS root's (`example.com.` is `example.com`); any other empty
 * label (`a..b`, `.example.com`, `intranet..`) makes a name no rule below could judge as written
 * (`localhost..` is neither `localhost` nor a public name; `169.254.169.254..` is not an IPv4
 * address to the URL parser), so it is refused, loopback's local-development exception included.
 * The suffixes are judged with every trailing dot removed, so no count of them hides one.
 */
function judgeName(hostname: string): Verdict {
  const labels = hostname.replace(/\.$/, "").split(".");
  if (labels.includes("")) return "blocked";
  const name = hostname.replace(/\.+$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return "loopback";
  if (name.endsWith(".local") || name.endsWith(".internal") || labels.length === 1) return "blocked";
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
