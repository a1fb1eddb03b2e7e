import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DEVNET_PAYMASTER_SIGNER_KEY, ENTRY_POINT_VERSIONS, SIMPLE_7702_ACCOUNT, startDevnet } from "@bundlekit/devnet";
import { describe, expect, it } from "vitest";

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const key = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

function start(env: Record<string, string>): { child: ChildProcess; output: () => { stdout: string; stderr: string }; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", main], {
    env: { PATH: process.env.PATH, BUNDLEKIT_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => ({ stdout, stderr }), exited };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Any address: a paymaster stub is the same for every sender. */
const DEVNET_ADDRESS = "0x1111111111111111111111111111111111111111";

describe("pnpm start (src/main.ts)", () => {
  it("starts the devnet and the bundler, serves, and stops both on SIGINT", async () => {
    const run = start({});
    await expect.poll(() => run.output().stdout, { timeout: 30_000, interval: 100 }).toContain("Press Ctrl-C to stop.");
    const { stdout } = run.output();
    const bundlerUrl = /bundler:\s+(\S+)/.exec(stdout)![1]!;
    const nodeUrl = /node:\s+(\S+)/.exec(stdout)![1]!;
    expect(stdout).toMatch(/chain id:\s+31337/);
    expect(stdout).toMatch(/validation:\s+safe \(ERC-7562 enforced; in-process tracer, 2 worker threads\)/);
    expect(stdout).toContain("EntryPoint v0.7: 0x0000000071727De22E5E9d8BAf0edAc6f37da032");
    // The devnet's paymasters, as deployed (the addresses a developer pastes into a client).
    const devnet = await startDevnet();
    try {
      for (const version of ENTRY_POINT_VERSIONS) {
        const { paymasters } = devnet.deployments[version];
        expect(stdout).toMatch(new RegExp(`VerifyingPaymaster v${version}:\\s+${paymasters.verifying}`));
        if (paymasters.postOpWork) expect(stdout).toMatch(new RegExp(`PostOpWorkPaymaster v${version}:\\s+${paymasters.postOpWork}`));
      }
    } finally {
      await devnet.stop();
    }
    expect(stdout).toContain(`Simple7702Account v0.8:     ${SIMPLE_7702_ACCOUNT}`);
    expect(stdout).toContain(`paymaster signer key: ${DEVNET_PAYMASTER_SIGNER_KEY}`);

    const answer = await fetch(bundlerUrl, { method: "POST", body: JSON.stringify({ id: 1, method: "eth_chainId" }) });
    expect(await answer.json()).toEqual({ jsonrpc: "2.0", id: 1, result: "0x7a69" });
    // The paymaster endpoint is the bundler's URL, and answers ERC-7677 there.
    expect(stdout).toContain(`paymaster:   ${bundlerUrl}  (ERC-7677 pm_getPaymasterStubData, pm_getPaymasterData)`);
    const stub = await fetch(bundlerUrl, {
      method: "POST",
      body: JSON.stringify({ id: 2, method: "pm_getPaymasterStubData", params: [{ sender: DEVNET_ADDRESS, nonce: "0x0", callData: "0x" }, "0x0000000071727De22E5E9d8BAf0edAc6f37da032", "0x7a69", {}] }),
    });
    expect(((await stub.json()) as { result: { paymaster: string } }).result.paymaster.toLowerCase()).toBe(stdout.match(/VerifyingPaymaster v0\.7:\s+(\S+)/)![1]!.toLowerCase());

    run.child.kill("SIGINT");
    expect(await run.exited).toBe(0);
    await expect(fetch(nodeUrl, { method: "POST", body: "{}" })).rejects.toThrow();
    expect(alive(run.child.pid!)).toBe(false);
  });

  it.each([
    [{ BUNDLEKIT_RPC_URL: "not-a-url", BUNDLEKIT_RELAYER_KEYS: key }, /^bundlekit: BUNDLEKIT_RPC_URL "not-a-url" is not a valid URL\n$/],
    [{ BUNDLEKIT_RPC_URL: "http://127.0.0.1:9", BUNDLEKIT_RELAYER_KEYS: "0x1234" }, /^bundlekit: relayer key #1 is not a 0x-prefixed 32-byte hex private key\n$/],
    [{ BUNDLEKIT_RPC_URL: "http://127.0.0.1:9" }, /^bundlekit: BUNDLEKIT_RELAYER_KEYS .* is required with an RPC URL\n$/],
    [{ BUNDLEKIT_PORT: "http" }, /^bundlekit: port must be an integer from 0 to 65535, got "http"\n$/],
    [{ BUNDLEKIT_DATABASE: "postgres://bundler:s3cret@localhost:port/x" }, /^bundlekit: database \(BUNDLEKIT_DATABASE\) is not a valid PostgreSQL URL; expected postgres:\/\/user:password@host:5432\/database\n$/],
    // Port 1 on this machine: nothing listens there, so the connection is refused at once.
    [{ BUNDLEKIT_DATABASE: "postgres://bundler:s3cret@127.0.0.1:1/bundlekit" }, /^bundlekit: cannot open the database postgres:\/\/bundler:\*\*\*@127\.0\.0\.1:1\/bundlekit: connect ECONNREFUSED 127\.0\.0\.1:1\n$/],
  ])("stops with one clear line for a bad configuration (%o)", async (env, message) => {
    const run = start(env);
    expect(await run.exited).toBe(1);
    expect(run.output().stderr).toMatch(message);
    expect(run.output().stdout).toBe("");
  });
});
