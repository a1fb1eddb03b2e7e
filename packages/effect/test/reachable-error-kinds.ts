import { fileURLToPath } from "node:url";
import ts from "typescript";

/**
 * The domain errors each method of core's engine can raise, read from core's source with the
 * TypeScript compiler: every `new XError(…)` of a domain error class (by its `kind`) in a function
 * reachable from the method's implementation in `createBundler`. A function is reached when it is
 * referenced (called or passed on); a call through an interface (a port, a policy) reaches the
 * members of that name of the objects and classes typed as that interface. An over-approximation
 * on one count: an error caught on the way is still counted.
 */
export function reachableErrorKinds(methods: readonly string[]): Map<string, Set<string>> {
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  const core = `${root}packages/core/src/`;
  const entry = `${core}engine/create-bundler.ts`;
  const base = ts.readConfigFile(`${root}tsconfig.base.json`, ts.sys.readFile).config;
  const options = ts.parseJsonConfigFileContent(base, ts.sys, root).options;
  const program = ts.createProgram([entry], { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const inCore = (node: ts.Node) => node.getSourceFile().fileName.startsWith(core);
  const isFunction = (node: ts.Node) => ts.isArrowFunction(node) || ts.isFunctionExpression(node);
  /** `x.name(…)`: a member called, not a field read. */
  const isCalled = (name: ts.Node) => ts.isPropertyAccessExpression(name.parent) && ts.isCallExpression(name.parent.parent) && name.parent.parent.expression === name.parent;

  // Members by name, for calls through an interface.
  const byName = new Map<string, ts.Node[]>();
  for (const file of program.getSourceFiles().filter(inCore)) {
    const visit = (node: ts.Node) => {
      if ((ts.isMethodDeclaration(node) || ts.isPropertyAssignment(node)) && ts.isIdentifier(node.name)) byName.set(node.name.text, [...(byName.get(node.name.text) ?? []), node]);
      ts.forEachChild(node, visit);
    };
    visit(file);
  }

  const resolve = (node: ts.Node): readonly ts.Declaration[] => {
    let symbol = checker.getSymbolAtLocation(node);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    return symbol?.declarations ?? [];
  };

  /** A domain error class's `kind`: the string its `kind` property is set to. */
  const kindOf = (declaration: ts.ClassDeclaration) => {
    const kind = declaration.members.find((member) => ts.isPropertyDeclaration(member) && member.name.getText() === "kind");
    return kind && ts.isPropertyDeclaration(kind) && kind.initializer && ts.isStringLiteral(kind.initializer) ? kind.initializer.text : undefined;
  };

  /** The members named `name` of object literals and classes typed as the interface declaring `member`. */
  const implementations = (member: ts.Declaration, name: string) => {
    const owner = member.parent;
    if (!ts.isInterfaceDeclaration(owner) && !ts.isTypeLiteralNode(owner)) return [];
    const ownerSymbol = ts.isInterfaceDeclaration(owner) ? checker.getSymbolAtLocation(owner.name) : undefined;
    const isOwner = (type: ts.Type) => (ownerSymbol !== undefined && type.getSymbol() === ownerSymbol) || (type.getSymbol()?.declarations ?? []).includes(owner);
    return (byName.get(name) ?? []).filter((candidate) => {
      const container = candidate.parent;
      if (ts.isObjectLiteralExpression(container)) {
        const type = checker.getContextualType(container);
        const types = type?.isUnionOrIntersection() ? type.types : type ? [type] : [];
        return types.some(isOwner);
      }
      return ownerSymbol !== undefined && ts.isClassDeclaration(container) && (container.heritageClauses ?? []).some((clause) => clause.types.some((t) => checker.getSymbolAtLocation(t.expression) === ownerSymbol));
    });
  };

  const reachable = (start: ts.Node) => {
    const kinds = new Set<string>();
    const seen = new Set<ts.Node>([start]);
    const queue = [start];
    const enqueue = (node: ts.Node) => {
      if (inCore(node) && !seen.has(node)) {
        seen.add(node);
        queue.push(node);
      }
    };
    const visit = (node: ts.Node) => {
      if (ts.isNewExpression(node)) {
        for (const declaration of resolve(node.expression)) {
          const kind = ts.isClassDeclaration(declaration) ? kindOf(declaration) : undefined;
          if (kind) kinds.add(kind);
        }
      }
      if (ts.isIdentifier(node)) {
        for (const declaration of resolve(node)) {
          if (!inCore(declaration)) continue;
          if (ts.isFunctionDeclaration(declaration) || ts.isMethodDeclaration(declaration) || isFunction(declaration) || ts.isClassDeclaration(declaration)) enqueue(declaration);
          else if ((ts.isVariableDeclaration(declaration) || ts.isPropertyAssignment(declaration)) && declaration.initializer && isFunction(declaration.initializer)) enqueue(declaration.initializer);
          else if (ts.isShorthandPropertyAssignment(declaration)) for (const target of resolve(declaration.name)) enqueue(target);
          else if (ts.isMethodSignature(declaration) || (ts.isPropertySignature(declaration) && isCalled(node)))
            for (const member of implementations(declaration, node.text)) enqueue(member);
        }
      }
      ts.forEachChild(node, visit);
    };
    while (queue.length > 0) ts.forEachChild(queue.pop()!, visit);
    return kinds;
  };

  // Each method's implementation: the member of that name in `createBundler`'s engine.
  const found = new Map<string, ts.Node>();
  const find = (node: ts.Node) => {
    if ((ts.isPropertyAssignment(node) || ts.isMethodDeclaration(node)) && ts.isIdentifier(node.name) && methods.includes(node.name.text) && !found.has(node.name.text)) found.set(node.name.text, node);
    ts.forEachChild(node, find);
  };
  find(program.getSourceFile(entry)!);
  return new Map(methods.map((method) => [method, reachable(found.get(method) ?? program.getSourceFile(entry)!)]));
}
