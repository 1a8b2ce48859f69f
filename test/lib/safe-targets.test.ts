import { describe, expect, it } from "vitest";
import { targetProblem } from "../../src/lib/safe-targets";

const production = { allowHttp: false };
const development = { allowHttp: true };

describe("safe webhook targets", () => {
  it.each([
    "https://hooks.example.com/in",
    "https://8.8.8.8/hook",
    "https://[2606:4700::1111]/hook",
    "https://172.32.0.1/",
    "https://100.128.0.1/",
    "https://[::ffff:8.8.8.8]/",
    "https://hooks.example.com:8443/a?b=c",
    "https://hooks.example.com./in",
  ])("allows the public target %s", (url) => {
    expect(targetProblem(url, production)).toBeNull();
  });

  it.each([
    ["10/8", "https://10.1.2.3/"],
    ["172.16/12", "https://172.31.255.255/"],
    ["192.168/16", "https://192.168.0.1/"],
    ["100.64/10", "https://100.64.0.1/"],
    ["link-local", "https://169.254.169.254/latest/meta-data"],
    ["decimal link-local", "https://2852039166/"],
    ["hex link-local", "https://0xa9fea9fe/"],
    ["octal private", "https://012.0.0.1/"],
    ["short-form private", "https://10.1/"],
    ["unspecified", "https://0.0.0.0/"],
    ["multicast", "https://224.0.0.1/"],
    ["broadcast", "https://255.255.255.255/"],
    ["IPv6 unique local", "https://[fd00::1]/"],
    ["IPv6 link-local", "https://[fe80::1]/"],
    ["IPv6 unspecified", "https://[::]/"],
    ["IPv6 multicast", "https://[ff02::1]/"],
    ["IPv4-mapped private", "https://[::ffff:10.0.0.1]/"],
    ["IPv4-mapped link-local, hex", "https://[::ffff:a9fe:a9fe]/"],
    [".local name", "https://printer.local/"],
    [".internal name", "https://metadata.google.internal/"],
    ["trailing-dot .internal name", "https://api.internal./"],
    ["single-label name", "https://intranet/"],
    // One trailing dot is the root's; more are empty labels, refused whatever the name before them.
    [".internal name, two trailing dots", "https://metadata.google.internal../"],
    [".local name, three trailing dots", "https://printer.local.../"],
    ["single-label name, two trailing dots", "https://intranet../"],
    ["loopback name, two trailing dots", "https://localhost../"],
    ["loopback subdomain, two trailing dots", "https://api.localhost../"],
    ["empty label inside a name", "https://a..b/"],
    ["empty label before a public suffix", "https://hooks..example.com/"],
    ["public name, two trailing dots", "https://hooks.example.com../"],
    ["leading empty label", "https://.example.com/"],
    ["link-local address, two trailing dots (not an IPv4 address to the URL parser)", "https://169.254.169.254../"],
  ])("refuses %s (%s) everywhere", (_, url) => {
    expect(targetProblem(url, production)).toMatch(/public address/);
    expect(targetProblem(url, development)).toMatch(/public address/);
  });

  it.each([
    "https://127.0.0.1/",
    "https://127.1.2.3/",
    "https://2130706433/",
    "https://[::1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://localhost/",
    "https://api.localhost/",
  ])("allows the loopback target %s only in local development", (url) => {
    expect(targetProblem(url, production)).toMatch(/public address/);
    expect(targetProblem(url, development)).toBeNull();
  });

  it("asks for https, or http in local development, and no credentials", () => {
    expect(targetProblem("http://hooks.example.com/", production)).toMatch(/https:\/\//);
    expect(targetProblem("http://hooks.example.com/", development)).toBeNull();
    expect(targetProblem("ftp://hooks.example.com/", development)).toMatch(/https:\/\//);
    expect(targetProblem("https://u:p@hooks.example.com/", production)).toMatch(/credentials/);
    expect(targetProblem("/relative", production)).toMatch(/absolute/);
  });
});

/**
 * What the safe-target rules (docs/webhooks.md#safe-targets) say of a URL's host: `accept` (a
 * target everywhere), `refuse` (nowhere) or `loopback` (only where ALLOW_HTTP_WEBHOOKS is true).
 */
type Expected = "accept" | "refuse" | "loopback";
type Row = { block: string; rfc: string; host: string; expected: Expected };

function expectVerdict(host: string, expected: Expected) {
  const url = `https://${host}/hook`;
  const refused = /public address/;
  if (expected === "accept") {
    expect(targetProblem(url, production)).toBeNull();
    expect(targetProblem(url, development)).toBeNull();
  } else if (expected === "refuse") {
    expect(targetProblem(url, production)).toMatch(refused);
    expect(targetProblem(url, development)).toMatch(refused);
  } else {
    expect(targetProblem(url, production)).toMatch(refused);
    expect(targetProblem(url, development)).toBeNull();
  }
}

const row = (block: string, rfc: string, host: string, expected: Expected): Row => ({ block, rfc, host, expected });

/**
 * The IANA IPv4 Special-Purpose Address Registry (RFC 6890 and the RFCs that updated it): one
 * address inside every entry, plus the multicast and neighbouring ranges the rule names.
 */
const IPV4_REGISTRY: Row[] = [
  row("0.0.0.0/8 this network", "RFC 791 §3.2", "0.1.2.3", "refuse"),
  row("0.0.0.0/32 this host on this network", "RFC 1122 §3.2.1.3", "0.0.0.0", "refuse"),
  row("10.0.0.0/8 private-use", "RFC 1918", "10.20.30.40", "refuse"),
  row("100.64.0.0/10 shared address space", "RFC 6598", "100.127.255.254", "refuse"),
  row("127.0.0.0/8 loopback", "RFC 1122 §3.2.1.3", "127.53.0.1", "loopback"),
  row("169.254.0.0/16 link local", "RFC 3927", "169.254.1.1", "refuse"),
  row("172.16.0.0/12 private-use", "RFC 1918", "172.20.0.1", "refuse"),
  row("192.0.0.0/24 IETF protocol assignments", "RFC 6890 §2.1", "192.0.0.200", "refuse"),
  row("192.0.0.0/29 IPv4 service continuity prefix", "RFC 7335", "192.0.0.2", "refuse"),
  row("192.0.0.8/32 IPv4 dummy address", "RFC 7600", "192.0.0.8", "refuse"),
  // Globally reachable in the registry, but inside 192.0.0/24, which the rules refuse whole.
  row("192.0.0.9/32 PCP anycast", "RFC 7723", "192.0.0.9", "refuse"),
  row("192.0.0.10/32 TURN anycast", "RFC 8155", "192.0.0.10", "refuse"),
  row("192.0.0.170/32 NAT64/DNS64 discovery", "RFC 8880", "192.0.0.170", "refuse"),
  row("192.0.0.171/32 NAT64/DNS64 discovery", "RFC 8880", "192.0.0.171", "refuse"),
  row("192.0.2.0/24 documentation (TEST-NET-1)", "RFC 5737", "192.0.2.1", "refuse"),
  row("192.31.196.0/24 AS112-v4 (globally reachable)", "RFC 7535", "192.31.196.1", "accept"),
  row("192.52.193.0/24 AMT (globally reachable)", "RFC 7450", "192.52.193.1", "accept"),
  row("192.88.99.0/24 deprecated 6to4 relay anycast", "RFC 7526", "192.88.99.1", "refuse"),
  row("192.88.99.2/32 6a44-relay anycast", "RFC 6751", "192.88.99.2", "refuse"),
  row("192.168.0.0/16 private-use", "RFC 1918", "192.168.100.1", "refuse"),
  row("192.175.48.0/24 AS112 direct delegation (globally reachable)", "RFC 7534", "192.175.48.1", "accept"),
  row("198.18.0.0/15 benchmarking", "RFC 2544", "198.18.0.1", "refuse"),
  row("198.18.0.0/15 benchmarking, upper half", "RFC 2544", "198.19.255.254", "refuse"),
  row("198.51.100.0/24 documentation (TEST-NET-2)", "RFC 5737", "198.51.100.1", "refuse"),
  row("203.0.113.0/24 documentation (TEST-NET-3)", "RFC 5737", "203.0.113.1", "refuse"),
  row("240.0.0.0/4 reserved", "RFC 1112 §4", "240.0.0.1", "refuse"),
  row("240.0.0.0/4 reserved, top", "RFC 1112 §4", "255.255.255.254", "refuse"),
  row("255.255.255.255/32 limited broadcast", "RFC 919 §7, RFC 8190", "255.255.255.255", "refuse"),
  row("224.0.0.0/4 multicast", "RFC 5771", "224.0.0.251", "refuse"),
  row("233.252.0.0/24 multicast documentation", "RFC 5771", "233.252.0.1", "refuse"),
  row("239.0.0.0/8 administratively scoped multicast", "RFC 2365", "239.255.255.250", "refuse"),
  row("just below 100.64.0.0/10", "RFC 6598", "100.63.255.255", "accept"),
  row("just above 172.16.0.0/12", "RFC 1918", "172.32.0.1", "accept"),
  row("just above 192.0.0.0/24", "RFC 6890", "192.0.1.1", "accept"),
  row("just below 198.18.0.0/15", "RFC 2544", "198.17.255.255", "accept"),
  row("just above 198.18.0.0/15", "RFC 2544", "198.20.0.1", "accept"),
  row("just below 224.0.0.0/4", "RFC 5771", "223.255.255.254", "accept"),
];

/**
 * The IANA IPv6 Special-Purpose Address Registry (RFC 6890 and the RFCs that updated it): one
 * address inside every entry, plus the ranges outside 2000::/3 that the rule refuses.
 */
const IPV6_REGISTRY: Row[] = [
  row("::1/128 loopback", "RFC 4291", "[::1]", "loopback"),
  row("::/128 unspecified", "RFC 4291", "[::]", "refuse"),
  row("::ffff:0:0/96 IPv4-mapped, public", "RFC 4291", "[::ffff:8.8.8.8]", "accept"),
  row("64:ff9b::/96 IPv4-IPv6 translation, public", "RFC 6052", "[64:ff9b::8.8.8.8]", "accept"),
  row("64:ff9b:1::/48 local-use translation, public", "RFC 8215", "[64:ff9b:1::8.8.8.8]", "accept"),
  row("100::/64 discard-only", "RFC 6666", "[100::1]", "refuse"),
  row("100:0:0:1::/64 dummy prefix", "RFC 9780", "[100:0:0:1::1]", "refuse"),
  row("2001::/23 IETF protocol assignments", "RFC 2928", "[2001:100::1]", "refuse"),
  row("2001::/23 IETF protocol assignments, unassigned anycast", "RFC 2928", "[2001:1::4]", "refuse"),
  row("2001::/32 Teredo, public server and client", "RFC 4380", "[2001:0:808:808:8000:f227:fefe:fefe]", "accept"),
  // Globally reachable in the registry; 2001::/23 is not named by the rules, so they are targets.
  row("2001:1::1/128 PCP anycast", "RFC 7723", "[2001:1::1]", "accept"),
  row("2001:1::2/128 TURN anycast", "RFC 8155", "[2001:1::2]", "accept"),
  row("2001:1::3/128 DNS-SD SRP anycast", "RFC 9665", "[2001:1::3]", "accept"),
  row("2001:2::/48 benchmarking", "RFC 5180", "[2001:2::1]", "refuse"),
  row("2001:2::/48 benchmarking, top", "RFC 5180", "[2001:2:0:ffff::1]", "refuse"),
  row("2001:3::/32 AMT", "RFC 7450", "[2001:3::1]", "accept"),
  row("2001:4:112::/48 AS112-v6", "RFC 7535", "[2001:4:112::1]", "accept"),
  row("2001:10::/28 deprecated ORCHID", "RFC 4843", "[2001:10::1]", "refuse"),
  row("2001:20::/28 ORCHIDv2", "RFC 7343", "[2001:20::1]", "accept"),
  row("2001:30::/28 drone remote ID entity tags", "RFC 9374", "[2001:30::1]", "accept"),
  row("2001:db8::/32 documentation", "RFC 3849", "[2001:db8::1]", "refuse"),
  row("2002::/16 6to4, public relay", "RFC 3056", "[2002:808:808::1]", "accept"),
  row("2620:4f:8000::/48 AS112 direct delegation", "RFC 7534", "[2620:4f:8000::1]", "accept"),
  row("3fff::/20 documentation", "RFC 9637", "[3fff::1]", "refuse"),
  row("3fff::/20 documentation, top", "RFC 9637", "[3fff:fff::1]", "refuse"),
  row("5f00::/16 SRv6 SIDs", "RFC 9602", "[5f00::1]", "refuse"),
  row("fc00::/7 unique-local", "RFC 4193", "[fc00::1]", "refuse"),
  row("fc00::/7 unique-local, fd00::/8", "RFC 4193", "[fdff::1]", "refuse"),
  row("fe80::/10 link-local", "RFC 4291", "[febf::1]", "refuse"),
  row("fec0::/10 deprecated site-local", "RFC 3879", "[fec0::1]", "refuse"),
  row("ff00::/8 multicast", "RFC 4291", "[ff0e::1]", "refuse"),
  row(
    "::ffff:0:0:0/96 IPv4-translated (not an embedding form of the rule)",
    "RFC 6145",
    "[::ffff:0:808:808]",
    "refuse",
  ),
  row("outside 2000::/3, below", "RFC 4291", "[1fff::1]", "refuse"),
  row("outside 2000::/3, above", "RFC 4291", "[4000::1]", "refuse"),
  row("just outside 2001::/23", "RFC 2928", "[2001:200::1]", "accept"),
  row("just outside 3fff::/20", "RFC 9637", "[3fff:1000::1]", "accept"),
  row("global unicast", "RFC 4291", "[2001:4860:4860::8888]", "accept"),
];

/** Every IPv6 form that embeds an IPv4 address, with a private, a loopback and a public one inside. */
const EMBEDDINGS: Row[] = [
  row("IPv4-mapped, link-local", "RFC 4291", "[::ffff:169.254.169.254]", "refuse"),
  row("IPv4-mapped, benchmarking", "RFC 4291", "[::ffff:198.18.0.1]", "refuse"),
  row("IPv4-mapped, unspecified", "RFC 4291", "[::ffff:0.0.0.0]", "refuse"),
  row("IPv4-compatible, public", "RFC 4291", "[::8.8.8.8]", "accept"),
  row("IPv4-compatible, link-local", "RFC 4291", "[::a9fe:a9fe]", "refuse"),
  row("IPv4-compatible, private", "RFC 4291", "[::10.0.0.1]", "refuse"),
  row("IPv4-compatible, loopback", "RFC 4291", "[::7f00:1]", "refuse"),
  row("IPv4-compatible, this network", "RFC 4291", "[::0.0.0.2]", "refuse"),
  row("NAT64 64:ff9b::/96, link-local", "RFC 6052", "[64:ff9b::a9fe:a9fe]", "refuse"),
  row("NAT64 64:ff9b::/96, private", "RFC 6052", "[64:ff9b::192.168.0.1]", "refuse"),
  row("NAT64 64:ff9b::/96, loopback", "RFC 6052", "[64:ff9b::127.0.0.1]", "refuse"),
  row("NAT64 64:ff9b::/96, public", "RFC 6052", "[64:ff9b::1.1.1.1]", "accept"),
  row("NAT64 64:ff9b:1::/48, private", "RFC 8215", "[64:ff9b:1::10.0.0.1]", "refuse"),
  row("NAT64 64:ff9b:1::/48, loopback", "RFC 8215", "[64:ff9b:1::127.0.0.1]", "refuse"),
  // Bits 48–95 set: under a /48 or /64 translation prefix the IPv4 address sits elsewhere.
  row("NAT64 64:ff9b:1::/48, IPv4 position unclear", "RFC 8215", "[64:ff9b:1:a00:1:0:808:808]", "refuse"),
  row("6to4, link-local", "RFC 3056", "[2002:a9fe:a9fe::]", "refuse"),
  row("6to4, private", "RFC 3056", "[2002:a00:1::1]", "refuse"),
  row("6to4, loopback", "RFC 3056", "[2002:7f00:1::1]", "refuse"),
  row("6to4, 6to4 relay anycast", "RFC 3056", "[2002:c058:6301::1]", "refuse"),
  row("6to4, public", "RFC 3056", "[2002:101:101::1]", "accept"),
  row("Teredo, private server", "RFC 4380", "[2001:0:a00:1:8000:f227:fefe:fefe]", "refuse"),
  row("Teredo, link-local server", "RFC 4380", "[2001:0:a9fe:a9fe::f7f7:f7f7]", "refuse"),
  row("Teredo, loopback server", "RFC 4380", "[2001:0:7f00:1::f7f7:f7f7]", "refuse"),
  row("Teredo, private client 192.168.1.1", "RFC 4380", "[2001:0:808:808::3f57:fefe]", "refuse"),
  row("Teredo, link-local client 169.254.169.254", "RFC 4380", "[2001:0:808:808::5601:5601]", "refuse"),
  row("Teredo, loopback client", "RFC 4380", "[2001:0:808:808::80ff:fffe]", "refuse"),
  // RFC 4380's own example: server 65.54.227.120, client 192.0.2.45 (documentation).
  row("Teredo, documentation client", "RFC 4380", "[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "refuse"),
  row("Teredo, public server and client", "RFC 4380", "[2001:0:4136:e378::f7f7:f7f7]", "accept"),
];

/** Integer, hex, octal and short IPv4 spellings, which the URL parser turns into dotted decimal. */
const SPELLINGS: Row[] = [
  row("decimal link-local", "WHATWG URL", "2852039166", "refuse"),
  row("hex link-local", "WHATWG URL", "0xa9fea9fe", "refuse"),
  row("hex private", "WHATWG URL", "0xC0A80001", "refuse"),
  row("decimal documentation", "WHATWG URL", "3221225985", "refuse"),
  row("decimal documentation", "WHATWG URL", "3325256705", "refuse"),
  row("short-form benchmarking", "WHATWG URL", "198.18.1", "refuse"),
  row("decimal public", "WHATWG URL", "134744072", "accept"),
  row("hex public", "WHATWG URL", "0x08080808", "accept"),
  row("dotted hex public", "WHATWG URL", "0x8.0x8.0x8.0x8", "accept"),
];

/** The loopback exception: 127/8, ::1, their IPv4-mapped forms and localhost. */
const LOOPBACK: Row[] = [
  row("127/8", "RFC 1122", "127.0.0.1", "loopback"),
  row("127/8, top", "RFC 1122", "127.255.255.254", "loopback"),
  row("127/8, decimal", "WHATWG URL", "2130706433", "loopback"),
  row("127/8, hex", "WHATWG URL", "0x7f000001", "loopback"),
  row("127/8, octal", "WHATWG URL", "017700000001", "loopback"),
  row("127/8, short form", "WHATWG URL", "127.1", "loopback"),
  row("::1, long form", "RFC 4291", "[0:0:0:0:0:0:0:1]", "loopback"),
  row("IPv4-mapped 127/8", "RFC 4291", "[::ffff:127.0.0.1]", "loopback"),
  row("IPv4-mapped 127/8, hex", "RFC 4291", "[::ffff:7fff:fffe]", "loopback"),
  row("localhost", "RFC 6761", "localhost", "loopback"),
  row("localhost, upper case with trailing dot", "RFC 6761", "LOCALHOST.", "loopback"),
  row("*.localhost", "RFC 6761", "api.localhost", "loopback"),
];

describe("safe webhook targets against the IANA special-purpose registries", () => {
  it.each(IPV4_REGISTRY)("IPv4 $block ($rfc): $host → $expected", ({ host, expected }) => {
    expectVerdict(host, expected);
  });

  it.each(IPV6_REGISTRY)("IPv6 $block ($rfc): $host → $expected", ({ host, expected }) => {
    expectVerdict(host, expected);
  });

  it.each(EMBEDDINGS)("embedded IPv4, $block ($rfc): $host → $expected", ({ host, expected }) => {
    expectVerdict(host, expected);
  });

  it.each(SPELLINGS)("IPv4 spelling, $block: $host → $expected", ({ host, expected }) => {
    expectVerdict(host, expected);
  });

  it.each(LOOPBACK)("loopback, $block ($rfc): $host → $expected", ({ host, expected }) => {
    expectVerdict(host, expected);
  });
});
