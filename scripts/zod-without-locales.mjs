// The Worker's `zod`, as wrangler bundles it (`[alias]` in wrangler.toml): zod's own entry
// (zod/v4/classic/external.js and index.js) less `export * as locales`. @hono/zod-openapi imports
// the `z` namespace as a value to extend it, so a bundler cannot drop any of its members, and that
// one line pulled in every locale (~360 KiB of the Worker's ~1,160). English, the only language
// the API speaks, is registered by zod's schemas module itself. test/e2e/deploy.test.ts fails
// when a zod upgrade adds an export missing here, and when the deployed bundle carries a locale.
// Paths go through node_modules because zod's `exports` map does not expose these files.

export * from "../node_modules/zod/v4/classic/checks.js";
export * as coerce from "../node_modules/zod/v4/classic/coerce.js";
export * from "../node_modules/zod/v4/classic/compat.js";
export { deepPartial } from "../node_modules/zod/v4/classic/deep-partial.js";
export * from "../node_modules/zod/v4/classic/errors.js";
export { fromJSONSchema } from "../node_modules/zod/v4/classic/from-json-schema.js";
export { input, output } from "../node_modules/zod/v4/classic/in-out.js";
export * as iso from "../node_modules/zod/v4/classic/iso.js";
export { ZodISODate, ZodISODateTime, ZodISODuration, ZodISOTime } from "../node_modules/zod/v4/classic/iso.js";
export * from "../node_modules/zod/v4/classic/parse.js";
export * from "../node_modules/zod/v4/classic/schemas.js";
export { toJSONSchema } from "../node_modules/zod/v4/core/json-schema-processors.js";
export * as core from "./zod-core-without-locales.mjs";
export {
  $brand,
  $input,
  $output,
  clone,
  compile,
  config,
  flattenError,
  formatError,
  getDiscriminatedOption,
  globalRegistry,
  INVALID,
  memoizer,
  NEVER,
  prettifyError,
  regexes,
  registry,
  TimePrecision,
  toZod,
  treeifyError,
  util,
  withParser,
  ZodCompileAsyncError,
  ZodCompileUnsupportedError,
} from "./zod-core-without-locales.mjs";

import * as z from "./zod-without-locales.mjs";

export { z, z as default };
