// Ground truth for TypeScript: the compiler's own resolution of every call in the project.
// A program over every .ts file of the tree with the tree's tsconfig.json compiler options (its
// `paths` map `rxjs` to src/, as the tests import it); for each call, `new` and `super(...)` the
// checker's resolved signature gives the declaration called.
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { TruthBuilder } from "./truth.mjs";

/** Every .ts/.tsx file of the tree (no declaration files, no node_modules), relative with forward slashes. */
function sourceFiles(tree) {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === "node_modules" || e.name.startsWith(".")) continue;
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) walk(abs);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(abs);
    }
  };
  walk(tree);
  return out.sort();
}

function compilerOptions(tree) {
  const file = path.join(tree, "tsconfig.json");
  if (!fs.existsSync(file)) return { allowJs: false, noEmit: true, skipLibCheck: true };
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(file, ts.sys.readFile).config, ts.sys, tree);
  return { ...parsed.options, noEmit: true, skipLibCheck: true, incremental: false };
}

const FUNCTION_VALUE = new Set([ts.SyntaxKind.ArrowFunction, ts.SyntaxKind.FunctionExpression]);

/**
 * The node that is a definition (function or method) for codemem and for the truth alike: named
 * function declarations, methods, constructors and accessors, and a function or arrow function
 * given to a variable or a class field. Returns the name, or undefined for any other node.
 */
function defName(node) {
  switch (node.kind) {
    case ts.SyntaxKind.FunctionDeclaration:
      return node.body && node.name ? node.name.text : undefined;
    case ts.SyntaxKind.MethodDeclaration:
    case ts.SyntaxKind.GetAccessor:
    case ts.SyntaxKind.SetAccessor:
      return (node.body || hasAbstract(node)) && (ts.isIdentifier(node.name) || ts.isPrivateIdentifier(node.name)) ? node.name.text : undefined;
    case ts.SyntaxKind.Constructor:
      return node.body ? "constructor" : undefined;
    case ts.SyntaxKind.VariableDeclaration:
    case ts.SyntaxKind.PropertyDeclaration:
      return node.initializer && FUNCTION_VALUE.has(node.initializer.kind) && ts.isIdentifier(node.name) ? node.name.text : undefined;
    case ts.SyntaxKind.BinaryExpression:
      // \`res.send = function () {}\`, \`Foo.prototype.bar = () => {}\`: codemem takes these for defs too.
      return node.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(node.left) && FUNCTION_VALUE.has(node.right.kind) ? node.left.name.text : undefined;
    default:
      return undefined;
  }
}

function hasAbstract(node) {
  return !!ts.getModifiers?.(node)?.some((m) => m.kind === ts.SyntaxKind.AbstractKeyword);
}

/** The definition a declaration found by the checker stands for: an overload's implementation, a function value's variable. */
function definitionOf(decl) {
  if (!decl) return undefined;
  if (FUNCTION_VALUE.has(decl.kind) && decl.parent && defName(decl.parent)) return decl.parent;
  if ((ts.isFunctionDeclaration(decl) || ts.isMethodDeclaration(decl) || ts.isConstructorDeclaration(decl)) && !decl.body && !hasAbstract(decl)) {
    // An overload signature: the implementation is the sibling declaration with a body.
    const impl = decl.parent?.statements?.find?.((s) => s.kind === decl.kind && s.body && s.name?.getText() === decl.name?.getText()) ?? decl.parent?.members?.find?.((m) => m.kind === decl.kind && m.body && (decl.kind === ts.SyntaxKind.Constructor || m.name?.getText() === decl.name?.getText()));
    return impl;
  }
  return defName(decl) ? decl : undefined;
}

/** True for a def inside another def: a local function, no node of the graph. */
function nested(node) {
  for (let p = node.parent; p; p = p.parent) if (defName(p)) return true;
  return false;
}

/** The syntactic kind of a call: plain, imported, this, method, constructor (new, super). */
function callKind(call, checker) {
  if (ts.isNewExpression(call)) return { kind: "constructor", name: call.expression.getText().split(".").pop() };
  const callee = call.expression;
  if (callee.kind === ts.SyntaxKind.SuperKeyword) return { kind: "constructor", name: "super" };
  if (ts.isIdentifier(callee)) {
    const sym = checker.getSymbolAtLocation(callee);
    return { kind: sym && sym.flags & ts.SymbolFlags.Alias ? "imported" : "plain", name: callee.text };
  }
  if (ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee)) {
    const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : callee.argumentExpression.getText();
    const recv = callee.expression;
    if (recv.kind === ts.SyntaxKind.ThisKeyword) return { kind: "this", name };
    if (recv.kind === ts.SyntaxKind.SuperKeyword) return { kind: "constructor", name };
    const sym = ts.isIdentifier(recv) ? checker.getSymbolAtLocation(recv) : undefined;
    const target = sym && sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : undefined;
    if (target && target.flags & ts.SymbolFlags.ValueModule) return { kind: "imported", name };
    return { kind: "method", name };
  }
  return { kind: "method", name: callee.getText().slice(0, 40) };
}

/** Computes the truth for a TypeScript tree. */
export function tsTruth(tree) {
  const t0 = performance.now();
  const files = sourceFiles(tree);
  const program = ts.createProgram(files, compilerOptions(tree));
  const checker = program.getTypeChecker();
  const own = new Set(files.map((f) => path.resolve(f)));
  const rel = (sf) => path.relative(tree, sf.fileName).split(path.sep).join("/");
  const truth = new TruthBuilder("typescript", `typescript ${ts.version}`);
  const lineOf = (sf, pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const defOf = (node) => {
    const sf = node.getSourceFile();
    if (!own.has(path.resolve(sf.fileName))) return undefined;
    const name = defName(node);
    const nameNode = node.name ?? node.left?.name ?? node;
    return truth.def({ file: rel(sf), name, line: lineOf(sf, node.getStart(sf)), nameLine: lineOf(sf, nameNode.getStart(sf)), endLine: lineOf(sf, node.end), kind: ts.isConstructorDeclaration(node) ? "constructor" : ts.isFunctionDeclaration(node) || ts.isVariableDeclaration(node) ? "function" : "method", cls: ts.isConstructorDeclaration(node) ? node.parent.name?.text : undefined });
  };
  for (const sf of program.getSourceFiles()) {
    if (!own.has(path.resolve(sf.fileName))) continue;
    // A def nested in another (a local helper, a method of an object in a function) is none: its
    // calls count for the outermost def, as codemem's extractor counts them.
    const visit = (node, caller) => {
      if (caller === undefined && defName(node)) caller = defOf(node);
      if (caller !== undefined && (ts.isCallExpression(node) || ts.isNewExpression(node))) site(node, caller, sf);
      ts.forEachChild(node, (c) => visit(c, caller));
    };
    ts.forEachChild(sf, (c) => visit(c, undefined));
  }
  function site(call, caller, sf) {
    const { kind, name } = callKind(call, checker);
    const line = lineOf(sf, call.getStart(sf));
    const sig = checker.getResolvedSignature(call);
    const decl = sig?.declaration;
    if (!decl || ts.isJSDocSignature?.(decl)) {
      // No declaration: an untyped (any) callee, a class without a constructor, an unresolved import.
      const type = checker.getTypeAtLocation(call.expression);
      const known = ts.isNewExpression(call) || call.expression.kind === ts.SyntaxKind.SuperKeyword ? "outside" : type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown) ? "unknown" : "outside";
      return truth.site({ caller, name, kind, line, status: known });
    }
    const dsf = decl.getSourceFile();
    if (!own.has(path.resolve(dsf.fileName))) return truth.site({ caller, name, kind, line, status: "outside" });
    const def = definitionOf(decl);
    if (def && !nested(def)) return truth.site({ caller, name, kind, line, status: "project", target: defOf(def) });
    // An interface's or an object type's member, a parameter of function type: the function called is chosen at run time.
    const dispatch = ts.isMethodSignature(decl) || ts.isPropertySignature(decl) || ts.isCallSignatureDeclaration(decl);
    truth.site({ caller, name, kind, line, status: def ? "local" : dispatch ? "dispatch" : "outside" });
  }
  return truth.done({ seconds: (performance.now() - t0) / 1000, files: files.length });
}
