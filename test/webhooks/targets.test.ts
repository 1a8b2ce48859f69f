import { describe, expect, it } from "vitest";
import { targetProblem } from "../../src/webhooks/targets";

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
