import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The workspace's root directory. */
export const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The library packages: every non-private package under `packages/`, by directory. */
export function libraryDirectories(): string[] {
  const packagesDir = join(root, "packages");
  return readdirSync(packagesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(packagesDir, entry.name))
    .filter((dir) => {
      try {
        return (
          (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { private?: boolean })
            .private !== true
        );
      } catch {
        return false;
      }
    });
}

/** Pack `dir` as `pnpm publish` would (workspace versions and `publishConfig` applied) into a new directory under `scratch`; the tarball's path, or undefined if packing failed. */
export function packLibrary(dir: string, scratch: string): string | undefined {
  const out = mkdtempSync(join(scratch, "pkg-"));
  const packed = spawnSync("pnpm", ["pack", "--pack-destination", out], {
    cwd: dir,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (packed.status !== 0) return undefined;
  return join(out, readdirSync(out).find((file) => file.endsWith(".tgz"))!);
}
