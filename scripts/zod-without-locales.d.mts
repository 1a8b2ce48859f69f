// zod-without-locales.mjs is zod as far as types go (its one missing export, `locales`, is unused).
export * from "zod";
export { default } from "zod";
