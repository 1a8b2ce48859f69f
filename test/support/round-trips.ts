import { env } from "cloudflare:workers";
import { InstrumentedD1 } from "./d1";
import { limiterAround } from "./limiter";

export type RoundTrips = { d1: number; do: number; r2: number; queue: number };

const R2_CALLS = new Set(["get", "put", "delete", "head", "list", "createMultipartUpload"]);
const UPLOAD_CALLS = new Set(["uploadPart", "complete", "abort"]);

/** Counts each call of `methods` on `target` (and wraps what `wrap` names in its results). */
function counting<T extends object>(
  target: T,
  methods: Set<string>,
  count: () => void,
  wrap?: (value: unknown) => unknown,
): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      if (methods.has(String(property))) {
        return (...args: unknown[]) => {
          count();
          const result = value.apply(object, args);
          return wrap && result instanceof Promise ? result.then(wrap) : result;
        };
      }
      if (property === "resumeMultipartUpload") {
        return (...args: unknown[]) => wrap?.(value.apply(object, args));
      }
      return value.bind(object);
    },
  });
}

/** The tus uploads' objects, counting each call (request or RPC) to one. */
function countingUploads(count: () => void): Env["TUS_UPLOADS"] {
  const real = env.TUS_UPLOADS;
  return {
    idFromName: (name: string) => real.idFromName(name),
    get: (id: DurableObjectId) => {
      // RPC stubs are proxies of their own: call them directly, never through Reflect.
      const stub = real.get(id);
      const counted =
        <A extends unknown[], R>(call: (...args: A) => R) =>
        (...args: A): R => {
          count();
          return call(...args);
        };
      return {
        fetch: counted((request: Request) => stub.fetch(request)),
        init: counted((...args: Parameters<typeof stub.init>) => stub.init(...args)),
        progress: counted(() => stub.progress()),
        end: counted(() => stub.end()),
      };
    },
  } as unknown as Env["TUS_UPLOADS"];
}

/** The encoding coordinators, counting each RPC call to one. */
function countingCoordinators(count: () => void): Env["VIDEO_ENCODINGS"] {
  const real = env.VIDEO_ENCODINGS;
  return {
    idFromName: (name: string) => real.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = real.get(id);
      return new Proxy(
        {},
        {
          get(_target, method: string) {
            return (...args: unknown[]) => {
              count();
              return (stub as unknown as Record<string, (...a: unknown[]) => unknown>)[method]?.(...args);
            };
          },
        },
      );
    },
  } as unknown as Env["VIDEO_ENCODINGS"];
}

/**
 * Bindings that count their round trips: each D1 query or batch, Durable Object call, R2
 * operation and queue send. `counts()` reads them.
 */
export function countingBindings() {
  const trips: RoundTrips = { d1: 0, do: 0, r2: 0, queue: 0 };
  const db = new InstrumentedD1(env.DB);
  const upload = (value: unknown) =>
    value && typeof value === "object" ? counting(value as object, UPLOAD_CALLS, () => trips.r2++) : value;
  const media = counting(env.MEDIA, R2_CALLS, () => trips.r2++, upload);
  const limiter = limiterAround((call) => {
    trips.do++;
    return call();
  });
  const queue = (real: Queue) => counting(real, new Set(["send", "sendBatch"]), () => trips.queue++);
  const bindings: Partial<Env> = {
    DB: db.binding,
    MEDIA: media,
    RATE_LIMITER: limiter,
    TUS_UPLOADS: countingUploads(() => trips.do++),
    VIDEO_ENCODINGS: countingCoordinators(() => trips.do++),
    WEBHOOK_QUEUE: queue(env.WEBHOOK_QUEUE),
    DELETION_QUEUE: queue(env.DELETION_QUEUE),
    PROJECT_DELETION_QUEUE: queue(env.PROJECT_DELETION_QUEUE),
    ENCODE_QUEUE: queue(env.ENCODE_QUEUE),
    BEACON_QUEUE: queue(env.BEACON_QUEUE),
  };
  return {
    bindings,
    counts: (): RoundTrips => ({ ...trips, d1: db.roundTrips }),
  };
}
