/**
 * Wraps a D1 binding to count round trips and statements, and to inject failures: a statement
 * for which `failWhen` answers true throws, as an infrastructure fault would; in a batch, the
 * whole batch fails and nothing of it is applied, as D1 does. `before` runs just before each
 * statement, to stage what a concurrent request would have done by then.
 */
export type Fault = (sql: string, params: unknown[]) => boolean;

type Traced = { inner: D1PreparedStatement; sql: string; params: unknown[] };

export class InstrumentedD1 {
  roundTrips = 0;
  statements = 0;
  /** How each D1 session of the requests started: "first-primary", "first-unconstrained" or a bookmark. */
  sessions: string[] = [];
  failWhen: Fault | undefined;
  before: ((sql: string, params: unknown[]) => Promise<void>) | undefined;
  readonly #db: D1Database;
  readonly #traced = new WeakMap<object, Traced>();
  /** Counters and faults live on the binding; its sessions report to it. */
  readonly #root: InstrumentedD1;

  constructor(db: D1Database, failWhen?: Fault, root?: InstrumentedD1) {
    this.#db = db;
    this.failWhen = failWhen;
    this.#root = root ?? this;
  }

  withSession(constraint?: string): InstrumentedD1 & { getBookmark: () => string | null } {
    this.#root.sessions.push(constraint ?? "first-unconstrained");
    const session = this.#db.withSession(constraint);
    return Object.assign(new InstrumentedD1(session as unknown as D1Database, undefined, this.#root), {
      getBookmark: () => session.getBookmark(),
    });
  }

  get binding(): D1Database {
    return this as unknown as D1Database;
  }

  reset(): void {
    this.roundTrips = 0;
    this.statements = 0;
  }

  #check(traced: Traced): void {
    this.#root.statements += 1;
    if (this.#root.failWhen?.(traced.sql, traced.params))
      throw new Error(`injected D1 failure: ${traced.sql.slice(0, 60)}`);
  }

  #wrap(traced: Traced): D1PreparedStatement {
    const run =
      <T>(method: (statement: D1PreparedStatement) => Promise<T>) =>
      async () => {
        this.#root.roundTrips += 1;
        await this.#root.before?.(traced.sql, traced.params);
        this.#check(traced);
        return method(traced.inner);
      };
    const statement = {
      bind: (...params: unknown[]) => this.#wrap({ inner: traced.inner.bind(...params), sql: traced.sql, params }),
      first: (column?: string) => run((s) => (column === undefined ? s.first() : s.first(column)))(),
      all: () => run((s) => s.all())(),
      run: () => run((s) => s.run())(),
      raw: () => run((s) => s.raw())(),
    };
    this.#traced.set(statement, traced);
    return statement as unknown as D1PreparedStatement;
  }

  prepare(sql: string): D1PreparedStatement {
    return this.#wrap({ inner: this.#db.prepare(sql), sql, params: [] });
  }

  async batch<T>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    this.#root.roundTrips += 1;
    const traced = statements.map((statement) => {
      const found = this.#traced.get(statement);
      if (!found) throw new Error("batch of a statement not prepared through this wrapper");
      return found;
    });
    for (const item of traced) {
      await this.#root.before?.(item.sql, item.params);
      this.#check(item);
    }
    return this.#db.batch<T>(traced.map((item) => item.inner));
  }

  exec(query: string): Promise<D1ExecResult> {
    this.#root.roundTrips += 1;
    return this.#db.exec(query);
  }
}
