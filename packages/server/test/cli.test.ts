import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DEVNET_PAYMASTER_SIGNER_KEY, ENTRY_POINT_VERSIONS, SIMPLE_7702_ACCOUNT, startDevnet } from "@bundlekit/devnet";
import { describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url));

function start(env: Record<string, string>): { child: ChildProcess; output: () => { stdout: string; stderr: string }; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", bin], {
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

/** The one test that starts the service as a process; a bad configuration is checked in-process (config.test.ts). */
describe("pnpm start (src/bin.ts, the command bundlekit-server)", () => {
  it("starts the devnet and the bundler, serves, and stops both on SIGINT", async () => {
    const run = start({});
    await expect.poll(() => run.output().stdout, { timeout: 30_000, interval: 100 }).toContain("Press Ctrl-C to stop.");
    const { stdout } = run.output();
    const bundlerUrl = /bundler:\s+(\S+)/.exec(stdout)![1]!;
    const nodeUrl = /node:\s+(\S+)/.exec(stdout)![1]!;
    expect(stdout).toMatch(/chain id:\s+31337/);
    expect(stdout).toMatch(/validation:\s+safe \(ERC-7562 enforced; in-process tracer, 2 worker threads\)/);
    expect(stdout).toContain("EntryPoint v0.7: 0x0000000071727De22E5E9d8BAf0edAc6f37da032");
    expect(stdout).toContain("EntryPoint v0.9: 0x433709009B8330FDa32311DF1C2AFA402eD8D009");
    // The devnet's paymasters, as deployed (the addresses a developer pastes into a client).
    const devnet = await startDevnet();
    try {
      for (const version of ENTRY_POINT_VERSIONS) {
        const { paymasters, simpleAccountFactory } = devnet.deployments[version];
        expect(stdout).toMatch(new RegExp(`SimpleAccountFactory v${version}:\\s+${simpleAccountFactory}`));
        expect(stdout).toMatch(new RegExp(`VerifyingPaymaster v${version}:\\s+${paymasters.verifying}`));
        if (paymasters.postOpWork) expect(stdout).toMatch(new RegExp(`PostOpWorkPaymaster v${version}:\\s+${paymasters.postOpWork}`));
      }
    } finally {
      await devnet.stop();
    }
    expect(stdout).toContain(`Simple7702Account v0.8:     ${SIMPLE_7702_ACCOUNT}`);
    expect(stdout).toContain("Simple7702Account v0.9:     0xa46cc63eBF4Bd77888AA327837d20b23A63a56B5");
    expect(stdout).toContain(`paymaster signer key: ${DEVNET_PAYMASTER_SIGNER_KEY}`);

    const answer = await fetch(bundlerUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: 1, method: "eth_chainId" }) });
    expect(await answer.json()).toEqual({ jsonrpc: "2.0", id: 1, result: "0x7a69" });
    // The paymaster endpoint is the bundler's URL, and answers ERC-7677 there.
    expect(stdout).toContain(`paymaster:   ${bundlerUrl}  (ERC-7677 pm_getPaymasterStubData, pm_getPaymasterData)`);
    const stub = await fetch(bundlerUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: 2, method: "pm_getPaymasterStubData", params: [{ sender: DEVNET_ADDRESS, nonce: "0x0", callData: "0x" }, "0x0000000071727De22E5E9d8BAf0edAc6f37da032", "0x7a69", {}] }),
    });
    expect(((await stub.json()) as { result: { paymaster: string } }).result.paymaster.toLowerCase()).toBe(stdout.match(/VerifyingPaymaster v0\.7:\s+(\S+)/)![1]!.toLowerCase());

    run.child.kill("SIGINT");
    expect(await run.exited).toBe(0);
    await expect(fetch(nodeUrl, { method: "POST", body: "{}" })).rejects.toThrow();
    expect(alive(run.child.pid!)).toBe(false);
  });
});
