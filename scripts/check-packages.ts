/**
 * `pnpm check:packages`, after `pnpm build`: pack every library package (the non-private ones under
 * `packages/`) as `pnpm publish` would, and check each tarball with publint and Are the Types Wrong
 * (ESM only: Node 16+ and bundler resolution). Any problem fails the run. It also checks what those
 * tools cannot see: the published `exports` cover every subpath the workspace exports, and point at
 * built JavaScript, never at TypeScript sources (and so do its commands, `bin`, which start with
 * `#!/usr/bin/env node`); and every library package shares the one version
 * (the `fixed` group in `.changeset/config.json`); and the built declarations import only packages
 * a consumer installs with them.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libraryDirectories, packLibrary, root } from "./pack-libraries.ts";

interface Manifest {
  name: string;
  private?: boolean;
  exports?: Record<string, unknown>;
  bin?: string | Record<string, string>;
  publishConfig?: { exports?: Record<string, unknown> };
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function readManifest(file: string): Manifest {
  return JSON.parse(readFileSync(file, "utf8")) as Manifest;
}

/** Runs a command with its output shown (all of it, or only its errors); true when it succeeded. */
function run(
  command: string,
  args: string[],
  cwd: string,
  output: "all" | "errors" = "all",
): boolean {
  const result = spawnSync(command, args, {
    cwd,
    stdio: ["ignore", output === "all" ? "inherit" : "ignore", "inherit"],
  });
  return result.status === 0;
}

/** Every file path an `exports` map names, at any depth of conditions. */
function exportTargets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap(exportTargets);
}

/** What is wrong with the packed manifest's `exports`, compared with the workspace's. */
function exportProblems(workspace: Manifest, packed: Manifest): string[] {
  const problems: string[] = [];
  const published = packed.exports ?? {};
  for (const subpath of Object.keys(workspace.exports ?? {})) {
    if (!(subpath in published))
      problems.push(
        `"${subpath}" is exported in the workspace but not in the package (publishConfig.exports)`,
      );
  }
  for (const target of exportTargets(published)) {
    if (target.endsWith(".ts") && !target.endsWith(".d.ts"))
      problems.push(
        `exports point at the source file ${target}: Node does not strip types under node_modules`,
      );
  }
  return problems;
}

/** The text of `file` (a path inside the package) in the tarball, or undefined if it is not there. */
function packedFile(tarball: string, file: string): string | undefined {
  const result = spawnSync("tar", ["-xzOf", tarball, join("package", file)], { encoding: "utf8" });
  return result.status === 0 ? result.stdout : undefined;
}

/**
 * What is wrong with the packed manifest's commands: each must run with plain `node` from
 * `node_modules`, so it names built JavaScript (publishConfig.bin), never a TypeScript source, and
 * that file starts with `#!/usr/bin/env node` (no flags, which `env` would not split on every
 * system).
 */
function binProblems(packed: Manifest, tarball: string): string[] {
  const bins = typeof packed.bin === "string" ? { [packed.name]: packed.bin } : (packed.bin ?? {});
  const problems: string[] = [];
  for (const [command, target] of Object.entries(bins)) {
    if (target.endsWith(".ts"))
      problems.push(
        `bin "${command}" is the source file ${target}: Node does not strip types under node_modules (set publishConfig.bin)`,
      );
    const firstLine = packedFile(tarball, target)?.split("\n", 1)[0];
    if (firstLine !== undefined && firstLine !== "#!/usr/bin/env node")
      problems.push(
        `bin "${command}" (${target}) starts with "${firstLine}", not "#!/usr/bin/env node"`,
      );
  }
  return problems;
}

/** The packages a declaration file imports from, by name (`viem/accounts` → `viem`). */
function importedPackages(declaration: string): string[] {
  const specifiers = [...declaration.matchAll(/(?:from |import\()"([^".][^"]*)"/g)].map(
    (match) => match[1]!,
  );
  return specifiers.map((specifier) =>
    specifier
      .split("/")
      .slice(0, specifier.startsWith("@") ? 2 : 1)
      .join("/"),
  );
}

/**
 * Packages the built declarations import that a consumer would not get: neither a dependency nor a
 * peer dependency, or typed only by an `@types/…` package that is a devDependency. Such an import
 * breaks a consumer's type-check when `skipLibCheck` is off.
 */
function declarationProblems(dir: string, manifest: Manifest): string[] {
  const installed = { ...manifest.dependencies, ...manifest.peerDependencies };
  const declarations = readdirSync(join(dir, "dist"), { recursive: true, encoding: "utf8" }).filter(
    (file) => file.endsWith(".d.ts"),
  );
  const imported = new Set(
    declarations.flatMap((file) => importedPackages(readFileSync(join(dir, "dist", file), "utf8"))),
  );
  const problems: string[] = [];
  for (const name of imported) {
    if (name.startsWith("node:") || builtinModules.includes(name) || name === manifest.name)
      continue;
    const typesPackage = `@types/${name.replace(/^@([^/]+)\//, "$1__")}`;
    if (!(name in installed))
      problems.push(
        `its declarations import "${name}", which is not a dependency or peer dependency`,
      );
    else if (manifest.devDependencies?.[typesPackage] !== undefined && !(typesPackage in installed))
      problems.push(
        `its declarations import "${name}", typed by ${typesPackage}: make that a dependency, not a devDependency`,
      );
  }
  return problems;
}

const libraries = libraryDirectories();

const failed: string[] = [];
const changesets = JSON.parse(readFileSync(join(root, ".changeset/config.json"), "utf8")) as {
  fixed: string[][];
};
const versionedTogether = new Set(changesets.fixed.flat());
const scratch = mkdtempSync(join(tmpdir(), "bundlekit-pack-"));
try {
  for (const dir of libraries) {
    const workspace = readManifest(join(dir, "package.json"));
    console.log(`--- ${workspace.name}`);
    if (!versionedTogether.has(workspace.name)) {
      console.error(
        `${workspace.name}: not in the "fixed" group of .changeset/config.json, so it would not be released with the others`,
      );
      failed.push(`${workspace.name}: version group`);
    }
    const tarball = packLibrary(dir, scratch);
    if (tarball === undefined) {
      failed.push(`${workspace.name}: pnpm pack failed`);
      continue;
    }
    const packed = JSON.parse(packedFile(tarball, "package.json") ?? "{}") as Manifest;
    const problems = [
      ...exportProblems(workspace, packed),
      ...binProblems(packed, tarball),
      ...declarationProblems(dir, packed),
    ];
    for (const problem of problems) console.error(`${workspace.name}: ${problem}`);
    if (problems.length > 0) failed.push(`${workspace.name}: manifest`);
    if (!run("publint", ["run", "--strict", tarball], root))
      failed.push(`${workspace.name}: publint`);
    if (!run("attw", [tarball, "--profile", "esm-only"], root))
      failed.push(`${workspace.name}: attw`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

if (failed.length > 0) {
  console.error(`\npackage checks failed:\n  ${failed.join("\n  ")}`);
  process.exit(1);
}
console.log(`\n${libraries.length} packages pass publint and attw`);
