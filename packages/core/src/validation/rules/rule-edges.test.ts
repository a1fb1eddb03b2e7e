import {
  type Address,
  encodeAbiParameters,
  getAddress,
  type Hex,
  keccak256,
  pad,
  toFunctionSelector,
} from "viem";
import { describe, expect, it } from "vitest";
import type { UserOperationV07 } from "../../userop/types.ts";
import type { PhaseTrace, TracedCall } from "../../ports/validation-trace.ts";
import { checkValidationRules, type EntityStakes } from "./check-validation-rules.ts";
import type { RuleViolation } from "./rule-violation.ts";

/**
 * ERC-7562's rules at their edges, and the subject each violation names: the text a client reads
 * in the -32502 error. The broad matrix is in check-validation-rules.test.ts.
 */
const entryPoint: Address = "0x0000000071727de22e5e9d8baf0edac6f37da032";
const senderCreator: Address = "0xefc2c1444ebcc4db75e7613d20c6a62ff67a167c";
const sender: Address = "0x1111111111111111111111111111111111111111";
const factory: Address = "0x2222222222222222222222222222222222222222";
const paymaster: Address = "0x3333333333333333333333333333333333333333";
const token: Address = "0x4444444444444444444444444444444444444444";
const helper: Address = "0x5555555555555555555555555555555555555555";

const plain: UserOperationV07 = {
  sender,
  nonce: 0n,
  callData: "0x",
  callGasLimit: 100_000n,
  verificationGasLimit: 500_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 1n,
  maxPriorityFeePerGas: 1n,
  signature: "0x01",
};
const deploying: UserOperationV07 = { ...plain, factory, factoryData: "0x" };
const sponsored: UserOperationV07 = {
  ...plain,
  paymaster,
  paymasterVerificationGasLimit: 100_000n,
  paymasterPostOpGasLimit: 0n,
  paymasterData: "0x",
};
const unstaked: EntityStakes = { account: false, factory: false, paymaster: false };
const stakedFactory: EntityStakes = { ...unstaked, factory: true };

type Role = "factory" | "account" | "paymaster";
const targets: Record<Role, { to: Address; selector: Hex }> = {
  factory: { to: senderCreator, selector: toFunctionSelector("createSender(bytes)") },
  account: { to: sender, selector: "0x19822f7c" },
  paymaster: { to: paymaster, selector: "0x52b7512c" },
};
const phase = (role: Role, fields: Partial<PhaseTrace> = {}): PhaseTrace => ({
  ...targets[role],
  opcodes: {},
  storage: {},
  transientStorage: {},
  calls: [],
  codeAccesses: [],
  creates: [],
  outOfGas: false,
  ...fields,
});
const call = (from: Address, to: Address, extra: Partial<TracedCall> = {}): TracedCall => ({
  type: "CALL",
  from,
  to,
  value: 0n,
  input: "0x",
  code: "contract",
  ...extra,
});
const mappingInput = (key: Address) =>
  encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [key, 0n]);

function check(
  op: UserOperationV07,
  phases: PhaseTrace[],
  options: { stakes?: EntityStakes; keccak?: Hex[]; p256?: boolean } = {},
): RuleViolation[] {
  const trace = { phases, keccakInputs: options.keccak ?? [], codeHashes: {} };
  return checkValidationRules({
    op,
    entryPoint,
    senderCreator,
    trace,
    stakes: options.stakes ?? unstaked,
    p256Precompile: options.p256,
  });
}
const rules = (violations: RuleViolation[]) => violations.map((v) => v.rule);
const violation = (
  rule: string,
  entity: Role,
  address: Address,
  subject: string,
  stakeWouldAllow?: [Role, Address],
): RuleViolation => ({
  rule,
  entity,
  address: getAddress(address),
  subject,
  ...(stakeWouldAllow && {
    allowedIfStaked: { role: stakeWouldAllow[0], address: getAddress(stakeWouldAllow[1]) },
  }),
});

describe("whose phase it is", () => {
  it("a phase the EntryPoint opens on a contract that is no entity of the operation is nobody's", () => {
    expect(
      check(sponsored, [{ ...phase("paymaster", { opcodes: { TIMESTAMP: 1 } }), to: helper }]),
    ).toEqual([]);
  });

  it("a SenderCreator phase of an operation without a factory is nobody's", () => {
    expect(check(plain, [phase("factory", { opcodes: { TIMESTAMP: 1 } })])).toEqual([]);
  });

  it("the SenderCreator's initEip7702Sender runs the account's code: its violations are the account's", () => {
    const initCall = {
      to: senderCreator,
      selector: toFunctionSelector("initEip7702Sender(address,bytes)"),
    };
    expect(
      check(plain, [{ ...phase("factory", { opcodes: { TIMESTAMP: 1 } }), ...initCall }]),
    ).toEqual([violation("OP-011", "account", sender, "uses banned opcode TIMESTAMP")]);
  });

  it("an EIP-7702 operation (factory 0x7702) has no factory: the account may use its associated storage (STO-021)", () => {
    const eip7702 = { ...plain, factory: "0x7702" as Address, factoryData: "0x" as Hex };
    const slot = keccak256(mappingInput(sender));
    expect(
      check(
        eip7702,
        [phase("account", { storage: { [token]: { [slot]: { read: false, write: true } } } })],
        { keccak: [mappingInput(sender)] },
      ),
    ).toEqual([]);
  });
});

describe("CREATE and CREATE2 (OP-011, OP-031, OP-032, EREP-060, EREP-061)", () => {
  it("an unstaked factory may deploy the sender with CREATE2 only", () => {
    expect(
      check(deploying, [
        phase("factory", { creates: [{ opcode: "CREATE", from: factory, address: sender }] }),
      ]),
    ).toEqual([
      violation("OP-011", "factory", factory, "uses banned opcode CREATE", ["factory", factory]),
    ]);
  });

  it("the sender's address may be CREATE2'd once", () => {
    const twice = [
      { opcode: "CREATE2", from: factory, address: sender },
      { opcode: "CREATE2", from: factory, address: sender },
    ] as const;
    expect(rules(check(deploying, [phase("factory", { creates: [...twice] })]))).toEqual([
      "OP-031",
    ]);
  });

  it("in the deployment, the new account's own CREATE is the factory's OP-011 when the factory is unstaked", () => {
    expect(
      check(deploying, [
        phase("factory", { creates: [{ opcode: "CREATE", from: sender, address: token }] }),
      ]),
    ).toEqual([
      violation("OP-011", "factory", factory, `uses banned opcode CREATE (from ${sender})`, [
        "factory",
        factory,
      ]),
    ]);
  });

  it("a staked factory's helpers may CREATE, not CREATE2", () => {
    expect(
      check(
        deploying,
        [phase("factory", { creates: [{ opcode: "CREATE2", from: helper, address: token }] })],
        { stakes: stakedFactory },
      ),
    ).toEqual([
      violation("OP-031", "factory", factory, `uses banned opcode CREATE2 (from ${helper})`),
    ]);
  });

  it("only the deployment may CREATE2 the sender's address", () => {
    const atSender = [{ opcode: "CREATE2", from: paymaster, address: sender }] as const;
    expect(rules(check(sponsored, [phase("paymaster", { creates: [...atSender] })]))).toEqual([
      "OP-031",
    ]);
  });

  it("a staked factory does not cover CREATE in the paymaster's phase", () => {
    const op = { ...deploying, ...sponsored, factory, factoryData: "0x" as Hex };
    expect(
      rules(
        check(
          op,
          [phase("paymaster", { creates: [{ opcode: "CREATE", from: sender, address: token }] })],
          { stakes: stakedFactory },
        ),
      ),
    ).toEqual(["OP-011"]);
  });
});

describe("calls (OP-041, OP-052 to OP-055, OP-061, OP-062, AUTH-030)", () => {
  const depositTo = `${toFunctionSelector("depositTo(address)")}${pad(sender).slice(2)}` as Hex;
  const incrementNonce =
    `${toFunctionSelector("incrementNonce(uint192)")}${pad("0x01").slice(2)}` as Hex;

  it("only the sender or the factory may call depositTo; only the sender incrementNonce", () => {
    const deposit = (from: Address) => call(from, entryPoint, { value: 1n, input: depositTo });
    expect(check(deploying, [phase("factory", { calls: [deposit(factory)] })])).toEqual([]);
    expect(check(plain, [phase("account", { calls: [deposit(sender)] })])).toEqual([]);
    expect(
      check(sponsored, [
        phase("paymaster", {
          calls: [call(paymaster, entryPoint, { value: 1n, input: depositTo })],
        }),
      ]),
    ).toEqual([
      violation(
        "OP-054",
        "paymaster",
        paymaster,
        `calls the EntryPoint (${toFunctionSelector("depositTo(address)")}) from ${paymaster}`,
      ),
    ]);
    expect(
      check(plain, [
        phase("account", { calls: [call(helper, entryPoint, { input: incrementNonce })] }),
      ]),
    ).toEqual([
      violation(
        "OP-054",
        "account",
        sender,
        `calls the EntryPoint (${toFunctionSelector("incrementNonce(uint192)")}) from ${helper}`,
      ),
    ]);
    expect(
      check(sponsored, [
        phase("paymaster", { calls: [call(paymaster, entryPoint, { value: 1n })] }),
      ]),
    ).toEqual([
      violation(
        "OP-054",
        "paymaster",
        paymaster,
        `calls the EntryPoint (fallback) from ${paymaster}`,
      ),
    ]);
  });

  it("value counts only for CALL and CALLCODE: a DELEGATECALL carries its caller's", () => {
    expect(
      check(plain, [
        phase("account", { calls: [call(sender, helper, { type: "DELEGATECALL", value: 5n })] }),
      ]),
    ).toEqual([]);
    expect(
      check(plain, [
        phase("account", { calls: [call(sender, helper, { type: "CALLCODE", value: 5n })] }),
      ]),
    ).toEqual([violation("OP-061", "account", sender, `calls ${helper} with value 5`)]);
  });

  it.each([
    ["0x0000000000000000000000000000000000000000", false, "OP-062"],
    ["0x0000000000000000000000000000000000000011", false, undefined],
    ["0x0000000000000000000000000000000000000012", true, "OP-062"],
    ["0x000000000000000000000000000000000000ffff", false, "OP-062"],
    ["0x0000000000000000000000000000000000010000", false, "OP-041"],
  ] as const)("a call to %s without code (P256 %s): %s", (to, p256, rule) => {
    const violations = check(
      plain,
      [phase("account", { calls: [call(sender, to, { type: "STATICCALL", code: "none" })] })],
      { p256 },
    );
    expect(violations).toEqual(
      rule === "OP-062"
        ? [violation(rule, "account", sender, `calls precompile ${to}, which is not allowed`)]
        : rule === "OP-041"
          ? [violation(rule, "account", sender, `uses STATICCALL to ${to}, which has no code`)]
          : [],
    );
  });

  it("a low address with code is an ordinary contract", () => {
    expect(
      check(plain, [
        phase("account", {
          calls: [
            call(sender, "0x0000000000000000000000000000000000000fff", { type: "STATICCALL" }),
          ],
        }),
      ]),
    ).toEqual([]);
  });

  it("only the factory may use the sender before it has code (OP-042); anyone may use it as an EIP-7702 account", () => {
    expect(
      check(sponsored, [
        phase("paymaster", { calls: [call(paymaster, sender, { code: "none" })] }),
      ]),
    ).toEqual([
      violation("OP-041", "paymaster", paymaster, `uses CALL to ${sender}, which has no code`),
    ]);
    expect(
      check(sponsored, [
        phase("paymaster", { calls: [call(paymaster, sender, { code: "delegated" })] }),
      ]),
    ).toEqual([]);
    expect(
      check(sponsored, [
        phase("paymaster", {
          calls: [call(paymaster, helper, { type: "STATICCALL", code: "delegated" })],
        }),
      ]),
    ).toEqual([
      violation(
        "AUTH-030",
        "paymaster",
        paymaster,
        `uses STATICCALL to ${helper}, an EIP-7702 account that is not the sender`,
      ),
    ]);
  });

  it("of the EntryPoint's code, only EXTCODESIZE followed by ISZERO is allowed (OP-051)", () => {
    const access = (opcode: "EXTCODESIZE" | "EXTCODEHASH", thenIszero: boolean) => ({
      opcode,
      from: sender,
      address: entryPoint,
      code: "contract" as const,
      thenIszero,
    });
    expect(
      check(plain, [phase("account", { codeAccesses: [access("EXTCODESIZE", true)] })]),
    ).toEqual([]);
    expect(
      check(plain, [phase("account", { codeAccesses: [access("EXTCODESIZE", false)] })]),
    ).toEqual([violation("OP-054", "account", sender, "uses EXTCODESIZE on the EntryPoint")]);
    expect(
      check(plain, [phase("account", { codeAccesses: [access("EXTCODEHASH", true)] })]),
    ).toEqual([violation("OP-054", "account", sender, "uses EXTCODEHASH on the EntryPoint")]);
    expect(
      check(plain, [
        phase("account", {
          codeAccesses: [{ ...access("EXTCODESIZE", false), address: helper, code: "none" }],
        }),
      ]),
    ).toEqual([
      violation("OP-041", "account", sender, `uses EXTCODESIZE of ${helper}, which has no code`),
    ]);
  });
});

describe("what each violation says", () => {
  it.each([
    [{ GAS: 1 }, "OP-012", "uses GAS other than right before a call"],
    [{ "0x0c": 1 }, "OP-013", "uses unassigned opcode 0x0c"],
    [{ SELFBALANCE: 1 }, "OP-080", "uses SELFBALANCE, allowed only to a staked entity"],
  ] as const)("opcodes %o: %s %s", (opcodes, rule, subject) => {
    expect(check(plain, [phase("account", { opcodes })])).toEqual([
      violation(rule, "account", sender, subject, rule === "OP-080" ? ["account", sender] : undefined),
    ]);
  });

  it("running out of gas: OP-020", () => {
    expect(check(plain, [phase("account", { outOfGas: true })])).toEqual([
      violation("OP-020", "account", sender, "runs out of gas in validation"),
    ]);
  });

  it("storage: the slot, its contract, read or written, transient or not", () => {
    const slot = pad("0x07");
    const own = pad("0x01");
    const associated = keccak256(mappingInput(sender));
    const read = { read: true, write: false };
    const written = { read: false, write: true };
    expect(
      check(deploying, [phase("account", { storage: { [token]: { [associated]: written } } })], {
        keccak: [mappingInput(sender)],
      }),
    ).toEqual([
      violation(
        "STO-022",
        "account",
        sender,
        `writes slot ${associated} of ${token}, associated with an account not yet deployed, and the factory is unstaked`,
        ["factory", factory],
      ),
    ]);
    expect(
      check(sponsored, [
        phase("paymaster", {
          storage: { [paymaster]: { [own]: written } },
          transientStorage: { [paymaster]: { [own]: read } },
        }),
      ]),
    ).toEqual([
      violation(
        "STO-031",
        "paymaster",
        paymaster,
        `writes its own slot ${own}, allowed only when staked`,
        ["paymaster", paymaster],
      ),
      violation(
        "STO-031",
        "paymaster",
        paymaster,
        `reads its own transient slot ${own}, allowed only when staked`,
        ["paymaster", paymaster],
      ),
    ]);
    const ofPaymaster = keccak256(mappingInput(paymaster));
    expect(
      check(sponsored, [phase("paymaster", { storage: { [token]: { [ofPaymaster]: read } } })], {
        keccak: [mappingInput(paymaster)],
      }),
    ).toEqual([
      violation(
        "STO-032",
        "paymaster",
        paymaster,
        `reads slot ${ofPaymaster} of ${token}, associated with it, allowed only when staked`,
        ["paymaster", paymaster],
      ),
    ]);
    expect(
      check(plain, [
        phase("account", {
          storage: { [token]: { [slot]: read } },
          transientStorage: { [token]: { [slot]: written } },
        }),
      ]),
    ).toEqual([
      violation(
        "STO-033",
        "account",
        sender,
        `reads slot ${slot} of ${token}, not associated with it or the account, allowed only when staked`,
        ["account", sender],
      ),
      violation(
        "STO-033",
        "account",
        sender,
        `writes transient slot ${slot} of ${token}, not associated with it or the account`,
      ),
    ]);
  });

  it("names each violation once, however often it happened, and keeps distinct ones", () => {
    const timestamp = phase("account", { opcodes: { TIMESTAMP: 1 } });
    expect(check(plain, [timestamp, timestamp])).toEqual([
      violation("OP-011", "account", sender, "uses banned opcode TIMESTAMP"),
    ]);
    expect(rules(check(plain, [timestamp, phase("account", { opcodes: { NUMBER: 1 } })]))).toEqual([
      "OP-011",
      "OP-011",
    ]);
  });
});
