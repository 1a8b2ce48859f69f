declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}

declare module "*?inline" {
  const dataUrl: string;
  export default dataUrl;
}
