import { describe, expect, it } from "vitest";
import { parseEntityTags, parseHttpDate, preconditionStatus } from "../../src/http/conditional";

const etag = '"abc"';
const lastModified = Date.UTC(2026, 10, 22, 6, 0, 0, 500);
const status = (headers: Record<string, string>) => preconditionStatus(new Headers(headers), { etag, lastModified });

describe("entity-tag lists", () => {
  it("parses *, strong and weak tags, and empty list elements", () => {
    expect(parseEntityTags("*")).toBe("*");
    expect(parseEntityTags(' "a" , W/"b",, ')).toEqual([
      { weak: false, opaque: "a" },
      { weak: true, opaque: "b" },
    ]);
    expect(parseEntityTags('""')).toEqual([{ weak: false, opaque: "" }]);
  });

  it.each(["garbage", '"a', 'a"', 'W/"a', 'w/"a"', '"a"b', '"a" "b"', "", " , ", '"a\u0000"', '"a"b"'])(
    "refuses %j",
    (header) => {
      expect(parseEntityTags(header)).toBeNull();
    },
  );
});

describe("HTTP dates", () => {
  it("reads the IMF-fixdate and both obsolete forms", () => {
    const time = Date.UTC(1994, 10, 6, 8, 49, 37);
    expect(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT")).toBe(time);
    expect(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT")).toBe(time);
    expect(parseHttpDate("Sun Nov  6 08:49:37 1994")).toBe(time);
  });

  it.each(["yesterday", "2026-11-22", "Sun, 31 Feb 2026 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "1994", ""])(
    "refuses %j",
    (header) => {
      expect(parseHttpDate(header)).toBeNull();
    },
  );
});

describe("preconditions (RFC 9110 §13.2.2)", () => {
  const before = "Sat, 21 Nov 2026 06:00:00 GMT";
  const same = "Sun, 22 Nov 2026 06:00:00 GMT";
  const after = "Mon, 23 Nov 2026 06:00:00 GMT";

  it("answers 304 to a matching If-None-Match (weak comparison) or *, else 200", () => {
    expect(status({ "if-none-match": etag })).toBe(304);
    expect(status({ "if-none-match": 'W/"abc"' })).toBe(304);
    expect(status({ "if-none-match": '"x", "abc"' })).toBe(304);
    expect(status({ "if-none-match": "*" })).toBe(304);
    expect(status({ "if-none-match": '"x"' })).toBe(200);
  });

  it("answers 412 to an If-Match that does not match strongly, else goes on", () => {
    expect(status({ "if-match": '"x"' })).toBe(412);
    expect(status({ "if-match": 'W/"abc"' })).toBe(412);
    expect(status({ "if-match": etag })).toBe(200);
    expect(status({ "if-match": "*" })).toBe(200);
    expect(status({ "if-match": etag, "if-none-match": etag })).toBe(304);
  });

  it("answers 412 to an If-Unmodified-Since before the last change, 304 to an If-Modified-Since at or after it", () => {
    expect(status({ "if-unmodified-since": before })).toBe(412);
    expect(status({ "if-unmodified-since": same })).toBe(200);
    expect(status({ "if-modified-since": same })).toBe(304);
    expect(status({ "if-modified-since": after })).toBe(304);
    expect(status({ "if-modified-since": before })).toBe(200);
  });

  it("lets the entity-tag header decide over its date companion", () => {
    expect(status({ "if-match": etag, "if-unmodified-since": before })).toBe(200);
    expect(status({ "if-none-match": '"x"', "if-modified-since": after })).toBe(200);
  });

  it("ignores a malformed conditional header, as if absent", () => {
    expect(status({ "if-match": "garbage" })).toBe(200);
    expect(status({ "if-none-match": '"a' })).toBe(200);
    expect(status({ "if-unmodified-since": "yesterday" })).toBe(200);
    expect(status({ "if-modified-since": "yesterday" })).toBe(200);
    // Ignored, so its companion date decides.
    expect(status({ "if-match": "garbage", "if-unmodified-since": before })).toBe(412);
  });
});
