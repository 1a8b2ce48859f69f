// Test mode's rule that the type checker cannot see (docs/api-guide.md#test-mode-and-going-live,
// src/lib/tenant.ts): every D1 statement on a table whose rows have a mode binds one.
// `npm run arch` runs it over the query modules; test/e2e/mode-scoping.test.ts shows what it
// refuses.
//
// It reads each query module's syntax tree (TypeScript's own parser), and takes as a statement
// every string or template literal of a function, with the constants it interpolates resolved
// (local ones and the module's), and the module constants the function uses. Of a statement that
// names one of MODE_TABLES:
// - an INSERT must write the row's `livemode` column;
// - any other must carry the mode predicate (`livemode = ?`, or `livemode = coalesce(?, livemode)`
//   for a tenant that may see both modes), in a function that takes a `Tenant` and binds it with
//   `modeParam(tenant)`; a listing built elsewhere (its table named as a bare literal) must add
//   `modeConditions(tenant)`;
// - unless the function acts for every mode, as system work does (a sweep, a queue consumer, a
//   public URL that is its own credential), and says why in its doc comment: `@allModes <why>`.
//   Folders of SYSTEM_FOLDERS are system work throughout.
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * The tables whose rows have a mode, as src/lib/tenant.ts declares them (`MODE_TABLES`), read from
 * its syntax: this script runs on plain Node, without the Workers types that module's imports need.
 */
function declaredModeTables() {
  const file = path.join(import.meta.dirname, "../src/lib/tenant.ts");
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  let tables = [];
  const visit = (node) => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === "MODE_TABLES") {
      const init =
        node.initializer && ts.isAsExpression(node.initializer) ? node.initializer.expression : node.initializer;
      if (init && ts.isArrayLiteralExpression(init))
        tables = init.elements.filter(ts.isStringLiteral).map((e) => e.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (tables.length === 0) throw new Error("src/lib/tenant.ts declares no MODE_TABLES");
  return tables;
}

export const MODE_TABLES = declaredModeTables();

/** Folders whose every statement is system work, and why. */
export const SYSTEM_FOLDERS = {
  "src/encoding/pipeline/":
    "the encoding pipeline's statements name a video by id for its encoder, whose calls back carry their attempt's " +
    "own token: no caller, so no caller's mode",
};

const TABLES = MODE_TABLES.join("|");
const NAMED = new RegExp(`\\b(from|join|update|into)\\s+(${TABLES})\\b`, "gi");
const INSERT_COLUMNS = new RegExp(`\\binto\\s+(${TABLES})\\s*\\(([^)]*)\\)`, "gi");
const PREDICATE = /\blivemode\s*=\s*(?:coalesce\(\s*)?\?\d*/i;
/** Text that stands in a statement for an expression the checker cannot read. */
const UNKNOWN = "⟨?⟩";

/** Top-level constants (not functions) of a module, by name. */
function moduleConstants(source) {
  const constants = new Map();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (!ts.isIdentifier(declaration.name) || !declaration.initializer) continue;
      if (ts.isArrowFunction(declaration.initializer) || ts.isFunctionExpression(declaration.initializer)) continue;
      constants.set(declaration.name.text, declaration.initializer);
    }
  }
  return constants;
}

/** Top-level functions of a module: declarations, and constants holding one. */
function moduleFunctions(source) {
  const functions = [];
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name && statement.body) {
      functions.push({ name: statement.name.text, node: statement, docHost: statement });
    }
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        if (ts.isIdentifier(declaration.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) {
          functions.push({ name: declaration.name.text, node: init, docHost: statement });
        }
      }
    }
  }
  return functions;
}

/** Constants declared inside a function, by name. */
function localConstants(node) {
  const locals = new Map();
  const visit = (child) => {
    if (ts.isVariableDeclaration(child) && ts.isIdentifier(child.name) && child.initializer) {
      locals.set(child.name.text, child.initializer);
    }
    ts.forEachChild(child, visit);
  };
  ts.forEachChild(node, visit);
  return locals;
}

const oneLine = (sql) => sql.replace(/\s+/g, " ").trim();

const isStringish = (node) =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node);

/**
 * The text of a string expression, constants resolved; what cannot be read is UNKNOWN. `inlined`
 * collects the module constants it resolved.
 */
function textOf(node, scope, inlined, depth = 0) {
  if (depth > 20) return UNKNOWN;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) {
    return (
      node.head.text +
      node.templateSpans.map((span) => textOf(span.expression, scope, inlined, depth + 1) + span.literal.text).join("")
    );
  }
  if (ts.isParenthesizedExpression(node)) return textOf(node.expression, scope, inlined, depth + 1);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    return textOf(node.left, scope, inlined, depth + 1) + textOf(node.right, scope, inlined, depth + 1);
  }
  if (ts.isIdentifier(node)) {
    const local = scope.locals.get(node.text);
    if (local) return textOf(local, scope, inlined, depth + 1);
    const constant = scope.constants.get(node.text);
    if (constant && isStringish(constant)) {
      inlined.add(node.text);
      return textOf(constant, scope, inlined, depth + 1);
    }
  }
  return UNKNOWN;
}

/** The statements (string roots) in `root`, each resolved, and the identifiers it uses. */
function statementsIn(root, scope) {
  const statements = [];
  const used = new Set();
  const inlined = new Set();
  const visit = (node) => {
    if (isStringish(node)) {
      statements.push({ text: textOf(node, scope, inlined), bare: ts.isStringLiteral(node) && node.text });
      return;
    }
    if (ts.isIdentifier(node)) used.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(root);
  return { statements, used, inlined };
}

/**
 * The statements of the module constants a function uses without interpolating them (a table of
 * SQL it indexes, say), and of the constants those use, transitively.
 */
function constantStatements(names, scope, seen = new Set()) {
  const statements = [];
  for (const name of names) {
    const constant = scope.constants.get(name);
    if (!constant || seen.has(name)) continue;
    seen.add(name);
    const found = statementsIn(constant, { ...scope, locals: new Map() });
    statements.push(...found.statements, ...constantStatements(found.used, scope, seen));
  }
  return statements;
}

function allModesReason(docHost) {
  const tag = ts.getJSDocTags(docHost).find((candidate) => candidate.tagName.text === "allModes");
  if (!tag) return null;
  const comment = typeof tag.comment === "string" ? tag.comment : ts.getTextOfJSDocComment(tag.comment);
  return comment?.trim() || "";
}

/**
 * What breaks the rule in one module: a list of problems, each naming the function, and the
 * functions it found acting for a caller (`scoped`) and for every mode (`allModes`).
 */
export function checkModeScoping(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const relative = fileName.split(path.sep).join("/");
  const system = Object.keys(SYSTEM_FOLDERS).find((folder) => relative.startsWith(folder));
  const constants = moduleConstants(source);
  const problems = [];
  const scoped = [];
  const allModes = [];
  for (const fn of moduleFunctions(source)) {
    const where = `${relative}: ${fn.name}`;
    const scope = { constants, locals: localConstants(fn.node) };
    const own = fn.node.body
      ? statementsIn(fn.node.body, scope)
      : { statements: [], used: new Set(), inlined: new Set() };
    const notInlined = [...own.used].filter((name) => !own.inlined.has(name));
    const statements = [...own.statements, ...constantStatements(notInlined, scope)];
    const tenant = fn.node.parameters.find((p) => p.type?.getText(source) === "Tenant")?.name.getText(source);
    const reason = allModesReason(fn.docHost);
    if (reason === "") problems.push(`${where}: @allModes needs its reason`);
    const exempt = reason !== null || system !== undefined;
    const body = fn.node.body?.getText(source) ?? "";
    const bindsTenant = tenant !== undefined && new RegExp(`\\bmode(Param|Conditions)\\(${tenant}\\b`).test(body);
    let reads = false;
    for (const { text: sql, bare } of statements) {
      if (bare && MODE_TABLES.includes(bare)) {
        // A statement built elsewhere (a keyset page) from this table and the function's conditions.
        reads = true;
        if (!exempt && !(tenant && new RegExp(`\\bmodeConditions\\(${tenant}\\b`).test(body))) {
          problems.push(`${where}: lists ${bare} without modeConditions(${tenant ?? "tenant"})`);
        }
        continue;
      }
      const named = [...sql.matchAll(NAMED)];
      if (named.length === 0) continue;
      const inserts = [...sql.matchAll(INSERT_COLUMNS)];
      for (const [, table, columns] of inserts) {
        if (!/\blivemode\b/i.test(columns)) problems.push(`${where}: inserts into ${table} without its livemode`);
      }
      const touched = named.filter(([, verb]) => verb.toLowerCase() !== "into").map(([, , table]) => table);
      if (touched.length === 0) continue;
      reads = true;
      if (exempt) continue;
      const what = [...new Set(touched)].join(", ");
      if (inserts.length > 0) {
        // An insert's own reads (a quota's count, say) are of the inserted row's mode, bound with it.
        if (!PREDICATE.test(sql)) problems.push(`${where}: an insert reads ${what} of every mode: ${oneLine(sql)}`);
      } else if (!tenant) {
        problems.push(
          `${where}: a statement on ${what} and no Tenant parameter: bind the caller's mode, or say why it acts for every mode (@allModes)`,
        );
      } else if (!PREDICATE.test(sql)) {
        problems.push(`${where}: a statement on ${what} binds no mode (livemode = ?): ${oneLine(sql)}`);
      }
    }
    if (reads && !exempt && tenant && !bindsTenant && !problems.some((p) => p.startsWith(`${where}:`))) {
      problems.push(`${where}: its statements' mode is not its tenant's (modeParam(${tenant}) or modeConditions)`);
    }
    if (reads && exempt) allModes.push(where);
    if (reads && !exempt) scoped.push(where);
  }
  return { problems, scoped, allModes };
}
